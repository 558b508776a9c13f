// Sample malformed tool calls, as open models really send them, repaired by pi-native's core.
import { BUILTIN_TOOL_REPAIRS, runRepairPipeline } from '../lib/core.js'

const read = {
  type: 'object',
  required: ['path'],
  properties: { path: { type: 'string' }, offset: { type: 'number' }, limit: { type: 'number' } },
}
const edit = {
  type: 'object',
  required: ['path', 'edits'],
  properties: {
    path: { type: 'string' },
    edits: {
      type: 'array',
      items: { type: 'object', required: ['oldText', 'newText'], properties: { oldText: { type: 'string' }, newText: { type: 'string' } } },
    },
  },
}
const bash = { type: 'object', required: ['command'], properties: { command: { type: 'string' }, timeout: { type: 'number' } } }

const samples = [
  ['read', read, { path: 'src/main.rs' }, 'a well-formed call (returned as the same object)'],
  ['read', read, { file_path: 'src/main.rs', offset: null }, 'Claude-Code field name and a null optional'],
  ['read', read, '{"path":"src/main.rs","limit":20}', 'arguments sent as a JSON string'],
  ['read', read, '{"path":"src/ma', 'a truncated JSON object'],
  ['edit', edit, { file_path: 'a.ts', old_string: 'let x', new_string: 'const x' }, 'a flat single edit'],
  ['bash', bash, 'ls -la', 'a bare string instead of an object'],
  ['read', read, { offset: 'abc' }, 'nothing to repair safely: fail closed with a retry message'],
]

for (const [tool, schema, input, what] of samples) {
  const result = runRepairPipeline({ input, config: { toolName: tool, schema, ...BUILTIN_TOOL_REPAIRS[tool] } })
  console.log(`\n● ${tool}: ${what}`)
  console.log(`  input:   ${JSON.stringify(input)}`)
  console.log(`  outcome: ${result.outcome}${result.args === input ? ' (same object)' : ''}`)
  if (result.outcome !== 'unrepairable') console.log(`  args:    ${JSON.stringify(result.args)}`)
  for (const change of result.changes) console.log(`  [${change.ruleId}] ${change.note}`)
  if (result.retryMessage) console.log(result.retryMessage.replace(/^/gm, '  │ '))
}

// Grammar scanning and the repair lifecycle, µs or ms per op (medians of 21 rounds, release build).
// The TypeScript reference is not published to npm, so these rows stand alone.
import { RepairLifecycle } from '../lib/core.js'
import { parseToolGrammarLeaks, recoverGrammarLeaks } from '../lib/grammar.js'

function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s[s.length >> 1]
}
function time(fn, n) {
  const rounds = []
  fn()
  for (let r = 0; r < 21; r++) {
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < n; i++) fn()
    rounds.push(Number(process.hrtime.bigint() - t0) / n / 1000)
  }
  return median(rounds)
}

const prose = 'The build failed in `src/main.rs` (line 42): expected `;`, found `}`. Let me look at it again.\n'
const fill = (unit, size) => {
  let t = ''
  while (t.length < size) t += unit
  return t
}
const SAMPLES = {
  dsml: '<｜DSML｜tool_calls><｜DSML｜invoke name="read"><｜DSML｜parameter name="path" string="true">a.ts</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>',
  invoke: '<minimax:tool_call><invoke name="read"><parameter name="path">a.ts</parameter></invoke></minimax:tool_call>',
  qwen: '<tool_call>\n<function=read>\n<parameter=path>a.ts</parameter>\n</function>\n</tool_call>',
  kimi: '<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{"path":"a.ts"}<|tool_call_end|><|tool_calls_section_end|>',
  mistral: '[TOOL_CALLS] [{"name":"read","arguments":{"path":"a.ts"}}]',
  llama: '<|python_tag|>{"name":"read","arguments":{"path":"a.ts"}}',
  glm: '<tool_call>read\n<arg_key>path</arg_key>\n<arg_value>a.ts</arg_value>\n</tool_call>',
  granite: '<tool_call>[{"name":"read","arguments":{"path":"a.ts"}}]</tool_call>',
  'minimax-text': '<function_call>```typescript\nfunctions.read({"path":"a.ts"})\n```',
  olmo: '<function_calls>\nread(path="a.ts")\n</function_calls>',
}

const rows = []
const clean = fill(prose, 100_000)
const message = (text) => ({ role: 'assistant', stopReason: 'stop', content: [{ type: 'text', text }] })
const known = { mode: 'recover', knownTools: new Set(['read']) }
rows.push(['parse, 100 KB, no leaks', 'ms', time(() => parseToolGrammarLeaks(clean), 20) / 1000])
rows.push(['recover, 100 KB, no leaks', 'ms', time(() => recoverGrammarLeaks(message(clean), known), 20) / 1000])
const leaky = fill(prose + SAMPLES.glm + '\n', 100_000)
rows.push(['parse, 100 KB, ~600 GLM leaks', 'ms', time(() => parseToolGrammarLeaks(leaky), 10) / 1000])
rows.push(['recover (strip), 100 KB, ~600 leaks', 'ms', time(() => recoverGrammarLeaks(message(leaky), { ...known, mode: 'strip' }), 10) / 1000])
for (const [family, sample] of Object.entries(SAMPLES)) {
  const text = `${prose}${sample}\n${prose}`
  rows.push([`parse, one ${family} leak in 300 B`, 'µs', time(() => parseToolGrammarLeaks(text), 2000)])
}

const lifecycle = new RepairLifecycle()
const args = { path: 'src/main.rs', offset: 10 }
const feedback = { rules: ['preprocess.exact-alias'], notes: ['Renamed `file_path` to `path`.'] }
let n = 0
rows.push([
  'lifecycle enqueue + correlate + take',
  'µs',
  time(() => {
    const id = `call_${n++}`
    lifecycle.enqueue('read', args, feedback)
    lifecycle.correlate('read', args, id)
    lifecycle.take(id)
  }, 20_000),
])

console.log(`\ngrammar and lifecycle (median of 21 rounds, node ${process.version})\n`)
console.log('| operation | time |')
console.log('|---|---:|')
for (const [name, unit, v] of rows) console.log(`| ${name} | ${v.toFixed(unit === 'ms' ? 3 : 2)} ${unit} |`)

// npm run bench: µs/op of pi-native's runRepairPipeline on the seven hot paths, beside the JS floor
// (TypeBox 1.1.38 Value.Check of the same input, the least any JS validator-based repair layer
// must pay) and the TypeScript reference's times measured on this machine (issue #2).
// Medians of 21 rounds after a warm-up; one Node process; release build.
import { Type } from 'typebox'
import { Value } from 'typebox/value'
import { BUILTIN_TOOL_REPAIRS, runRepairPipeline } from '../lib/core.js'

const read = Type.Object({ path: Type.String(), offset: Type.Optional(Type.Number()), limit: Type.Optional(Type.Number()) })
const edit = Type.Object({ path: Type.String(), edits: Type.Array(Type.Object({ oldText: Type.String(), newText: Type.String() })) })
const text = 'x'.repeat(10_000)
const piEditShim = (input) => input // pi's own shim is a no-op on well-formed input

const cases = [
  { name: 'valid read', ref: 43, schema: read, tool: 'read', input: () => ({ path: 'src/a.ts', offset: 10, limit: 50 }) },
  { name: 'alias + null repair', ref: 79, schema: read, tool: 'read', input: () => ({ file_path: 'src/a.ts', offset: null }) },
  { name: 'JSON-string envelope', ref: 52, schema: read, tool: 'read', input: () => '{"path":"src/a.ts","limit":"5"}' },
  { name: 'truncated object', ref: 66, schema: read, tool: 'read', input: () => '{"path":"src/a.ts' },
  { name: 'valid edit, 20 KB', ref: 474, schema: edit, tool: 'edit', input: () => ({ path: 'src/a.ts', edits: [{ oldText: text, newText: text }] }) },
  { name: 'unrepairable read', ref: null, schema: read, tool: 'read', input: () => ({ offset: 'abc' }) },
  {
    name: 'flat edit fold + owner shim',
    ref: null,
    schema: edit,
    tool: 'edit',
    owner: piEditShim,
    input: () => ({ file_path: 'src/a.ts', old_string: 'a', new_string: 'b' }),
  },
]

function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s[s.length >> 1]
}

function time(fn, inputs) {
  const rounds = []
  for (let r = 0; r < 22; r++) {
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < inputs.length; i++) fn(inputs[i])
    const t1 = process.hrtime.bigint()
    if (r > 0) rounds.push(Number(t1 - t0) / inputs.length / 1000)
  }
  return median(rounds)
}

const N = 2000
const rows = []
for (const c of cases) {
  const tables = BUILTIN_TOOL_REPAIRS[c.tool]
  const config = { toolName: c.tool, schema: c.schema, ...tables, ownerPrepareArguments: c.owner }
  const inputs = Array.from({ length: c.name.includes('20 KB') ? N / 10 : N }, c.input)
  const native = time((input) => runRepairPipeline({ input, config }), inputs)
  const floor = time((input) => Value.Check(c.schema, input), inputs)
  const outcome = runRepairPipeline({ input: c.input(), config }).outcome
  rows.push({ path: c.name, outcome, native, floor, ref: c.ref })
}

const pad = (s, n) => String(s).padEnd(n)
const num = (x) => (x == null ? '—' : x.toFixed(2))
console.log(`\nrunRepairPipeline, µs/op (median of 21 rounds, node ${process.version})\n`)
console.log(`| ${pad('path', 28)} | ${pad('outcome', 12)} | pi-native | TypeBox Check floor | TS reference | reference / pi-native |`)
console.log(`|${'-'.repeat(30)}|${'-'.repeat(14)}|----------:|--------------------:|-------------:|----------------------:|`)
for (const r of rows) {
  const ratio = r.ref ? `${(r.ref / r.native).toFixed(1)}x` : '—'
  console.log(
    `| ${pad(r.path, 28)} | ${pad(r.outcome, 12)} | ${num(r.native).padStart(9)} | ${num(r.floor).padStart(19)} | ${num(r.ref).padStart(12)} | ${ratio.padStart(21)} |`,
  )
}

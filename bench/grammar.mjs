// npm run bench (grammar part): /grammar and the repair lifecycle of pi-native side by side with
// the TypeScript reference, pi-repair-layer 0.4.x, in one Node process, on the same texts.
//
//   PI_REPAIR_REF=<folder of a pi-repair-layer build (has dist/src/grammar.js)> node bench/grammar.mjs
//
// Every row first runs both sides once and compares the results (JSON of the parse or recovery
// result, with the time-stamped call ids normalised); then interleaved rounds, medians per side.
// Without PI_REPAIR_REF only pi-native's column is printed.
import { pathToFileURL } from 'node:url'
import { join, resolve } from 'node:path'
import * as natCore from '../lib/core.js'
import * as natGrammar from '../lib/grammar.js'

const refDir = process.env.PI_REPAIR_REF ? resolve(process.env.PI_REPAIR_REF) : null
const refGrammar = refDir ? await import(pathToFileURL(join(refDir, 'dist/src/grammar.js')).href) : null
const refCore = refDir ? await import(pathToFileURL(join(refDir, 'dist/src/core.js')).href) : null
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 21)

function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s[s.length >> 1]
}

const prose =
  'The build failed in `src/main.rs` (line 42): expected `;`, found `}`. Let me look at the function (and its callers) again.\n'
const fill = (unit, size) => {
  let t = ''
  while (t.length < size) t += unit
  return t
}
export const SAMPLES = {
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

const message = (text) => ({ role: 'assistant', stopReason: 'stop', content: [{ type: 'text', text }] })
const knownTools = new Set(['read', 'bash', 'edit'])
const clean = fill(prose, 100_000)
const half = clean.slice(0, 50_000)
const twoLeaks = `${half}${SAMPLES.qwen}\n${half}${SAMPLES.qwen}\n`
const manyLeaks = fill(prose + SAMPLES.glm + '\n', 100_000)

const rows = [
  ['parse, 100 KB prose, no leak', 'parse', () => clean, 20],
  ['recover(strip), 100 KB prose, no leak', 'strip', () => clean, 20],
  ['parse, 100 KB with 2 <tool_call> leaks', 'parse', () => twoLeaks, 20],
  ['recover(strip), 100 KB with 2 leaks', 'strip', () => twoLeaks, 20],
  ['recover(recover), 100 KB with 2 leaks', 'recover', () => twoLeaks, 20],
  ['parse, 100 KB with ~600 GLM leaks', 'parse', () => manyLeaks, 5],
  ['recover(strip), 100 KB with ~600 leaks', 'strip', () => manyLeaks, 5],
  ...Object.entries(SAMPLES).map(([family, sample]) => [`parse, one small ${family} leak`, 'parse', () => `Let me read it.\n${sample}`, 2000]),
]

function runner(g, kind) {
  if (kind === 'parse') return (text) => g.parseToolGrammarLeaks(text)
  return (text) => g.recoverGrammarLeaks(message(text), { mode: kind, knownTools })
}

function comparable(r) {
  return JSON.stringify(r).replace(/tool_repair_([a-z_]+)_[0-9a-z]+_(\d+)/g, 'tool_repair_$1_T_$2')
}

function timeSides(sides, input, n) {
  const times = sides.map(() => [])
  for (let r = 0; r <= ROUNDS; r++) {
    sides.forEach((run, s) => {
      const t0 = process.hrtime.bigint()
      for (let i = 0; i < n; i++) run(input)
      const t1 = process.hrtime.bigint()
      if (r > 0) times[s].push(Number(t1 - t0) / n / 1000)
    })
  }
  return times.map(median)
}

const out = []
let mismatches = 0
for (const [name, kind, make, n] of rows) {
  const text = make()
  const sides = [runner(natGrammar, kind)]
  let same = true
  if (refGrammar) {
    const a = comparable(sides[0](text))
    const b = comparable(runner(refGrammar, kind)(text))
    if (a !== b) {
      same = false
      mismatches++
      console.error(`MISMATCH on "${name}":\n  pi-native: ${a.slice(0, 300)}\n  reference: ${b.slice(0, 300)}`)
    } else sides.push(runner(refGrammar, kind))
  }
  const t = timeSides(sides, text, n)
  out.push({ name, nat: t[0], ref: sides.length > 1 ? t[1] : null, same })
}

// The repair lifecycle: enqueue + correlate + take of one repaired call.
{
  const args = { path: 'src/main.rs', offset: 10 }
  const feedback = { rules: ['preprocess.exact-alias'], notes: ['Renamed `file_path` to `path`.'] }
  const make = (core) => {
    const lifecycle = new core.RepairLifecycle()
    let k = 0
    return () => {
      const id = `call_${k++}`
      lifecycle.enqueue('read', args, feedback)
      lifecycle.correlate('read', args, id)
      return lifecycle.take(id)
    }
  }
  const sides = [make(natCore)]
  if (refCore) sides.push(make(refCore))
  const t = timeSides(sides, undefined, 20_000)
  out.push({ name: 'lifecycle enqueue + correlate + take', nat: t[0], ref: sides.length > 1 ? t[1] : null, same: true })
}

const pad = (s, n) => String(s).padEnd(n)
const num = (x) => (x == null ? '—' : x >= 100 ? x.toFixed(0) : x.toFixed(2))
console.log(`\n/grammar side by side, µs/op (median of ${ROUNDS} interleaved rounds; node ${process.version}; ${new Date().toISOString().slice(0, 10)})`)
if (!refGrammar) console.log('PI_REPAIR_REF is not set: the reference column is missing.')
console.log('')
console.log(`| ${pad('operation', 42)} | reference | pi-native | ratio |`)
console.log(`|${'-'.repeat(44)}|----------:|----------:|------:|`)
for (const r of out) {
  const ratio = r.ref ? `${(r.ref / r.nat).toFixed(1)}×` : r.same ? '—' : 'differs'
  console.log(`| ${pad(r.name, 42)} | ${num(r.ref).padStart(9)} | ${num(r.nat).padStart(9)} | ${ratio.padStart(5)} |`)
}
if (mismatches) {
  console.log(`\n${mismatches} row(s) gave different results on the two sides and were not compared.`)
  process.exitCode = 1
}

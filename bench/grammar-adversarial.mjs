// npm run bench (adversarial grammar part): the inputs the differential fuzzer flagged as slow
// on either side (../shared/tools/repair-diff classes.json, `perf:*` entries) plus the other
// superlinear inputs found while pinning linear growth, pi-native and, with PI_REPAIR_REF set,
// the TypeScript reference pi-repair-layer 0.4.x side by side.
//
//   PI_REPAIR_REF=<folder of a pi-repair-layer build (has dist/src/grammar.js)> node bench/grammar-adversarial.mjs
//
// Each row runs both sides once and compares the results (JSON of the parse), then times each
// side (best of BENCH_ROUNDS, default 3). `n` is the repetition count; `ref n` is smaller where
// the reference is quadratic (its time at the full n would be minutes), and then both sides are
// also compared and timed at that n. The last column is pi-native's growth: t(n) / t(n / 8).
import { pathToFileURL } from 'node:url'
import { join, resolve } from 'node:path'
import * as natGrammar from '../lib/grammar.js'

const refDir = process.env.PI_REPAIR_REF ? resolve(process.env.PI_REPAIR_REF) : null
const refGrammar = refDir ? await import(pathToFileURL(join(refDir, 'dist/src/grammar.js')).href) : null
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const F = '｜DSML｜'

// [name, fuzzer class or '', text for n, n, n for the reference side]
const rows = [
  ['[TOOL_CALLS] x  × n', 'perf:native-quadratic-mistral-markers', (n) => '[TOOL_CALLS] x '.repeat(n), 20_000, 20_000],
  [
    'GLM <arg_key>/<arg_value> pairs in one call',
    'perf:native-quadratic-glm-args',
    (n) => '<tool_call>read' + '<arg_key>k</arg_key><arg_value>v</arg_value>'.repeat(n) + '</tool_call>',
    10_000,
    10_000,
  ],
  ['unclosed <tool_call>{"name":"read" × n', 'perf:reference-quadratic-unclosed-tool_call', (n) => '<tool_call>{"name":"read"'.repeat(n), 20_000, 2_000],
  ['bare {"name": …} objects × n', 'perf:reference-quadratic-bare-json', (n) => '{"name": "read", "arguments": {"path": "a"}} '.repeat(n), 10_000, 2_000],
  ['unclosed <function_call>functions.read( × n', '', (n) => '<function_call>functions.read('.repeat(n), 10_000, 2_000],
  ['unclosed [TOOL_CALLS] [{"name":"read", × n', '', (n) => '[TOOL_CALLS] [{"name":"read",'.repeat(n), 10_000, 2_000],
  ['unclosed [TOOL_CALLS]read[CALL_ID]1[ARGS]{ × n', '', (n) => '[TOOL_CALLS]read[CALL_ID]1[ARGS]{'.repeat(n), 10_000, 2_000],
  ['closed <tool_call> JSON calls × n', '', (n) => '<tool_call>{"name":"read","arguments":{"path":"a"}}</tool_call>'.repeat(n), 10_000, 2_000],
  [
    'kimi calls in one section',
    '',
    (n) =>
      '<|tool_calls_section_begin|>' +
      '<|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{"path":"a"}<|tool_call_end|>'.repeat(n) +
      '<|tool_calls_section_end|>',
    10_000,
    10_000,
  ],
  [
    'DSML parameters in one invoke',
    '',
    (n) => `<${F}tool_calls><${F}invoke name="read">` + `<${F}parameter name="k" string="true">v</${F}parameter>`.repeat(n) + `</${F}invoke></${F}tool_calls>`,
    10_000,
    10_000,
  ],
  ['<parameter name="k"> pairs in one <invoke>', '', (n) => '<invoke name="read">' + '<parameter name="k">v</parameter>'.repeat(n) + '</invoke>', 10_000, 10_000],
  ['qwen <parameter=k> pairs in one call', '', (n) => '<tool_call><function=read>' + '<parameter=k>v</parameter>'.repeat(n) + '</function></tool_call>', 10_000, 10_000],
  ['malformed invoke parameter lines', '', (n) => 'invoke name="a">\n' + 'parameter name="k">v parameter>\n'.repeat(n), 10_000, 10_000],
  ['<|python_tag|> pythonic lines × n', '', (n) => '<|python_tag|>read(path="a")\n'.repeat(n), 10_000, 2_000],
  ['unclosed pythonic lines × n', '', (n) => 'read(path="a"\n'.repeat(n), 10_000, 2_000],
  ['unclosed <|tool_calls_section_begin|> × n', '', (n) => '<|tool_calls_section_begin|>'.repeat(n), 20_000, 2_000],
  ['fences × n', '', (n) => '```\n'.repeat(n), 20_000, 2_000],
]

function best(run, text) {
  let min = Infinity
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = process.hrtime.bigint()
    run(text)
    min = Math.min(min, Number(process.hrtime.bigint() - t0) / 1e6)
  }
  return min
}

const parse = (g) => (text) => g.parseToolGrammarLeaks(text)
const fmt = (ms) => (ms == null ? '' : ms < 10 ? ms.toFixed(2) : ms.toFixed(0))
let mismatches = 0
const out = []
for (const [name, klass, make, n, refN] of rows) {
  const text = make(n)
  const nat = best(parse(natGrammar), text)
  const growth = nat / Math.max(best(parse(natGrammar), make(Math.floor(n / 8))), 0.01)
  out.push({ name, klass, n, size: text.length, nat, ref: null, growth })
  if (!refGrammar) continue
  const refText = make(refN)
  const a = JSON.stringify(parse(natGrammar)(refText))
  const b = JSON.stringify(parse(refGrammar)(refText))
  if (a !== b) {
    mismatches++
    console.error(`MISMATCH on "${name}" (n = ${refN}):\n  pi-native: ${a.slice(0, 300)}\n  reference: ${b.slice(0, 300)}`)
    continue
  }
  if (refN === n) out.at(-1).ref = best(parse(refGrammar), text)
  else out.push({ name: `  same, n = ${refN}`, klass: '', n: refN, size: refText.length, nat: best(parse(natGrammar), refText), ref: best(parse(refGrammar), refText), growth: null })
}

console.log(`\nparseToolGrammarLeaks on adversarial texts (ms, best of ${ROUNDS})${refGrammar ? '' : ' — set PI_REPAIR_REF for the reference column'}`)
const header = ['input', 'n', 'size', 'pi-native', ...(refGrammar ? ['reference', 'ref/native'] : []), 'growth ×8']
const body = out.map((r) => [
  r.name,
  String(r.n),
  String(r.size),
  fmt(r.nat),
  ...(refGrammar ? [fmt(r.ref), r.ref == null ? '' : `${(r.ref / Math.max(r.nat, 0.01)).toFixed(1)}×`] : []),
  r.growth == null ? '' : r.growth.toFixed(1),
])
const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i].length)))
const line = (row) => row.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')
console.log(line(header))
for (const row of body) console.log(line(row))
for (const r of out.filter((r) => r.klass)) console.log(`  ${r.name}: ${r.klass}`)
if (mismatches) {
  console.error(`${mismatches} row(s) differ between the two sides`)
  process.exitCode = 1
}

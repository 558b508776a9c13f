// npm run bench (repair part): runRepairPipeline of pi-native side by side with the TypeScript
// reference, pi-repair-layer 0.4.x, in one Node process, on the same inputs.
//
//   PI_REPAIR_REF=<folder of a pi-repair-layer build (has dist/src/core.js)> node bench/repair.mjs
//
// Both sides get the same TypeBox schemas (pi's built-in tool shapes) and their own built-in tool
// tables (preprocessors + legacy config), fresh input objects per call (built before timing), and
// are timed in interleaved rounds; each row is the median of the per-round µs/op. Before timing,
// every input is run through both sides and the results compared (outcome, args, changes,
// fingerprint, retry message): a row whose results differ is reported and not timed.
// Without PI_REPAIR_REF the reference column is missing and only pi-native and the JS floor
// (TypeBox Value.Check of the same input) are printed.
import { pathToFileURL } from 'node:url'
import { join, resolve } from 'node:path'
import { existsSync } from 'node:fs'
import { Type } from 'typebox'
import { Value } from 'typebox/value'
import * as nat from '../lib/core.js'

const refDir = process.env.PI_REPAIR_REF ? resolve(process.env.PI_REPAIR_REF) : null
let ref = null
let refTables = null
if (refDir) {
  if (!existsSync(join(refDir, 'dist/src/core.js'))) {
    console.error(`PI_REPAIR_REF=${refDir}: no dist/src/core.js there (build the reference first)`)
    process.exit(2)
  }
  ref = await import(pathToFileURL(join(refDir, 'dist/src/core.js')).href)
  refTables = await import(pathToFileURL(join(refDir, 'dist/src/tables.js')).href)
}

// pi's built-in tool schemas (pi-coding-agent 0.80.x shapes).
export const SCHEMAS = {
  read: Type.Object({ path: Type.String(), offset: Type.Optional(Type.Number()), limit: Type.Optional(Type.Number()) }),
  bash: Type.Object({ command: Type.String(), timeout: Type.Optional(Type.Number()) }),
  edit: Type.Object({ path: Type.String(), edits: Type.Array(Type.Object({ oldText: Type.String(), newText: Type.String() })) }),
  write: Type.Object({ path: Type.String(), content: Type.String() }),
  grep: Type.Object({
    pattern: Type.String(),
    path: Type.Optional(Type.String()),
    glob: Type.Optional(Type.String()),
    ignoreCase: Type.Optional(Type.Boolean()),
    literal: Type.Optional(Type.Boolean()),
    context: Type.Optional(Type.Number()),
    limit: Type.Optional(Type.Number()),
  }),
  find: Type.Object({ pattern: Type.String(), path: Type.Optional(Type.String()), limit: Type.Optional(Type.Number()) }),
  ls: Type.Object({ path: Type.Optional(Type.String()), limit: Type.Optional(Type.Number()) }),
}
// A grep whose search roots are a list (as several agents' grep tools take them): models often send
// that list as a JSON string.
const GREP_PATHS = Type.Object({ pattern: Type.String(), paths: Type.Optional(Type.Array(Type.String())) })

const natConfigs = {}
const refConfigs = {}
for (const key of [...Object.keys(SCHEMAS), 'grepPaths']) {
  const tool = key === 'grepPaths' ? 'grep' : key
  const schema = key === 'grepPaths' ? GREP_PATHS : SCHEMAS[tool]
  natConfigs[key] = { toolName: tool, schema, modelId: 'qwen3-coder', ...nat.BUILTIN_TOOL_REPAIRS[tool] }
  if (ref) {
    refConfigs[key] = {
      toolName: tool,
      schema,
      modelId: 'qwen3-coder',
      preprocessors: refTables.PIPELINE_PREPROCESSORS[tool],
      legacyConfig: refTables.REPAIR_CONFIGS[tool],
    }
  }
}

// ~20 KB of realistic source code (quotes, backslashes, newlines, indentation, a little non-ASCII).
function code(bytes, salt) {
  const lines = [
    'export function parse(input: string): Result<Config, "invalid"> {',
    '  const text = input.replace(/\\r\\n/g, "\\n").trim(); // normalise line endings',
    "  if (!text.startsWith('{')) return { ok: false, error: `bad start: ${text[0]}` }",
    '  for (const [key, value] of Object.entries(JSON.parse(text))) {',
    '    console.log("%s => %o", key, value) // ünïcödé — “quotes”',
    '  }',
    '\treturn { ok: true, value: text as unknown as Config }',
    '}',
    '',
  ]
  let out = `// file ${salt}\n`
  for (let i = 0; out.length < bytes; i++) out += lines[i % lines.length] + '\n'
  return out
}
const OLD = code(10_000, 'a')
const NEW = code(10_000, 'b')

export const PATHS = [
  { name: 'valid read', tool: 'read', input: (i) => ({ path: `src/file${i % 50}.ts`, offset: 10, limit: 50 }) },
  { name: 'alias + null', tool: 'read', input: (i) => ({ file_path: `src/file${i % 50}.ts`, offset: null }) },
  { name: 'JSON-string envelope', tool: 'read', input: (i) => `{"path":"src/file${i % 50}.ts","limit":"5"}` },
  { name: 'stringified array (grep paths)', tool: 'grepPaths', input: (i) => ({ pattern: `TODO${i % 7}`, paths: '["src","lib"]' }) },
  { name: 'truncated object', tool: 'read', input: (i) => `{"path":"src/file${i % 50}.ts` },
  { name: 'unrepairable', tool: 'read', input: (i) => ({ offset: 'abc' + (i % 3) }) },
  { name: 'valid edit, 20 KB of code', tool: 'edit', input: () => ({ path: 'src/parser.ts', edits: [{ oldText: OLD, newText: NEW }] }), n: 200 },
]

// The mixed path: 1,000 calls drawn from the seven tools, in proportions a coding agent sees.
function mixed(count) {
  let seed = 0x9e3779b9
  const rand = () => ((seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32)
  const pick = (xs) => xs[Math.floor(rand() * xs.length)]
  const file = () => pick(['src/index.ts', 'README.md', 'lib/a.js', 'test/b.spec.ts', 'Cargo.toml'])
  const small = () => pick(['const a = 1\n', 'return x\n', '  foo(bar)\n', 'import x from "y"\n'])
  const kinds = [
    // [weight, tool, make]
    [30, 'read', () => ({ path: file(), ...(rand() < 0.3 ? { offset: 1, limit: 200 } : {}) })],
    [20, 'bash', () => ({ command: pick(['ls -la', 'npm test', 'git status', 'cargo build 2>&1 | tail']) })],
    [15, 'edit', () => ({ path: file(), edits: [{ oldText: small(), newText: small() }] })],
    [3, 'edit', () => ({ path: file(), edits: [{ oldText: code(2_000, 'm'), newText: code(2_200, 'n') }] })],
    [6, 'write', () => ({ path: file(), content: code(1_500, 'w') })],
    [6, 'grep', () => ({ pattern: pick(['TODO', 'fn main', 'import']), ...(rand() < 0.5 ? { path: 'src' } : {}) })],
    [4, 'find', () => ({ pattern: pick(['*.ts', '**/*.md']) })],
    [3, 'ls', () => ({ path: pick(['.', 'src']) })],
    [4, 'read', () => ({ file_path: file() })],
    [2, 'edit', () => ({ file_path: file(), old_string: small(), new_string: small() })],
    [2, 'read', () => JSON.stringify({ path: file(), limit: '20' })],
    [2, 'grep', () => ({ pattern: 'x', paths: '["src","lib"]' })],
    [1, 'read', () => `{"path":"${file()}`],
    [1, 'bash', () => ({ cmd: 'ls' })],
    [1, 'read', () => ({ offset: 'abc' })],
  ]
  const total = kinds.reduce((s, k) => s + k[0], 0)
  const calls = []
  for (let i = 0; i < count; i++) {
    let x = rand() * total
    const k = kinds.find((k) => (x -= k[0]) < 0) ?? kinds[0]
    calls.push([k[1], k[2]()])
  }
  return calls
}

function comparable(r) {
  return JSON.stringify({
    outcome: r.outcome,
    args: r.args,
    changes: r.changes,
    observations: r.observations,
    issueSummary: r.issueSummary,
    fingerprint: r.fingerprint,
    retryMessage: r.retryMessage,
  })
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s[s.length >> 1]
}

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 21)

/** Interleaved rounds: each round times every side once on fresh inputs; medians per side. */
function timeSides(sides, makeInputs) {
  const times = sides.map(() => [])
  for (let r = 0; r <= ROUNDS; r++) {
    sides.forEach((side, s) => {
      const inputs = makeInputs()
      const t0 = process.hrtime.bigint()
      for (let i = 0; i < inputs.length; i++) side.run(inputs[i])
      const t1 = process.hrtime.bigint()
      if (r > 0) times[s].push(Number(t1 - t0) / inputs.length / 1000)
    })
  }
  return times.map(median)
}

const rows = []
let mismatches = 0
for (const p of PATHS) {
  const n = p.n ?? 2000
  const makeInputs = () => Array.from({ length: n }, (_, i) => p.input(i))
  const nc = natConfigs[p.tool]
  const sides = [{ run: (input) => nat.runRepairPipeline({ input, config: nc }) }]
  const outcome = nat.runRepairPipeline({ input: p.input(0), config: nc }).outcome
  let same = true
  if (ref) {
    const rc = refConfigs[p.tool]
    for (let i = 0; i < Math.min(n, 50); i++) {
      const a = comparable(nat.runRepairPipeline({ input: p.input(i), config: nc }))
      const b = comparable(ref.runRepairPipeline({ input: p.input(i), config: rc }))
      if (a !== b) {
        same = false
        console.error(`MISMATCH on "${p.name}" input ${i}:\n  pi-native: ${a.slice(0, 400)}\n  reference: ${b.slice(0, 400)}`)
        break
      }
    }
    if (same) sides.push({ run: (input) => ref.runRepairPipeline({ input, config: rc }) })
    else mismatches++
  }
  sides.push({ run: (input) => Value.Check(nc.schema, input) })
  const t = timeSides(sides, makeInputs)
  rows.push({ path: p.name, outcome, nat: t[0], ref: ref && same ? t[1] : null, floor: t[t.length - 1], same })
}

{
  const calls = mixed(1000)
  // Fresh objects per round, made before timing.
  const makeInputs = () => calls.map(([tool, value]) => [tool, structuredClone(value)])
  const sides = [{ run: ([tool, input]) => nat.runRepairPipeline({ input, config: natConfigs[tool] }) }]
  let same = true
  if (ref) {
    for (const [tool, value] of calls) {
      const a = comparable(nat.runRepairPipeline({ input: structuredClone(value), config: natConfigs[tool] }))
      const b = comparable(ref.runRepairPipeline({ input: structuredClone(value), config: refConfigs[tool] }))
      if (a !== b) {
        same = false
        console.error(`MISMATCH on the mixed path (${tool}):\n  pi-native: ${a.slice(0, 400)}\n  reference: ${b.slice(0, 400)}`)
        break
      }
    }
    if (same) sides.push({ run: ([tool, input]) => ref.runRepairPipeline({ input, config: refConfigs[tool] }) })
    else mismatches++
  }
  sides.push({ run: ([tool, input]) => Value.Check(SCHEMAS[tool], input) })
  const t = timeSides(sides, makeInputs)
  // µs per call × 1,000 calls = µs in all = the total in ms.
  rows.push({ path: 'mixed: 1,000 calls (ms total)', outcome: 'mixed', nat: t[0], ref: ref && same ? t[1] : null, floor: t[t.length - 1], same })
}

const pad = (s, n) => String(s).padEnd(n)
const num = (x) => (x == null ? '—' : x.toFixed(2))
console.log(`\nrunRepairPipeline side by side, µs/op (median of ${ROUNDS} interleaved rounds; node ${process.version}; ${new Date().toISOString().slice(0, 10)})`)
if (!ref) console.log('PI_REPAIR_REF is not set: the reference column is missing (see bench/README or the script header).')
console.log('')
console.log(`| ${pad('path', 32)} | ${pad('outcome', 12)} | reference | pi-native | ratio | TypeBox Check floor |`)
console.log(`|${'-'.repeat(34)}|${'-'.repeat(14)}|----------:|----------:|------:|--------------------:|`)
for (const r of rows) {
  const ratio = r.ref ? `${(r.ref / r.nat).toFixed(1)}×` : r.same ? '—' : 'differs'
  console.log(`| ${pad(r.path, 32)} | ${pad(r.outcome, 12)} | ${num(r.ref).padStart(9)} | ${num(r.nat).padStart(9)} | ${ratio.padStart(5)} | ${num(r.floor).padStart(19)} |`)
}
if (mismatches) {
  console.log(`\n${mismatches} path(s) gave different results on the two sides and were not compared.`)
  process.exitCode = 1
}

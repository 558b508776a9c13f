// Soak: N concurrent chat streams for a while against a faulty loopback provider
// (bench/soak-server.mjs, a child process so its CPU and memory are its own), to show that every
// failure reaches the caller as a documented error and that memory and sockets stay flat.
//
//   npm run bench:soak                                   200 streams for 5 minutes
//   npm run bench:soak -- --minutes 0.5 --streams 50     shorter
//   npm run bench:soak -- --json                         + the summary as JSON on stdout (progress
//                                                          on stderr); --json=<file> writes it there
//
// Flags (env): --minutes (SOAK_MINUTES, 5), --streams (SOAK_STREAMS, 200), --seed (SOAK_SEED,
// random; printed), --report-seconds (SOAK_REPORT_SECONDS, 10), --idle-ms (1500: the client's
// streamIdleTimeout; the server's stalls last 2000–3000 ms), --max-retries (2), --timeout-ms
// (20000: the per-attempt request deadline), --abort-share (0.04: the share of streams the
// caller ends early, half by AbortSignal and half by leaving the for-await loop), --json[=file].
// Run with --expose-gc (the npm script does) so every memory sample follows a full GC.
//
// Every stream runs to its end and is classified:
//   ok            a finish chunk and the complete text (`<k>| w0 … w<k-1> `, U+FFFD from the
//                 server's invalid-UTF-8 delta removed)
//   typed error   one of the library's documented errors:
//                   - an instance of an error class the library exports (StreamIdleTimeoutError,
//                     ProviderStreamClosedError, ProviderRequestDeadlineExceededError,
//                     ProviderRecoveryBudgetExceededError, ...) with its own name and code;
//                   - DOMException AbortError (caller cancellation);
//                   - a plain Error (prototype Error.prototype, name "Error", no code) whose message
//                     is a provider or transport text as Blade/pi-ai report it: an HTTP status
//                     first ("429: {...}"), "Connection error.", "Request timed out.",
//                     "terminated", "Stream ended without finish_reason", "Provider returned an
//                     error stop reason", or a JSON.parse SyntaxError text of a malformed event.
//                 Each has a boolean `replayBoundaryCrossed`. The kind is `name:code` (or
//                 `Error:<text>`, the status as `http-<status>`, JSON texts as `Error:json`).
//   untyped       anything else: another class, name or code (a napi `GenericFailure`,
//                 `InvalidArg`, a conversion error), an "internal error" message, an unknown
//                 message, a non-Error value, a missing replay marker, and every unhandled
//                 rejection or uncaught exception in the process. Must be 0.
//   incomplete    the stream ended without an error and without a finish chunk. Must be 0.
//   truncated     a finish chunk but a text shorter than announced. Must be 0.
//   corrupt       a finish chunk but a text that is not the server's. Must be 0.
//
// Every sample (every min(5, report) seconds, after global.gc()): RSS and JS heap (used / total:
// V8 keeps a young generation that grew under load, up to 32 MB, through a full GC) of this
// process, its open fds, its TCP connections to the server port (from /proc/self/fd and
// /proc/net/tcp, by state) and the server's live sockets. Verdict: after a warm-up (the first
// 20 % of the run), RSS and client sockets are flat when the median of the last third of the
// samples is at most 1.25x the median of the first third (sockets: + 5, for small counts).
// The run passes when untyped, incomplete, truncated and corrupt are 0 and both are flat.
import { fork } from 'node:child_process'
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import * as chat from '../lib/chat.js'

// --- options --------------------------------------------------------------------------------------

function flag(name, env, fallback) {
  const i = process.argv.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`))
  if (i >= 0) {
    const a = process.argv[i]
    if (a.includes('=')) return a.slice(a.indexOf('=') + 1)
    const next = process.argv[i + 1]
    return next === undefined || next.startsWith('--') ? true : next
  }
  return env && process.env[env] !== undefined ? process.env[env] : fallback
}
const num = (v, name) => {
  const n = Number(v)
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name}: not a number: ${v}`)
  return n
}
const MINUTES = num(flag('minutes', 'SOAK_MINUTES', 5), 'minutes')
const STREAMS = Math.max(1, Math.floor(num(flag('streams', 'SOAK_STREAMS', 200), 'streams')))
const SEED = Math.floor(num(flag('seed', 'SOAK_SEED', Math.floor(Math.random() * 2 ** 31)), 'seed')) >>> 0
const REPORT_S = num(flag('report-seconds', 'SOAK_REPORT_SECONDS', 10), 'report-seconds') || 10
const SAMPLE_S = Math.min(5, REPORT_S)
const IDLE_MS = num(flag('idle-ms', 'SOAK_IDLE_MS', 1500), 'idle-ms')
const MAX_RETRIES = num(flag('max-retries', 'SOAK_MAX_RETRIES', 2), 'max-retries')
const TIMEOUT_MS = num(flag('timeout-ms', 'SOAK_TIMEOUT_MS', 20_000), 'timeout-ms')
const ABORT_SHARE = num(flag('abort-share', 'SOAK_ABORT_SHARE', 0.04), 'abort-share')
const JSON_OUT = flag('json', 'SOAK_JSON', false)
const log = JSON_OUT ? (...a) => console.error(...a) : (...a) => console.log(...a)
const gc = globalThis.gc

// --- the server -----------------------------------------------------------------------------------

const serverOptions = { seed: SEED, stallMs: [Math.round(IDLE_MS * 4 / 3), IDLE_MS * 2], dripTickMs: 1, gapMs: 15 }
const server = fork(new URL('./soak-server.mjs', import.meta.url).pathname, [JSON.stringify(serverOptions)], {
  stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  execArgv: [],
})
const { baseUrl } = JSON.parse(await new Promise((r) => createInterface({ input: server.stdout }).once('line', r)))
const port = Number(new URL(baseUrl).port)
let statsWaiter = null
server.on('message', (m) => statsWaiter?.(m))
const serverStats = () =>
  new Promise((resolve) => {
    statsWaiter = (m) => ((statsWaiter = null), resolve(m))
    server.send('stats')
  })

// --- classification -------------------------------------------------------------------------------

// The library's own error classes: every Error subclass pi-native/chat exports
// (StreamIdleTimeoutError, ProviderStreamClosedError, ...), each with its name and its code.
const LIBRARY_ERRORS = Object.entries(chat)
  .filter(([, C]) => typeof C === 'function' && C.prototype instanceof Error)
  .map(([name, C]) => [C, name, new C().code])
const PROVIDER_TEXTS = [
  [/^(\d{3})(?::|\s|$)/, (m) => `http-${m[1]}`],
  [/^Connection error\.$/, () => 'Connection error.'],
  [/^Request timed out\.$/, () => 'Request timed out.'],
  [/^terminated$/, () => 'terminated'],
  [/^Stream ended without finish_reason$/, () => 'Stream ended without finish_reason'],
  [/^Provider returned an error stop reason$/, () => 'Provider returned an error stop reason'],
  // JSON.parse's SyntaxError texts (V8): a malformed event as pi-ai reports it.
  [/^(Unexpected (token|end of JSON input|non-whitespace character after JSON|number|string)|Expected |Unterminated string in JSON|Bad (control|escaped) character in JSON|.* is not valid JSON)/, () => 'json'],
]
const UNTYPED_MARKERS = /internal error|GenericFailure|napi|Failed to convert|InvalidArg/i

/** {typed: true, kind} for a documented error, else {typed: false, kind, detail}. */
function classify(error) {
  const detail = () => ({
    ctor: error?.constructor?.name,
    name: error?.name,
    code: error?.code,
    message: String(error?.message ?? error).slice(0, 300),
    stack: typeof error?.stack === 'string' ? error.stack.split('\n').slice(0, 4).join('\n') : undefined,
  })
  const untyped = (why) => ({ typed: false, kind: `untyped:${why}:${error?.name}:${error?.code ?? ''}:${String(error?.message ?? error).slice(0, 80)}`, detail: detail() })
  if (!(error instanceof Error) && !(error instanceof DOMException)) return untyped('not-an-Error')
  if (typeof error.replayBoundaryCrossed !== 'boolean') return untyped('no-replay-marker')
  if (UNTYPED_MARKERS.test(error.message) || UNTYPED_MARKERS.test(String(error.code ?? ''))) return untyped('napi-or-internal')
  if (error instanceof DOMException) return error.name === 'AbortError' && error.message === 'Aborted' ? { typed: true, kind: 'AbortError' } : untyped('DOMException')
  for (const [Class, name, code] of LIBRARY_ERRORS) {
    if (error instanceof Class) return error.name === name && error.code === code ? { typed: true, kind: `${name}:${code}` } : untyped('library-class-shape')
  }
  if (Object.getPrototypeOf(error) === Error.prototype && error.name === 'Error' && error.code === undefined) {
    for (const [re, kind] of PROVIDER_TEXTS) {
      const m = re.exec(error.message)
      if (m) return { typed: true, kind: `Error:${kind(m)}` }
    }
    return untyped('unknown-message')
  }
  return untyped('unknown-class')
}

/** The text check of a finished stream: 'ok', 'truncated' or 'corrupt'. */
function checkText(text) {
  const m = /^(\d+)\| ((?:w\d+ )*)$/.exec(text.replace(/\uFFFD/g, ''))
  if (!m) return 'corrupt'
  const words = m[2].split(' ').filter(Boolean)
  if (!words.every((w, i) => w === `w${i}`)) return 'corrupt'
  return words.length === Number(m[1]) ? 'ok' : 'truncated'
}

// --- the clients ----------------------------------------------------------------------------------

const counts = { started: 0, finished: 0, ok: 0, typed: 0, untyped: 0, incomplete: 0, truncated: 0, corrupt: 0, abortedByCaller: 0, leftByCaller: 0, replayBoundaryCrossed: 0 }
const kinds = {}
const chunkKinds = { providerRetry: 0, providerStall: 0 }
const untypedSamples = []
const anomalies = []
function untypedSeen(entry) {
  counts.untyped++
  kinds[entry.kind] = (kinds[entry.kind] ?? 0) + 1
  if (untypedSamples.length < 20) untypedSamples.push(entry)
}
process.on('unhandledRejection', (reason) => untypedSeen({ kind: 'untyped:unhandledRejection', detail: { message: String(reason?.stack ?? reason).slice(0, 500) } }))
process.on('uncaughtException', (error) => untypedSeen({ kind: 'untyped:uncaughtException', detail: { message: String(error?.stack ?? error).slice(0, 500) } }))

// The caller's own choices (early ends) come from a second PRNG of the same seed.
function prng(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
const random = prng(SEED ^ 0x5bd1e995)
const service = chat.createChatService({
  provider: 'openai-compatible',
  model: 'm',
  apiKey: 'sk-soak-dummy',
  baseUrl: `${baseUrl}/v1`,
  maxRetries: MAX_RETRIES,
  streamIdleTimeout: IDLE_MS,
  timeout: TIMEOUT_MS,
})
const messages = [{ role: 'user', content: 'Soak: stream please.' }]
let running = true
let inflight = 0

async function oneStream() {
  const r = random()
  const plan = r < ABORT_SHARE / 2 ? 'abort' : r < ABORT_SHARE ? 'leave' : 'full'
  const endAfter = 1 + Math.floor(random() * 6) // content chunks before an early end
  const controller = plan === 'abort' ? new AbortController() : undefined
  counts.started++
  inflight++
  let text = ''
  let contentChunks = 0
  let finished = false
  let left = false
  try {
    for await (const chunk of service.streamChat(messages, [], controller?.signal)) {
      if (chunk.providerRetry) chunkKinds.providerRetry++
      if (chunk.providerStall) chunkKinds.providerStall++
      if (chunk.finishReason) finished = true
      if (typeof chunk.content === 'string') {
        text += chunk.content
        if (++contentChunks === endAfter) {
          if (plan === 'abort') controller.abort()
          else if (plan === 'leave') {
            left = true
            break
          }
        }
      }
    }
    counts.finished++
    if (left) counts.leftByCaller++
    else if (!finished) {
      counts.incomplete++
      if (anomalies.length < 20) anomalies.push({ kind: 'incomplete', text })
    } else {
      const verdict = checkText(text)
      counts[verdict]++
      if (verdict !== 'ok' && anomalies.length < 20) anomalies.push({ kind: verdict, text })
    }
  } catch (error) {
    counts.finished++
    const c = classify(error)
    if (!c.typed) untypedSeen(c)
    else {
      counts.typed++
      kinds[c.kind] = (kinds[c.kind] ?? 0) + 1
      if (c.kind === 'AbortError') counts.abortedByCaller++
      if (error.replayBoundaryCrossed) counts.replayBoundaryCrossed++
    }
  } finally {
    inflight--
  }
}

async function client() {
  while (running) await oneStream()
}

// --- samples --------------------------------------------------------------------------------------

const TCP_STATES = { '01': 'ESTABLISHED', '02': 'SYN_SENT', '03': 'SYN_RECV', '04': 'FIN_WAIT1', '05': 'FIN_WAIT2', '06': 'TIME_WAIT', '07': 'CLOSE', '08': 'CLOSE_WAIT', '09': 'LAST_ACK', '0A': 'LISTEN', '0B': 'CLOSING' }

/** This process's open fds and its TCP sockets whose remote port is the server's, by state. */
function clientSockets() {
  const inodes = new Set()
  let fds = 0
  try {
    for (const fd of readdirSync('/proc/self/fd')) {
      fds++
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`))
        if (m) inodes.add(m[1])
      } catch {}
    }
  } catch {
    return { fds: null, total: null, byState: {} }
  }
  const byState = {}
  let total = 0
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let lines
    try {
      lines = readFileSync(file, 'utf8').split('\n').slice(1)
    } catch {
      continue
    }
    for (const line of lines) {
      const f = line.trim().split(/\s+/)
      if (f.length < 10 || !inodes.has(f[9])) continue
      if (parseInt(f[2].split(':')[1], 16) !== port) continue
      const state = TCP_STATES[f[3]] ?? f[3]
      byState[state] = (byState[state] ?? 0) + 1
      total++
    }
  }
  return { fds, total, byState }
}

const samples = []
const t0 = performance.now()
let cpu0 = process.cpuUsage()
let lastCpuAt = t0
let serverCpu0 = 0
async function sample() {
  gc?.()
  const mem = process.memoryUsage()
  const sockets = clientSockets()
  const srv = await serverStats()
  const now = performance.now()
  const cpu = process.cpuUsage(cpu0)
  const span = now - lastCpuAt
  cpu0 = process.cpuUsage()
  lastCpuAt = now
  const s = {
    t: Math.round((now - t0) / 1000),
    started: counts.started,
    finished: counts.finished,
    inflight,
    rssMB: +(mem.rss / 2 ** 20).toFixed(1),
    heapUsedMB: +(mem.heapUsed / 2 ** 20).toFixed(1),
    heapTotalMB: +(mem.heapTotal / 2 ** 20).toFixed(1),
    externalMB: +(mem.external / 2 ** 20).toFixed(1),
    fds: sockets.fds,
    clientSockets: sockets.total,
    clientSocketsByState: sockets.byState,
    serverLiveSockets: srv.liveSockets,
    serverRssMB: +(srv.rssBytes / 2 ** 20).toFixed(1),
    clientCpuPct: Math.round(((cpu.user + cpu.system) / 1000 / span) * 100),
    serverCpuPct: Math.round(((srv.cpuMs - serverCpu0) / span) * 100),
  }
  serverCpu0 = srv.cpuMs
  samples.push(s)
  return { s, srv }
}

function report(s) {
  const states = Object.entries(s.clientSocketsByState).map(([k, v]) => `${k} ${v}`).join(', ')
  log(
    `[${String(s.t).padStart(4)}s] started ${counts.started} ok ${counts.ok} typed ${counts.typed} untyped ${counts.untyped}` +
      ` incomplete ${counts.incomplete} truncated ${counts.truncated} corrupt ${counts.corrupt} inflight ${s.inflight}` +
      ` | rss ${s.rssMB} MB heap ${s.heapUsedMB}/${s.heapTotalMB} MB fds ${s.fds}` +
      ` | sockets client ${s.clientSockets} (${states || 'none'}) server ${s.serverLiveSockets}` +
      ` | cpu client ${s.clientCpuPct}% server ${s.serverCpuPct}%`,
  )
}

const median = (xs) => {
  const a = [...xs].sort((x, y) => x - y)
  return a.length ? (a.length % 2 ? a[a.length >> 1] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2) : NaN
}
function flatness(values, slack) {
  const third = Math.max(1, Math.floor(values.length / 3))
  const first = +median(values.slice(0, third)).toFixed(2)
  const last = +median(values.slice(values.length - third)).toFixed(2)
  return { samples: values.length, firstThirdMedian: first, lastThirdMedian: last, ratio: +(last / first).toFixed(3), flat: values.length >= 3 && last <= first * 1.25 + slack }
}

// --- the run --------------------------------------------------------------------------------------

log(
  `soak: ${STREAMS} concurrent streams for ${MINUTES} min against ${baseUrl} (seed ${SEED}; node ${process.version}; ` +
    `streamIdleTimeout ${IDLE_MS} ms, maxRetries ${MAX_RETRIES}, timeout ${TIMEOUT_MS} ms, caller early ends ${ABORT_SHARE}; ` +
    `${gc ? 'samples after global.gc()' : 'no --expose-gc: samples without a GC'})`,
)
const durationMs = MINUTES * 60_000
const clients = Array.from({ length: STREAMS }, () => client())
let nextReport = REPORT_S * 1000
while (performance.now() - t0 < durationMs) {
  await new Promise((r) => setTimeout(r, Math.min(SAMPLE_S * 1000, Math.max(0, durationMs - (performance.now() - t0)))))
  const { s } = await sample()
  if (performance.now() - t0 >= nextReport || performance.now() - t0 >= durationMs) {
    report(s)
    nextReport += REPORT_S * 1000
  }
}
running = false
const stopAt = performance.now()
await Promise.all(clients)
const drainMs = Math.round(performance.now() - stopAt)
await new Promise((r) => setTimeout(r, 1000))
gc?.()
const after = clientSockets()
const srvFinal = await serverStats()
const afterMem = process.memoryUsage()

const warm = samples.filter((s) => s.t >= (durationMs / 1000) * 0.2)
const rss = flatness(warm.map((s) => s.rssMB), 0)
const sockets = flatness(warm.map((s) => s.clientSockets ?? 0), 5)
const problems = counts.untyped + counts.incomplete + counts.truncated + counts.corrupt
const summary = {
  seed: SEED,
  node: process.version,
  config: { streams: STREAMS, minutes: MINUTES, streamIdleTimeoutMs: IDLE_MS, maxRetries: MAX_RETRIES, timeoutMs: TIMEOUT_MS, abortShare: ABORT_SHARE, gc: Boolean(gc), server: serverOptions },
  seconds: Math.round((stopAt - t0) / 1000),
  drainMs,
  counts,
  streamsPerSecond: +(counts.finished / ((stopAt - t0) / 1000)).toFixed(1),
  kinds: Object.fromEntries(Object.entries(kinds).sort((a, b) => b[1] - a[1])),
  chunks: chunkKinds,
  untypedSamples,
  anomalies,
  server: { requests: srvFinal.requests, connections: srvFinal.connections, served: srvFinal.served, liveSocketsAfter: srvFinal.liveSockets },
  after: { rssMB: +(afterMem.rss / 2 ** 20).toFixed(1), heapUsedMB: +(afterMem.heapUsed / 2 ** 20).toFixed(1), fds: after.fds, clientSockets: after.total, clientSocketsByState: after.byState },
  verdict: { rss, sockets, pass: problems === 0 && rss.flat && sockets.flat },
  samples,
}

log('')
log(`finished ${counts.finished} streams in ${summary.seconds} s (${summary.streamsPerSecond}/s; in-flight ones drained in ${drainMs} ms); server: ${srvFinal.requests} requests on ${srvFinal.connections} connections`)
log(`  ok ${counts.ok}, typed errors ${counts.typed}, untyped ${counts.untyped}, incomplete ${counts.incomplete}, truncated ${counts.truncated}, corrupt ${counts.corrupt}; caller ended early: ${counts.abortedByCaller} aborted, ${counts.leftByCaller} left the loop; ${counts.replayBoundaryCrossed} errors after output (replayBoundaryCrossed)`)
log('  errors by kind:')
for (const [k, v] of Object.entries(summary.kinds)) log(`    ${String(v).padStart(7)}  ${k}`)
log(`  served: ${Object.entries(srvFinal.served).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(', ')}`)
log(`  retry chunks ${chunkKinds.providerRetry}, stall chunks ${chunkKinds.providerStall}`)
for (const u of untypedSamples.slice(0, 5)) log(`  untyped: ${JSON.stringify(u.detail)}`)
for (const a of anomalies.slice(0, 5)) log(`  ${a.kind}: ${JSON.stringify(a.text).slice(0, 200)}`)
log(`  RSS (after GC) first-third median ${rss.firstThirdMedian} MB, last-third ${rss.lastThirdMedian} MB (×${rss.ratio}): ${rss.flat ? 'flat' : 'NOT flat'}`)
log(`  client sockets first-third median ${sockets.firstThirdMedian}, last-third ${sockets.lastThirdMedian} (×${sockets.ratio}): ${sockets.flat ? 'flat' : 'NOT flat'}`)
log(`  after the run: ${after.total} client sockets (${Object.entries(after.byState).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}), server live ${srvFinal.liveSockets}, fds ${after.fds}, rss ${summary.after.rssMB} MB`)
log(`verdict: ${summary.verdict.pass ? 'PASS' : 'FAIL'}`)
if (JSON_OUT === true) console.log(JSON.stringify(summary))
else if (typeof JSON_OUT === 'string') writeFileSync(JSON_OUT, JSON.stringify(summary, null, 1) + '\n')
server.send('exit')
process.exit(summary.verdict.pass ? 0 : 1)

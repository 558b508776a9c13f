// The faulty loopback provider of the soak bench (bench/soak.mjs), in its own process so its CPU
// and memory are counted apart from the client's. Chat Completions SSE on
// POST /v1/chat/completions; every request draws one behaviour from a seeded PRNG (the n-th
// request of the run always draws the same behaviour for a seed; which stream sends the n-th
// request depends on timing):
//
//   ok             a complete stream: k content deltas, finish "stop", usage, [DONE]; the deltas
//                  are written a few at a time with small gaps
//   reset-early    the request is read, then the connection is reset (RST), no response byte
//   reset-mid      headers and some deltas, then the connection is reset (RST)
//   stall-headers  no response at all for `stallMs` (longer than the client's idle timeout)
//   stall-mid      headers and some deltas, `stallMs` of silence, then the rest of the stream
//   http429        429 with Retry-After (seconds, possibly fractional) or retry-after-ms, small
//   http503        the same with 503
//   malformed      headers and some deltas, then one broken event (cut-off JSON, text that is no
//                  JSON, an event without data), then the rest of the stream
//   bad-bytes      a complete stream with one delta whose JSON string holds invalid UTF-8 bytes
//                  (decoded lossily to U+FFFD by a client; the stream is otherwise complete)
//   crlf           a complete stream with CRLF line ends and SSE comment lines (valid SSE)
//   drip           a complete stream (content-length body) written one byte per timer tick
//   early-close    headers and some deltas, then a clean end of the body without finish/[DONE]
//   eof            headers, then a clean end of the body with no event at all
//
// Every stream's text is `<k>| w0 w1 … w<k-1> ` with the count first, so a client can tell a
// complete text from a cut one.
//
// Configuration: one JSON argument {seed, stallMs: [min, max], weights: {behaviour: weight},
// dripTickMs, gapMs}. IPC: the parent sends "stats" and gets {liveSockets, connections,
// requests, served: {behaviour: n}, cpuMs, rssBytes}. Prints {"baseUrl"} on its first stdout
// line; exits on "exit" or when the IPC channel closes.
import { createServer } from 'node:http'

const opts = JSON.parse(process.argv[2] ?? '{}')
const SEED = opts.seed >>> 0
const [STALL_MIN, STALL_MAX] = opts.stallMs ?? [1500, 2500]
const DRIP_TICK_MS = opts.dripTickMs ?? 1
const GAP_MS = opts.gapMs ?? 15
const DEFAULT_WEIGHTS = {
  ok: 30,
  'reset-early': 5,
  'reset-mid': 6,
  'stall-headers': 3,
  'stall-mid': 4,
  http429: 7,
  http503: 7,
  malformed: 6,
  'bad-bytes': 3,
  crlf: 4,
  drip: 5,
  'early-close': 5,
  eof: 3,
}
const WEIGHTS = { ...DEFAULT_WEIGHTS, ...(opts.weights ?? {}) }

// mulberry32: a small seeded PRNG (the sequence of draws is fixed by the seed).
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
const random = prng(SEED)
const int = (lo, hi) => lo + Math.floor(random() * (hi - lo + 1))
const entries = Object.entries(WEIGHTS).filter(([, w]) => w > 0)
const total = entries.reduce((s, [, w]) => s + w, 0)
function draw() {
  let r = random() * total
  for (const [name, w] of entries) if ((r -= w) < 0) return name
  return entries[entries.length - 1][0]
}

const base = { id: 'chatcmpl-soak', object: 'chat.completion.chunk', created: 1764458886, model: 'm' }
const frame = (delta, finish = null) => `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
const usage = `data: ${JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 12, completion_tokens: 8, total_tokens: 20 } })}\n\n`

/** The events of a complete stream of k words: role, `<k>| `, w0 … w<k-1>, finish, usage, [DONE]. */
function streamEvents(k) {
  const out = [frame({ role: 'assistant', content: '' }), frame({ content: `${k}| ` })]
  for (let i = 0; i < k; i++) out.push(frame({ content: `w${i} ` }))
  out.push(frame({}, 'stop'), usage, 'data: [DONE]\n\n')
  return out
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
let connections = 0
const sockets = new Set()
let requests = 0
const served = {}

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }

/** Writes the events a few per write with `GAP_MS` between writes; false once the client is gone. */
async function writePaced(res, events) {
  for (let i = 0; i < events.length; ) {
    if (res.destroyed) return false
    const n = Math.min(events.length - i, int(1, 3))
    res.write(events.slice(i, i + n).join(''))
    i += n
    if (i < events.length) await sleep(GAP_MS)
  }
  return !res.destroyed
}

async function respond(req, res, behaviour) {
  const k = int(3, 12)
  const events = streamEvents(k)
  const cut = int(2, 2 + k) // events 0..cut-1 are written before a mid-stream fault (some output)
  switch (behaviour) {
    case 'ok':
      res.writeHead(200, SSE_HEADERS)
      if (await writePaced(res, events)) res.end()
      return
    case 'reset-early':
      return req.socket.resetAndDestroy()
    case 'reset-mid':
      res.writeHead(200, SSE_HEADERS)
      if (await writePaced(res, events.slice(0, cut))) {
        await sleep(GAP_MS)
        req.socket.resetAndDestroy()
      }
      return
    case 'stall-headers':
      await sleep(int(STALL_MIN, STALL_MAX))
      if (res.destroyed) return
      res.writeHead(200, SSE_HEADERS)
      if (await writePaced(res, events)) res.end()
      return
    case 'stall-mid':
      res.writeHead(200, SSE_HEADERS)
      if (!(await writePaced(res, events.slice(0, cut)))) return
      await sleep(int(STALL_MIN, STALL_MAX))
      if (await writePaced(res, events.slice(cut))) res.end()
      return
    case 'http429':
    case 'http503': {
      const status = behaviour === 'http429' ? 429 : 503
      const headers = { 'content-type': 'application/json' }
      if (random() < 0.5) headers['retry-after-ms'] = String(int(5, 150))
      else headers['retry-after'] = ['0', '0.05', '0.2', '1'][int(0, 3)]
      res.writeHead(status, headers)
      const message = status === 429 ? 'Rate limit reached for requests' : 'Service unavailable'
      return res.end(JSON.stringify({ error: { message, type: status === 429 ? 'rate_limit_error' : 'overloaded_error', param: null, code: null } }))
    }
    case 'malformed': {
      const broken = [
        'data: {"id":"chatcmpl-soak","choices":[{"index":0,"delta":{"content":"cut\n\n',
        'data: this is not json\n\n',
        'event: ping\n\n',
        'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}}\n\n',
      ][int(0, 3)]
      res.writeHead(200, SSE_HEADERS)
      if (!(await writePaced(res, [...events.slice(0, cut), broken]))) return
      if (await writePaced(res, events.slice(cut))) res.end()
      return
    }
    case 'bad-bytes': {
      // One delta whose JSON string holds the bytes 0xff 0xfe (never valid UTF-8).
      const [pre, post] = frame({ content: '@@' }).split('@@')
      res.writeHead(200, SSE_HEADERS)
      if (!(await writePaced(res, events.slice(0, cut)))) return
      res.write(Buffer.concat([Buffer.from(pre), Buffer.from([0xff, 0xfe]), Buffer.from(post)]))
      if (await writePaced(res, events.slice(cut))) res.end()
      return
    }
    case 'crlf': {
      res.writeHead(200, SSE_HEADERS)
      const crlf = events.map((e) => `: keep-alive\r\n${e.replace(/\n/g, '\r\n')}`)
      if (await writePaced(res, crlf)) res.end()
      return
    }
    case 'drip': {
      const body = Buffer.from(events.join(''))
      res.writeHead(200, { ...SSE_HEADERS, 'content-length': body.length })
      for (let i = 0; i < body.length; i++) {
        if (res.destroyed) return
        res.write(body.subarray(i, i + 1))
        await sleep(DRIP_TICK_MS)
      }
      return res.end()
    }
    case 'early-close':
      res.writeHead(200, SSE_HEADERS)
      if (await writePaced(res, events.slice(0, Math.min(cut, events.length - 3)))) res.end()
      return
    case 'eof':
      res.writeHead(200, SSE_HEADERS)
      return res.end()
  }
}

const server = createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' })
      return res.end(JSON.stringify({ error: { message: `soak: no ${req.method} ${req.url}` } }))
    }
    requests++
    const behaviour = draw()
    served[behaviour] = (served[behaviour] ?? 0) + 1
    respond(req, res, behaviour).catch(() => res.destroy())
  })
})
// Sockets reset by the server itself, or by a client that went away, are no server error.
server.on('clientError', (_err, socket) => socket.destroy())
server.on('connection', (socket) => {
  connections++
  sockets.add(socket)
  socket.on('error', () => {})
  socket.on('close', () => sockets.delete(socket))
})
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
process.stdout.write(JSON.stringify({ baseUrl: `http://127.0.0.1:${server.address().port}`, seed: SEED }) + '\n')
process.on('message', (m) => {
  if (m === 'stats') {
    const cpu = process.cpuUsage()
    process.send({ liveSockets: sockets.size, connections, requests, served, cpuMs: (cpu.user + cpu.system) / 1000, rssBytes: process.memoryUsage().rss })
  } else if (m === 'exit') {
    for (const s of sockets) s.destroy()
    server.close(() => process.exit(0))
  }
})
process.on('disconnect', () => process.exit(0))

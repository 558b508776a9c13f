// Sequential streams against a plain loopback Node http server that ends every response
// normally (issue 12, finding 7: `Connection error.` in long sequential runs). The server runs in
// a child process and reports every connection it closed and why.
//
//   node bench/chat-sequential.mjs                      10,000 streams back to back
//   node bench/chat-sequential.mjs --gap-sweep          the idle time between two streams swept
//                                                        across the server's keep-alive close
//
// Env: SEQ_STREAMS (10000); SEQ_DELAY_MS (0: the server answers after this delay, to make a run
// last longer); SEQ_KEEPALIVE_MS / SEQ_KEEPALIVE_BUFFER_MS (the server's keepAliveTimeout and,
// on Node >= 22.19, keepAliveTimeoutBuffer; Node's defaults when unset); SEQ_HEADERS_TIMEOUT_MS,
// SEQ_REQUEST_TIMEOUT_MS, SEQ_CHECK_MS (headersTimeout, requestTimeout,
// connectionsCheckingInterval); for --gap-sweep SEQ_SWEEP_KEEPALIVE_MS (200), SEQ_SWEEP_TRIES (30
// per gap), SEQ_SWEEP_GAPS (ms relative to the measured close, default -6..+6).
import { fork } from 'node:child_process'
import { createServer } from 'node:http'

const frame = (delta, finish = null) => `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
const BODY = frame({ role: 'assistant', content: '' }) + frame({ content: 'hello ' }) + frame({ content: 'world' }) + frame({}, 'stop') + 'data: [DONE]\n\n'
const env = (k) => (process.env[k] === undefined ? undefined : Number(process.env[k]))

if (process.argv.includes('--server')) {
  // The server: Node's http module, every response complete; closes are recorded.
  const options = JSON.parse(process.argv[process.argv.indexOf('--server') + 1])
  const http = {}
  if (options.headersTimeout !== undefined) http.headersTimeout = options.headersTimeout
  if (options.requestTimeout !== undefined) http.requestTimeout = options.requestTimeout
  if (options.connectionsCheckingInterval !== undefined) http.connectionsCheckingInterval = options.connectionsCheckingInterval
  let connections = 0
  let handled = 0
  const closes = {}
  const server = createServer(http, (req, res) => {
    handled++
    req.socket.requests = (req.socket.requests ?? 0) + 1
    req.resume()
    req.on('end', () => {
      const send = () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        res.end(BODY)
        res.on('finish', () => (req.socket.lastResponseAt = performance.now()))
      }
      if (options.delayMs) setTimeout(send, options.delayMs)
      else send()
    })
  })
  if (options.keepAliveTimeout !== undefined) server.keepAliveTimeout = options.keepAliveTimeout
  if (options.keepAliveTimeoutBuffer !== undefined && 'keepAliveTimeoutBuffer' in server) server.keepAliveTimeoutBuffer = options.keepAliveTimeoutBuffer
  server.on('clientError', (err, socket) => {
    // Node's own answer (e.g. 408 for a request/headers timeout), recorded.
    socket.reason = err.code
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' && socket.writable) socket.end('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n')
    else socket.destroy()
  })
  server.on('connection', (socket) => {
    connections++
    socket.on('end', () => (socket.reason ??= 'client closed'))
    socket.on('timeout', () => (socket.reason ??= 'keep-alive timeout'))
    socket.on('error', (e) => (socket.reason ??= e.code))
    socket.on('close', () => {
      const why = `${socket.reason ?? 'server closed'}${socket.requests ? '' : ' (never used)'}`
      closes[why] = (closes[why] ?? 0) + 1
    })
  })
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  process.send({ port: server.address().port, keepAliveTimeout: server.keepAliveTimeout, keepAliveTimeoutBuffer: server.keepAliveTimeoutBuffer, headersTimeout: server.headersTimeout, requestTimeout: server.requestTimeout })
  process.on('message', (m) => m === 'stats' && process.send({ connections, handled, closes }))
  process.on('disconnect', () => process.exit(0))
} else {
  await main()
}

async function startServer(options) {
  const child = fork(new URL(import.meta.url).pathname, ['--server', JSON.stringify(options)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const info = await new Promise((r) => child.once('message', r))
  const stats = () => new Promise((r) => (child.once('message', r), child.send('stats')))
  return { ...info, stats, stop: () => child.kill() }
}

async function main() {
  const { createChatService } = await import('../lib/chat.js')
  const stream = async (service) => {
    let text = ''
    for await (const c of service.streamChat([{ role: 'user', content: 'hi' }])) text += c.content ?? ''
    if (text !== 'hello world') throw new Error(`unexpected text ${JSON.stringify(text)}`)
  }
  const describe = (e) => ({ name: e?.name, code: e?.code, message: e?.message, cause: e?.cause === undefined ? undefined : String(e.cause) })

  if (process.argv.includes('--gap-sweep')) {
    // Idle gaps swept across the moment the server closes an idle keep-alive connection.
    const keepAlive = env('SEQ_SWEEP_KEEPALIVE_MS') ?? 200
    const server = await startServer({ keepAliveTimeout: keepAlive, keepAliveTimeoutBuffer: 0 })
    const service = createChatService({ provider: 'openai-compatible', model: 'm', apiKey: 'sk-dummy', baseUrl: `http://127.0.0.1:${server.port}/v1`, maxRetries: 0 })
    // Node < 22.19 adds a fixed 1 s to keepAliveTimeout; newer ones keepAliveTimeoutBuffer (0 here).
    const closeAt = keepAlive + (server.keepAliveTimeoutBuffer === undefined ? 1000 : 0)
    const tries = env('SEQ_SWEEP_TRIES') ?? 30
    const offsets = (process.env.SEQ_SWEEP_GAPS ?? '-6,-4,-3,-2,-1,0,1,2,3,4,6').split(',').map(Number)
    console.log(`gap sweep: server keepAliveTimeout ${keepAlive} ms (closes an idle connection after ~${closeAt} ms; node ${process.version}), ${tries} tries per gap`)
    const rows = []
    for (const offset of offsets) {
      const gap = closeAt + offset
      const errors = {}
      for (let i = 0; i < tries; i++) {
        await stream(service).catch(() => {}) // a fresh connection, now idle in the pool
        const t = performance.now()
        while (performance.now() - t < gap - 3) await new Promise((r) => setTimeout(r, 1))
        while (performance.now() - t < gap) {}
        await stream(service).catch((e) => (errors[e.message] = (errors[e.message] ?? 0) + 1))
      }
      rows.push({ gapMs: gap, errors })
      console.log(`  idle ${String(gap).padStart(5)} ms: ${Object.entries(errors).map(([m, n]) => `${n}× ${m}`).join(', ') || 'no error'}`)
    }
    const s = await server.stats()
    console.log(`server: ${s.handled} requests handled of ${offsets.length * tries * 2} sent, ${s.connections} connections; closes: ${JSON.stringify(s.closes)}`)
    server.stop()
    return
  }

  const N = env('SEQ_STREAMS') ?? 10_000
  const server = await startServer({
    delayMs: env('SEQ_DELAY_MS') ?? 0,
    keepAliveTimeout: env('SEQ_KEEPALIVE_MS'),
    keepAliveTimeoutBuffer: env('SEQ_KEEPALIVE_BUFFER_MS'),
    headersTimeout: env('SEQ_HEADERS_TIMEOUT_MS'),
    requestTimeout: env('SEQ_REQUEST_TIMEOUT_MS'),
    connectionsCheckingInterval: env('SEQ_CHECK_MS'),
  })
  const service = createChatService({ provider: 'openai-compatible', model: 'm', apiKey: 'sk-dummy', baseUrl: `http://127.0.0.1:${server.port}/v1`, maxRetries: 0 })
  console.log(`${N} sequential streams (node ${process.version}); server keepAliveTimeout ${server.keepAliveTimeout} ms (+ buffer ${server.keepAliveTimeoutBuffer ?? '1000, fixed'}), headersTimeout ${server.headersTimeout} ms, requestTimeout ${server.requestTimeout} ms`)
  const errors = []
  const t0 = performance.now()
  for (let i = 0; i < N; i++) {
    try {
      await stream(service)
    } catch (e) {
      errors.push({ i, atMs: Math.round(performance.now() - t0), ...describe(e) })
    }
  }
  const s = await server.stats()
  const byMessage = {}
  for (const e of errors) byMessage[e.message] = (byMessage[e.message] ?? 0) + 1
  console.log(`${N} streams in ${Math.round(performance.now() - t0)} ms: ${errors.length} errors ${JSON.stringify(byMessage)}`)
  for (const e of errors.slice(0, 20)) console.log(`  stream ${e.i} at ${e.atMs} ms: ${JSON.stringify(e)}`)
  console.log(`server: ${s.handled} requests handled, ${s.connections} connections; closes: ${JSON.stringify(s.closes)}`)
  server.stop()
}

// The loopback provider for the chat benchmark, in its own process so its CPU is counted on
// neither side. Every scenario's body is built once at start-up, so every request of a scenario
// (pi-native's, the reference's) receives the same bytes, written the same way.
//
// The scenario is the first path segment: POST /<scenario>/v1/chat/completions.
//   text       10,000 content deltas, then finish "stop" and a usage chunk
//   tools      100 tool calls (index 0..99) of 100 argument fragments each (10,000 tool-call
//              deltas), finish "tool_calls"
//   reasoning  10,000 reasoning_content deltas, then 100 content deltas, finish "stop"
//   small      20 content deltas, finish "stop" and a usage chunk (the memory bench's stream)
// A `-paced` suffix (e.g. text-paced) writes the body 16 events per write, one write per
// event-loop turn, instead of all at once: reads then carry a few events each, as from a live
// provider.
//
// Prints {"baseUrl": "http://127.0.0.1:<port>"} on its first stdout line; exits when stdin ends.
import { createServer } from 'node:http'

export const CHUNKS = 10_000
const TOOL_CALLS = 100
const PACED_EVENTS_PER_WRITE = 16

const base = { id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1764458886, model: 'm', system_fingerprint: 'fp_bench' }
const chunk = (delta, finish = null) => ({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null })
const usage = {
  ...base,
  choices: [],
  usage: {
    prompt_tokens: 1200,
    completion_tokens: 8500,
    total_tokens: 9700,
    prompt_tokens_details: { cached_tokens: 1024, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 3000, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  },
}

function frames(kind) {
  const out = [chunk({ role: 'assistant', content: null, reasoning_content: '' })]
  let finish = 'stop'
  if (kind === 'text') {
    for (let i = 0; i < CHUNKS; i++) out.push(chunk({ content: `t${i} `, reasoning_content: null }))
  } else if (kind === 'reasoning') {
    for (let i = 0; i < CHUNKS; i++) out.push(chunk({ content: null, reasoning_content: `r${i} ` }))
    for (let i = 0; i < 100; i++) out.push(chunk({ content: `t${i} `, reasoning_content: null }))
  } else if (kind === 'small') {
    for (let i = 0; i < 20; i++) out.push(chunk({ content: `t${i} `, reasoning_content: null }))
  } else if (kind === 'tools') {
    const per = CHUNKS / TOOL_CALLS
    for (let c = 0; c < TOOL_CALLS; c++) {
      // Fragments that join to {"path":"src/file_<c>.rs","content":"line 1\n...","n":<c>}
      const pieces = [`{"path":"src/file_${c}.rs","content":"`]
      for (let j = 1; j < per - 1; j++) pieces.push(`line ${j} \\"q\\"\\n`)
      pieces.push(`","n":${c}}`)
      out.push(chunk({ tool_calls: [{ index: c, id: `call_${c}`, type: 'function', function: { name: c % 2 ? 'write_file' : 'read_file', arguments: pieces[0] } }] }))
      for (const piece of pieces.slice(1)) out.push(chunk({ tool_calls: [{ index: c, function: { arguments: piece } }] }))
    }
    finish = 'tool_calls'
  } else {
    throw new Error(`unknown bench scenario ${kind}`)
  }
  out.push(chunk({}, finish))
  out.push(usage)
  return [...out.map((f) => `data: ${JSON.stringify(f)}\n\n`), 'data: [DONE]\n\n']
}

const bodies = new Map()
for (const kind of ['text', 'tools', 'reasoning', 'small']) {
  const events = frames(kind)
  bodies.set(kind, [Buffer.from(events.join(''))])
  const writes = []
  for (let i = 0; i < events.length; i += PACED_EVENTS_PER_WRITE) writes.push(Buffer.from(events.slice(i, i + PACED_EVENTS_PER_WRITE).join('')))
  bodies.set(`${kind}-paced`, writes)
}

const server = createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    const scenario = req.url.split('/')[1]
    const writes = bodies.get(scenario)
    if (req.method !== 'POST' || !writes || !req.url.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' })
      return res.end(JSON.stringify({ error: { message: `bench: no ${req.method} ${req.url}` } }))
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    if (writes.length === 1) return res.end(writes[0])
    let i = 0
    const next = () => {
      if (res.destroyed) return
      if (i === writes.length - 1) return res.end(writes[i])
      res.write(writes[i++])
      setImmediate(next)
    }
    next()
  })
})
// A deep accept queue: the memory bench opens 1,000 connections at once.
await new Promise((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, resolve))
process.stdout.write(JSON.stringify({ baseUrl: `http://127.0.0.1:${server.address().port}` }) + '\n')
process.stdin.resume()
process.stdin.on('end', () => server.close(() => process.exit(0)))

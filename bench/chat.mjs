// Streaming one 10,000-chunk Chat Completions response from a loopback server: CPU time
// (user + sys of this process, which includes pi-native's tokio threads), wall time and time to
// first chunk, pi-native/chat vs @earendil-works/pi-ai 0.84 (the same bytes, one process).
// Runs on Node 22 (pi-ai needs >= 22.19): `npm run bench:chat`.
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { createChatService, getModel } from '../lib/chat.js'

const CHUNKS = 10_000
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9)

const server = spawn(process.execPath, [new URL('./chat-server.mjs', import.meta.url).pathname], { stdio: ['pipe', 'pipe', 'inherit'] })
const { baseUrl } = JSON.parse(await new Promise((resolve) => createInterface({ input: server.stdout }).once('line', resolve)))

const model = { ...getModel('openai', 'gpt-4.1'), baseUrl: `${baseUrl}/v1` }
const headers = { 'x-mock-scenario': `stream:${CHUNKS}` }
const messages = [{ role: 'user', content: 'Stream please.' }]

async function measure(run) {
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  let first = 0
  let n = 0
  await run(() => {
    if (n++ === 0) first = performance.now() - t0
  })
  const wall = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  return { cpuMs: (cpu.user + cpu.system) / 1000, wallMs: wall, firstMs: first, chunks: n }
}

const service = createChatService({ provider: 'openai', model: 'gpt-4.1', apiKey: 'sk-bench', customHeaders: headers, maxRetries: 0 }, { models: [model] })
const piNative = (onChunk) =>
  (async () => {
    for await (const chunk of service.streamChat(messages)) if (chunk.content !== undefined) onChunk()
  })()

let piAi
try {
  const { stream } = await import('pi-ai-0.84/compat')
  piAi = (onChunk) =>
    (async () => {
      const events = stream(model, { messages: [{ role: 'user', content: 'Stream please.', timestamp: Date.now() }] }, { apiKey: 'sk-bench', headers, maxRetries: 0 })
      for await (const e of events) if (e.type === 'text_delta') onChunk()
    })()
} catch (error) {
  console.error(`pi-ai could not be loaded (${error.message}); run this bench on Node >= 22.19`)
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
const results = {}
for (const [name, run] of [['pi-native', piNative], ['pi-ai 0.84', piAi]]) {
  if (!run) continue
  await measure(run) // warm-up
  const rows = []
  for (let i = 0; i < ROUNDS; i++) rows.push(await measure(run))
  if (rows.some((r) => r.chunks !== CHUNKS)) throw new Error(`${name} streamed ${rows[0].chunks} chunks, expected ${CHUNKS}`)
  results[name] = { cpuMs: median(rows.map((r) => r.cpuMs)), wallMs: median(rows.map((r) => r.wallMs)), firstMs: median(rows.map((r) => r.firstMs)) }
}
server.stdin.end()

console.log(`\nstream ${CHUNKS} chunks from loopback, medians of ${ROUNDS} (node ${process.version})\n`)
console.log('| client | CPU ms (user+sys) | wall ms | first chunk ms | CPU µs/chunk |')
console.log('|---|---:|---:|---:|---:|')
for (const [name, r] of Object.entries(results)) {
  console.log(`| ${name} | ${r.cpuMs.toFixed(1)} | ${r.wallMs.toFixed(1)} | ${r.firstMs.toFixed(2)} | ${((r.cpuMs * 1000) / CHUNKS).toFixed(2)} |`)
}
if (results['pi-native'] && results['pi-ai 0.84']) {
  console.log(`\npi-native CPU = ${(results['pi-native'].cpuMs / results['pi-ai 0.84'].cpuMs).toFixed(2)}x pi-ai's; wall = ${(results['pi-native'].wallMs / results['pi-ai 0.84'].wallMs).toFixed(2)}x`)
}

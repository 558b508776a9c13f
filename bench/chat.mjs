// Chat streaming, side by side: pi-native/chat against Blade's PiAIChatService on pi-ai 0.84.2
// (the reference), each in its own child process, streaming the same bytes from one loopback
// server (bench/chat-server.mjs, a third process). Per scenario: CPU of the streaming phase
// (process.cpuUsage user+sys of the side's process, so pi-native's tokio threads count), wall
// time, time to the first chunk; medians of interleaved rounds. Before timing, both sides'
// complete chunk sequences must be equal.
//
//   npm run bench:chat                                  pi-native (+ pi-ai alone as a JS floor)
//   PI_CHAT_REF=<folder> npm run bench:chat             + the reference column and the ratio
//
// PI_CHAT_REF is a folder holding Blade's `blade/services/PiAIChatService.ts` and a node_modules
// with @earendil-works/pi-ai 0.84.2 and tsx (how to build it: shared/notes/reference-builds.md
// §2). Runs on Node 22 (pi-ai needs >= 22.19). BENCH_ROUNDS (default 9), BENCH_SCENARIOS
// (comma-separated, default text,tools,reasoning,text-paced).
import { fork, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { isDeepStrictEqual } from 'node:util'

const SIDE = process.argv.find((a) => a.startsWith('--side='))?.slice(7)
const messages = [{ role: 'user', content: 'Stream please.' }]
const config = (baseUrl, scenario) => ({ provider: 'openai-compatible', model: 'm', apiKey: 'sk-bench', baseUrl: `${baseUrl}/${scenario}/v1`, maxRetries: 0 })

// ---------------------------------------------------------------------------------------------
// A side (child process): answers {scenario, collect} with a measurement (and the chunks).

async function side(name) {
  let streamChunks // (baseUrl, scenario) => async iterable of StreamChunk-like values
  if (name === 'pi-native') {
    const { createChatService } = await import('../lib/chat.js')
    const services = new Map()
    streamChunks = (baseUrl, scenario) => {
      if (!services.has(scenario)) services.set(scenario, createChatService(config(baseUrl, scenario)))
      return services.get(scenario).streamChat(messages)
    }
  } else if (name === 'reference') {
    const { PiAIChatService } = await import(join(process.env.PI_CHAT_REF, 'blade/services/PiAIChatService.ts'))
    const services = new Map()
    streamChunks = (baseUrl, scenario) => {
      if (!services.has(scenario)) services.set(scenario, new PiAIChatService(config(baseUrl, scenario)))
      return services.get(scenario).streamChat(messages)
    }
  } else if (name === 'pi-ai') {
    // pi-ai's own stream, no Blade around it: a floor for what any JS client pays. Its events are
    // projected to StreamChunks like Blade does (text, thinking, tool-call end, done).
    const { stream } = await import('pi-ai-0.84/compat')
    const { getModel } = await import('../lib/chat.js')
    streamChunks = async function* (baseUrl, scenario) {
      const model = { ...getModel('openai-compatible', 'm'), baseUrl: `${baseUrl}/${scenario}/v1` }
      const events = stream(model, { messages: messages.map((m) => ({ ...m, timestamp: 0 })) }, { apiKey: 'sk-bench', maxRetries: 0 })
      let index = 0
      for await (const e of events) {
        if (e.type === 'text_delta') yield { content: e.delta }
        else if (e.type === 'thinking_delta') yield { reasoningContent: e.delta }
        else if (e.type === 'toolcall_end') {
          const c = e.toolCall
          yield { toolCalls: [{ index: index++, id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } }] }
        } else if (e.type === 'done') yield { finishReason: e.reason }
        else if (e.type === 'error') throw new Error(e.error?.errorMessage ?? 'error')
      }
    }
  }
  process.on('message', async ({ baseUrl, scenario, collect }) => {
    try {
      const chunks = collect ? [] : undefined
      let n = 0
      let first = 0
      const cpu0 = process.cpuUsage()
      const t0 = performance.now()
      for await (const chunk of streamChunks(baseUrl, scenario)) {
        if (n++ === 0) first = performance.now() - t0
        chunks?.push(chunk)
      }
      const wallMs = performance.now() - t0
      const cpu = process.cpuUsage(cpu0)
      process.send({ cpuMs: (cpu.user + cpu.system) / 1000, wallMs, firstMs: first, chunks: n, sequence: chunks })
    } catch (error) {
      process.send({ error: String(error?.stack ?? error) })
    }
  })
  process.send({ ready: true })
}

if (SIDE) {
  await side(SIDE)
} else {
  await main()
}

// ---------------------------------------------------------------------------------------------
// The parent: server, sides, verification, interleaved rounds, the table.

function startSide(name, execArgv = [], env = {}) {
  const child = fork(new URL(import.meta.url).pathname, [`--side=${name}`], { execArgv, env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const replies = []
  let waiting = null
  child.on('message', (m) => (waiting ? (waiting(m), (waiting = null)) : replies.push(m)))
  const next = () => (replies.length ? Promise.resolve(replies.shift()) : new Promise((r) => (waiting = r)))
  const exited = new Promise((_, reject) => child.on('exit', (code) => reject(new Error(`${name} side exited (${code})`))))
  exited.catch(() => {}) // a side killed at the end is no failure
  const ask = async (msg) => {
    child.send(msg)
    const reply = await Promise.race([next(), exited])
    if (reply.error) throw new Error(`${name}: ${reply.error}`)
    return reply
  }
  return { name, child, ready: Promise.race([next(), exited]), ask }
}

async function main() {
  const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9)
  const SCENARIOS = (process.env.BENCH_SCENARIOS ?? 'text,tools,reasoning,text-paced').split(',')
  const server = spawn(process.execPath, [new URL('./chat-server.mjs', import.meta.url).pathname], { stdio: ['pipe', 'pipe', 'inherit'] })
  const { baseUrl } = JSON.parse(await new Promise((r) => createInterface({ input: server.stdout }).once('line', r)))

  const sides = [startSide('pi-native')]
  let storage
  const ref = process.env.PI_CHAT_REF ? resolve(process.env.PI_CHAT_REF) : undefined
  if (ref) {
    const loader = join(ref, 'node_modules/tsx/dist/loader.mjs')
    const service = join(ref, 'blade/services/PiAIChatService.ts')
    for (const p of [loader, service]) if (!existsSync(p)) throw new Error(`PI_CHAT_REF=${ref}: ${p} is missing (see shared/notes/reference-builds.md §2)`)
    // Blade writes nothing under the home folder: its storage root is a scratch folder.
    storage = mkdtempSync(join(tmpdir(), 'pi-chat-bench-'))
    sides.push(startSide('reference', ['--import', `file://${loader}`], { BLADE_STORAGE_ROOT: storage }))
  }
  let floor = startSide('pi-ai')
  try {
    await floor.ready
    sides.push(floor)
  } catch (error) {
    console.error(`pi-ai 0.84 could not be loaded (${error.message}); the pi-ai floor is left out (Node >= 22.19 needed)`)
    floor = undefined
  }
  for (const s of sides) await s.ready

  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
  const results = {}
  try {
    for (const scenario of SCENARIOS) {
      // Same result first: the complete chunk sequences of pi-native and the reference are equal;
      // the pi-ai floor projects its own events, so it must give the same text, tool calls and
      // finish reason.
      const seqs = {}
      for (const s of sides) seqs[s.name] = (await s.ask({ baseUrl, scenario, collect: true })).sequence
      if (seqs.reference && !isDeepStrictEqual(seqs.reference, seqs['pi-native'])) {
        const i = seqs.reference.findIndex((c, k) => !isDeepStrictEqual(c, seqs['pi-native'][k]))
        throw new Error(`${scenario}: pi-native and the reference differ at chunk ${i}: ${JSON.stringify(seqs['pi-native'][i])} vs ${JSON.stringify(seqs.reference[i])}`)
      }
      if (seqs['pi-ai']) {
        const essence = (seq) => seq.filter((c) => c.content || c.reasoningContent || c.toolCalls || c.finishReason).map((c) => (c.finishReason ? { finishReason: c.finishReason } : c))
        if (!isDeepStrictEqual(essence(seqs['pi-ai']), essence(seqs['pi-native']))) throw new Error(`${scenario}: pi-ai's stream gives another result than pi-native's`)
      }
      const rows = Object.fromEntries(sides.map((s) => [s.name, []]))
      for (let round = -2; round < ROUNDS; round++) {
        // Interleaved, alternating order; two warm-up rounds are not kept.
        for (const s of round % 2 ? sides : [...sides].reverse()) {
          const r = await s.ask({ baseUrl, scenario })
          if (r.chunks !== seqs[s.name].length) throw new Error(`${s.name} streamed ${r.chunks} chunks in ${scenario}, ${seqs[s.name].length} when verified`)
          if (round >= 0) rows[s.name].push(r)
        }
      }
      results[scenario] = {}
      for (const [name, rs] of Object.entries(rows)) {
        results[scenario][name] = {
          cpuMs: median(rs.map((r) => r.cpuMs)),
          wallMs: median(rs.map((r) => r.wallMs)),
          firstMs: median(rs.map((r) => r.firstMs)),
          chunks: rs[0].chunks,
        }
      }
    }
  } finally {
    for (const s of sides) s.child.kill()
    server.stdin.end()
    if (storage) rmSync(storage, { recursive: true, force: true })
  }

  const events = { text: 10_000, tools: 10_000, reasoning: 10_100 }
  const names = { 'pi-native': 'pi-native', reference: 'Blade + pi-ai 0.84.2', 'pi-ai': 'pi-ai 0.84.2 alone (floor)' }
  console.log(`\nchat: stream from loopback, one child process per side, medians of ${ROUNDS} interleaved rounds (node ${process.version}, ${new Date().toISOString().slice(0, 10)})`)
  if (!ref) console.log('\nThe reference column is missing: set PI_CHAT_REF=<folder with Blade\'s PiAIChatService on pi-ai 0.84.2> (shared/notes/reference-builds.md §2).')
  console.log('\n| scenario | client | CPU ms (user+sys) | wall ms | first chunk ms | CPU µs / SSE event | chunks |')
  console.log('|---|---|---:|---:|---:|---:|---:|')
  for (const [scenario, byName] of Object.entries(results)) {
    const n = events[scenario.replace(/-paced$/, '')]
    for (const [name, r] of Object.entries(byName)) {
      console.log(`| ${scenario} | ${names[name]} | ${r.cpuMs.toFixed(1)} | ${r.wallMs.toFixed(1)} | ${r.firstMs.toFixed(2)} | ${((r.cpuMs * 1000) / n).toFixed(2)} | ${r.chunks} |`)
    }
  }
  if (ref) {
    console.log('\n| scenario | reference CPU ms | pi-native CPU ms | CPU ratio | reference first chunk ms | pi-native first chunk ms |')
    console.log('|---|---:|---:|---:|---:|---:|')
    for (const [scenario, byName] of Object.entries(results)) {
      const [r, p] = [byName.reference, byName['pi-native']]
      console.log(`| ${scenario} | ${r.cpuMs.toFixed(1)} | ${p.cpuMs.toFixed(1)} | ${(r.cpuMs / p.cpuMs).toFixed(1)}× | ${r.firstMs.toFixed(2)} | ${p.firstMs.toFixed(2)} |`)
    }
  }
}

// Chat memory: bursts of concurrent streams, and the memory each side keeps after every burst.
// Each side runs in its own child process (node --expose-gc) against one loopback server
// process (bench/chat-server.mjs, scenario `small`: 20 content deltas, finish, usage). Per burst:
// BENCH_BURST_SIZE streams started at once and drained completely, then a full GC (twice, with
// a macrotask between them so finalizers and native release run), then RSS, JS heap used and
// the side's TCP connections to the server (its idle connection pool) are recorded.
//
//   npm run bench:chat-memory                             pi-native
//   PI_CHAT_REF=<folder> npm run bench:chat-memory        + Blade's PiAIChatService, side by side
//
// BENCH_BURSTS (default 10), BENCH_BURST_SIZE (default 1000). PI_CHAT_REF as for bench/chat.mjs.
// The environment reaches the children, so allocator options (e.g. MIMALLOC_PURGE_DELAY=0) apply
// to them; BENCH_NODE_FLAGS adds Node flags to both children (e.g. --max-semi-space-size=1 keeps
// V8's young generation from growing, which a full GC does not undo). `--json` prints the results
// as JSON after the tables.
//
// Reading the numbers: RSS after GC includes V8's heap *capacity* (heap total; its young
// generation grows under allocation pressure up to 2 x the max semi-space, 32 MB by default, and
// stays), the native allocator's retained pages and the pooled idle connections.
import { fork, spawn } from 'node:child_process'
import v8 from 'node:v8'
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'

const SIDE = process.argv.find((a) => a.startsWith('--side='))?.slice(7)
const BURSTS = Number(process.env.BENCH_BURSTS ?? 10)
const SIZE = Number(process.env.BENCH_BURST_SIZE ?? 1000)
const messages = [{ role: 'user', content: 'Stream please.' }]
const config = (baseUrl) => ({ provider: 'openai-compatible', model: 'm', apiKey: 'sk-bench', baseUrl: `${baseUrl}/small/v1`, maxRetries: 0 })
const MB = 2 ** 20

/** This process's TCP connections to `port` (by /proc/self/fd and /proc/net/tcp). */
function connectionsTo(port) {
  const inodes = new Set()
  try {
    for (const fd of readdirSync('/proc/self/fd')) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`))
        if (m) inodes.add(m[1])
      } catch {}
    }
  } catch {
    return null
  }
  let n = 0
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text
    try {
      text = readFileSync(file, 'utf8')
    } catch {
      continue
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/)
      if (f.length >= 10 && inodes.has(f[9]) && parseInt(f[2].split(':')[1], 16) === port) n++
    }
  }
  return n
}

/** Anonymous memory and the part of it in transparent huge pages, MB (/proc/self/smaps_rollup). */
function anonymous() {
  try {
    const text = readFileSync('/proc/self/smaps_rollup', 'utf8')
    const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN)
    return { anonMB: kb('Anonymous') / 1024, anonHugeMB: kb('AnonHugePages') / 1024 }
  } catch {
    return {}
  }
}

// ---------------------------------------------------------------------------------------------
// A side (child process).

async function side(name) {
  let service
  if (name === 'pi-native') {
    const { createChatService } = await import('../lib/chat.js')
    service = (baseUrl) => createChatService(config(baseUrl))
  } else {
    const { PiAIChatService } = await import(join(process.env.PI_CHAT_REF, 'blade/services/PiAIChatService.ts'))
    service = (baseUrl) => new PiAIChatService(config(baseUrl))
  }
  const settle = async () => {
    for (let i = 0; i < 2; i++) {
      await new Promise((r) => setTimeout(r, 50))
      globalThis.gc()
    }
  }
  process.once('message', async ({ baseUrl }) => {
    const port = Number(new URL(baseUrl).port)
    const s = service(baseUrl)
    const one = async () => {
      let n = 0
      for await (const chunk of s.streamChat(messages)) if (chunk.content) n++
      if (n !== 20) throw new Error(`${n} content chunks, 20 expected`)
    }
    // One stream first, so the module, the service and the client are loaded before the baseline.
    await one()
    await settle()
    const mem = () => {
      const m = process.memoryUsage()
      const newSpace = v8.getHeapSpaceStatistics().find((x) => x.space_name === 'new_space')
      return { rssMB: m.rss / MB, heapUsedMB: m.heapUsed / MB, heapTotalMB: m.heapTotal / MB, newSpaceMB: (newSpace?.physical_space_size ?? NaN) / MB, externalMB: m.external / MB, ...anonymous(), connections: connectionsTo(port) }
    }
    process.send({ burst: 0, ms: 0, errors: 0, ...mem() })
    for (let burst = 1; burst <= BURSTS; burst++) {
      const t0 = performance.now()
      const results = await Promise.allSettled(Array.from({ length: SIZE }, one))
      const ms = performance.now() - t0
      const failed = results.filter((r) => r.status === 'rejected')
      await settle()
      process.send({ burst, ms, errors: failed.length, firstError: failed[0] ? String(failed[0].reason?.message ?? failed[0].reason) : undefined, ...mem() })
    }
    // Exit on our own (not by a signal), so exit-time reports such as MIMALLOC_SHOW_STATS=1 print.
    process.send({ done: true }, () => process.exit(0))
  })
  process.send({ ready: true })
}

if (SIDE) await side(SIDE)
else await main()

// ---------------------------------------------------------------------------------------------
// The parent.

function runSide(name, baseUrl, execArgv, env) {
  return new Promise((resolvePromise, reject) => {
    const flags = (process.env.BENCH_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean)
    const child = fork(new URL(import.meta.url).pathname, [`--side=${name}`], { execArgv: ['--expose-gc', ...flags, ...execArgv], env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    const rows = []
    child.on('message', (m) => {
      if (m.ready) child.send({ baseUrl })
      else if (m.done) child.once('exit', () => resolvePromise(rows))
      else {
        rows.push(m)
        console.error(`  ${name} burst ${m.burst}: rss ${m.rssMB.toFixed(1)} MB, heap used ${m.heapUsedMB.toFixed(1)} MB of ${m.heapTotalMB.toFixed(1)} (new space ${m.newSpaceMB.toFixed(1)}), anonymous ${m.anonMB?.toFixed(1)} MB (${m.anonHugeMB?.toFixed(1)} in huge pages), ${m.connections} connections, ${m.ms.toFixed(0)} ms${m.errors ? `, ${m.errors} errors (${m.firstError})` : ''}`)
      }
    })
    child.on('exit', (code) => code !== 0 && reject(new Error(`${name} side exited (${code}) after ${rows.length} bursts`)))
  })
}

async function main() {
  const server = spawn(process.execPath, [new URL('./chat-server.mjs', import.meta.url).pathname], { stdio: ['pipe', 'pipe', 'inherit'] })
  const { baseUrl } = JSON.parse(await new Promise((r) => createInterface({ input: server.stdout }).once('line', r)))
  const ref = process.env.PI_CHAT_REF ? resolve(process.env.PI_CHAT_REF) : undefined
  const mimalloc = Object.entries(process.env).filter(([k]) => k.startsWith('MIMALLOC_')).map(([k, v]) => `${k}=${v}`)
  const settings = [...mimalloc, ...(process.env.BENCH_NODE_FLAGS ? [process.env.BENCH_NODE_FLAGS] : [])]
  console.log(`chat memory: ${BURSTS} bursts of ${SIZE} concurrent streams (20 deltas each) from loopback, one child process per side, after each burst a full GC (node ${process.version}, ${new Date().toISOString().slice(0, 10)}${settings.length ? `, ${settings.join(' ')}` : ''})`)
  const results = {}
  let storage
  try {
    results['pi-native'] = await runSide('pi-native', baseUrl, [], {})
    if (ref) {
      const loader = join(ref, 'node_modules/tsx/dist/loader.mjs')
      const service = join(ref, 'blade/services/PiAIChatService.ts')
      for (const p of [loader, service]) if (!existsSync(p)) throw new Error(`PI_CHAT_REF=${ref}: ${p} is missing (see shared/notes/reference-builds.md §2)`)
      storage = mkdtempSync(join(tmpdir(), 'pi-chat-memory-'))
      results.reference = await runSide('reference', baseUrl, ['--import', `file://${loader}`], { BLADE_STORAGE_ROOT: storage })
    }
  } finally {
    server.stdin.end()
    if (storage) rmSync(storage, { recursive: true, force: true })
  }
  if (!ref) console.log('\nThe reference column is missing: set PI_CHAT_REF=<folder with Blade\'s PiAIChatService on pi-ai 0.84.2> (shared/notes/reference-builds.md §2).')
  const sides = Object.keys(results)
  const names = { 'pi-native': 'pi-native', reference: 'Blade + pi-ai 0.84.2' }
  const head = sides.map((s) => `${names[s]} RSS MB | heap used / total (new space) MB | conns | burst ms`).join(' | ')
  console.log(`\n| burst | ${head} |`)
  console.log(`|---:|${sides.map(() => '---:|---:|---:|---:').join('|')}|`)
  for (let b = 0; b <= BURSTS; b++) {
    const cells = sides.map((s) => {
      const r = results[s][b]
      return `${r.rssMB.toFixed(1)} | ${r.heapUsedMB.toFixed(1)} / ${r.heapTotalMB.toFixed(1)} (${r.newSpaceMB.toFixed(1)}) | ${r.connections ?? '?'} | ${b ? r.ms.toFixed(0) : '—'}`
    })
    console.log(`| ${b || 'baseline'} | ${cells.join(' | ')} |`)
  }
  console.log('')
  for (const s of sides) {
    const rows = results[s]
    const [first, last] = [rows[1], rows[rows.length - 1]]
    const errors = rows.reduce((n, r) => n + r.errors, 0)
    console.log(`${names[s]}: RSS after GC ${first.rssMB.toFixed(1)} MB after burst 1, ${last.rssMB.toFixed(1)} MB after burst ${BURSTS} (${last.rssMB >= first.rssMB ? '+' : ''}${(last.rssMB - first.rssMB).toFixed(1)} MB, ×${(last.rssMB / first.rssMB).toFixed(2)}); baseline ${rows[0].rssMB.toFixed(1)} MB; heap used ${first.heapUsedMB.toFixed(1)} → ${last.heapUsedMB.toFixed(1)} MB, heap total ${first.heapTotalMB.toFixed(1)} → ${last.heapTotalMB.toFixed(1)} MB; RSS minus heap total ${(first.rssMB - first.heapTotalMB).toFixed(1)} → ${(last.rssMB - last.heapTotalMB).toFixed(1)} MB; ${errors} failed streams`)
  }
  if (process.argv.includes('--json')) console.log(JSON.stringify({ bursts: BURSTS, size: SIZE, node: process.version, settings, results }))
}

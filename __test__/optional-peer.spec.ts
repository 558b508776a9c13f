// Spec §13: the optional-peer contract. A consumer that dynamically imports the package treats it as
// absent only for MODULE_NOT_FOUND naming the quoted specifier; a present package whose native
// binary is missing must fail loudly instead, with an error that names the binary.
import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const consumer = join(root, '__test__', 'fixtures', 'consumer', 'optional-consumer.mjs')
const work = mkdtempSync(join(tmpdir(), 'pi-native-peer-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

/** A consumer project with our package installed under `name`, with or without the binary. */
function project(label: string, name: string | null, withBinary: boolean): string {
  const dir = join(work, label)
  mkdirSync(join(dir, 'node_modules'), { recursive: true })
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `consumer-${label}`, type: 'module' }))
  cpSync(consumer, join(dir, 'consumer.mjs'))
  cpSync(join(root, '__test__', 'fixtures', 'consumer', 'adapter-consumer.mjs'), join(dir, 'adapter-consumer.mjs'))
  cpSync(join(root, 'node_modules', 'typebox'), join(dir, 'node_modules', 'typebox'), { recursive: true })
  if (name) {
    const pkg = join(dir, 'node_modules', ...name.split('/'))
    mkdirSync(pkg, { recursive: true })
    for (const f of ['package.json', 'index.js', 'index.d.ts']) cpSync(join(root, f), join(pkg, f))
    cpSync(join(root, 'lib'), join(pkg, 'lib'), { recursive: true })
    if (withBinary) {
      for (const f of readdirSync(root).filter((f) => f.endsWith('.node'))) cpSync(join(root, f), join(pkg, f))
    }
  }
  return dir
}

function run(dir: string, specifier: string) {
  const env = { ...process.env }
  delete env.NAPI_RS_NATIVE_LIBRARY_PATH
  const out = execFileSync(process.execPath, ['consumer.mjs', specifier], { cwd: dir, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  return JSON.parse(out.trim().split('\n').pop() as string)
}

function runWithStderr(dir: string, specifier: string) {
  const r = spawnSync(process.execPath, ['consumer.mjs', specifier], { cwd: dir, encoding: 'utf8' })
  return { result: JSON.parse(r.stdout.trim().split('\n').pop()), stderr: r.stderr as string }
}

describe('optional-peer contract (installed as @r3b1s/pi-repair-layer via an alias)', () => {
  it('present: the recipe wraps the tool and repairs through the native core', () => {
    const dir = project('present', '@r3b1s/pi-repair-layer', true)
    expect(run(dir, '@r3b1s/pi-repair-layer')).toEqual({ wrapped: true, args: { path: 'a.txt' } })
  })

  it("the reference's adapter recipe runs unchanged: aliases, auto-links and string-or-array repaired; bad input throws", () => {
    const dir = project('adapter', '@r3b1s/pi-repair-layer', true)
    const out = execFileSync(process.execPath, ['adapter-consumer.mjs'], { cwd: dir, encoding: 'utf8' })
    expect(JSON.parse(out.trim())).toEqual({
      repaired: { labels: ['draft'], path: 'notes.md' },
      text: 'Inspecting notes.md',
      failure: { isError: true, name: 'UnrepairableToolInputError', firstLine: 'Invalid input for tool "inspect_asset". Fix these issues and retry:' },
    })
  })

  it('absent: Node reports ERR_MODULE_NOT_FOUND naming the package; the raw tool runs with one fallback line', () => {
    const dir = project('absent', null, false)
    const { result, stderr } = runWithStderr(dir, '@r3b1s/pi-repair-layer')
    expect(result).toEqual({ wrapped: false, args: { file_path: 'a.txt' } })
    expect(stderr.trim().split('\n')).toEqual(['[my-extension] @r3b1s/pi-repair-layer not found; inspect_asset running unwrapped'])
  })

  it('binary missing: the import fails loudly and is not mistaken for absence', () => {
    const dir = project('broken', '@r3b1s/pi-repair-layer', false)
    const result = run(dir, '@r3b1s/pi-repair-layer')
    expect(result.threw).toBe(true)
    expect(result.absent).toBe(false)
    expect(result.code).toBe('PI_NATIVE_BINARY_UNAVAILABLE')
    expect(result.message).toContain('pi-native.linux-x64-gnu.node')
    expect(result.message).not.toContain("'@r3b1s/pi-repair-layer")
  })
})

describe('optional-peer contract under its own name', () => {
  it('absent: ERR_MODULE_NOT_FOUND names the quoted specifier', () => {
    const dir = project('absent-own', null, false)
    const { result } = runWithStderr(dir, 'pi-native')
    expect(result.wrapped).toBe(false)
  })

  it('binary missing: not absent, and the message does not quote the package specifier', () => {
    const dir = project('broken-own', 'pi-native', false)
    const result = run(dir, 'pi-native')
    expect(result).toMatchObject({ threw: true, absent: false, code: 'PI_NATIVE_BINARY_UNAVAILABLE' })
    expect(result.message).not.toContain("'pi-native")
  })
})

// Environment variables of the extension: PI_TOOL_REPAIR_PASSTHROUGH and PI_TOOL_REPAIR_LOG are on
// when set, non-empty and not exactly "0"/"false"; PI_TOOL_REPAIR_TELEMETRY is "off"/"0"/"false" (off),
// a path, or unset/empty (default under the agent dir); PI_TOOL_REPAIR_SETTINGS picks the settings
// file. Flags and the telemetry path are read at each use, the settings file once at load.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createFakePi, type FakePi } from './fake-pi.ts'

const open: FakePi[] = []
async function started(options?: Parameters<typeof createFakePi>[0]) {
  const f = createFakePi(options)
  open.push(f)
  await f.start({ model: { id: 'faux-env' } })
  return f
}
afterEach(() => {
  vi.restoreAllMocks()
  for (const f of open.splice(0)) f.cleanup()
})

const FLAG_VALUES: Array<[string | undefined, boolean]> = [
  [undefined, false],
  ['', false],
  ['0', false],
  ['false', false],
  ['1', true],
  ['true', true],
  ['yes', true],
  ['FALSE', true],
  ['off', true],
  [' 0', true],
]

function setEnv(name: string, value: string | undefined) {
  if (value === undefined) delete process.env[name]
  else process.env[name] = value
}

describe('PI_TOOL_REPAIR_PASSTHROUGH', () => {
  it.each(FLAG_VALUES)('%j -> passthrough %s', async (value, enabled) => {
    const f = await started()
    setEnv('PI_TOOL_REPAIR_PASSTHROUGH', value)
    const raw = { path: 'p.txt', content: null }
    const write = f.tools.get('write')
    if (enabled) {
      expect(write.prepareArguments(raw)).toBe(raw)
    } else {
      expect(() => write.prepareArguments(raw)).toThrow(
        new Error('Invalid input for tool "write". Fix these issues and retry:\n  • /content: must be string\nReceived: {"path":"p.txt","content":null}'),
      )
    }
  })

  it('is read at every call and never affects repairable input', async () => {
    const f = await started()
    const read = f.tools.get('read')
    setEnv('PI_TOOL_REPAIR_PASSTHROUGH', '1')
    expect(read.prepareArguments({ file_path: 'a' })).toEqual({ path: 'a' })
    const raw = {}
    expect(read.prepareArguments(raw)).toBe(raw)
    setEnv('PI_TOOL_REPAIR_PASSTHROUGH', '0')
    expect(() => read.prepareArguments(raw)).toThrow('Invalid input for tool "read"')
  })

  it('throws a plain Error (no custom class, no extra fields)', async () => {
    const f = await started()
    let caught: any
    try {
      f.tools.get('bash').prepareArguments({})
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(Error)
    expect(Object.getPrototypeOf(caught)).toBe(Error.prototype)
    expect(caught.name).toBe('Error')
    expect(Object.keys(caught)).toEqual([])
  })
})

describe('PI_TOOL_REPAIR_LOG', () => {
  it.each(FLAG_VALUES)('%j -> stderr diagnostics %s', async (value, enabled) => {
    const f = await started({ env: { PI_TOOL_REPAIR_LOG: value } })
    const lines: string[] = []
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: any) => {
      lines.push(String(chunk))
      return true
    })
    f.tools.get('grep').prepareArguments({ query: 'x', path: '.' })
    f.tools.get('grep').prepareArguments({ pattern: 'x' })
    expect(() => f.tools.get('ls').prepareArguments({ path: 5, limit: 'many' })).toThrow()
    vi.restoreAllMocks()
    expect(lines).toEqual(
      enabled
        ? [
            '[pi-repair] tool=grep outcome=repaired rules=preprocess.exact-alias\n',
            '[pi-repair] tool=ls outcome=unrepairable rules=none issues=/path|type|string; /limit|type|number\n',
          ]
        : [],
    )
  })
})

describe('PI_TOOL_REPAIR_TELEMETRY', () => {
  const defaultFile = (f: FakePi) => join(f.agentDir, 'tool-repair', 'telemetry.jsonl')

  it.each(['off', '0', 'false'])('%j disables telemetry', async (value) => {
    const f = await started({ env: { PI_TOOL_REPAIR_TELEMETRY: value } })
    f.tools.get('bash').prepareArguments({ cmd: 'true' })
    expect(existsSync(defaultFile(f))).toBe(false)
    expect(existsSync(join(process.cwd(), value))).toBe(false)
  })

  it.each([undefined, ''])('%j uses <agentDir>/tool-repair/telemetry.jsonl', async (value) => {
    const f = await started({ env: { PI_TOOL_REPAIR_TELEMETRY: value } })
    f.tools.get('bash').prepareArguments({ cmd: 'true' })
    expect(readFileSync(defaultFile(f), 'utf8').trim().split('\n')).toHaveLength(1)
  })

  it('any other value is the file path, re-read at every record', async () => {
    const f = await started()
    const first = join(f.root, 'one', 'telemetry.jsonl')
    const second = join(f.root, 'two', 'deeper', 'telemetry.jsonl')
    setEnv('PI_TOOL_REPAIR_TELEMETRY', first)
    f.tools.get('bash').prepareArguments({ cmd: 'true' })
    setEnv('PI_TOOL_REPAIR_TELEMETRY', second)
    f.tools.get('bash').prepareArguments({ cmd: 'true' })
    f.tools.get('bash').prepareArguments({ cmd: 'true' })
    expect(readFileSync(first, 'utf8').trim().split('\n')).toHaveLength(1)
    expect(readFileSync(second, 'utf8').trim().split('\n')).toHaveLength(2)
    expect(existsSync(defaultFile(f))).toBe(false)
  })

  it('an unwritable path never breaks the tool call', async () => {
    const f = await started()
    const blocker = join(f.root, 'blocker')
    writeFileSync(blocker, 'not a folder')
    setEnv('PI_TOOL_REPAIR_TELEMETRY', join(blocker, 'telemetry.jsonl'))
    expect(f.tools.get('bash').prepareArguments({ cmd: 'true' })).toEqual({ command: 'true' })
    rmSync(blocker)
  })

  it('records carry the value-free fields only', async () => {
    const f = await started()
    f.tools.get('write').prepareArguments({ file_path: 'secret-name.txt', text: 'secret body' })
    expect(() => f.tools.get('write').prepareArguments({ path: 'secret-path.txt' })).toThrow()
    const text = readFileSync(defaultFile(f), 'utf8')
    const records = text.trim().split('\n').map((l) => JSON.parse(l))
    expect(records).toEqual([
      {
        ts: expect.any(String),
        tool: 'write',
        model: 'faux-env',
        outcome: 'repaired',
        rules: ['preprocess.exact-alias'],
        profile: 'adaptive',
        stages: ['preprocess'],
      },
      {
        ts: expect.any(String),
        tool: 'write',
        model: 'faux-env',
        outcome: 'unrepairable',
        rules: [],
        issues: '(root)|required|content',
        fingerprint: expect.stringMatching(/^[0-9a-f]{8}$/),
        profile: 'adaptive',
        stages: [],
      },
    ])
    for (const value of ['secret', '.txt', 'Renamed', 'Invalid input']) expect(text).not.toContain(value)
  })
})

describe('PI_TOOL_REPAIR_SETTINGS', () => {
  it('a missing file there means defaults, even when <agentDir>/tool-repair/settings.json exists', async () => {
    const missing = join(tmpdir(), `pi-native-no-such-settings-${process.pid}-${Date.now()}.json`)
    const f = await started({ env: { PI_TOOL_REPAIR_SETTINGS: missing }, settings: { policyProfile: 'recover' } })
    f.tools.get('bash').prepareArguments({ cmd: 'true' })
    const record = JSON.parse(readFileSync(join(f.agentDir, 'tool-repair', 'telemetry.jsonl'), 'utf8').trim())
    expect(record.profile).toBe('adaptive')
    expect(existsSync(missing)).toBe(false)
  })

  it('uses the named file when it exists', async () => {
    const holder = createFakePi()
    open.push(holder)
    const custom = join(holder.root, 'custom-settings.json')
    writeFileSync(custom, JSON.stringify({ policyProfile: 'conservative' }))
    const f = await started({ env: { PI_TOOL_REPAIR_SETTINGS: custom }, settings: { policyProfile: 'recover' } })
    f.tools.get('bash').prepareArguments({ cmd: 'true' })
    const record = JSON.parse(readFileSync(join(f.agentDir, 'tool-repair', 'telemetry.jsonl'), 'utf8').trim())
    expect(record.profile).toBe('conservative')
    // changing the variable later does not reload
    writeFileSync(custom, JSON.stringify({ policyProfile: 'recover' }))
    f.tools.get('bash').prepareArguments({ cmd: 'true' })
    const last = JSON.parse(readFileSync(join(f.agentDir, 'tool-repair', 'telemetry.jsonl'), 'utf8').trim().split('\n')[1])
    expect(last.profile).toBe('conservative')
  })
})

// Settings file semantics: defaults, per-field fallback, legacy migration, path resolution, and
// writing only on an explicit save.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { DEFAULT_DISPLAY_SETTINGS, displaySettingsPath, loadDisplaySettings, saveDisplaySettings } from '../../lib/settings.js'

const work = mkdtempSync(join(tmpdir(), 'pi-native-settings-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

const savedEnv = { settings: process.env.PI_TOOL_REPAIR_SETTINGS, agentDir: process.env.PI_CODING_AGENT_DIR }
afterEach(() => {
  for (const [key, value] of [
    ['PI_TOOL_REPAIR_SETTINGS', savedEnv.settings],
    ['PI_CODING_AGENT_DIR', savedEnv.agentDir],
  ] as const) {
    if (value === undefined) delete process.env[key]
    else process.env[key] = value
  }
})

let n = 0
function file(content: unknown, raw = false): string {
  const path = join(work, `settings-${n++}.json`)
  writeFileSync(path, raw ? String(content) : JSON.stringify(content))
  return path
}

const DEFAULTS = {
  showIndicator: true,
  showNotes: false,
  grammarRecovery: 'strip',
  grammarAllowedTools: [],
  policyProfile: 'adaptive',
  unknownGrammarText: 'preserve',
}

describe('defaults', () => {
  it('are the documented ones', () => {
    expect(DEFAULT_DISPLAY_SETTINGS).toEqual(DEFAULTS)
  })

  it.each([
    ['a missing file', join(work, 'missing', 'settings.json')],
    ['invalid JSON', file('{not json', true)],
    ['JSON null', file('null', true)],
    ['an empty object', file({})],
  ])('apply for %s', (_label, path) => {
    expect(loadDisplaySettings(path)).toEqual(DEFAULTS)
  })

  it('returns a fresh object each time', () => {
    const path = join(work, 'missing.json')
    const a = loadDisplaySettings(path)
    a.grammarAllowedTools.push('x')
    a.showNotes = true
    expect(loadDisplaySettings(path)).toEqual(DEFAULTS)
  })
})

describe('per-field fallback', () => {
  it('keeps valid fields and replaces invalid ones individually', () => {
    const path = file({
      showIndicator: 'yes',
      showNotes: true,
      grammarRecovery: 'aggressive',
      grammarAllowedTools: ['read', 2],
      policyProfile: 'conservative',
      unknownGrammarText: 'drop',
    })
    expect(loadDisplaySettings(path)).toEqual({
      showIndicator: true,
      showNotes: true,
      grammarRecovery: 'observe',
      grammarAllowedTools: [],
      policyProfile: 'conservative',
      unknownGrammarText: 'preserve',
    })
  })

  it('keeps a valid allowlist and every valid value', () => {
    const stored = {
      showIndicator: false,
      showNotes: true,
      grammarRecovery: 'off',
      grammarAllowedTools: ['read', 'bash'],
      policyProfile: 'recover',
      unknownGrammarText: 'strip',
    }
    expect(loadDisplaySettings(file(stored))).toEqual(stored)
  })
})

describe('legacy migration', () => {
  it.each([
    ['off', 'adaptive', 'off'],
    ['observe', 'adaptive', 'observe'],
    ['strip', 'adaptive', 'strip'],
    ['recover', 'recover', 'recover'],
  ])('grammarRecovery %s alone -> profile %s, grammar %s; the file is not rewritten', (grammarRecovery, profile, grammar) => {
    const path = file({ grammarRecovery })
    const before = readFileSync(path, 'utf8')
    expect(loadDisplaySettings(path)).toMatchObject({ policyProfile: profile, grammarRecovery: grammar, unknownGrammarText: 'preserve' })
    expect(readFileSync(path, 'utf8')).toBe(before)
  })

  it.each([
    ['conservative', 'observe'],
    ['adaptive', 'strip'],
    ['recover', 'recover'],
  ])('profile %s without a stored grammar mode implies %s', (policyProfile, grammar) => {
    expect(loadDisplaySettings(file({ policyProfile }))).toMatchObject({ policyProfile, grammarRecovery: grammar })
  })

  it('an explicit grammar mode wins over the profile default', () => {
    expect(loadDisplaySettings(file({ policyProfile: 'recover', grammarRecovery: 'strip' }))).toMatchObject({
      policyProfile: 'recover',
      grammarRecovery: 'strip',
    })
  })
})

describe('saving', () => {
  it('writes the new shape (tab-indented JSON plus newline) only on an explicit save', () => {
    const path = file({ grammarRecovery: 'strip' })
    const loaded = loadDisplaySettings(path)
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ grammarRecovery: 'strip' })
    saveDisplaySettings(loaded, path)
    expect(readFileSync(path, 'utf8')).toBe(`${JSON.stringify(loaded, null, '\t')}\n`)
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ policyProfile: 'adaptive', unknownGrammarText: 'preserve' })
  })

  it('creates missing folders and swallows write errors', () => {
    const nested = join(work, 'a', 'b', 'settings.json')
    saveDisplaySettings({ ...DEFAULTS } as any, nested)
    expect(loadDisplaySettings(nested)).toEqual(DEFAULTS)
    const blocker = file('x', true)
    expect(() => saveDisplaySettings({ ...DEFAULTS } as any, join(blocker, 'settings.json'))).not.toThrow()
  })
})

describe('location', () => {
  it('is PI_TOOL_REPAIR_SETTINGS when set, else <agentDir>/tool-repair/settings.json', () => {
    process.env.PI_CODING_AGENT_DIR = join(work, 'agent-dir')
    delete process.env.PI_TOOL_REPAIR_SETTINGS
    expect(displaySettingsPath()).toBe(join(work, 'agent-dir', 'tool-repair', 'settings.json'))
    process.env.PI_TOOL_REPAIR_SETTINGS = join(work, 'custom.json')
    expect(displaySettingsPath()).toBe(join(work, 'custom.json'))
  })

  it('load and save default to that location', () => {
    process.env.PI_TOOL_REPAIR_SETTINGS = join(work, 'via-env', 'settings.json')
    saveDisplaySettings({ ...DEFAULTS, showNotes: true } as any)
    expect(loadDisplaySettings()).toMatchObject({ showNotes: true })
    expect(JSON.parse(readFileSync(join(work, 'via-env', 'settings.json'), 'utf8')).showNotes).toBe(true)
  })
})

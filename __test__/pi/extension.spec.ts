// The root export driven through REAL pi sessions (faux model, real agent loop, real built-in tools):
// repaired calls execute and carry their notes, unrepairable calls fail before execution with the
// retry message, renderers get the indicator, and telemetry/session entries hold no values.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fauxAssistantMessage, fauxToolCall } from '@earendil-works/pi-ai/compat'
import {
  createBashToolDefinition,
  createEditToolDefinition,
  createFindToolDefinition,
  createGrepToolDefinition,
  createLsToolDefinition,
  createReadToolDefinition,
  createWriteToolDefinition,
} from '@earendil-works/pi-coding-agent'
import { visibleWidth } from '@earendil-works/pi-tui'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { BUILTINS, count, disposeAll, type PiHarness, startPiSession } from './harness.ts'

afterEach(() => {
  vi.restoreAllMocks()
  disposeAll()
})

const calls = (...blocks: ReturnType<typeof fauxToolCall>[]) => fauxAssistantMessage(blocks, { stopReason: 'toolUse' })
const call = (name: string, args: unknown, id: string) => fauxToolCall(name, args as any, { id })
const done = () => fauxAssistantMessage('done')
const plainTheme = { fg: (_color: string, text: string) => text, bg: (_c: string, t: string) => t, bold: (t: string) => t } as any

function result(h: PiHarness, id: string) {
  const found = h.toolResults().find((r) => r.toolCallId === id)
  if (!found) throw new Error(`no tool result for ${id}`)
  return found
}

function render(h: PiHarness, tool: string, id: string, width: number, lastComponent?: unknown) {
  const definition = h.session.getToolDefinition(tool)
  const message = h.session.messages.find((m: any) => m.role === 'toolResult' && m.toolCallId === id)
  const component = definition.renderResult(
    { content: message.content, details: message.details },
    { expanded: false, isPartial: false },
    plainTheme,
    { toolCallId: id, lastComponent, args: {}, cwd: h.cwd, state: {}, isError: message.isError, showImages: false },
  )
  return { component, lines: component.render(width) as string[] }
}

describe('overrides of the seven built-ins', () => {
  it('re-registers every built-in with pi\'s own schema, prompt text and renderers', async () => {
    const h = await startPiSession()
    expect(h.session.getActiveToolNames().sort()).toEqual([...BUILTINS].sort())
    const factories: Record<string, (cwd: string) => any> = {
      read: createReadToolDefinition,
      bash: createBashToolDefinition,
      edit: createEditToolDefinition,
      write: createWriteToolDefinition,
      grep: createGrepToolDefinition,
      find: createFindToolDefinition,
      ls: createLsToolDefinition,
    }
    for (const name of BUILTINS) {
      const registered = h.session.getToolDefinition(name)
      const original = factories[name](h.cwd)
      expect(registered.name).toBe(name)
      expect(JSON.stringify(registered.parameters)).toBe(JSON.stringify(original.parameters))
      expect(registered.description).toBe(original.description)
      expect(typeof registered.prepareArguments).toBe('function')
      expect(typeof registered.execute).toBe('function')
      expect(typeof registered.renderCall).toBe(typeof original.renderCall)
      expect(typeof registered.renderResult).toBe(typeof original.renderResult)
    }
  })
})

describe('repaired calls execute and carry their notes', () => {
  it('read with file_path: repaired, executed, exactly one <repair_note>', async () => {
    const h = await startPiSession()
    writeFileSync(join(h.cwd, 'hello.txt'), 'hello from pi\n')
    await h.run([calls(call('read', { file_path: 'hello.txt' }, 'r1')), done()])
    const r = result(h, 'r1')
    expect(r.isError).toBe(false)
    expect(r.text).toContain('hello from pi')
    expect(count(r.text, '<repair_note>')).toBe(1)
    expect(r.text).toContain('<repair_note>Renamed `file_path` to `path` for tool "read". Use `path` next time.</repair_note>')
    // the note is prepended to the first text block
    expect(r.text.startsWith('<repair_note>')).toBe(true)
  })

  it('edit with flat file_path/old_string/new_string edits the file; each note appears once', async () => {
    const h = await startPiSession()
    const file = join(h.cwd, 'edit-me.txt')
    writeFileSync(file, 'alpha beta gamma\n')
    await h.run([calls(call('edit', { file_path: 'edit-me.txt', old_string: 'beta', new_string: 'delta' }, 'e1')), done()])
    expect(readFileSync(file, 'utf-8')).toBe('alpha delta gamma\n')
    const r = result(h, 'e1')
    expect(r.isError).toBe(false)
    expect(count(r.text, '<repair_note>')).toBe(2)
    expect(count(r.text, 'Renamed `file_path` to `path`')).toBe(1)
    expect(count(r.text, 'Folded flat `old_string`/`new_string` fields')).toBe(1)
  })

  it('pi\'s own edit shim still runs first (flat oldText/newText): no repair, no note', async () => {
    const h = await startPiSession()
    const file = join(h.cwd, 'shim.txt')
    writeFileSync(file, 'one two three\n')
    await h.run([calls(call('edit', { path: 'shim.txt', oldText: 'two', newText: '2' }, 'e2')), done()])
    expect(readFileSync(file, 'utf-8')).toBe('one 2 three\n')
    expect(result(h, 'e2').text).not.toContain('<repair_note>')
  })

  it('bash: a bare string and a cmd alias both run', async () => {
    const h = await startPiSession()
    await h.run([calls(call('bash', 'echo bare-root-works', 'b1'), call('bash', { cmd: 'echo alias-works' }, 'b2')), done()])
    expect(result(h, 'b1').text).toContain('bare-root-works')
    expect(count(result(h, 'b1').text, '<repair_note>')).toBe(1)
    expect(result(h, 'b2').text).toContain('alias-works')
    expect(count(result(h, 'b2').text, '<repair_note>')).toBe(1)
  })

  it('a valid call runs untouched: no note, no telemetry record', async () => {
    const h = await startPiSession()
    writeFileSync(join(h.cwd, 'clean.txt'), 'clean\n')
    await h.run([calls(call('read', { path: 'clean.txt' }, 'v1')), done()])
    expect(result(h, 'v1').text).toBe('clean\n')
    expect(existsSync(h.telemetryPath())).toBe(false)
  })

  it('identical repaired calls in one batch each get their own note (FIFO correlation)', async () => {
    const h = await startPiSession()
    writeFileSync(join(h.cwd, 'twice.txt'), 'twice\n')
    await h.run([calls(call('read', { file_path: 'twice.txt' }, 't1'), call('read', { file_path: 'twice.txt' }, 't2')), done()])
    for (const id of ['t1', 't2']) {
      expect(result(h, id).text).toContain('twice')
      expect(count(result(h, id).text, '<repair_note>')).toBe(1)
    }
  })
})

describe('unrepairable calls', () => {
  it('fail before execution with the model-readable retry message', async () => {
    const h = await startPiSession()
    await h.run([
      calls(call('write', { path: 'never.txt', content: null }, 'u1'), call('read', { nothing: 'useful' }, 'u2')),
      done(),
    ])
    const w = result(h, 'u1')
    expect(w.isError).toBe(true)
    expect(w.text).toBe(
      'Invalid input for tool "write". Fix these issues and retry:\n  • /content: must be string\nReceived: {"path":"never.txt","content":null}',
    )
    // pi's Convert would have written the string "null"; the call never reached the executor
    expect(existsSync(join(h.cwd, 'never.txt'))).toBe(false)
    const r = result(h, 'u2')
    expect(r.isError).toBe(true)
    expect(r.text.startsWith('Invalid input for tool "read". Fix these issues and retry:\n')).toBe(true)
    expect(r.text).not.toContain('<repair_note>')
  })

  it('PI_TOOL_REPAIR_PASSTHROUGH=1 hands the raw input on to pi (which coerces and executes it)', async () => {
    const h = await startPiSession({ env: { PI_TOOL_REPAIR_PASSTHROUGH: '1' } })
    await h.run([calls(call('write', { path: 'coerced.txt', content: null }, 'p1')), done()])
    const r = result(h, 'p1')
    expect(r.text).not.toContain('Fix these issues and retry')
    expect(readFileSync(join(h.cwd, 'coerced.txt'), 'utf-8')).toBe('null')
  })
})

describe('diagnostics (PI_TOOL_REPAIR_LOG)', () => {
  it('writes one stderr line per non-valid decision and none for valid calls', async () => {
    const h = await startPiSession({ env: { PI_TOOL_REPAIR_LOG: '1' } })
    writeFileSync(join(h.cwd, 'log.txt'), 'x\n')
    const lines: string[] = []
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: any) => {
      lines.push(String(chunk))
      return true
    })
    await h.run([
      calls(call('read', { file_path: 'log.txt' }, 'l1'), call('read', { path: 'log.txt' }, 'l2'), call('read', {}, 'l3')),
      done(),
    ])
    vi.restoreAllMocks()
    const ours = lines.filter((l) => l.startsWith('[pi-repair]'))
    expect(ours).toEqual([
      '[pi-repair] tool=read outcome=repaired rules=preprocess.exact-alias\n',
      '[pi-repair] tool=read outcome=unrepairable rules=none issues=(root)|required|path\n',
    ])
  })
})

describe('TUI indicator', () => {
  it('repaired calls get the indicator line; clean calls render natively', async () => {
    const h = await startPiSession()
    writeFileSync(join(h.cwd, 'ind.txt'), 'content\n')
    await h.run([calls(call('read', { file_path: 'ind.txt' }, 'i1'), call('read', { path: 'ind.txt' }, 'i2')), done()])
    const repaired = render(h, 'read', 'i1', 80).lines.join('\n')
    expect(repaired).toContain('🔨 ✓ input repaired (preprocess.exact-alias)')
    expect(repaired).not.toContain('Renamed') // note text hidden by default
    const clean = render(h, 'read', 'i2', 80).lines.join('\n')
    expect(clean).not.toContain('🔨')
  })

  it('with showNotes on, notes follow the indicator; added lines fit every width; the wrapper is reused', async () => {
    const h = await startPiSession({ settings: { showNotes: true } })
    writeFileSync(join(h.cwd, 'w.txt'), 'content\n')
    await h.run([calls(call('read', { file_path: '[w.txt](http://w.txt)' }, 'w1')), done()])
    expect(result(h, 'w1').text).toContain('content')
    let last: unknown
    for (const width of [20, 40, 58, 66, 80, 120]) {
      const { component, lines } = render(h, 'read', 'w1', width, last)
      if (last) expect(component).toBe(last)
      last = component
      for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(width)
    }
    const wide = render(h, 'read', 'w1', 400, last).lines.join('\n')
    expect(wide).toContain('🔨 ✓ input repaired (')
    expect(wide).toContain('   ↳ Renamed `file_path` to `path`')
    expect(count(wide, '↳')).toBe(2)
  })

  it('repairs are remembered as value-free session entries', async () => {
    const h = await startPiSession()
    const secretPath = 'entry-secret-file.txt'
    writeFileSync(join(h.cwd, secretPath), 'entry-secret-content\n')
    await h.run([calls(call('read', { file_path: secretPath }, 's1')), done()])
    const entries = h.session.sessionManager.getEntries().filter((e: any) => e.type === 'custom' && e.customType === 'tool-repair')
    expect(entries).toHaveLength(1)
    expect(entries[0].data).toEqual({
      toolCallId: 's1',
      tool: 'read',
      rules: ['preprocess.exact-alias'],
      stages: ['preprocess'],
      profile: 'adaptive',
      model: 'faux-model',
      outcome: 'repaired',
    })
    const serialized = JSON.stringify(entries)
    expect(serialized).not.toContain(secretPath)
    expect(serialized).not.toContain('entry-secret-content')
    expect(serialized).not.toContain('Renamed')
  })
})

describe('telemetry', () => {
  it('records every repair decision under <agentDir>/tool-repair/telemetry.jsonl without any values', async () => {
    const h = await startPiSession()
    const values = {
      path: 'telemetry-secret-path.txt',
      content: 'telemetry-secret-content-1234',
      command: 'printf telemetry-secret-command-5678',
      oldText: 'telemetry-old-secret',
      newText: 'telemetry-new-secret',
      badContent: 'telemetry-secret-in-unrepairable',
    }
    writeFileSync(join(h.cwd, values.path), `${values.content}\n${values.oldText}\n`)
    await h.run([
      calls(
        call('read', { file_path: values.path }, 'x1'),
        call('bash', { cmd: values.command }, 'x2'),
        call('edit', { file_path: values.path, old_string: values.oldText, new_string: values.newText }, 'x3'),
        call('write', { path: values.badContent, content: null }, 'x4'),
      ),
      done(),
    ])
    expect(h.telemetryPath()).toBe(join(h.agentDir, 'tool-repair', 'telemetry.jsonl'))
    const text = h.telemetryText()
    const records = h.telemetryRecords()
    expect(records.map((r) => [r.tool, r.outcome])).toEqual([
      ['read', 'repaired'],
      ['bash', 'repaired'],
      ['edit', 'repaired'],
      ['write', 'unrepairable'],
    ])
    for (const r of records) {
      expect(r.model).toBe('faux-model')
      expect(r.profile).toBe('adaptive')
      expect(Array.isArray(r.stages)).toBe(true)
      expect(Number.isNaN(Date.parse(r.ts))).toBe(false)
      expect(Object.keys(r).every((k) => ['ts', 'tool', 'model', 'outcome', 'rules', 'issues', 'fingerprint', 'profile', 'stages'].includes(k))).toBe(true)
    }
    expect(records[2].rules).toEqual(['preprocess.exact-alias', 'foldFlatEditFields'])
    expect(records[3]).toMatchObject({ rules: [], stages: [], issues: '/content|type|string', fingerprint: expect.stringMatching(/^[0-9a-f]{8}$/) })
    for (const value of Object.values(values)) expect(text).not.toContain(value)
    for (const fragment of ['telemetry-secret', 'printf', h.cwd, 'Renamed', 'Folded', '<repair_note>', 'Invalid input']) {
      expect(text).not.toContain(fragment)
    }
  })

  it('PI_TOOL_REPAIR_TELEMETRY=<path> relocates the file (creating folders); =off disables it', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'pi-native-telemetry-'))
    try {
      const target = join(elsewhere, 'nested', 'deeper', 't.jsonl')
      const h = await startPiSession({ env: { PI_TOOL_REPAIR_TELEMETRY: target } })
      await h.run([calls(call('bash', { cmd: 'true' }, 'o1')), done()])
      expect(readFileSync(target, 'utf-8').trim().split('\n')).toHaveLength(1)
      expect(existsSync(join(h.agentDir, 'tool-repair', 'telemetry.jsonl'))).toBe(false)
    } finally {
      rmSync(elsewhere, { recursive: true, force: true })
    }

    const off = await startPiSession({ env: { PI_TOOL_REPAIR_TELEMETRY: 'off' } })
    await off.run([calls(call('bash', { cmd: 'true' }, 'o2')), done()])
    expect(existsSync(join(off.agentDir, 'tool-repair', 'telemetry.jsonl'))).toBe(false)
    expect(existsSync(join(process.cwd(), 'off'))).toBe(false)
    expect(result(off, 'o2').text).toContain('<repair_note>')
  })
})

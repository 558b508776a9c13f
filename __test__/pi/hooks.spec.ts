// Event-level behaviour of the extension that a whole session does not expose directly: the package
// root export itself, registration once per cwd, the result lifecycle for recovered custom-tool calls,
// shutdown, model switches, restored indicators and the two slash commands.
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createFakePi, type FakePi } from './fake-pi.ts'
import { PACKAGE_ROOT } from './harness.ts'

const open: FakePi[] = []
function fake(options?: Parameters<typeof createFakePi>[0]) {
  const f = createFakePi(options)
  open.push(f)
  return f
}
afterEach(() => {
  for (const f of open.splice(0)) f.cleanup()
})

const plainTheme = { fg: (_c: string, t: string) => t, bold: (t: string) => t } as any

function renderRead(f: FakePi, toolCallId: string, width = 200) {
  const read = f.tools.get('read')
  const component = read.renderResult(
    { content: [{ type: 'text', text: 'file body' }], details: undefined },
    { expanded: false, isPartial: false },
    plainTheme,
    { toolCallId, lastComponent: undefined, args: { path: 'a' }, cwd: f.cwd, state: {}, isError: false, showImages: false },
  )
  return component.render(width).join('\n') as string
}

describe('package root', () => {
  it('exports only the default extension factory and declares it as a pi extension', () => {
    const out = execFileSync(
      process.execPath,
      ['--input-type=module', '-e', "const m = await import('pi-native'); console.log(JSON.stringify([Object.keys(m), typeof m.default, m.default.name]))"],
      { cwd: PACKAGE_ROOT, encoding: 'utf8' },
    )
    expect(JSON.parse(out)).toEqual([['default'], 'function', 'toolRepairExtension'])
    const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8'))
    expect(pkg.exports['.']).toEqual({ types: './lib/extension.d.ts', import: './lib/extension.js' })
    expect(pkg.pi.extensions).toEqual(['./lib/extension.js'])
    expect(pkg.peerDependenciesMeta['@earendil-works/pi-coding-agent']).toEqual({ optional: true })
  })
})

describe('registration', () => {
  it('registers the seven built-ins once per cwd, again for a new cwd', async () => {
    const f = fake()
    expect(f.registrations).toEqual([])
    expect([...f.commands.keys()]).toEqual(['repair-settings', 'repair-stats'])
    await f.start()
    expect(f.registrations).toEqual(['read', 'bash', 'edit', 'write', 'grep', 'find', 'ls'])
    await f.start()
    expect(f.registrations).toHaveLength(7)
    await f.start({ cwd: f.agentDir })
    expect(f.registrations).toHaveLength(14)
  })
})

describe('result lifecycle', () => {
  it('a grammar-recovered custom-tool call gets exactly one note, even on an error result', async () => {
    const f = fake({ settings: { policyProfile: 'recover' }, activeTools: ['cooperating_custom'] })
    await f.start()
    const message = {
      role: 'assistant',
      stopReason: 'stop',
      content: [{ type: 'text', text: '<tool_call>cooperating_custom\n<arg_key>path</arg_key>\n<arg_value>/x</arg_value>\n</tool_call>' }],
    }
    const replaced = await f.emit('message_end', { type: 'message_end', message })
    const toolCall = replaced.message.content.find((b: any) => b.type === 'toolCall')
    expect(toolCall).toMatchObject({ name: 'cooperating_custom', arguments: { path: '/x' } })

    const event = {
      type: 'tool_result',
      toolName: 'cooperating_custom',
      toolCallId: toolCall.id,
      input: toolCall.arguments,
      content: [{ type: 'text', text: 'custom failed' }],
      details: { code: 'E_CUSTOM' },
      isError: true,
    }
    const first = await f.emit('tool_result', event)
    expect(Object.keys(first)).toEqual(['content'])
    expect(first.content[0].text).toBe(
      '<repair_note>Recovered a leaked glm tool call for "cooperating_custom" that the model printed as text instead of emitting a real tool call. Emit a proper tool call next time.</repair_note>\ncustom failed',
    )
    expect(event.content).toEqual([{ type: 'text', text: 'custom failed' }])
    expect(event.details).toEqual({ code: 'E_CUSTOM' })
    expect(await f.emit('tool_result', { ...event, content: first.content })).toBeUndefined()
    // the indicator knows the recovered call too
    expect(renderRead(f, toolCall.id)).toContain('🔨 ✓ input repaired (grammarRecovery:glm)')
  })

  it('session_shutdown drops pending repairs and indicators', async () => {
    const f = fake()
    await f.start()
    const args = f.tools.get('read').prepareArguments({ file_path: 'a.txt' })
    expect(args).toEqual({ path: 'a.txt' })
    await f.emit('tool_call', { type: 'tool_call', toolName: 'read', toolCallId: 'before', input: { path: 'a.txt' } })
    expect(renderRead(f, 'before')).toContain('🔨')
    f.tools.get('read').prepareArguments({ file_path: 'a.txt' })
    expect(await f.emit('session_shutdown', { type: 'session_shutdown' })).toBeUndefined()
    expect(renderRead(f, 'before')).not.toContain('🔨')
    await f.emit('tool_call', { type: 'tool_call', toolName: 'read', toolCallId: 'after', input: { path: 'a.txt' } })
    expect(await f.emit('tool_result', { toolCallId: 'after', content: [{ type: 'text', text: 'x' }] })).toBeUndefined()
  })

  it('tool_call correlates by tool and arguments; other calls stay unannotated', async () => {
    const f = fake()
    await f.start()
    f.tools.get('bash').prepareArguments({ cmd: 'echo one' })
    await f.emit('tool_call', { toolName: 'bash', toolCallId: 'other', input: { command: 'echo two' } })
    await f.emit('tool_call', { toolName: 'read', toolCallId: 'other-tool', input: { command: 'echo one' } })
    await f.emit('tool_call', { toolName: 'bash', toolCallId: 'match', input: { command: 'echo one' } })
    expect(await f.emit('tool_result', { toolCallId: 'other', content: [] })).toBeUndefined()
    expect(await f.emit('tool_result', { toolCallId: 'other-tool', content: [] })).toBeUndefined()
    const annotated = await f.emit('tool_result', { toolCallId: 'match', content: [] })
    expect(annotated.content).toEqual([
      { type: 'text', text: '<repair_note>Renamed `cmd` to `command` for tool "bash". Use `command` next time.</repair_note>' },
    ])
    expect(f.entries).toEqual([
      {
        customType: 'tool-repair',
        data: {
          toolCallId: 'match',
          tool: 'bash',
          rules: ['preprocess.exact-alias'],
          stages: ['preprocess'],
          profile: 'adaptive',
          model: 'glm-4.6',
          outcome: 'repaired',
          fingerprint: undefined,
        },
      },
    ])
  })
})

describe('model tracking and restored indicators', () => {
  it('model_select switches the model id used by telemetry and the grammar gate', async () => {
    const f = fake()
    await f.start({ model: { id: 'faux-a' } })
    f.tools.get('bash').prepareArguments({ cmd: 'true' })
    await f.emit('model_select', { type: 'model_select', model: { id: 'faux-b' } }, {})
    f.tools.get('bash').prepareArguments({ cmd: 'true' })
    await f.emit('model_select', { type: 'model_select' }, { model: { id: 'faux-c' } })
    f.tools.get('bash').prepareArguments({ cmd: 'true' })
    const records = readFileSync(join(f.agentDir, 'tool-repair', 'telemetry.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
    expect(records.map((r) => r.model)).toEqual(['faux-a', 'faux-b', 'faux-c'])
    // faux-c is not a leaking family: message_end does nothing
    const message = { role: 'assistant', stopReason: 'stop', content: [{ type: 'text', text: '<tool_call>bash\n<arg_key>command</arg_key>\n<arg_value>ls</arg_value>\n</tool_call>' }] }
    expect(await f.emit('message_end', { message })).toBeUndefined()
  })

  it('session_start restores indicators from value-free tool-repair entries', async () => {
    const f = fake()
    await f.start({
      sessionManager: {
        getEntries: () => [
          { type: 'custom', customType: 'tool-repair', data: { toolCallId: 'old-1', tool: 'read', rules: ['preprocess.exact-alias'], outcome: 'repaired' } },
          { type: 'custom', customType: 'something-else', data: { toolCallId: 'old-2', rules: ['x'] } },
          { type: 'message' },
        ],
      },
    })
    expect(renderRead(f, 'old-1')).toContain('🔨 ✓ input repaired (preprocess.exact-alias)')
    expect(renderRead(f, 'old-2')).not.toContain('🔨')
  })

  it('a session manager without entries does not break session_start', async () => {
    const f = fake()
    await f.start({ sessionManager: undefined })
    expect(f.registrations).toHaveLength(7)
  })

  it('showIndicator false hides the indicator', async () => {
    const f = fake({ settings: { showIndicator: false } })
    await f.start()
    f.tools.get('read').prepareArguments({ file_path: 'a' })
    await f.emit('tool_call', { toolName: 'read', toolCallId: 'c', input: { path: 'a' } })
    expect(renderRead(f, 'c')).not.toContain('🔨')
    expect(renderRead(f, 'c', 80)).toBe(renderRead(f, 'never-repaired', 80))
  })
})

describe('/repair-settings', () => {
  function ui(choices: Array<(labels: string[]) => string | undefined>) {
    const notes: string[] = []
    const seen: string[][] = []
    return {
      notes,
      seen,
      ctx: {
        ui: {
          select: async (_title: string, labels: string[]) => {
            seen.push(labels)
            const pick = choices.shift()
            return pick ? pick(labels) : undefined
          },
          notify: (text: string) => notes.push(text),
        },
      },
    }
  }
  const pick = (prefix: string) => (labels: string[]) => labels.find((l) => l.startsWith(prefix))

  it('closing without a change writes nothing', async () => {
    const f = fake()
    const u = ui([() => 'Close'])
    await f.commands.get('repair-settings').handler('', u.ctx)
    expect(existsSync(join(f.agentDir, 'tool-repair', 'settings.json'))).toBe(false)
    expect(u.seen[0]).toHaveLength(6)
    expect(u.notes).toEqual([
      'Repair display: indicator on, notes off, policy adaptive, grammar strip, unknown text preserve (applies from now on)',
    ])
  })

  it('each change is saved as tab-indented JSON; the profile also resets the grammar mode', async () => {
    const f = fake({ settings: { grammarRecovery: 'off' } })
    const file = join(f.agentDir, 'tool-repair', 'settings.json')
    const before = readFileSync(file, 'utf8')
    await f.start()
    expect(readFileSync(file, 'utf8')).toBe(before) // loading never migrates the file
    const u = ui([pick('Policy profile'), pick('Repair note text'), pick('Grammar override'), pick('Unknown-tool grammar text'), pick('Repair indicator')])
    await f.commands.get('repair-settings').handler('', u.ctx)
    const saved = readFileSync(file, 'utf8')
    expect(saved).toBe(
      `${JSON.stringify(
        { showIndicator: false, showNotes: true, grammarRecovery: 'off', grammarAllowedTools: [], policyProfile: 'recover', unknownGrammarText: 'strip' },
        null,
        '\t',
      )}\n`,
    )
    // adaptive -> recover sets grammar recover; one cycle step later it is off
    expect(u.seen[1][0]).toContain('Policy profile: recover')
    expect(u.seen[1][3]).toContain('Grammar override: recover')
    expect(u.notes.at(-1)).toBe('Repair display: indicator off, notes on, policy recover, grammar off, unknown text strip (applies from now on)')
  })

  it('settings changes apply to the running session (recover promotes right away)', async () => {
    const f = fake({ activeTools: ['bash'] })
    await f.start()
    const leak = () => ({ role: 'assistant', stopReason: 'stop', content: [{ type: 'text', text: '<tool_call>bash\n<arg_key>command</arg_key>\n<arg_value>ls</arg_value>\n</tool_call>' }] })
    const stripped = await f.emit('message_end', { message: leak() })
    expect(stripped.message.content).toEqual([{ type: 'text', text: '' }])
    await f.commands.get('repair-settings').handler('', ui([pick('Policy profile'), () => undefined]).ctx)
    const promoted = await f.emit('message_end', { message: leak() })
    expect(promoted.message.stopReason).toBe('toolUse')
    expect(promoted.message.content.at(-1)).toMatchObject({ type: 'toolCall', name: 'bash', arguments: { command: 'ls' } })
  })
})

describe('/repair-stats', () => {
  function ctx() {
    const notes: string[] = []
    return { notes, ctx: { ui: { notify: (text: string) => notes.push(text) } } }
  }

  it('says so when nothing was recorded', async () => {
    const f = fake()
    const c = ctx()
    await f.commands.get('repair-stats').handler('', c.ctx)
    expect(c.notes).toEqual(['No repair telemetry recorded yet.'])
  })

  it('summarizes by tool, model, grammar family and rule', async () => {
    const f = fake()
    await f.start({ model: { id: 'glm-4.6' } })
    f.tools.get('bash').prepareArguments({ cmd: 'true' })
    f.tools.get('bash').prepareArguments({ cmd: 'true' })
    expect(() => f.tools.get('read').prepareArguments({})).toThrow('Invalid input for tool "read"')
    // an unknown tool in strip mode: nothing removed, one message-channel observation
    await f.emit('message_end', { message: { role: 'assistant', stopReason: 'stop', content: [{ type: 'text', text: '<tool_call>nope\n<arg_key>a</arg_key>\n<arg_value>b</arg_value>\n</tool_call>' }] } })
    writeFileSync(join(f.agentDir, 'tool-repair', 'telemetry.jsonl'), 'not json\n', { flag: 'a' })
    const c = ctx()
    await f.commands.get('repair-stats').handler('', c.ctx)
    expect(c.notes[0].split('\n')).toEqual([
      'Tool repair telemetry (4 events: 3 tool, 1 grammar strip-only)',
      '',
      'By tool:',
      '  bash: 2 repaired, 0 recovered, 0 unrepairable',
      '  read: 0 repaired, 0 recovered, 1 unrepairable',
      '',
      'By model:',
      '  glm-4.6: 2 repaired, 0 recovered, 1 unrepairable',
      '',
      'Grammar strip-only events (message channel):',
      '  glm: 1',
      '',
      'Rules fired:',
      '  preprocess.exact-alias: 2',
      '  grammarObserve: 1',
    ])
  })
})

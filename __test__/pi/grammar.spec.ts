// Grammar-leak recovery on message_end, through REAL pi sessions: a model in a leaking family prints a
// tool call as text. `recover` promotes it to a real call of the same turn (with a recovery note),
// `strip` removes the text without executing anything, `observe` leaves it in place. Needs ./lib/grammar.js.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fauxAssistantMessage } from '@earendil-works/pi-ai/compat'
import { afterEach, describe, expect, it } from 'vitest'
import { count, disposeAll, type PiHarness, startPiSession } from './harness.ts'

afterEach(() => disposeAll())

const SECRET_CONTENT = 'leaked-read-secret-content'

function leakedRead(h: PiHarness, file = 'leaked.txt', tool = 'read') {
  const target = join(h.cwd, file)
  writeFileSync(target, `${SECRET_CONTENT}\n`)
  const text = `Let me read that file.\n<tool_call>${tool}\n<arg_key>path</arg_key>\n<arg_value>${target}</arg_value>\n</tool_call>`
  return { target, text }
}

function firstAssistant(h: PiHarness) {
  const [message] = h.assistantMessages()
  return {
    message,
    text: message.content.filter((b: any) => b.type === 'text').map((b: any) => b.text).join('\n'),
    toolCalls: message.content.filter((b: any) => b.type === 'toolCall'),
  }
}

describe('recover profile: leaked calls are promoted', () => {
  it('a GLM-printed read becomes a real call, executes, and its result carries exactly one recovery note', async () => {
    const h = await startPiSession({ modelId: 'glm-4.6', settings: { policyProfile: 'recover' } })
    const { target, text } = leakedRead(h)
    await h.run([fauxAssistantMessage(text, { stopReason: 'stop' }), fauxAssistantMessage('done', { stopReason: 'stop' })])

    const first = firstAssistant(h)
    expect(first.text).toBe('Let me read that file.')
    expect(first.message.stopReason).toBe('toolUse')
    expect(first.toolCalls).toHaveLength(1)
    expect(first.toolCalls[0]).toMatchObject({ name: 'read', arguments: { path: target } })
    expect(first.toolCalls[0].id).toMatch(/^tool_repair_glm_[0-9a-z]+_0$/)

    const [result] = h.toolResults()
    expect(result.toolCallId).toBe(first.toolCalls[0].id)
    expect(result.isError).toBe(false)
    expect(result.text).toContain(SECRET_CONTENT)
    expect(count(result.text, '<repair_note>')).toBe(1)
    expect(result.text).toContain(
      '<repair_note>Recovered a leaked glm tool call for "read" that the model printed as text instead of emitting a real tool call. Emit a proper tool call next time.</repair_note>',
    )

    const entries = h.session.sessionManager.getEntries().filter((e: any) => e.customType === 'tool-repair')
    expect(entries.map((e: any) => e.data)).toEqual([
      {
        toolCallId: first.toolCalls[0].id,
        tool: 'read',
        rules: ['grammarRecovery:glm'],
        stages: ['grammar'],
        profile: 'recover',
        model: 'glm-4.6',
        outcome: 'recovered',
      },
    ])

    const records = h.telemetryRecords()
    expect(records).toContainEqual(
      expect.objectContaining({ tool: 'read', outcome: 'recovered', rules: ['grammarRecovery:glm'], grammar: 'glm', profile: 'recover', stages: ['grammar'] }),
    )
    const telemetry = h.telemetryText()
    for (const value of [target, SECRET_CONTENT, 'leaked.txt', 'Recovered a leaked', '<tool_call>']) expect(telemetry).not.toContain(value)
  })

  it('a legacy settings file with grammarRecovery "recover" behaves the same', async () => {
    const h = await startPiSession({ modelId: 'qwen3-coder', settings: { grammarRecovery: 'recover' } })
    const { text } = leakedRead(h)
    await h.run([fauxAssistantMessage(text), fauxAssistantMessage('done')])
    expect(h.toolResults()).toHaveLength(1)
    expect(h.toolResults()[0].text).toContain(SECRET_CONTENT)
  })

  it('calls to tools that are not active are never promoted; their text is preserved by default', async () => {
    const h = await startPiSession({ modelId: 'glm-4.6', settings: { policyProfile: 'recover' } })
    const { text } = leakedRead(h, 'x.txt', 'delete_everything')
    await h.run([fauxAssistantMessage(text)])
    expect(h.toolResults()).toHaveLength(0)
    const first = firstAssistant(h)
    expect(first.toolCalls).toHaveLength(0)
    expect(first.text).toContain('<tool_call>delete_everything')
    expect(first.message.stopReason).toBe('stop')
  })

  it('unknownGrammarText "strip" removes unknown-tool text but still never executes it', async () => {
    const h = await startPiSession({ modelId: 'glm-4.6', settings: { policyProfile: 'recover', unknownGrammarText: 'strip' } })
    const { text } = leakedRead(h, 'x.txt', 'delete_everything')
    await h.run([fauxAssistantMessage(text)])
    expect(h.toolResults()).toHaveLength(0)
    const first = firstAssistant(h)
    expect(first.toolCalls).toHaveLength(0)
    expect(first.text).toBe('Let me read that file.')
  })

  it('grammarAllowedTools replaces the active tool set as the allowlist', async () => {
    const h = await startPiSession({ modelId: 'glm-4.6', settings: { policyProfile: 'recover', grammarAllowedTools: ['bash'] } })
    const { text } = leakedRead(h)
    await h.run([fauxAssistantMessage(text)])
    expect(h.toolResults()).toHaveLength(0)
    expect(firstAssistant(h).text).toContain('<tool_call>read')
  })

  it('a message that did not end with stopReason "stop" is stripped but not promoted', async () => {
    const h = await startPiSession({ modelId: 'glm-4.6', settings: { policyProfile: 'recover' } })
    const { text } = leakedRead(h)
    await h.run([fauxAssistantMessage(text, { stopReason: 'length' })])
    expect(h.toolResults()).toHaveLength(0)
    const first = firstAssistant(h)
    expect(first.text).toBe('Let me read that file.')
    expect(first.toolCalls).toHaveLength(0)
    expect(first.message.stopReason).toBe('length')
  })

  it('models outside the leaking families are left alone', async () => {
    const h = await startPiSession({ modelId: 'faux-model', settings: { policyProfile: 'recover' } })
    const { text } = leakedRead(h)
    await h.run([fauxAssistantMessage(text)])
    expect(h.toolResults()).toHaveLength(0)
    expect(firstAssistant(h).text).toBe(text)
    expect(h.telemetryText()).toBe('')
  })
})

describe('strip (adaptive default) and observe (conservative)', () => {
  it('strip removes the leaked call from the text and executes nothing', async () => {
    const h = await startPiSession({ modelId: 'glm-4.6' })
    const { target, text } = leakedRead(h)
    await h.run([fauxAssistantMessage(text)])
    expect(h.toolResults()).toHaveLength(0)
    const first = firstAssistant(h)
    expect(first.text).toBe('Let me read that file.')
    expect(first.toolCalls).toHaveLength(0)
    expect(first.message.stopReason).toBe('stop')
    const records = h.telemetryRecords()
    expect(records).toHaveLength(1)
    expect(records[0]).toMatchObject({
      model: 'glm-4.6',
      outcome: 'stripped',
      rules: ['grammarStrip'],
      channel: 'message',
      grammar: 'glm',
      profile: 'adaptive',
      stages: ['grammar'],
    })
    expect(records[0].tool).toBeUndefined()
    expect(h.telemetryText()).not.toContain(target)
  })

  it('observe keeps the text intact, executes nothing, and records a value-free observation', async () => {
    const h = await startPiSession({ modelId: 'glm-4.6', settings: { policyProfile: 'conservative' } })
    const { target, text } = leakedRead(h)
    await h.run([fauxAssistantMessage(text)])
    expect(h.toolResults()).toHaveLength(0)
    const first = firstAssistant(h)
    expect(first.text).toBe(text)
    expect(first.toolCalls).toHaveLength(0)
    const records = h.telemetryRecords()
    expect(records).toHaveLength(1)
    expect(records[0]).toMatchObject({
      outcome: 'observed',
      rules: ['grammarObserve'],
      channel: 'message',
      grammar: 'glm',
      profile: 'conservative',
      stages: ['grammar'],
      observation: true,
    })
    expect(h.telemetryText()).not.toContain(target)
  })

  it('grammarRecovery "off" leaves messages and telemetry alone', async () => {
    const h = await startPiSession({ modelId: 'glm-4.6', settings: { policyProfile: 'recover', grammarRecovery: 'off' } })
    const { text } = leakedRead(h)
    await h.run([fauxAssistantMessage(text)])
    expect(h.toolResults()).toHaveLength(0)
    expect(firstAssistant(h).text).toBe(text)
    expect(h.telemetryText()).toBe('')
  })
})

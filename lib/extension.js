// pi-native (root export): the pi extension. Drop-in for the default export of @r3b1s/pi-repair-layer.
//
// pi validates tool arguments right after `tool.prepareArguments(raw)` and before any extension event,
// so the only place to repair malformed input is prepareArguments itself. On session start the seven
// built-in tools are registered again under their own names: pi's definition (schema, executor,
// renderers, prompt text) is kept as is, prepareArguments runs the repair pipeline (with pi's own
// argument shim chained first) and renderResult appends a small "input repaired" indicator.
//
// Feedback per repaired call: `<repair_note>` text prepended to the tool result the model sees, an
// indicator line in the TUI, a value-free JSONL telemetry record, and a value-free session entry.
//
// Environment:
//   PI_TOOL_REPAIR_LOG          stderr line per non-valid repair decision
//   PI_TOOL_REPAIR_TELEMETRY    "off"/"0"/"false" disables; any other value is the JSONL path
//   PI_TOOL_REPAIR_PASSTHROUGH  unrepairable input goes on to pi's own validation instead of failing
//   PI_TOOL_REPAIR_SETTINGS     settings file (see ./settings.js)
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { BUILTIN_TOOL_REPAIRS, RepairLifecycle, attachRepairNotes, runRepairPipeline } from './core.js'
import { modelLeaksGrammar, recoverGrammarLeaks } from './grammar.js'

// pi's packages (and ./settings.js, which reads pi's agent dir) are imported dynamically so that a
// missing pi fails with an error that says what this entry is and what to import instead, rather
// than with Node's bare "Cannot find package". Inside pi nothing changes: pi's loader (jiti) first
// imports an extension natively and, if that throws, again transpiled with pi's packages aliased to
// its own copies (dynamic imports included), which is how an extension installed without its own
// copy of pi loads.
let piModules
try {
  const [agent, tui, settings] = await Promise.all([
    import('@earendil-works/pi-coding-agent'),
    import('@earendil-works/pi-tui'),
    import('./settings.js'),
  ])
  piModules = { agent, tui, settings }
} catch (cause) {
  const detail = cause && typeof cause.message === 'string' ? cause.message.split('\n')[0] : String(cause)
  const error = new Error(
    'pi-native: the package root is the pi extension (`pi install npm:pi-native`); it runs inside pi and needs ' +
      "pi's packages @earendil-works/pi-coding-agent and @earendil-works/pi-tui (Node >= 22.19, like pi), which " +
      `could not be loaded: ${detail}. Outside pi, import the library subpaths instead: pi-native/core, ` +
      'pi-native/pi, pi-native/grammar or pi-native/chat (Node >= 20).',
    { cause },
  )
  error.code = 'PI_NATIVE_PI_UNAVAILABLE'
  throw error
}

const toolFactories = (agent) => [
  ['read', agent.createReadToolDefinition],
  ['bash', agent.createBashToolDefinition],
  ['edit', agent.createEditToolDefinition],
  ['write', agent.createWriteToolDefinition],
  ['grep', agent.createGrepToolDefinition],
  ['find', agent.createFindToolDefinition],
  ['ls', agent.createLsToolDefinition],
]

/** customType of the session entries that remember which tool calls were repaired (no values, no notes). */
const ENTRY_TYPE = 'tool-repair'

function flagEnabled(name) {
  const value = process.env[name]
  return value !== undefined && value !== '' && value !== '0' && value !== 'false'
}

function telemetryFile() {
  const value = process.env.PI_TOOL_REPAIR_TELEMETRY
  if (value === 'off' || value === '0' || value === 'false') return undefined
  if (value) return value
  return join(piModules.agent.getAgentDir(), 'tool-repair', 'telemetry.jsonl')
}

const distinct = (values) => [...new Set(values)]
const now = () => new Date().toISOString()

/**
 * Result component wrapper: renders pi's own component, then the indicator lines. Built-in renderers
 * reuse `context.lastComponent` when given one, so the inner component is handed back to them on
 * every re-render instead of this wrapper.
 */
class RepairIndicatorComponent {
  constructor() {
    this.inner = undefined
    this.info = undefined
    this.theme = undefined
    this.settings = undefined
  }

  render(width) {
    const lines = this.inner ? this.inner.render(width) : []
    if (!this.info || !this.settings || !this.settings.showIndicator) return lines
    const theme = this.theme
    const muted = (text) => {
      try {
        return theme && typeof theme.fg === 'function' ? theme.fg('muted', text) : text
      } catch {
        return text
      }
    }
    const { wrapTextWithAnsi } = piModules.tui
    const extra = wrapTextWithAnsi(muted(`🔨 ✓ input repaired (${this.info.rules.join(', ')})`), width)
    if (this.settings.showNotes) {
      for (const note of this.info.notes) extra.push(...wrapTextWithAnsi(muted(`   ↳ ${note}`), width))
    }
    return [...lines, ...extra]
  }

  // Part of pi-tui's Component interface; the reference wrapper lacks it (a theme change would call it).
  invalidate() {
    this.inner?.invalidate?.()
  }
}

function restoredFeedback(data) {
  const text = (value) => (typeof value === 'string' ? value : undefined)
  return {
    rules: Array.isArray(data.rules) ? data.rules : [],
    notes: [],
    stages: Array.isArray(data.stages) ? data.stages : [],
    profile: text(data.profile),
    model: text(data.model),
    outcome: data.outcome === 'repaired' || data.outcome === 'recovered' ? data.outcome : undefined,
    fingerprint: text(data.fingerprint),
  }
}

const NEXT_GRAMMAR_MODE = { off: 'observe', observe: 'strip', strip: 'recover', recover: 'off' }
const NEXT_PROFILE = { conservative: 'adaptive', adaptive: 'recover', recover: 'conservative' }

/** @param {import('@earendil-works/pi-coding-agent').ExtensionAPI} pi */
export default function toolRepairExtension(pi) {
  const { agent, settings: settingsModule } = piModules
  const { grammarModeForProfile, loadDisplaySettings, saveDisplaySettings } = settingsModule
  const settings = loadDisplaySettings()
  const lifecycle = new RepairLifecycle()
  /** toolCallId -> feedback, for the TUI indicator (kept for the whole session). */
  const indicatorInfo = new Map()
  let modelId
  let registeredCwd

  const writeTelemetry = (record) => {
    const file = telemetryFile()
    if (!file) return
    try {
      mkdirSync(dirname(file), { recursive: true })
      appendFileSync(file, `${JSON.stringify(record)}\n`)
    } catch {
      // Telemetry is best-effort and must never affect a tool call.
    }
  }

  const persist = (data) => {
    try {
      pi.appendEntry(ENTRY_TYPE, data)
    } catch {
      // Best-effort; the entry only restores indicators after a reload.
    }
  }

  const logDecision = (tool, result) => {
    if (!flagEnabled('PI_TOOL_REPAIR_LOG')) return
    const rules = result.changes.length > 0 ? distinct(result.changes.map((c) => c.ruleId)).join(',') : 'none'
    const issues = result.issueSummary ? ` issues=${result.issueSummary}` : ''
    process.stderr.write(`[pi-repair] tool=${tool} outcome=${result.outcome} rules=${rules}${issues}\n`)
  }

  const wrapTool = (name, original) => {
    const tables = BUILTIN_TOOL_REPAIRS[name]
    const ownerShim = original.prepareArguments
    const observe = (observation) => {
      writeTelemetry({
        ts: now(),
        tool: name,
        model: modelId,
        outcome: 'observed',
        rules: [observation.ruleId],
        channel: 'tool',
        profile: settings.policyProfile,
        stages: [observation.stage],
        observation: true,
      })
    }

    const prepareArguments = (raw) => {
      const result = runRepairPipeline({
        input: raw,
        config: {
          toolName: name,
          schema: original.parameters,
          policy: settings.policyProfile,
          modelId,
          ownerPrepareArguments: ownerShim,
          preprocessors: tables.preprocessors,
          legacyConfig: tables.legacyConfig,
          onObservation: observe,
        },
      })
      if (result.outcome === 'valid') return result.args
      logDecision(name, result)
      const rules = distinct(result.changes.map((c) => c.ruleId))
      const stages = distinct(result.changes.map((c) => c.stage))
      writeTelemetry({
        ts: now(),
        tool: name,
        model: modelId,
        outcome: result.outcome,
        rules,
        issues: result.issueSummary,
        fingerprint: result.fingerprint,
        profile: result.policy,
        stages,
      })
      if (result.outcome === 'repaired') {
        lifecycle.enqueue(name, result.args, {
          rules,
          notes: result.changes.map((c) => c.note),
          stages,
          profile: settings.policyProfile,
          model: modelId,
          outcome: 'repaired',
          fingerprint: result.fingerprint,
        })
        return result.args
      }
      // Unrepairable: fail the call with a message the model can act on. Handing the input on would
      // let pi's Value.Convert coerce it (null -> "null") and run the tool with garbage.
      if (result.retryMessage && !flagEnabled('PI_TOOL_REPAIR_PASSTHROUGH')) throw new Error(result.retryMessage)
      return raw
    }

    const definition = { ...original, prepareArguments }
    if (original.renderResult) {
      const renderOriginal = original.renderResult.bind(original)
      definition.renderResult = (result, options, theme, context) => {
        const info = indicatorInfo.get(context?.toolCallId)
        const previous = context?.lastComponent
        let wrapper
        if (previous instanceof RepairIndicatorComponent) wrapper = previous
        else if (info) wrapper = new RepairIndicatorComponent()
        if (!wrapper) return renderOriginal(result, options, theme, context)
        wrapper.inner = renderOriginal(result, options, theme, { ...context, lastComponent: wrapper.inner })
        wrapper.info = info
        wrapper.theme = theme
        wrapper.settings = settings
        return wrapper
      }
    }
    return definition
  }

  const registerOverrides = (cwd) => {
    if (registeredCwd === cwd) return
    registeredCwd = cwd
    for (const [name, create] of toolFactories(agent)) pi.registerTool(wrapTool(name, create(cwd)))
  }

  pi.on('session_start', async (_event, ctx) => {
    modelId = ctx.model?.id
    registerOverrides(ctx.cwd)
    // Bring back indicators of repairs recorded earlier in this session (reload / resume).
    try {
      for (const entry of ctx.sessionManager.getEntries()) {
        const data = entry?.data
        if (entry?.type !== 'custom' || entry.customType !== ENTRY_TYPE || typeof data?.toolCallId !== 'string') continue
        indicatorInfo.set(data.toolCallId, restoredFeedback(data))
      }
    } catch {
      // No session entries available: indicators start empty.
    }
  })

  pi.on('model_select', async (event, ctx) => {
    modelId = event?.model?.id ?? ctx?.model?.id ?? modelId
  })

  pi.on('tool_call', async (event) => {
    const feedback = lifecycle.correlate(event.toolName, event.input, event.toolCallId)
    if (!feedback) return undefined
    indicatorInfo.set(event.toolCallId, feedback)
    persist({
      toolCallId: event.toolCallId,
      tool: event.toolName,
      rules: feedback.rules,
      stages: feedback.stages,
      profile: feedback.profile,
      model: feedback.model,
      outcome: feedback.outcome,
      fingerprint: feedback.fingerprint,
    })
    return undefined
  })

  pi.on('tool_result', async (event) => {
    const feedback = lifecycle.take(event.toolCallId)
    if (!feedback || feedback.notes.length === 0) return undefined
    return { content: attachRepairNotes(event.content, feedback.notes) }
  })

  pi.on('session_shutdown', async () => {
    lifecycle.clear()
    indicatorInfo.clear()
  })

  const activeTools = () => {
    try {
      return typeof pi.getActiveTools === 'function' ? (pi.getActiveTools() ?? []) : []
    } catch {
      return []
    }
  }

  // Leaked tool-call grammar: on message_end, strip the grammar the model printed as text and, in
  // recover mode, turn it into real tool calls of the same turn (only when the message ended with
  // stopReason "stop"; the driver enforces that).
  pi.on('message_end', async (event) => {
    const mode = settings.grammarRecovery
    if (mode === 'off') return undefined
    const message = event?.message
    if (message?.role !== 'assistant') return undefined
    if (!modelLeaksGrammar(modelId)) return undefined

    const allowed = settings.grammarAllowedTools
    const result = recoverGrammarLeaks(message, {
      mode,
      knownTools: new Set(allowed.length > 0 ? allowed : activeTools()),
      requireKnownTool: true,
      unknownToolText: settings.unknownGrammarText,
    })

    if (!result.changed) {
      if (result.observed) {
        writeTelemetry({
          ts: now(),
          model: modelId,
          outcome: 'observed',
          rules: ['grammarObserve'],
          channel: 'message',
          grammar: result.detectedGrammars.join(',') || undefined,
          profile: settings.policyProfile,
          stages: ['grammar'],
          observation: true,
        })
      }
      return undefined
    }

    if (result.promoted) {
      result.recoveredCalls.forEach((call, index) => {
        const rule = `grammarRecovery:${call.grammar}`
        const callId = result.promotedCallIds[index]
        if (callId) {
          const feedback = {
            rules: [rule],
            notes: [
              `Recovered a leaked ${call.grammar} tool call for "${call.name}" that the model printed as text instead of emitting a real tool call. Emit a proper tool call next time.`,
            ],
            stages: ['grammar'],
            profile: settings.policyProfile,
            model: modelId,
            outcome: 'recovered',
          }
          lifecycle.associate(callId, feedback)
          indicatorInfo.set(callId, feedback)
          persist({
            toolCallId: callId,
            tool: call.name,
            rules: feedback.rules,
            stages: feedback.stages,
            profile: feedback.profile,
            model: feedback.model,
            outcome: feedback.outcome,
          })
        }
        writeTelemetry({
          ts: now(),
          tool: call.name,
          model: modelId,
          outcome: 'recovered',
          rules: [rule],
          grammar: call.grammar,
          profile: settings.policyProfile,
          stages: ['grammar'],
        })
      })
    } else {
      writeTelemetry({
        ts: now(),
        model: modelId,
        outcome: 'stripped',
        rules: ['grammarStrip'],
        channel: 'message',
        grammar: result.strippedGrammars.length > 0 ? result.strippedGrammars.join(',') : undefined,
        profile: settings.policyProfile,
        stages: ['grammar'],
      })
    }
    return { message: result.message }
  })

  pi.registerCommand('repair-settings', {
    description: 'Toggle the tool-repair indicator (🔨), repair-note display, and grammar recovery',
    handler: async (_args, ctx) => {
      for (;;) {
        const options = {
          profile: `Policy profile: ${settings.policyProfile} — conservative (observe) | adaptive (strip) | recover (promote)`,
          indicator: `Repair indicator (🔨 ✓): ${settings.showIndicator ? 'on' : 'off'} — toggle`,
          notes: `Repair note text beneath indicator: ${settings.showNotes ? 'on' : 'off'} — toggle`,
          grammar: `Grammar override: ${settings.grammarRecovery} — cycle (off → observe → strip → recover)`,
          unknown: `Unknown-tool grammar text: ${settings.unknownGrammarText} — never executable`,
        }
        const choice = await ctx.ui.select('Tool repair display settings', [...Object.values(options), 'Close'])
        if (choice === undefined || choice === 'Close') break
        if (choice === options.profile) {
          settings.policyProfile = NEXT_PROFILE[settings.policyProfile] ?? 'adaptive'
          settings.grammarRecovery = grammarModeForProfile(settings.policyProfile)
        } else if (choice === options.indicator) {
          settings.showIndicator = !settings.showIndicator
        } else if (choice === options.notes) {
          settings.showNotes = !settings.showNotes
        } else if (choice === options.grammar) {
          settings.grammarRecovery = NEXT_GRAMMAR_MODE[settings.grammarRecovery] ?? 'off'
        } else if (choice === options.unknown) {
          settings.unknownGrammarText = settings.unknownGrammarText === 'preserve' ? 'strip' : 'preserve'
        }
        saveDisplaySettings(settings)
      }
      const onOff = (flag) => (flag ? 'on' : 'off')
      ctx.ui.notify(
        `Repair display: indicator ${onOff(settings.showIndicator)}, notes ${onOff(settings.showNotes)}, ` +
          `policy ${settings.policyProfile}, grammar ${settings.grammarRecovery}, ` +
          `unknown text ${settings.unknownGrammarText} (applies from now on)`,
        'info',
      )
    },
  })

  pi.registerCommand('repair-stats', {
    description: 'Summarize tool-input repair telemetry',
    handler: async (_args, ctx) => {
      const file = telemetryFile()
      const records = file && existsSync(file) ? readTelemetry(file) : []
      if (records.length === 0) {
        ctx.ui.notify('No repair telemetry recorded yet.', 'info')
        return
      }
      ctx.ui.notify(summarizeTelemetry(records), 'info')
    },
  })
}

function readTelemetry(file) {
  const records = []
  let text
  try {
    text = readFileSync(file, 'utf-8')
  } catch {
    return records
  }
  for (const line of text.split('\n')) {
    if (!line.trim()) continue
    try {
      records.push(JSON.parse(line))
    } catch {
      // malformed line: skipped
    }
  }
  return records
}

function summarizeTelemetry(records) {
  const counts = () => ({ repaired: 0, unrepairable: 0, recovered: 0 })
  const count = (map, key) => {
    let entry = map.get(key)
    if (!entry) map.set(key, (entry = counts()))
    return entry
  }
  const bump = (entry, outcome) => {
    if (outcome === 'repaired' || outcome === 'unrepairable' || outcome === 'recovered') entry[outcome] += 1
  }
  const tools = new Map()
  const models = new Map()
  const rules = new Map()
  const grammars = new Map()
  let messageEvents = 0
  let toolEvents = 0
  for (const record of records) {
    if (record.channel === 'message') {
      // Grammar strip/observe events have no tool.
      messageEvents += 1
      for (const family of (record.grammar ?? 'unknown').split(',')) grammars.set(family, (grammars.get(family) ?? 0) + 1)
    } else {
      // No channel = an older tool-channel record.
      toolEvents += 1
      bump(count(tools, record.tool ?? 'unknown'), record.outcome)
      bump(count(models, record.model ?? 'unknown'), record.outcome)
    }
    for (const rule of Array.isArray(record.rules) ? record.rules : []) rules.set(rule, (rules.get(rule) ?? 0) + 1)
  }
  const fixed = (c) => c.repaired + c.recovered
  const describe = (c) => `${c.repaired} repaired, ${c.recovered} recovered, ${c.unrepairable} unrepairable`
  const out = [
    `Tool repair telemetry (${records.length} events: ${toolEvents} tool, ${messageEvents} grammar strip-only)`,
    '',
    'By tool:',
  ]
  for (const [tool, c] of [...tools].sort((a, b) => fixed(b[1]) - fixed(a[1]))) out.push(`  ${tool}: ${describe(c)}`)
  out.push('', 'By model:')
  for (const [model, c] of [...models].sort((a, b) => fixed(b[1]) - fixed(a[1]))) out.push(`  ${model}: ${describe(c)}`)
  if (grammars.size > 0) {
    out.push('', 'Grammar strip-only events (message channel):')
    for (const [family, n] of [...grammars].sort((a, b) => b[1] - a[1])) out.push(`  ${family}: ${n}`)
  }
  out.push('', 'Rules fired:')
  for (const [rule, n] of [...rules].sort((a, b) => b[1] - a[1])) out.push(`  ${rule}: ${n}`)
  return out.join('\n')
}

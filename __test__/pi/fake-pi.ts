// A recording stand-in for pi's ExtensionAPI, for the event-level tests that need direct access to
// the handlers (lifecycle ordering, commands, restored entries). The tools it receives are still pi's
// real built-in definitions, wrapped by the extension.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import toolRepairExtension from '../../lib/extension.js'

type Handler = (event: any, ctx: any) => Promise<any>

export interface FakePi {
  api: any
  root: string
  cwd: string
  agentDir: string
  tools: Map<string, any>
  registrations: string[]
  commands: Map<string, any>
  entries: Array<{ customType: string; data: any }>
  handlers: Map<string, Handler>
  emit(event: string, payload?: any, ctx?: any): Promise<any>
  start(ctx?: any): Promise<void>
  cleanup(): void
}

const ENV = ['PI_TOOL_REPAIR_LOG', 'PI_TOOL_REPAIR_PASSTHROUGH', 'PI_TOOL_REPAIR_TELEMETRY', 'PI_TOOL_REPAIR_SETTINGS', 'PI_CODING_AGENT_DIR']

export function createFakePi(options: { settings?: unknown; activeTools?: string[]; env?: Record<string, string | undefined> } = {}): FakePi {
  const root = mkdtempSync(join(tmpdir(), 'pi-native-fake-'))
  const cwd = join(root, 'work')
  const agentDir = join(root, 'agent')
  mkdirSync(cwd, { recursive: true })
  mkdirSync(agentDir, { recursive: true })
  const saved = new Map(ENV.map((k) => [k, process.env[k]]))
  for (const k of ENV) delete process.env[k]
  process.env.PI_CODING_AGENT_DIR = agentDir
  for (const [k, v] of Object.entries(options.env ?? {})) {
    if (!saved.has(k)) saved.set(k, process.env[k])
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
  if (options.settings !== undefined) {
    mkdirSync(join(agentDir, 'tool-repair'), { recursive: true })
    writeFileSync(join(agentDir, 'tool-repair', 'settings.json'), JSON.stringify(options.settings))
  }

  const tools = new Map<string, any>()
  const registrations: string[] = []
  const commands = new Map<string, any>()
  const entries: Array<{ customType: string; data: any }> = []
  const handlers = new Map<string, Handler>()
  const api = {
    registerTool(definition: any) {
      registrations.push(definition.name)
      tools.set(definition.name, definition)
    },
    registerCommand(name: string, command: any) {
      commands.set(name, command)
    },
    appendEntry(customType: string, data: any) {
      entries.push({ customType, data })
    },
    getActiveTools: () => options.activeTools ?? [...tools.keys()],
    on(event: string, handler: Handler) {
      handlers.set(event, handler)
    },
  }
  toolRepairExtension(api as any)

  const fake: FakePi = {
    api,
    root,
    cwd,
    agentDir,
    tools,
    registrations,
    commands,
    entries,
    handlers,
    async emit(event, payload = {}, ctx = {}) {
      const handler = handlers.get(event)
      if (!handler) throw new Error(`no handler for ${event}`)
      return handler(payload, ctx)
    },
    async start(ctx = {}) {
      await fake.emit('session_start', { type: 'session_start' }, {
        cwd,
        model: { id: 'glm-4.6' },
        sessionManager: { getEntries: () => [] },
        ...ctx,
      })
    },
    cleanup() {
      for (const [k, v] of saved) {
        if (v === undefined) delete process.env[k]
        else process.env[k] = v
      }
      rmSync(root, { recursive: true, force: true })
    },
  }
  return fake
}

// Drives REAL pi sessions (pi-coding-agent 0.80.6 SDK) offline: a scripted model from pi-ai's faux
// provider, an in-memory auth/model registry, a temp cwd and a temp agent dir, and this package loaded
// the way `pi install npm:pi-native` loads it — through pi's extension loader reading the
// `pi.extensions` manifest of the package root. No network, no API key.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type FauxResponseStep, registerFauxProvider } from '@earendil-works/pi-ai/compat'
import {
  AuthStorage,
  createAgentSession,
  discoverAndLoadExtensions,
  ModelRegistry,
  SessionManager,
  SettingsManager,
} from '@earendil-works/pi-coding-agent'

export const PACKAGE_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
export const BUILTINS = ['read', 'bash', 'edit', 'write', 'grep', 'find', 'ls']

const REPAIR_ENV = [
  'PI_TOOL_REPAIR_LOG',
  'PI_TOOL_REPAIR_PASSTHROUGH',
  'PI_TOOL_REPAIR_TELEMETRY',
  'PI_TOOL_REPAIR_SETTINGS',
  'PI_CODING_AGENT_DIR',
]

export interface SessionOptions {
  /** Model id the faux provider serves (the grammar gate looks at it). */
  modelId?: string
  /** Written to <agentDir>/tool-repair/settings.json before the extension loads. */
  settings?: unknown
  /** Tool allowlist for the session; default: the seven built-ins. */
  tools?: string[]
  /** Extra env for the session's lifetime (undefined deletes). PI_CODING_AGENT_DIR is set to the temp agent dir. */
  env?: Record<string, string | undefined>
}

export interface ToolResultView {
  toolCallId: string
  toolName: string
  isError: boolean
  text: string
}

export interface PiHarness {
  cwd: string
  agentDir: string
  session: any
  /** Queue model responses and send one user prompt; resolves when the agent loop is done. */
  run(responses: FauxResponseStep[], prompt?: string): Promise<void>
  toolResults(): ToolResultView[]
  assistantMessages(): any[]
  telemetryPath(): string
  telemetryText(): string
  telemetryRecords(): any[]
  dispose(): void
}

const live = new Set<PiHarness>()

/** Dispose every harness still open (call from afterEach/afterAll). */
export function disposeAll() {
  for (const h of [...live]) h.dispose()
}

export async function startPiSession(options: SessionOptions = {}): Promise<PiHarness> {
  const root = mkdtempSync(join(tmpdir(), 'pi-native-ext-'))
  const cwd = join(root, 'work')
  const agentDir = join(root, 'agent')
  mkdirSync(cwd, { recursive: true })
  mkdirSync(agentDir, { recursive: true })

  const savedEnv = new Map(REPAIR_ENV.map((k) => [k, process.env[k]]))
  for (const k of REPAIR_ENV) delete process.env[k]
  process.env.PI_CODING_AGENT_DIR = agentDir
  for (const [k, v] of Object.entries(options.env ?? {})) {
    if (!savedEnv.has(k)) savedEnv.set(k, process.env[k])
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
  if (options.settings !== undefined) {
    mkdirSync(join(agentDir, 'tool-repair'), { recursive: true })
    writeFileSync(join(agentDir, 'tool-repair', 'settings.json'), JSON.stringify(options.settings))
  }

  const faux = registerFauxProvider({ models: [{ id: options.modelId ?? 'faux-model' }] })
  const model = faux.getModel()
  const authStorage = AuthStorage.inMemory()
  authStorage.setRuntimeApiKey(model.provider, 'faux-key')
  const modelRegistry = ModelRegistry.inMemory(authStorage)
  modelRegistry.registerProvider(model.provider, {
    baseUrl: model.baseUrl,
    apiKey: 'faux-key',
    api: faux.api,
    models: faux.models.map((m) => ({
      id: m.id,
      name: m.name,
      api: m.api,
      reasoning: m.reasoning,
      input: m.input,
      cost: m.cost,
      contextWindow: m.contextWindow,
      maxTokens: m.maxTokens,
      baseUrl: m.baseUrl,
    })),
  } as any)

  // The package root: pi reads `pi.extensions` from its package.json.
  const extensions = await discoverAndLoadExtensions([PACKAGE_ROOT], cwd, agentDir)
  if (extensions.errors.length > 0) {
    throw new Error(`extension load failed: ${JSON.stringify(extensions.errors)}`)
  }
  const resourceLoader = {
    getExtensions: () => extensions,
    getSkills: () => ({ skills: [], diagnostics: [] }),
    getPrompts: () => ({ prompts: [], diagnostics: [] }),
    getThemes: () => ({ themes: [], diagnostics: [] }),
    getAgentsFiles: () => ({ agentsFiles: [] }),
    getSystemPrompt: () => undefined,
    getAppendSystemPrompt: () => [],
    extendResources: () => {},
    reload: async () => {},
  } as any

  const { session } = await createAgentSession({
    cwd,
    agentDir,
    model,
    authStorage,
    modelRegistry,
    sessionManager: SessionManager.inMemory(),
    settingsManager: SettingsManager.inMemory(),
    resourceLoader,
    tools: options.tools ?? BUILTINS,
  })
  // What the pi host does at startup: fires session_start, where the overrides get registered.
  await session.bindExtensions({})

  const telemetryPath = () => process.env.PI_TOOL_REPAIR_TELEMETRY || join(agentDir, 'tool-repair', 'telemetry.jsonl')
  const telemetryText = () => {
    try {
      return readFileSync(telemetryPath(), 'utf-8')
    } catch {
      return ''
    }
  }

  let disposed = false
  const harness: PiHarness = {
    cwd,
    agentDir,
    session,
    async run(responses, prompt = 'go') {
      faux.setResponses(responses)
      await session.prompt(prompt)
    },
    toolResults() {
      return session.messages
        .filter((m: any) => m.role === 'toolResult')
        .map((m: any) => ({
          toolCallId: m.toolCallId,
          toolName: m.toolName,
          isError: Boolean(m.isError),
          text: (m.content ?? [])
            .filter((b: any) => b.type === 'text')
            .map((b: any) => b.text)
            .join('\n'),
        }))
    },
    assistantMessages() {
      return session.messages.filter((m: any) => m.role === 'assistant')
    },
    telemetryPath,
    telemetryText,
    telemetryRecords() {
      return telemetryText()
        .split('\n')
        .filter((line) => line.trim())
        .map((line) => JSON.parse(line))
    },
    dispose() {
      if (disposed) return
      disposed = true
      live.delete(harness)
      try {
        session.dispose()
      } finally {
        faux.unregister()
        for (const [k, v] of savedEnv) {
          if (v === undefined) delete process.env[k]
          else process.env[k] = v
        }
        rmSync(root, { recursive: true, force: true })
      }
    },
  }
  live.add(harness)
  return harness
}

/** Count non-overlapping occurrences. */
export function count(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1
}

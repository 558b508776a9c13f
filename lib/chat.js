// pi-native/chat: a streaming chat handle whose work (context, wire requests, SSE, retries,
// fallback, liveness) runs in Rust on a tokio runtime. JS sees Blade's ChatService contract: an
// async iterator of StreamChunks with AbortSignal support, and Blade's error classes.
import { checkChatInput } from './chat-input.js'
import binding from './native.js'

const native = binding

// --- errors (spec §1.9) -------------------------------------------------------------------------

export class StreamIdleTimeoutError extends Error {
  constructor(timeoutMs) {
    super(`Provider stream idle timeout after ${timeoutMs}ms without an event`)
    this.code = 'STREAM_IDLE_TIMEOUT'
    this.timeoutMs = timeoutMs
    this.name = 'StreamIdleTimeoutError'
  }
}

export class ProviderStreamClosedError extends Error {
  constructor() {
    super('Provider stream closed before completion')
    this.code = 'PROVIDER_STREAM_CLOSED'
    this.name = 'ProviderStreamClosedError'
  }
}

export class ProviderRequestDeadlineExceededError extends Error {
  constructor(timeoutMs) {
    super(`Provider request deadline exceeded after ${timeoutMs}ms`)
    this.code = 'PROVIDER_REQUEST_DEADLINE_EXCEEDED'
    this.timeoutMs = timeoutMs
    this.name = 'ProviderRequestDeadlineExceededError'
  }
}

export class ProviderRecoveryBudgetExceededError extends Error {
  constructor(budgetMs, elapsedMs) {
    super(`Provider recovery budget exhausted after ${budgetMs}ms`)
    this.code = 'PROVIDER_RECOVERY_BUDGET_EXCEEDED'
    this.budgetMs = budgetMs
    this.elapsedMs = elapsedMs
    this.name = 'ProviderRecoveryBudgetExceededError'
  }
}

/** A response part beyond pi-native's bounds: one SSE event (16 MiB), one chunk (64 MiB of JSON) or
 *  the whole body after content decoding (1 GiB; a decompression bomb ends here). */
export class ProviderResponseTooLargeError extends Error {
  constructor(part, limitBytes, message) {
    super(message ?? `Provider response ${part} larger than ${limitBytes} bytes`)
    this.code = 'PROVIDER_RESPONSE_TOO_LARGE'
    this.part = part
    this.limitBytes = limitBytes
    this.name = 'ProviderResponseTooLargeError'
  }
}

const replayMarks = new WeakSet()

/** True when the error happened after the current model had already yielded real output. */
export function replayBoundaryCrossed(error) {
  return error !== null && typeof error === 'object' && replayMarks.has(error)
}

function toError(data) {
  let error
  switch (data.name) {
    case 'StreamIdleTimeoutError':
      error = new StreamIdleTimeoutError(data.timeoutMs)
      break
    case 'ProviderStreamClosedError':
      error = new ProviderStreamClosedError()
      break
    case 'ProviderRequestDeadlineExceededError':
      error = new ProviderRequestDeadlineExceededError(data.timeoutMs)
      break
    case 'ProviderRecoveryBudgetExceededError':
      error = new ProviderRecoveryBudgetExceededError(data.budgetMs, data.elapsedMs)
      break
    case 'ProviderResponseTooLargeError':
      error = new ProviderResponseTooLargeError(data.part, data.limitBytes, data.message)
      break
    case 'AbortError':
      // Blade surfaces caller cancellation during a stream as its own DOMException('Aborted').
      error = new DOMException('Aborted', 'AbortError')
      break
    default:
      error = new Error(data.message)
  }
  // What failed underneath a transport error (`connection closed before message completed`, ...),
  // as the OpenAI SDK's APIConnectionError carries it.
  if (typeof data.cause === 'string' && !('cause' in error)) {
    Object.defineProperty(error, 'cause', { value: new Error(data.cause), writable: true, configurable: true })
  }
  if (data.replayBoundaryCrossed) replayMarks.add(error)
  try {
    Object.defineProperty(error, 'replayBoundaryCrossed', { value: Boolean(data.replayBoundaryCrossed), configurable: true })
  } catch {
    // A frozen caller-supplied abort reason keeps its own shape; the WeakSet still answers.
  }
  return error
}

// --- the service ----------------------------------------------------------------------------------

const PROVIDER_DEFAULT_HEADERS = {
  openrouter: { 'HTTP-Referer': 'https://github.com/echoVic/blade-code', 'X-Title': 'Blade' },
  cerebras: { 'X-Cerebras-3rd-Party-Integration': 'blade' },
}

// Abort listeners of streams whose iterator was dropped without being finished.
const abandoned = new FinalizationRegistry(({ signal, onAbort }) => signal.removeEventListener('abort', onAbort))

// Live runtime objects Blade may put on its config; they never cross the boundary.
const LIVE_FIELDS = new Set(['providerCircuitRegistry', 'providerRequestAdmissionScheduler', 'modelCatalog'])

function wireConfig(config) {
  const out = {}
  for (const [key, value] of Object.entries(config)) if (!LIVE_FIELDS.has(key) && typeof value !== 'function') out[key] = value
  return out
}

export class PiNativeChatService {
  #config
  #models
  #modelsJson
  #model

  #record

  constructor(config, init = {}) {
    // Recording of each attempt's exchange (request with credentials redacted, raw response
    // body) into a folder, for `pi-native replay` and bug reports.
    this.#record = typeof init.record === 'string' ? init.record : process.env.PI_NATIVE_RECORD || undefined
    this.#models = Array.isArray(init.models) ? init.models.map((m) => ({ ...m })) : []
    this.#modelsJson = JSON.stringify(this.#models)
    this.#resolve(config)
  }

  #resolve(config) {
    let model
    try {
      model = JSON.parse(native.chatResolveModel(JSON.stringify(wireConfig(config)), this.#modelsJson))
    } catch (error) {
      throw new Error(error.message)
    }
    this.#model = model
    this.#config = {
      ...config,
      maxContextTokens: model.contextWindow,
      maxOutputTokens: config.maxOutputTokens ?? model.maxTokens,
    }
  }

  getConfig() {
    return { ...this.#config }
  }

  updateConfig(partial) {
    this.#resolve({ ...this.#config, ...partial })
  }

  async *streamChat(messages, tools, signal, options) {
    checkChatInput(this.#config, messages, tools, options)
    // Already aborted: nothing is started (no request can leave before the cancel lands).
    if (signal?.aborted) throw toError({ name: 'AbortError', message: 'Aborted', replayBoundaryCrossed: false })
    const request = JSON.stringify({
      record: this.#record,
      config: wireConfig(this.#config),
      models: this.#models,
      messages,
      tools: tools ?? [],
      options: options ?? {},
    })
    const handle = native.chatStart(request)
    // The listener holds the handle weakly: an iterator abandoned without return() lets the handle
    // be collected (its native side then cancels the request), and the registry removes the
    // listener from a long-lived signal.
    const ref = new WeakRef(handle)
    const onAbort = () => ref.deref()?.cancel()
    if (signal) {
      signal.addEventListener('abort', onAbort, { once: true })
      abandoned.register(handle, { signal, onAbort }, handle)
    }
    try {
      for (;;) {
        const batch = JSON.parse(await handle.nextBatch())
        for (const chunk of batch.c) {
          // Like Blade's reader, nothing is yielded once the caller has aborted.
          if (signal?.aborted) throw toError({ name: 'AbortError', message: 'Aborted', replayBoundaryCrossed: false })
          yield chunk
        }
        if (batch.e) throw toError(batch.e)
        if (signal?.aborted) throw toError({ name: 'AbortError', message: 'Aborted', replayBoundaryCrossed: false })
        if (batch.d) return
      }
    } finally {
      signal?.removeEventListener('abort', onAbort)
      abandoned.unregister(handle)
      handle.cancel()
    }
  }

  async chat(messages, tools, signal, options) {
    let content = ''
    let reasoningContent = ''
    const toolCalls = []
    let usage
    let finishReason
    for await (const chunk of this.streamChat(messages, tools, signal, options)) {
      content += chunk.content ?? ''
      reasoningContent += chunk.reasoningContent ?? ''
      for (const call of chunk.toolCalls ?? []) if (call.id && call.type === 'function' && call.function?.name) toolCalls.push(call)
      usage = chunk.usage ?? usage
      finishReason = chunk.finishReason ?? finishReason
    }
    return {
      content,
      ...(reasoningContent ? { reasoningContent } : {}),
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
      usage,
      finishReason,
    }
  }
}

/** Construct a service exactly like Blade's `new PiAIChatService(config)`. */
export function createChatService(config, init) {
  return new PiNativeChatService(config, init)
}

/** Blade's factory: provider default headers merged under the caller's custom headers. */
export async function createChatServiceAsync(config, init) {
  const defaults = PROVIDER_DEFAULT_HEADERS[config.provider]
  const merged = defaults ? { ...config, customHeaders: { ...defaults, ...config.customHeaders } } : config
  return new PiNativeChatService(merged, init)
}

// --- Blade's pure helpers -------------------------------------------------------------------------

function helper(name, ...args) {
  return JSON.parse(native.chatHelper(name, JSON.stringify(args)))
}

function orThrow(result) {
  if (result && typeof result === 'object' && typeof result.error === 'string') throw new Error(result.error)
  return result
}

export function filterOrphanToolMessages(messages) {
  return helper('filterOrphanToolMessageIndices', messages).map((i) => messages[i])
}

export function hasNonThinkingToolHistory(messages) {
  return helper('hasNonThinkingToolHistory', messages)
}

function errorFacts(error) {
  const isError = error instanceof Error
  const facts = { message: isError ? error.message : String(error) }
  if (isError) facts.name = error.name
  if (error !== null && typeof error === 'object') {
    if (typeof error.code === 'string') facts.code = error.code
    const status = Number.isInteger(error.status) ? error.status : Number.isInteger(error.statusCode) ? error.statusCode : undefined
    if (status !== undefined && status >= 0 && status <= 65535) facts.status = status
  }
  return facts
}

export function classifyProviderRetry(error, response) {
  return helper('classifyProviderRetry', errorFacts(error), response ?? null)
}

export function computeProviderRetryDelay(attempt, response, options = {}) {
  return helper('computeProviderRetryDelay', attempt, response ?? null, {
    ...options,
    now: options.now ?? Date.now(),
    random: options.random ?? Math.random(),
  })
}

export function getProviderRetryAfterMs(response, now) {
  return helper('getProviderRetryAfterMs', response ?? null, now) ?? undefined
}

export function resolveReasoningEffort(model, selection) {
  return orThrow(helper('resolveReasoningEffort', model, selection))
}

export function resolveServiceTier(model, selection) {
  return orThrow(helper('resolveServiceTier', model, selection))
}

export function resolveResponseVerbosity(model, selection) {
  return orThrow(helper('resolveResponseVerbosity', model, selection))
}

export function getSupportedServiceTiers(model) {
  return helper('getSupportedServiceTiers', model)
}

export function getSupportedResponseVerbosities(model) {
  return helper('getSupportedResponseVerbosities', model)
}

export function resolveStreamStallWarningMs(idleTimeoutMs, configuredWarningMs) {
  return helper('resolveStreamStallWarningMs', idleTimeoutMs, configuredWarningMs ?? null) ?? undefined
}

/** The chat core's live native state: `{handles, tasks, outboxes}` (stream handles JS holds,
 *  request tasks running, stream buffers allocated). All three return to 0 once every stream has
 *  ended and its handle was collected: a leak check for hosts and tests. */
export function chatNativeStats() {
  return JSON.parse(native.chatNativeStats())
}

/** The catalog model for (provider, id) as this build embeds it (pi-ai's `Model` shape), or undefined. */
export function getModel(provider, id, init = {}) {
  try {
    return JSON.parse(native.chatResolveModel(JSON.stringify({ provider, model: id }), JSON.stringify(init.models ?? [])))
  } catch {
    return undefined
  }
}

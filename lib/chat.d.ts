// pi-native/chat: Blade's chat-service contract (spec §1), served by the Rust core.

/** The part of an `AbortSignal` the service uses (a DOM or Node `AbortSignal` fits). */
export interface AbortSignalLike {
  readonly aborted: boolean
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void
  removeEventListener(type: 'abort', listener: () => void): void
}

export type ContentPart =
  | { type: 'text'; text: string; providerOptions?: { anthropic?: { cacheControl?: { type: 'ephemeral' } } } }
  | { type: 'image_url'; image_url: { url: string } }

export interface ChatCompletionMessageToolCall {
  id: string
  type: 'function'
  function: { name: string; arguments: string }
}

export interface Message {
  role: 'system' | 'user' | 'assistant' | 'tool'
  content: string | ContentPart[]
  id?: string
  metadata?: unknown
  reasoningContent?: string
  tool_call_id?: string
  name?: string
  tool_calls?: ChatCompletionMessageToolCall[]
}

export interface ChatFallbackChannel {
  apiKey?: string
  baseUrl?: string
  temperature?: number
  maxOutputTokens?: number
  timeout?: number
  streamIdleTimeout?: number
  apiVersion?: string
  customHeaders?: Record<string, string>
  enablePromptCaching?: boolean
}

export interface ChatFallbackModel {
  provider: string
  model: string
  configId?: string
  channel?: ChatFallbackChannel
}

export interface ChatConfig {
  provider: string
  model: string
  apiKey?: string
  baseUrl?: string
  temperature?: number
  maxContextTokens?: number
  maxOutputTokens?: number
  timeout?: number
  streamIdleTimeout?: number
  apiVersion?: string
  reasoningEnabled?: boolean
  reasoningEffort?: 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max'
  reasoningLevel?: 'low' | 'medium' | 'high'
  serviceTier?: 'default' | 'priority' | 'flex' | 'fast'
  responseVerbosity?: 'low' | 'medium' | 'high'
  customHeaders?: Record<string, string>
  fallbackModels?: ChatFallbackModel[]
  enablePromptCaching?: boolean
  maxRetries?: number
  providerCircuitBreakerOpenMs?: number
  providerRequestConcurrency?: number
  providerGlobalConcurrency?: number
  providerOwnerConcurrency?: number
  providerRequestAdmissionMs?: number
  providerRequestPendingBytes?: number
  /** Live runtime objects Blade may pass; pi-native ignores them. */
  providerCircuitRegistry?: unknown
  providerRequestAdmissionScheduler?: unknown
  modelCatalog?: unknown
}

export type ConstrainedSampling =
  | false
  | { type: 'json_schema'; strict: 'prefer' | 'require' }
  | { type: 'grammar'; variants: { openai_lark?: string; openai_regex?: string } }

export interface ChatToolDefinition {
  name: string
  description: string
  parameters: Record<string, unknown>
  constrainedSampling?: ConstrainedSampling
}

export interface ChatRequestOptions {
  providerSessionId?: string
  toolChoice?: { type: 'tool'; toolName: string }
  providerRecovery?: { mode: 'bounded_foreground'; budgetMs: number }
  providerAdmission?: { sessionId: string; ownerId: string; requestClass: 'foreground' | 'background' | 'internal' }
  maxOutputTokens?: number
  temperature?: number
}

export interface UsageInfo {
  promptTokens: number
  completionTokens: number
  totalTokens: number
  costUsd: number
  reasoningTokens?: number
  cacheCreationInputTokens?: number
  cacheReadInputTokens?: number
  promptCacheBreak?: unknown
}

export type ProviderRetryReason = 'rate_limit' | 'server_error' | 'timeout' | 'transport' | 'stream_closed'

export interface ProviderRetryEvent {
  phase: 'scheduled' | 'waiting' | 'attempt' | 'recovered' | 'exhausted'
  attempt: number
  maxRetries: number
  reason: ProviderRetryReason
  statusCode?: number
  delayMs?: number
  nextRetryAt?: number
  mode: 'standard' | 'bounded_foreground'
  recoveryBudgetMs?: number
  recoveryElapsedMs?: number
  recoveryRemainingMs?: number
  exhaustedBy?: 'attempt_limit' | 'recovery_budget'
}

export interface ProviderStallEvent {
  phase: 'detected' | 'recovered'
  stallCount: number
  durationMs: number
  warningAfterMs: number
  timeoutMs: number
  outputStarted: boolean
}

export interface StreamChunk {
  content?: string
  reasoningContent?: string
  toolCalls?: Array<{ index: number; id: string; type: 'function'; function: { name: string; arguments: string } }>
  finishReason?: 'stop' | 'length' | 'toolUse'
  usage?: UsageInfo
  modelFallback?: true
  providerRetry?: ProviderRetryEvent
  providerStall?: ProviderStallEvent
}

export interface ChatResponse {
  content: string
  reasoningContent?: string
  toolCalls?: ChatCompletionMessageToolCall[]
  usage?: UsageInfo
  finishReason?: string
}

/** A model definition in pi-ai's `Model` shape. */
export interface ModelDefinition {
  id: string
  name?: string
  api: string
  provider: string
  baseUrl?: string
  reasoning?: boolean
  input?: Array<'text' | 'image'>
  cost?: { input: number; output: number; cacheRead: number; cacheWrite: number; tiers?: unknown[] }
  contextWindow?: number
  maxTokens?: number
  thinkingLevelMap?: Record<string, string | null>
  headers?: Record<string, string>
  compat?: Record<string, unknown>
}

export interface ChatServiceInit {
  /** Extra or replacement model definitions (they win over the embedded catalog). */
  models?: ModelDefinition[]
  /**
   * Record each attempt's exchange into this folder (`<stem>.json`: model, request with credentials
   * redacted, response status and headers; `<stem>.body`: the raw response body), for
   * `pi-native replay` and bug reports. Default: the `PI_NATIVE_RECORD` environment variable.
   */
  record?: string
}

export interface IChatService {
  chat(messages: Message[], tools?: ChatToolDefinition[], signal?: AbortSignalLike, options?: ChatRequestOptions): Promise<ChatResponse>
  streamChat(
    messages: Message[],
    tools?: ChatToolDefinition[],
    signal?: AbortSignalLike,
    options?: ChatRequestOptions,
  ): AsyncGenerator<StreamChunk, void, unknown>
  getConfig(): ChatConfig
  updateConfig(partial: Partial<ChatConfig>): void
}

export declare class PiNativeChatService implements IChatService {
  constructor(config: ChatConfig, init?: ChatServiceInit)
  chat(messages: Message[], tools?: ChatToolDefinition[], signal?: AbortSignalLike, options?: ChatRequestOptions): Promise<ChatResponse>
  streamChat(
    messages: Message[],
    tools?: ChatToolDefinition[],
    signal?: AbortSignalLike,
    options?: ChatRequestOptions,
  ): AsyncGenerator<StreamChunk, void, unknown>
  getConfig(): ChatConfig
  updateConfig(partial: Partial<ChatConfig>): void
}

export declare function createChatService(config: ChatConfig, init?: ChatServiceInit): PiNativeChatService
export declare function createChatServiceAsync(config: ChatConfig, init?: ChatServiceInit): Promise<PiNativeChatService>
/** The chat core's live native state; all three return to 0 once every stream has ended and its handle was collected. */
export declare function chatNativeStats(): { handles: number; tasks: number; outboxes: number }
export declare function getModel(provider: string, id: string, init?: ChatServiceInit): ModelDefinition | undefined

export declare class StreamIdleTimeoutError extends Error {
  readonly code: 'STREAM_IDLE_TIMEOUT'
  readonly timeoutMs: number
  constructor(timeoutMs: number)
}
export declare class ProviderStreamClosedError extends Error {
  readonly code: 'PROVIDER_STREAM_CLOSED'
  constructor()
}
export declare class ProviderRequestDeadlineExceededError extends Error {
  readonly code: 'PROVIDER_REQUEST_DEADLINE_EXCEEDED'
  readonly timeoutMs: number
  constructor(timeoutMs: number)
}
export declare class ProviderRecoveryBudgetExceededError extends Error {
  readonly code: 'PROVIDER_RECOVERY_BUDGET_EXCEEDED'
  readonly budgetMs: number
  readonly elapsedMs: number
  constructor(budgetMs: number, elapsedMs: number)
}
/** A response part beyond pi-native's bounds: one SSE event (16 MiB), one chunk (64 MiB of JSON) or
 *  the whole body after content decoding (1 GiB). */
export declare class ProviderResponseTooLargeError extends Error {
  readonly code: 'PROVIDER_RESPONSE_TOO_LARGE'
  readonly part: 'event' | 'chunk' | 'body'
  readonly limitBytes: number
  constructor(part: 'event' | 'chunk' | 'body', limitBytes: number, message?: string)
}
/** True when the error was thrown after the model had already yielded real output (no replay). */
export declare function replayBoundaryCrossed(error: unknown): boolean

export interface ProviderResponseMetadata {
  statusCode: number
  retryAfter?: string
  retryAfterMs?: string
  shouldRetry?: 'true' | 'false'
}
export interface ProviderRetryClassification {
  retryable: boolean
  reason?: ProviderRetryReason
  statusCode?: number
}
export type ThinkingLevel = 'off' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max'

export declare function filterOrphanToolMessages(messages: Message[]): Message[]
export declare function hasNonThinkingToolHistory(messages: Message[]): boolean
export declare function classifyProviderRetry(error: unknown, response?: ProviderResponseMetadata): ProviderRetryClassification
export declare function computeProviderRetryDelay(
  attempt: number,
  response?: ProviderResponseMetadata,
  options?: { now?: number; random?: number; maxDelayMs?: number; maxExponentialDelayMs?: number },
): number
export declare function getProviderRetryAfterMs(response: ProviderResponseMetadata | undefined, now: number): number | undefined
export declare function resolveReasoningEffort(
  model: ModelDefinition,
  selection: 'auto' | ThinkingLevel,
): { selection: string; effective: ThinkingLevel; supported: ThinkingLevel[] }
export declare function resolveServiceTier(
  model: ModelDefinition,
  selection: 'auto' | 'standard' | 'fast' | 'flex',
): {
  selection: string
  effective: 'provider-default' | 'standard' | 'fast' | 'flex'
  supported: Array<'standard' | 'fast' | 'flex'>
  providerValue?: 'default' | 'priority' | 'flex' | 'fast'
}
export declare function resolveResponseVerbosity(
  model: ModelDefinition,
  selection: 'auto' | 'low' | 'medium' | 'high',
): {
  selection: string
  effective: 'provider-default' | 'low' | 'medium' | 'high'
  supported: Array<'low' | 'medium' | 'high'>
  providerValue?: 'low' | 'medium' | 'high'
}
export declare function getSupportedServiceTiers(model: ModelDefinition): Array<'standard' | 'fast' | 'flex'>
export declare function getSupportedResponseVerbosities(model: ModelDefinition): Array<'low' | 'medium' | 'high'>
export declare function resolveStreamStallWarningMs(idleTimeoutMs: number, configuredWarningMs?: number): number | undefined

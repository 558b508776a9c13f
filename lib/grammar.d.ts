// pi-native/grammar: declarations matching @r3b1s/pi-repair-layer/grammar.

export declare const GRAMMAR_NAMES: readonly ['dsml', 'invoke', 'qwen', 'kimi', 'mistral', 'llama', 'glm', 'granite', 'minimax-text', 'olmo']
export type GrammarName = (typeof GRAMMAR_NAMES)[number]
export type GrammarRecoveryMode = 'off' | 'observe' | 'strip' | 'recover'

export interface RecoveredToolCall {
  name: string
  arguments: Record<string, unknown>
  grammar: GrammarName
}

export interface MinimalAssistantMessage {
  role: string
  content: Array<Record<string, unknown>>
  stopReason?: string
  [key: string]: unknown
}

export interface GrammarRecoveryOptions {
  mode: GrammarRecoveryMode
  knownTools: Set<string>
  grammars?: readonly GrammarName[]
  /** Default true. */
  requireKnownTool?: boolean
  /** Default "preserve". */
  unknownToolText?: 'preserve' | 'strip'
}

export interface GrammarRecoveryResult {
  changed: boolean
  recoveredCalls: RecoveredToolCall[]
  strippedGrammars: GrammarName[]
  strippedRanges: number
  promoted: boolean
  observed: boolean
  detectedGrammars: GrammarName[]
  detectedRanges: number
  promotedCallIds: string[]
  message: MinimalAssistantMessage
}

export declare const GRAMMAR_RECOVERY_MODELS: readonly RegExp[]
export declare function modelLeaksGrammar(modelId: string | undefined): boolean
export declare function parseToolGrammarLeaks(text: string, grammars?: Iterable<GrammarName>): RecoveredToolCall[]
export declare function recoverGrammarLeaks(message: MinimalAssistantMessage, options: GrammarRecoveryOptions): GrammarRecoveryResult

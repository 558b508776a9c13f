// pi-native/grammar: drop-in for @r3b1s/pi-repair-layer/grammar. Scanning runs in Rust over
// UTF-16 offsets with JS regex semantics; this facade keeps message identity and spreads.
import binding from './native.js'
import { decode } from './codec.js'

const native = binding

export const GRAMMAR_NAMES = Object.freeze(['dsml', 'invoke', 'qwen', 'kimi', 'mistral', 'llama', 'glm', 'granite', 'minimax-text', 'olmo'])

export const GRAMMAR_RECOVERY_MODELS = Object.freeze(JSON.parse(native.grammarRecoveryModels()).sources.map((s) => new RegExp(s, 'i')))

/** Whether grammar recovery's model gate matches the given model id. */
export function modelLeaksGrammar(modelId) {
  if (!modelId) return false
  return GRAMMAR_RECOVERY_MODELS.some((re) => re.test(modelId))
}

/** Tool calls a model printed as text, in order. */
export function parseToolGrammarLeaks(text, grammars) {
  const names = grammars === undefined ? null : JSON.stringify([...grammars])
  return decode(native.grammarParse(String(text), names))
}

/** One letter per content part: what recovery reads of it. */
function partKind(part) {
  if (part === null || typeof part !== 'object') return 'o'
  if (part.type === 'text' && typeof part.text === 'string') return 't'
  if (part.type === 'thinking' && typeof part.thinking === 'string') return 'h'
  if (part.type === 'toolCall' && typeof part.name === 'string') return 'c'
  return 'o'
}

/** The text of `text` cut down to the slices `[start, end, start, end, …]`. */
function sliced(text, bounds) {
  if (bounds.length === 2) return text.slice(bounds[0], bounds[1])
  const pieces = new Array(bounds.length / 2)
  for (let i = 0; i < bounds.length; i += 2) pieces[i / 2] = text.slice(bounds[i], bounds[i + 1])
  return pieces.join('')
}

function unchangedResult(message) {
  return {
    changed: false,
    recoveredCalls: [],
    strippedGrammars: [],
    strippedRanges: 0,
    promoted: false,
    observed: false,
    detectedGrammars: [],
    detectedRanges: 0,
    promotedCallIds: [],
    message,
  }
}

/**
 * The tool names the reference's `knownTools.size > 0 && knownTools.has(name)` accepts: a Set (or
 * any set-like with `size`, `has` and `keys`); an Array has no `size`, so the reference knows no
 * tools at all.
 */
function knownToolNames(known) {
  if (known instanceof Set) return [...known]
  if (known == null || !(known.size > 0) || typeof known.has !== 'function' || typeof known.keys !== 'function') return []
  return [...known.keys()].filter((name) => typeof name === 'string' && known.has(name))
}

/** Detect, strip and (in recover mode) promote leaked tool calls of an assistant message. */
export function recoverGrammarLeaks(message, options) {
  if (options.mode === 'off' || message.role !== 'assistant' || !Array.isArray(message.content)) return unchangedResult(message)
  const content = message.content
  let kinds = ''
  const texts = []
  for (const part of content) {
    const k = partKind(part)
    kinds += k
    if (k === 't') texts.push(part.text)
    else if (k === 'h') texts.push(part.thinking)
  }
  const opts = {
    mode: options.mode,
    knownTools: knownToolNames(options.knownTools),
    grammars: options.grammars ? [...options.grammars] : undefined,
    requireKnownTool: options.requireKnownTool,
    unknownToolText: options.unknownToolText,
  }
  const stopReason = typeof message.stopReason === 'string' ? message.stopReason : null
  const raw = native.grammarRecover(kinds, texts, stopReason, JSON.stringify(opts), Date.now())
  if (raw === 'U') return unchangedResult(message)
  const r = decode(raw)
  // The reference reads `knownTools.size` when it judges a real (not strip-only) candidate.
  if (options.knownTools == null && options.requireKnownTool !== false && options.mode !== 'observe' && r.detectedGrammars.some((g) => g !== 'dsml')) {
    throw new TypeError(`Cannot read properties of ${options.knownTools} (reading 'size')`)
  }
  if (!r.changed) {
    return { ...unchangedResult(message), observed: r.observed, detectedGrammars: r.detectedGrammars, detectedRanges: r.detectedRanges }
  }
  // Rebuild the content: changed text parts are spread copies, others keep their identity;
  // promoted calls share their `arguments` object with `recoveredCalls`, as in the reference.
  const nextContent = content.slice()
  for (const [index, bounds] of r.replaced) {
    const part = content[index]
    if (kinds[index] === 't') {
      const text = sliced(part.text, bounds)
      if (text !== part.text) nextContent[index] = { ...part, text }
    } else {
      const thinking = sliced(part.thinking, bounds)
      if (thinking !== part.thinking) nextContent[index] = { ...part, thinking }
    }
  }
  r.recoveredCalls.forEach((call, k) => {
    nextContent.push({ type: 'toolCall', id: r.promotedCallIds[k], name: call.name, arguments: call.arguments })
  })
  const nextMessage = { ...message, content: nextContent }
  if (r.promoted) nextMessage.stopReason = 'toolUse'
  return {
    changed: r.changed,
    recoveredCalls: r.recoveredCalls,
    strippedGrammars: r.strippedGrammars,
    strippedRanges: r.strippedRanges,
    promoted: r.promoted,
    observed: r.observed,
    detectedGrammars: r.detectedGrammars,
    detectedRanges: r.detectedRanges,
    promotedCallIds: r.promotedCallIds,
    message: nextMessage,
  }
}

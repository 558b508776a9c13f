// pi-native/core: drop-in for @r3b1s/pi-repair-layer/core, backed by the Rust core.
// This facade only caches compiled handles, moves values as JSON text, bridges JS callbacks, and
// keeps reference identity (valid and unrepairable results hand back the caller's own object).
import binding from './native.js'
import { decode, decodeParsed, encode, encodeExt } from './codec.js'
import { legacyProof, plainDataBytes, preprocessorProof, schemaChecker } from './fastpath.js'

const native = binding

export const DEFAULT_ENVELOPE_LIMITS = {
  maxInputBytes: 256 * 1024,
  maxNestingDepth: 64,
  maxDecodeAttempts: 3,
  maxCandidates: 4,
  maxWorkMs: 25,
}

const PROFILE_DEFAULTS = {
  conservative: {
    profile: 'conservative',
    allowTruncatedEnvelopeCompletion: false,
    allowValidValueTransforms: false,
    grammarMode: 'observe',
    unknownGrammarText: 'preserve',
  },
  adaptive: {
    profile: 'adaptive',
    allowTruncatedEnvelopeCompletion: true,
    allowValidValueTransforms: true,
    grammarMode: 'strip',
    unknownGrammarText: 'preserve',
  },
  recover: {
    profile: 'recover',
    allowTruncatedEnvelopeCompletion: true,
    allowValidValueTransforms: true,
    grammarMode: 'recover',
    unknownGrammarText: 'preserve',
  },
}

export function resolveRepairPolicy(profile = 'adaptive', overrides = {}) {
  return { ...PROFILE_DEFAULTS[profile], ...overrides, profile }
}

export function isPlainObject(value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

export function truncatedEnvelopeChange() {
  return {
    ruleId: 'envelope.complete-truncated-object',
    stage: 'envelope',
    note: 'Completed a truncated JSON object envelope after the completed candidate passed the tool schema.',
  }
}

export function escapeJsonStringControlCharacters(text) {
  const out = JSON.parse(native.escapeJsonStringControlCharacters(JSON.stringify(String(text))))
  return out === text ? text : out
}

export function unwrapMarkdownAutoLinks(value) {
  if (typeof value !== 'string' || !value.includes('](http')) return String(value)
  return JSON.parse(native.unwrapMarkdownAutoLinks(JSON.stringify(value)))
}

// --- stableSerialize / notes (pure helpers; key order uses the engine's localeCompare) ---------

function normalizeJson(value) {
  if (Array.isArray(value)) return value.map(normalizeJson)
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .sort(([left], [right]) => left.localeCompare(right))
        .map(([key, item]) => [key, normalizeJson(item)]),
    )
  }
  return value
}

export function stableSerialize(value) {
  try {
    return JSON.stringify(normalizeJson(value)) ?? String(value)
  } catch {
    return String(value)
  }
}

// --- compiled-handle caches ---------------------------------------------------------------------

const schemaCache = new WeakMap()

function copySchema(node, seen) {
  if (node === null || typeof node !== 'object') return node
  if (seen.has(node)) throw new TypeError('pi-native: recursive schema objects are not supported')
  seen.add(node)
  let out
  if (Array.isArray(node)) {
    out = node.map((item) => copySchema(item, seen))
  } else {
    out = {}
    for (const key of Object.keys(node)) {
      Object.defineProperty(out, key, { value: copySchema(node[key], seen), enumerable: true, writable: true, configurable: true })
    }
    // TypeBox 1.x keeps its kind markers as non-enumerable properties: carry them explicitly.
    for (const marker of ['~kind', '~optional']) {
      if (!(marker in out) && node[marker] !== undefined && typeof node[marker] !== 'function') out[marker] = node[marker]
    }
  }
  seen.delete(node)
  return out
}

// Boolean JSON Schemas (`true` / `false`) are valid roots; they cannot key a WeakMap.
const booleanSchemas = new Map()

function compiledSchema(schema) {
  if (typeof schema === 'boolean') {
    let entry = booleanSchemas.get(schema)
    if (entry === undefined) {
      const handle = native.compileSchema(String(schema))
      entry = { handle, id: handle.id }
      booleanSchemas.set(schema, entry)
    }
    return entry.id
  }
  if (schema === null || typeof schema !== 'object') {
    throw new TypeError('pi-native: config.schema must be a TypeBox or JSON Schema object')
  }
  let entry = schemaCache.get(schema)
  if (entry === undefined) {
    const handle = native.compileSchema(JSON.stringify(copySchema(schema, new Set())))
    // The handle object owns the native slot; the cache keeps it alive as long as the schema.
    entry = { handle, id: handle.id, checker: schemaChecker(schema) }
    schemaCache.set(schema, entry)
  }
  return entry.id
}

/** The fast-path checker of an already compiled schema (null: none). */
function schemaCheckerOf(schema) {
  const entry = schema !== null && typeof schema === 'object' ? schemaCache.get(schema) : undefined
  return entry === undefined ? null : entry.checker
}

const FIELD_KINDS = new Set([
  'filesystem-path',
  'filesystem-path-array',
  'glob',
  'string-or-array',
  'scalar',
  'anchor-bleed',
  'grammar-tokens',
])

function isPureRegExp(r) {
  return r instanceof RegExp && !r.global && !r.sticky
}

const preprocessorCache = new WeakMap()

function compiledPreprocessors(list) {
  let entry = preprocessorCache.get(list)
  if (entry !== undefined && entry.length === list.length) return entry
  const description = []
  const items = []
  let needsHost = false
  for (const p of list) {
    items.push(p)
    const kind = p == null ? undefined : p.kind
    if (kind === 'alias') {
      description.push({
        kind,
        selector: p.selector,
        aliases: Array.from(p.aliases ?? [], String),
        accepts: p.accepts,
        emptyEquivalentToMissing: p.emptyEquivalentToMissing === true,
      })
    } else if (kind === 'structural') {
      const isNative = p.apply === foldFlatEditFields
      if (!isNative) needsHost = true
      description.push({ kind, selector: p.selector, ruleId: p.ruleId, native: isNative ? 'foldFlatEditFields' : undefined })
    } else if (FIELD_KINDS.has(kind)) {
      description.push({ kind, selector: p.selector, scalarType: p.scalarType })
    } else if (p == null) {
      description.push({ kind: 'throw', message: `Cannot read properties of ${p} (reading 'kind')` })
    } else if (typeof p.selector !== 'string') {
      // The reference's locationsAt calls selector.split.
      const message = p.selector == null ? `Cannot read properties of ${p.selector} (reading 'split')` : 'selector.split is not a function'
      description.push({ kind: 'throw', message })
    } else {
      description.push({ kind: 'ignored' })
    }
  }
  entry = {
    length: list.length,
    items,
    needsHost,
    handle: native.compilePreprocessors(JSON.stringify(description)),
    familyCache: new Map(),
  }
  entry.id = entry.handle.id
  preprocessorCache.set(list, entry)
  return entry
}

/** One char per preprocessor: 0 = no match, 1 = match, 2 = ask at run time (stateful RegExps). */
function familyMatches(entry, modelId) {
  if (!modelId) return null
  let s = entry.familyCache.get(modelId)
  if (s !== undefined) return s
  s = ''
  let cacheable = true
  for (const p of entry.items) {
    const heuristic = p != null && (p.kind === 'anchor-bleed' || p.kind === 'grammar-tokens')
    const families = heuristic ? p.modelFamilies : undefined
    if (!families) {
      s += '0'
    } else if (Array.isArray(families) && families.every(isPureRegExp)) {
      s += families.some((f) => f.test(modelId)) ? '1' : '0'
    } else {
      s += '2'
      cacheable = false
    }
  }
  if (cacheable && entry.familyCache.size < 64) entry.familyCache.set(modelId, s)
  return s
}

const legacyCache = new WeakMap()

function compiledLegacy(config) {
  let entry = legacyCache.get(config)
  if (entry !== undefined) return entry
  const structural = Array.from(config.structural ?? [])
  let needsHost = false
  const description = {
    fieldAliases: config.fieldAliases
      ? Object.fromEntries(Object.entries(config.fieldAliases).map(([k, v]) => [k, Array.from(v ?? [], String)]))
      : undefined,
    rootString: config.rootString ? { field: String(config.rootString.field), wrapInArray: config.rootString.wrapInArray === true } : undefined,
    pathFields: config.pathFields ? Array.from(config.pathFields, String) : undefined,
    structural: structural.map((s) => {
      const isNative = s === LEGACY_FOLD || s?.apply === LEGACY_FOLD.apply
      if (!isNative) needsHost = true
      return { name: s?.name, native: isNative ? 'foldFlatEditFields' : undefined }
    }),
  }
  const handle = native.compileLegacyConfig(JSON.stringify(description))
  entry = { structural, needsHost, handle, id: handle.id }
  legacyCache.set(config, entry)
  return entry
}

function resolveLimits(overrides) {
  const limits = { ...DEFAULT_ENVELOPE_LIMITS, ...overrides }
  return [limits.maxInputBytes, limits.maxNestingDepth, limits.maxDecodeAttempts, limits.maxCandidates, limits.maxWorkMs].map(
    (v) => (v === undefined ? NaN : Number(v)),
  )
}

// --- JS callbacks, reached from Rust through one dispatcher -------------------------------------

const OP_OWNER = 1
const OP_STRUCTURAL = 2
const OP_LEGACY = 3
const OP_FAMILY = 4

function makeDispatch(ctx) {
  return function dispatch(op, index, payload, extra) {
    if (Array.isArray(op)) [op, index, payload, extra] = op
    try {
      switch (op) {
        case OP_OWNER: {
          const arg = index === 1 ? ctx.input : decode(payload)
          let returned
          try {
            returned = ctx.owner(arg)
          } catch {
            return 'T' + encodeExt(arg)
          }
          if (index === 1) ctx.ownerSawInput = true
          if (returned === arg) return 'S' + encodeExt(arg)
          const value = encodeExt(returned)
          if (mayBeUncloneable(value)) rememberCloneError(ctx, returned)
          return 'R{"a":' + encodeExt(arg) + ',"r":' + value + '}'
        }
        case OP_STRUCTURAL: {
          const arg = decode(payload)
          const result = ctx.preprocessors.items[index].apply(arg)
          const after = encodeExt(arg)
          let out = '{"a":' + after
          if (result) {
            const value = encodeExt(result.value)
            if (mayBeUncloneable(value)) rememberCloneError(ctx, result.value)
            out += ',"r":' + value + ',"n":' + encodeExt(keepNote(ctx, result.note))
          }
          if (mayBeUncloneable(after)) rememberCloneError(ctx, arg)
          return out + '}'
        }
        case OP_LEGACY: {
          const args = decode(payload)
          const note = ctx.legacy.structural[index].apply(args, JSON.parse(extra))
          let out = '{"a":' + encodeExt(args)
          if (note !== false) out += ',"n":' + JSON.stringify(keepNote(ctx, note))
          return out + '}'
        }
        case OP_FAMILY: {
          const families = ctx.preprocessors.items[index].modelFamilies
          return families.some((f) => f.test(ctx.modelId)) ? '1' : '0'
        }
        default:
          return '!'
      }
    } catch (error) {
      ctx.error = error
      ctx.threw = true
      return '!'
    }
  }
}

/** Extended-form text that may hold a function or symbol (structuredClone would throw). */
function mayBeUncloneable(text) {
  return text.includes('\\u0000f') || text.includes('\\u0000y')
}

/** Keep the DataCloneError the reference's next structuredClone of this value would throw. */
function rememberCloneError(ctx, value) {
  if (ctx.cloneError !== undefined) return
  try {
    structuredClone(value)
  } catch (error) {
    ctx.cloneError = error
  }
}

/**
 * Notes are the callbacks' own values in the reference (a number stays a number): a non-string
 * note crosses as a placeholder string and is put back when the result is decoded.
 */
function keepNote(ctx, note) {
  if (typeof note === 'string' && note.charCodeAt(0) !== 0) return note
  ;(ctx.notes ??= []).push(note)
  return NOTE_TAG + (ctx.notes.length - 1)
}

const NOTE_TAG = '\u0000note:'

const ABSENT = '\u0002'

function observationsOf(f, i, out) {
  const n = Number(f[i++])
  for (let k = 0; k < n; k++) {
    out.push({ channel: 'tool', stage: 'valid-value', ruleId: f[i], toolName: f[i + 1], outcome: 'detected' })
    i += 2
  }
  return i
}

/** The split result form of the native pipeline (see `encode_result` in src/binding/repair.rs). */
function splitResult(raw) {
  const f = raw.split('\u0001')
  const p = { o: f[0], c: [], ob: [], e: [] }
  if (f[1] !== '') {
    p.a = undefined
    p.at = f[1]
  }
  let i = 3
  for (let n = Number(f[2]), k = 0; k < n; k++, i += 3) p.c.push({ ruleId: f[i], stage: f[i + 1], note: f[i + 2] })
  i = observationsOf(f, i, p.ob)
  i = observationsOf(f, i, p.e)
  if (f[i] !== ABSENT) p.is = f[i]
  if (f[i + 1] !== ABSENT) p.fp = f[i + 1]
  if (f[i + 2] !== ABSENT) p.rm = f[i + 2]
  return p
}

function restoreNotes(ctx, changes) {
  if (!ctx || !ctx.notes) return changes
  for (const change of changes) {
    if (typeof change.note === 'string' && change.note.startsWith(NOTE_TAG)) {
      const i = Number(change.note.slice(NOTE_TAG.length))
      if (i < ctx.notes.length) change.note = ctx.notes[i]
    }
  }
  return changes
}

function rethrow(error, ctx, input) {
  const message = error && error.message
  if (typeof message === 'string' && message.charCodeAt(0) === 0) {
    if (message === '\u0000callback' && ctx && ctx.threw) throw ctx.error
    if (message === '\u0000dataclone') {
      if (ctx && ctx.cloneError !== undefined) throw ctx.cloneError
      structuredClone(input)
      throw new DOMException('The value could not be cloned.', 'DataCloneError')
    }
    if (message.startsWith('\u0000type:')) throw new TypeError(message.slice(6))
    if (message.startsWith('\u0000range:')) throw new RangeError(message.slice(7))
    if (message.startsWith('\u0000regex:')) {
      // "flags NUL source NUL reason": V8 throws its own SyntaxError for the same expression.
      const body = message.slice(7)
      const flags = body.slice(0, body.indexOf('\u0000'))
      const source = body.slice(flags.length + 1, body.lastIndexOf('\u0000'))
      new RegExp(source, flags)
      throw new SyntaxError(`Invalid regular expression: /${source}/${flags}: ${body.slice(body.lastIndexOf('\u0000') + 1)}`)
    }
  }
  throw error
}

// --- entry points ---------------------------------------------------------------------------------

function swallow(fn, arg) {
  try {
    fn(arg)
  } catch {
    // Reporting callbacks cannot affect repair safety or validity.
  }
}

// Per-config preparation: what every call with the same config object shares. It is rebuilt
// whenever one of the fields it was made from is no longer the same value (configs are plain
// objects a caller may edit), and never keyed on the input.
const preparedCache = new WeakMap()

function prepare(config) {
  const p = preparedCache.get(config)
  const preprocessors = config.preprocessors
  if (
    p !== undefined &&
    p.schema === config.schema &&
    p.preprocessors === preprocessors &&
    p.preLength === (preprocessors ? preprocessors.length : 0) &&
    p.legacyConfig === config.legacyConfig &&
    p.owner === config.ownerPrepareArguments &&
    p.modelId === config.modelId &&
    p.toolName === config.toolName &&
    p.policyName === config.policy &&
    config.policyOverrides === undefined &&
    config.limits === undefined
  ) {
    return p
  }
  const policy = resolveRepairPolicy(config.policy, config.policyOverrides)
  const schema = compiledSchema(config.schema)
  const pre = preprocessors && preprocessors.length > 0 ? compiledPreprocessors(preprocessors) : null
  const legacy = config.legacyConfig ? compiledLegacy(config.legacyConfig) : null
  const owner = config.ownerPrepareArguments
  const family = pre ? familyMatches(pre, config.modelId) : null
  const next = {
    schema: config.schema,
    preprocessors,
    preLength: preprocessors ? preprocessors.length : 0,
    legacyConfig: config.legacyConfig,
    owner,
    modelId: config.modelId,
    toolName: config.toolName,
    // The tool name crosses as JSON text, so a lone surrogate in it survives.
    toolJson: JSON.stringify(String(config.toolName)),
    policyName: config.policy,
    policy,
    schemaId: schema,
    pre,
    legacy,
    // A family string holding '2' must be asked again on every call.
    family: family && family.includes('2') ? undefined : family,
    flags: (policy.allowTruncatedEnvelopeCompletion ? 1 : 0) | (policy.allowValidValueTransforms ? 2 : 0) | (owner ? 4 : 0),
    fast: null,
  }
  // The fast path needs a plan for the schema and proofs for every preprocessor, and no shim or
  // custom limits (those always go through the native pipeline).
  const checker = schemaCheckerOf(config.schema)
  if (checker !== null && !owner && config.limits === undefined) {
    const preProof = pre ? (pre.proof ??= preprocessorProof(pre.items, isNativeFold) ?? false) : () => true
    const legProof = legacyProof(config.legacyConfig)
    if (preProof) next.fast = { checker, preProof, legProof }
  }
  if (config.policyOverrides === undefined && config.limits === undefined) preparedCache.set(config, next)
  return next
}

function isNativeFold(apply) {
  return apply === foldFlatEditFields
}

const MAX_FAST_BYTES = DEFAULT_ENVELOPE_LIMITS.maxInputBytes

/** The pipeline's valid result for the caller's own input. */
function validResult(input, profile) {
  return {
    outcome: 'valid',
    args: input,
    policy: profile,
    changes: [],
    observations: [],
    issueSummary: undefined,
    fingerprint: undefined,
  }
}

export function runRepairPipeline(options) {
  const { input, config } = options
  const prep = prepare(config)
  const policy = prep.policy
  const pre = prep.pre
  const legacy = prep.legacy
  const owner = prep.owner
  const family = prep.family !== undefined ? prep.family : familyMatches(pre, config.modelId)
  const fast = prep.fast
  if (fast !== null && input !== null && typeof input === 'object' && !Array.isArray(input)) {
    const bytes = plainDataBytes(input, 0)
    if (bytes >= 0 && bytes <= MAX_FAST_BYTES && fast.checker(input) && fast.preProof(input, family) && fast.legProof(input)) {
      const result = validResult(input, policy.profile)
      try {
        config.onOutcome?.(result)
      } catch {
        // Reporting callbacks cannot affect repair safety or validity.
      }
      return result
    }
  }
  const schema = prep.schemaId
  const [text, encoding] = encode(input)
  const flags = prep.flags | encoding
  const needsHost = Boolean(owner) || (pre && pre.needsHost) || (legacy && legacy.needsHost) || (family && family.includes('2'))
  const ctx = needsHost ? { input, owner, preprocessors: pre, legacy, modelId: config.modelId, threw: false, error: undefined } : null
  let raw
  try {
    raw = native.runPipeline(
      text,
      flags,
      prep.toolJson,
      schema,
      pre ? pre.id : 0,
      legacy ? legacy.id : 0,
      family,
      config.limits ? resolveLimits(config.limits) : null,
      ctx ? makeDispatch(ctx) : null,
    )
  } catch (error) {
    rethrow(error, ctx, input)
  }
  let result
  if (raw === 'V') {
    result = validResult(input, policy.profile)
  } else {
    const p = raw.charCodeAt(0) === 123 ? JSON.parse(raw) : splitResult(raw)
    let args = 'a' in p ? (p.a === undefined ? decode(p.at) : decodeParsed(p.a, raw)) : input
    // An owner shim that mutated the caller's own input in place: the reference compares against
    // the mutated input and hands it back.
    if (p.o === 'valid' && 'a' in p && ctx && ctx.ownerSawInput && stableSerialize(args) === stableSerialize(input)) args = input
    result = {
      outcome: p.o,
      args,
      policy: policy.profile,
      changes: restoreNotes(ctx, p.c),
      observations: p.ob,
      issueSummary: p.is,
      fingerprint: p.fp,
    }
    if (p.o === 'unrepairable') result.retryMessage = p.rm
    if (config.onObservation) for (const observation of p.e) swallow(config.onObservation, observation)
  }
  try {
    config.onOutcome?.(result)
  } catch {
    // Reporting callbacks cannot affect repair safety or validity.
  }
  return result
}

export function repairToolInput(options) {
  const result = runRepairPipeline({
    input: options.input,
    config: { toolName: options.toolName, schema: options.schema, legacyConfig: options.config },
  })
  const legacyRule = (ruleId) => (ruleId === 'envelope.decode-json' ? 'parseJsonStringifiedRootObject' : ruleId)
  return {
    outcome: result.outcome,
    args: result.args,
    rulesFired: [...new Set(result.changes.map((change) => legacyRule(change.ruleId)))],
    notes: result.changes.map((change) => change.note),
    changes: result.changes.map((change) => ({ ruleId: legacyRule(change.ruleId), note: change.note })),
    issueSummary: result.issueSummary,
    fingerprint: result.fingerprint,
    retryMessage: result.retryMessage,
  }
}

export function preprocessInput(options) {
  const { input, toolName, preprocessors, modelId, allowValidValueTransforms } = options
  const pre = compiledPreprocessors(preprocessors ?? [])
  const family = familyMatches(pre, modelId)
  const needsHost = pre.needsHost || (family && family.includes('2'))
  const ctx = needsHost ? { input, preprocessors: pre, modelId, threw: false, error: undefined } : null
  const [text, encoding] = encode(input)
  let raw
  try {
    raw = native.preprocessInput(text, (encoding & 8) !== 0, JSON.stringify(String(toolName)), pre.id, Boolean(allowValidValueTransforms), family, ctx ? makeDispatch(ctx) : null)
  } catch (error) {
    rethrow(error, ctx, input)
  }
  const p = JSON.parse(raw)
  let value = decodeParsed(p.v, raw)
  if (p.np) value = withNullPrototypes(value, p.np)
  return { value, changes: restoreNotes(ctx, p.c), observations: p.ob }
}

/** Records the reference's grammar-token cleanup rebuilt with `Object.create(null)`. */
function withNullPrototypes(value, paths) {
  const bare = (record) => {
    const out = Object.create(null)
    for (const key of Object.keys(record)) out[key] = record[key]
    return out
  }
  // Deepest first, so a rebuilt parent holds its rebuilt children.
  for (const path of [...paths].sort((a, b) => b.length - a.length)) {
    if (path.length === 0) {
      value = bare(value)
      continue
    }
    let parent = value
    for (const seg of path.slice(0, -1)) parent = parent[seg]
    const last = path[path.length - 1]
    Object.defineProperty(parent, last, { value: bare(parent[last]), enumerable: true, writable: true, configurable: true })
  }
  return value
}

export function recoverEnvelope(input, overrides = {}) {
  const [text, encoding] = encode(input)
  let raw
  try {
    raw = native.recoverEnvelope(text, encoding, resolveLimits(overrides))
  } catch (error) {
    rethrow(error, null, input)
  }
  const p = JSON.parse(raw)
  const fixed = decodeParsed(p, raw)
  return { value: 'v' in p ? fixed.v : input, changes: p.c, candidates: fixed.k, limited: p.l }
}

// --- built-in tables -----------------------------------------------------------------------------

/** The edit fold, usable as a structural preprocessor's `apply` (mutates the record it is given). */
export function foldFlatEditFields(value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined
  const raw = native.foldFlatEditFields(encodeExt(value), '"edit"')
  if (raw === '') return undefined
  const p = JSON.parse(raw)
  const folded = decodeParsed(p.v, raw)
  for (const key of Object.keys(value)) if (!(key in folded)) delete value[key]
  for (const key of Object.keys(folded)) value[key] = folded[key]
  return { value, note: p.n }
}

const LEGACY_FOLD = {
  name: 'foldFlatEditFields',
  apply(args, toolName) {
    const raw = native.foldFlatEditFields(encodeExt(args), JSON.stringify(String(toolName)))
    if (raw === '') return false
    const p = JSON.parse(raw)
    const folded = decodeParsed(p.v, raw)
    for (const key of Object.keys(args)) if (!(key in folded)) delete args[key]
    for (const key of Object.keys(folded)) args[key] = folded[key]
    return p.n
  },
}

function buildTables() {
  const tables = JSON.parse(native.builtinTables())
  const out = {}
  for (const [tool, entry] of Object.entries(tables)) {
    const preprocessors = entry.preprocessors.map((p) => {
      if (p.kind === 'structural') return { kind: 'structural', selector: p.selector, ruleId: p.ruleId, apply: foldFlatEditFields }
      if (p.modelFamilies) return { ...p, modelFamilies: p.modelFamilies.map((f) => new RegExp(f.source, f.flags)) }
      return p
    })
    const legacyConfig = { ...entry.legacyConfig }
    if (legacyConfig.structural) legacyConfig.structural = legacyConfig.structural.map(() => LEGACY_FOLD)
    out[tool] = Object.freeze({ preprocessors: Object.freeze(preprocessors), legacyConfig: Object.freeze(legacyConfig) })
  }
  return Object.freeze(out)
}

/** Built-in repair tables for pi's seven tools: `{ preprocessors, legacyConfig }` per tool. */
export const BUILTIN_TOOL_REPAIRS = buildTables()
export const BUILTIN_TOOL_NAMES = Object.freeze(Object.keys(BUILTIN_TOOL_REPAIRS))

export { RepairLifecycle, attachRepairNotes, formatRepairNotes } from './lifecycle.js'

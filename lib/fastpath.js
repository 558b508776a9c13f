// The fast path of runRepairPipeline: proving, without crossing into Rust, that a call needs no
// repair at all. Most tool calls are already valid; for those the pipeline's answer is "valid, the
// caller's own object, nothing recorded", and all it has to establish is that no stage would act.
// This module establishes that conservatively, for the simple shapes tool schemas have:
//
// * the schema is a tree of string / number / integer / boolean / null / array / object /
//   unknown nodes with no constraint keywords (a schema using anything else gets no plan);
// * the input is plain JSON data (plain objects, arrays without holes, strings, finite numbers
//   other than -0, booleans, null; no own `__proto__` key), shallow, and far from the envelope's
//   byte limit;
// * every preprocessor is shown to be a no-op on it (aliases with nothing to rename, no markdown
//   auto-link in a path, no anchor or grammar token where a heuristic matches the model, ...);
// * no owner shim, no custom limits.
//
// Whenever any of that is not certain the call goes to the native pipeline, which remains the
// only authority; a plan only ever answers "certainly valid" or "ask Rust".

const ANNOTATIONS = new Set(['title', 'description', '$comment', 'examples', 'default', 'deprecated', 'readOnly', 'writeOnly'])
const SIMPLE_KINDS = new Set([undefined, 'Object', 'String', 'Number', 'Integer', 'Boolean', 'Null', 'Array', 'Unknown', 'Any'])

const NO_PLAN = null

/**
 * A checker `(value) => boolean` that returns true only when the value is certainly valid for the
 * schema (and the value is plain data), or null when the schema is outside the simple subset.
 */
export function schemaChecker(schema) {
  try {
    return node(schema, 0)
  } catch {
    return NO_PLAN
  }
}

function keysWithin(s, allowed) {
  for (const key of Object.keys(s)) if (!allowed.has(key) && !ANNOTATIONS.has(key)) return false
  return true
}

const STRING_KEYS = new Set(['type'])
const OBJECT_KEYS = new Set(['type', 'properties', 'required', 'additionalProperties'])
const ARRAY_KEYS = new Set(['type', 'items'])

function node(s, depth) {
  if (s === null || typeof s !== 'object' || Array.isArray(s) || depth > 16) return NO_PLAN
  if (!SIMPLE_KINDS.has(s['~kind'])) return NO_PLAN
  const type = s.type
  switch (type) {
    case undefined:
      // `{}` (TypeBox Unknown / Any): anything.
      return keysWithin(s, new Set()) ? () => true : NO_PLAN
    case 'string':
      return keysWithin(s, STRING_KEYS) ? (v) => typeof v === 'string' : NO_PLAN
    case 'number':
      return keysWithin(s, STRING_KEYS) ? (v) => typeof v === 'number' : NO_PLAN
    case 'integer':
      return keysWithin(s, STRING_KEYS) ? (v) => Number.isInteger(v) : NO_PLAN
    case 'boolean':
      return keysWithin(s, STRING_KEYS) ? (v) => typeof v === 'boolean' : NO_PLAN
    case 'null':
      return keysWithin(s, STRING_KEYS) ? (v) => v === null : NO_PLAN
    case 'array': {
      if (!keysWithin(s, ARRAY_KEYS)) return NO_PLAN
      if (s.items === undefined) return (v) => Array.isArray(v)
      const item = node(s.items, depth + 1)
      if (item === NO_PLAN) return NO_PLAN
      return (v) => {
        if (!Array.isArray(v)) return false
        for (let i = 0; i < v.length; i++) if (!item(v[i])) return false
        return true
      }
    }
    case 'object': {
      if (!keysWithin(s, OBJECT_KEYS)) return NO_PLAN
      const extra = s.additionalProperties
      if (extra !== undefined && extra !== true && extra !== false) return NO_PLAN
      const props = s.properties ?? {}
      if (props === null || typeof props !== 'object' || Array.isArray(props)) return NO_PLAN
      const names = Object.keys(props)
      if (names.includes('__proto__')) return NO_PLAN
      const checks = new Map()
      for (const name of names) {
        const c = node(props[name], depth + 1)
        if (c === NO_PLAN) return NO_PLAN
        checks.set(name, c)
      }
      const required = s.required ?? []
      if (!Array.isArray(required) || !required.every((k) => typeof k === 'string' && k !== '__proto__')) return NO_PLAN
      const closed = extra === false
      return (v) => {
        if (v === null || typeof v !== 'object' || Array.isArray(v)) return false
        for (let i = 0; i < required.length; i++) if (!Object.prototype.hasOwnProperty.call(v, required[i])) return false
        for (const key in v) {
          const c = checks.get(key)
          if (c === undefined) {
            if (closed) return false
          } else if (!c(v[key])) return false
        }
        return true
      }
    }
    default:
      return NO_PLAN
  }
}

/**
 * Is the value plain JSON data that crosses exactly, shallow enough, and what is an upper bound of
 * its JSON text in UTF-8 bytes? Returns the bound, or -1 when the value is not such data.
 */
export function plainDataBytes(v, depth) {
  switch (typeof v) {
    case 'string':
      return 6 * v.length + 2
    case 'boolean':
      return 5
    case 'number':
      return Number.isFinite(v) && !(v === 0 && 1 / v < 0) ? 24 : -1
    case 'object': {
      if (v === null) return 4
      if (depth >= 32) return -1
      let total = 2
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) {
          const item = v[i]
          if (item === undefined) return -1
          const n = plainDataBytes(item, depth + 1)
          if (n < 0) return -1
          total += n + 1
        }
        return total
      }
      const proto = Object.getPrototypeOf(v)
      if (proto !== Object.prototype && proto !== null) return -1
      if (typeof v.toJSON === 'function') return -1
      for (const key in v) {
        if (!Object.prototype.hasOwnProperty.call(v, key) || key === '__proto__') return -1
        const item = v[key]
        if (item === undefined) return -1
        const n = plainDataBytes(item, depth + 1)
        if (n < 0) return -1
        total += n + 6 * key.length + 4
      }
      return total
    }
    default:
      return -1
  }
}

function decodeSegment(s) {
  return s.includes('~') ? s.replace(/~1/g, '/').replace(/~0/g, '~') : s
}

function segmentsOf(selector) {
  if (typeof selector !== 'string') return null
  if (selector === '' || selector === '/') return []
  return selector.split('/').slice(1).map(decodeSegment)
}

/** Call `visit(value)` for every value a selector reaches (missing keys reach `undefined`). */
function each(root, segments, visit) {
  let level = [root]
  for (const seg of segments) {
    const next = []
    for (const v of level) {
      if (seg === '*') {
        if (Array.isArray(v)) for (let i = 0; i < v.length; i++) next.push(v[i])
      } else if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
        next.push(Object.prototype.hasOwnProperty.call(v, seg) ? v[seg] : undefined)
      }
    }
    level = next
  }
  for (const v of level) if (!visit(v)) return false
  return true
}

const isRecord = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)
const hasOwn = (v, k) => Object.prototype.hasOwnProperty.call(v, k)
const AUTOLINK = '](http'

function grammarToken(s) {
  return s.startsWith('<arg_key>') || s.startsWith('<arg_value>') || s.endsWith('</arg_key>') || s.endsWith('</arg_value>')
}

/**
 * A no-op proof `(input, family) => boolean` for a preprocessor list (the live objects), or null
 * when some entry can never be proven a no-op here. `family` is the per-entry model-family string
 * of the facade ('0' no match, '1' match, '2' ask at run time) or null without a model id.
 */
export function preprocessorProof(list, isNativeFold) {
  const proofs = []
  for (let index = 0; index < list.length; index++) {
    const p = list[index]
    if (p === null || typeof p !== 'object') return NO_PLAN
    const segs = segmentsOf(p.selector)
    switch (p.kind) {
      case 'alias': {
        if (segs === null || segs.length === 0) return NO_PLAN
        const parent = segs.slice(0, -1)
        const canonical = segs[segs.length - 1]
        const aliases = Array.from(p.aliases ?? [], String)
        const emptyIsMissing = p.emptyEquivalentToMissing === true
        proofs.push((input) =>
          each(input, parent, (record) => {
            if (!isRecord(record)) return true
            if (hasOwn(record, canonical)) {
              const c = record[canonical]
              if (c !== null && c !== undefined && !(emptyIsMissing && c === '')) return true
            }
            for (const alias of aliases) if (hasOwn(record, alias)) return false
            return true
          }),
        )
        break
      }
      case 'filesystem-path':
        if (segs === null) return NO_PLAN
        proofs.push((input) => each(input, segs, (v) => typeof v !== 'string' || !v.includes(AUTOLINK)))
        break
      case 'filesystem-path-array':
        if (segs === null) return NO_PLAN
        proofs.push((input) => each(input, segs, (v) => !Array.isArray(v) || !v.some((x) => typeof x === 'string' && x.includes(AUTOLINK))))
        break
      case 'glob':
        break
      case 'string-or-array':
        if (segs === null) return NO_PLAN
        proofs.push((input) => each(input, segs, (v) => typeof v !== 'string'))
        break
      case 'scalar':
        if (segs === null) return NO_PLAN
        proofs.push((input) => each(input, segs, (v) => v === undefined))
        break
      case 'anchor-bleed':
        if (segs === null) return NO_PLAN
        proofs.push((input, family) => {
          const f = family === null ? '0' : family[index]
          if (f === '0') return true
          if (f !== '1') return false
          return each(input, segs, (v) => typeof v !== 'string' || !(v.startsWith('^') || v.endsWith('$')))
        })
        break
      case 'grammar-tokens':
        if (segs === null) return NO_PLAN
        proofs.push((input, family) => {
          const f = family === null ? '0' : family[index]
          if (f === '0') return true
          if (f !== '1') return false
          return each(input, segs, (v) => {
            if (typeof v === 'string') return !grammarToken(v)
            if (!isRecord(v)) return true
            for (const key in v) if (grammarToken(key) || (typeof v[key] === 'string' && grammarToken(v[key]))) return false
            return true
          })
        })
        break
      case 'structural':
        // Only the built-in edit fold is known here; it does nothing to a record whose `edits`
        // is a non-empty array.
        if (segs === null || !isNativeFold(p.apply)) return NO_PLAN
        proofs.push((input) => each(input, segs, (v) => !isRecord(v) || (Array.isArray(v.edits) && v.edits.length > 0)))
        break
      default:
        // Unknown kinds are skipped by the pipeline, but a malformed entry may throw there.
        return NO_PLAN
    }
  }
  return (input, family) => {
    for (let i = 0; i < proofs.length; i++) if (!proofs[i](input, family)) return false
    return true
  }
}

/** A no-op proof for the legacy config's valid path (its `pathFields` unwrap), or null. */
export function legacyProof(config) {
  if (config === undefined || config === null) return () => true
  const fields = config.pathFields === undefined ? [] : Array.from(config.pathFields, String)
  return (input) => fields.every((f) => !hasOwn(input, f) || typeof input[f] !== 'string' || !input[f].includes(AUTOLINK))
}

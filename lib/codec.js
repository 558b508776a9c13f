// Value transport between JS and the Rust core: JSON text, with an extended form for values JSON
// cannot carry (undefined, NaN, +-Infinity, -0, BigInt, functions, symbols, Dates). Tags are strings that
// start with U+0000; a real string starting with U+0000 is escaped as "\0s...".

const TAG = '\u0000'

// Objects met during one encode; a second meeting means a shared sub-object or a cycle.
let visited = null
let shared = false

function visit(v) {
  if (visited.has(v)) {
    shared = true
    return false
  }
  visited.add(v)
  return true
}

/** Is the value plain JSON data that JSON.stringify carries exactly (and a tree)? */
function isClean(v, depth) {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true
    case 'number':
      return Number.isFinite(v) && !(v === 0 && 1 / v < 0)
    case 'object': {
      if (v === null) return true
      if (depth > 200 || !visit(v)) return false
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) {
          const item = v[i]
          if (item === undefined || (typeof item === 'object' && item !== null ? !isClean(item, depth + 1) : !isClean(item, depth))) return false
        }
        return true
      }
      const proto = Object.getPrototypeOf(v)
      if (proto !== Object.prototype && proto !== null) return false
      if (typeof v.toJSON === 'function') return false
      for (const key in v) {
        if (!Object.prototype.hasOwnProperty.call(v, key)) return false
        const item = v[key]
        if (typeof item === 'object' && item !== null) {
          if (!isClean(item, depth + 1)) return false
        } else if (!isClean(item, depth)) return false
      }
      return true
    }
    default:
      return false
  }
}

/** structuredClone-like copy into tagged JSON-able data; throws on cycles. */
function toTagged(v, seen) {
  switch (typeof v) {
    case 'undefined':
      return TAG + 'u'
    case 'string':
      return v.charCodeAt(0) === 0 ? TAG + 's' + v.slice(1) : v
    case 'number':
      if (Number.isNaN(v)) return TAG + 'n'
      if (v === Infinity) return TAG + 'i'
      if (v === -Infinity) return TAG + 'I'
      if (v === 0 && 1 / v < 0) return TAG + 'z'
      return v
    case 'boolean':
      return v
    case 'bigint':
      return TAG + 'b' + v.toString()
    case 'function':
      return TAG + 'f'
    case 'symbol':
      return TAG + 'y'
    default: {
      if (v === null) return null
      // structuredClone keeps a Date (time value only); JSON.stringify calls its toJSON.
      if (v instanceof Date) return TAG + 'd' + String(v.getTime())
      if (seen.has(v)) throw new TypeError('cycle')
      seen.add(v)
      if (visited.has(v)) shared = true
      else visited.add(v)
      let out
      if (Array.isArray(v)) {
        out = new Array(v.length)
        for (let i = 0; i < v.length; i++) out[i] = toTagged(v[i], seen)
      } else {
        out = {}
        for (const key of Object.keys(v)) {
          Object.defineProperty(out, key, { value: toTagged(v[key], seen), enumerable: true, writable: true, configurable: true })
        }
      }
      seen.delete(v)
      return out
    }
  }
}

/**
 * Encode a value: [jsonText, flags] where flags has 8 when the text is in the extended form and 16
 * when the value reaches some object twice (shared sub-object or cycle).
 */
export function encode(v) {
  visited = new Set()
  shared = false
  try {
    if (isClean(v, 0)) {
      const text = JSON.stringify(v)
      if (text !== undefined) return [text, 0]
    }
    visited = new Set()
    shared = false
    try {
      return [JSON.stringify(toTagged(v, new Set())), shared ? 24 : 8]
    } catch {
      return ['"\\u0000x"', 24]
    }
  } finally {
    visited = null
  }
}

/** Encode always in the extended form (for callback payloads). */
export function encodeExt(v) {
  const [text, flags] = encode(v)
  if (!(flags & 8) && text.includes('\\u0000')) {
    // A clean value holding strings that start with U+0000 must be escaped in the extended form.
    visited = new Set()
    try {
      return JSON.stringify(toTagged(v, new Set()))
    } finally {
      visited = null
    }
  }
  return text
}

function untag(s) {
  switch (s.charAt(1)) {
    case 'u':
      return undefined
    case 'n':
      return NaN
    case 'i':
      return Infinity
    case 'I':
      return -Infinity
    case 'z':
      return -0
    case 'b':
      return BigInt(s.slice(2))
    case 's':
      return TAG + s.slice(2)
    case 'd':
      return new Date(Number(s.slice(2)))
    default:
      return {}
  }
}

function fix(v) {
  if (typeof v === 'string') return v.charCodeAt(0) === 0 ? untag(v) : v
  if (v === null || typeof v !== 'object') return v
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = fix(v[i])
  } else {
    for (const key of Object.keys(v)) v[key] = fix(v[key])
  }
  return v
}

/** Decode a value of the extended wire form. */
export function decode(text) {
  const v = JSON.parse(text)
  return text.includes('\\u0000') ? fix(v) : v
}

/** Decode values already parsed as part of a larger JSON document. */
export function decodeParsed(v, text) {
  return text.includes('\\u0000') ? fix(v) : v
}

// Validation of what a caller hands `streamChat`, before anything crosses into Rust or reaches a
// provider: malformed messages, out-of-range numbers and URLs with embedded credentials end in an
// error that names the field, and nothing is sent. Where Blade + pi-ai throw a TypeError for the
// same input (a non-array `messages`, a null message, non-string non-array content, a null part),
// this throws a TypeError too; the `timeout` checks keep the provider SDK's exact texts.

const ROLES = ['system', 'user', 'assistant', 'tool']
const MAX_RETRIES = 1000
// setTimeout's range: a longer idle bound would fire at once.
const MAX_TIMER_MS = 2 ** 31 - 1

function describe(value) {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') return `a string (${value.length} characters)`
  if (typeof value === 'number') return `the number ${value}`
  return typeof value === 'object' ? 'an object' : typeof value
}

function fail(path, expected, value) {
  return new TypeError(`pi-native: ${path} must be ${expected}, got ${describe(value)}`)
}

function range(path, expected, value) {
  return new RangeError(`pi-native: ${path} must be ${expected}, got ${describe(value)}`)
}

function checkMessages(messages) {
  if (!Array.isArray(messages)) throw fail('messages', 'an array of chat messages', messages)
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]
    const at = `messages[${i}]`
    if (m === null || typeof m !== 'object' || Array.isArray(m)) throw fail(at, 'a message object', m)
    if (!ROLES.includes(m.role)) throw fail(`${at}.role`, `one of ${ROLES.join(', ')}`, m.role)
    const content = m.content
    if (typeof content === 'string') continue
    if (!Array.isArray(content)) throw fail(`${at}.content`, 'a string or an array of content parts', content)
    for (let j = 0; j < content.length; j++) {
      const part = content[j]
      if (part === null || typeof part !== 'object' || Array.isArray(part)) {
        throw fail(`${at}.content[${j}]`, 'a content part object ({type: "text", text} or {type: "image_url", image_url})', part)
      }
    }
  }
}

function checkTools(tools) {
  if (tools === undefined || tools === null) return
  if (!Array.isArray(tools)) throw fail('tools', 'an array of tool definitions', tools)
  for (let i = 0; i < tools.length; i++) {
    const t = tools[i]
    if (t === null || typeof t !== 'object' || Array.isArray(t)) throw fail(`tools[${i}]`, 'a tool definition object', t)
    if (typeof t.name !== 'string' || t.name === '') throw fail(`tools[${i}].name`, 'a non-empty string', t.name)
  }
}

const present = (v) => v !== undefined && v !== null

/** The numeric and URL fields of a config (or a fallback channel) at `path`. */
function checkSettings(c, path) {
  if (c === null || typeof c !== 'object') return
  // The OpenAI and Anthropic SDKs' own checks and texts (Blade surfaces them as they are).
  if (present(c.timeout)) {
    if (!Number.isInteger(c.timeout)) throw new Error('timeout must be an integer')
    if (c.timeout < 0) throw new Error('timeout must be a positive integer')
  }
  const num = (key, ok, expected) => {
    const v = c[key]
    if (!present(v)) return
    if (typeof v !== 'number') throw fail(`${path}${key}`, expected, v)
    if (!ok(v)) throw range(`${path}${key}`, expected, v)
  }
  num('streamIdleTimeout', (v) => v > 0 && v <= MAX_TIMER_MS, `a number of milliseconds from 1 to ${MAX_TIMER_MS}`)
  num('maxRetries', (v) => v >= 0 && v <= MAX_RETRIES, `a number of retries from 0 to ${MAX_RETRIES}`)
  num('temperature', (v) => v >= 0 && v <= 2, 'a number from 0 to 2')
  num('maxOutputTokens', (v) => Number.isInteger(v) && v >= 1, 'a positive integer')
  if (present(c.baseUrl)) {
    if (typeof c.baseUrl !== 'string') throw fail(`${path}baseUrl`, 'a URL string', c.baseUrl)
    let url
    try {
      url = new URL(c.baseUrl)
    } catch {
      url = undefined
    }
    // Never echo the URL: it may hold a secret.
    if (url && (url.username !== '' || url.password !== '')) {
      throw new TypeError(`pi-native: ${path}baseUrl must not embed credentials (user:password@host); pass the key as apiKey`)
    }
  }
}

/** Throws when the call's input is malformed; returns nothing. */
export function checkChatInput(config, messages, tools, options) {
  checkMessages(messages)
  checkTools(tools)
  checkSettings(config, 'config.')
  const fallbacks = config?.fallbackModels
  if (Array.isArray(fallbacks)) {
    fallbacks.forEach((f, i) => checkSettings(f?.channel, `fallbackModels[${i}].channel.`))
  }
  if (present(options)) {
    if (typeof options !== 'object') throw fail('options', 'an object', options)
    const { temperature, maxOutputTokens } = options
    checkSettings({ temperature, maxOutputTokens }, 'options.')
  }
}

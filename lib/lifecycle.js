// The repair lifecycle (spec §10): remembers what was repaired for a call until its result comes
// back, so the result can carry a <repair_note>. Plain JS on purpose: every operation is a few map
// lookups, far cheaper than one N-API crossing.
import { stableSerialize } from './core.js'

const callKey = (toolName, args) => `${toolName}\u0000${stableSerialize(args)}`

export class RepairLifecycle {
  #ttlMs
  #maxPending
  #maxAssociated
  #now
  #pending = []
  #byCallId = new Map()

  constructor(options = {}) {
    this.#ttlMs = options.ttlMs ?? 300_000
    this.#maxPending = options.maxPending ?? 128
    this.#maxAssociated = options.maxAssociated ?? 256
    this.#now = options.now ?? Date.now
  }

  /** Remember feedback for a call that is about to run (identical calls queue FIFO). */
  enqueue(toolName, args, feedback) {
    this.cleanup()
    this.#pending.push({
      ...feedback,
      rules: [...feedback.rules],
      notes: [...feedback.notes],
      key: callKey(toolName, args),
      timestamp: this.#now(),
    })
    while (this.#pending.length > this.#maxPending) this.#pending.shift()
  }

  /** Match the oldest pending entry for (tool, args) and bind it to the call id. */
  correlate(toolName, args, toolCallId) {
    this.cleanup()
    const key = callKey(toolName, args)
    const index = this.#pending.findIndex((entry) => entry.key === key)
    if (index < 0) return undefined
    const [entry] = this.#pending.splice(index, 1)
    const feedback = {
      rules: entry.rules,
      notes: entry.notes,
      stages: entry.stages,
      profile: entry.profile,
      model: entry.model,
      outcome: entry.outcome,
      fingerprint: entry.fingerprint,
    }
    this.#associate(toolCallId, feedback)
    return feedback
  }

  associate(toolCallId, feedback) {
    this.#associate(toolCallId, { ...feedback, rules: [...feedback.rules], notes: [...feedback.notes] })
  }

  peek(toolCallId) {
    this.cleanup()
    return this.#byCallId.get(toolCallId)?.feedback
  }

  take(toolCallId) {
    this.cleanup()
    const feedback = this.#byCallId.get(toolCallId)?.feedback
    this.#byCallId.delete(toolCallId)
    return feedback
  }

  #associate(toolCallId, feedback) {
    this.cleanup()
    // Map.set on an existing id keeps its original insertion position.
    this.#byCallId.set(toolCallId, { feedback, timestamp: this.#now() })
    while (this.#byCallId.size > this.#maxAssociated) {
      const oldest = this.#byCallId.keys().next().value
      if (oldest === undefined) break
      this.#byCallId.delete(oldest)
    }
  }

  /** Drop expired entries: pending ones from the front, associated ones anywhere. */
  cleanup() {
    const cutoff = this.#now() - this.#ttlMs
    while (this.#pending.length > 0 && this.#pending[0].timestamp < cutoff) this.#pending.shift()
    for (const [id, entry] of this.#byCallId) if (entry.timestamp < cutoff) this.#byCallId.delete(id)
  }

  clear() {
    this.#pending.length = 0
    this.#byCallId.clear()
  }

  get pendingCount() {
    return this.#pending.length
  }
}

const tag = (note) => `<repair_note>${note}</repair_note>`

export function formatRepairNotes(notes) {
  return notes.map(tag).join('\n')
}

/** Prepend the notes not already present to the first text part (or a new one); never mutates. */
export function attachRepairNotes(content, notes) {
  if (!formatRepairNotes(notes)) return [...content]
  const existing = content
    .filter((item) => item.type === 'text')
    .map((item) => item.text ?? '')
    .join('\n')
  const missing = notes.filter((note) => !existing.includes(tag(note)))
  if (missing.length === 0) return [...content]
  const text = formatRepairNotes(missing)
  const next = content.map((item) => ({ ...item }))
  const first = next.find((item) => item.type === 'text')
  if (first) first.text = `${text}\n${first.text ?? ''}`
  else next.unshift({ type: 'text', text })
  return next
}

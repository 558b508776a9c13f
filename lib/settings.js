// Persisted display/policy settings of the pi extension (internal module, not an export of the package).
// File: $PI_TOOL_REPAIR_SETTINGS, else <agentDir>/tool-repair/settings.json. Read once when the
// extension is created; written only when the user changes something through /repair-settings.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { getAgentDir } from '@earendil-works/pi-coding-agent'

export const DEFAULT_DISPLAY_SETTINGS = Object.freeze({
  showIndicator: true,
  showNotes: false,
  grammarRecovery: 'strip',
  grammarAllowedTools: Object.freeze([]),
  policyProfile: 'adaptive',
  unknownGrammarText: 'preserve',
})

const GRAMMAR_MODES = new Set(['off', 'observe', 'strip', 'recover'])
const POLICY_PROFILES = new Set(['conservative', 'adaptive', 'recover'])
const UNKNOWN_TEXT_POLICIES = new Set(['preserve', 'strip'])

const oneOf = (set, value) => typeof value === 'string' && set.has(value)

/** The grammar mode a profile implies when no explicit grammar mode is stored. */
export function grammarModeForProfile(profile) {
  if (profile === 'conservative') return 'observe'
  if (profile === 'recover') return 'recover'
  return 'strip'
}

/** A fresh, mutable copy of the defaults. */
export function defaultDisplaySettings() {
  return { ...DEFAULT_DISPLAY_SETTINGS, grammarAllowedTools: [] }
}

export function displaySettingsPath() {
  return process.env.PI_TOOL_REPAIR_SETTINGS ?? join(getAgentDir(), 'tool-repair', 'settings.json')
}

/**
 * Load settings; every field that is missing or invalid falls back on its own. A missing/invalid
 * `policyProfile` is migrated from a legacy `grammarRecovery: "recover"`; a missing/invalid
 * `grammarRecovery` follows the profile. Unreadable files or bad JSON yield the defaults.
 * Loading never rewrites the file.
 */
export function loadDisplaySettings(path = displaySettingsPath()) {
  let stored
  try {
    stored = JSON.parse(readFileSync(path, 'utf-8'))
  } catch {
    return defaultDisplaySettings()
  }
  try {
    const storedGrammar = oneOf(GRAMMAR_MODES, stored.grammarRecovery) ? stored.grammarRecovery : undefined
    let policyProfile = 'adaptive'
    if (oneOf(POLICY_PROFILES, stored.policyProfile)) policyProfile = stored.policyProfile
    else if (storedGrammar === 'recover') policyProfile = 'recover'
    const allowed = stored.grammarAllowedTools
    return {
      showIndicator: typeof stored.showIndicator === 'boolean' ? stored.showIndicator : DEFAULT_DISPLAY_SETTINGS.showIndicator,
      showNotes: typeof stored.showNotes === 'boolean' ? stored.showNotes : DEFAULT_DISPLAY_SETTINGS.showNotes,
      grammarRecovery: storedGrammar ?? grammarModeForProfile(policyProfile),
      grammarAllowedTools:
        Array.isArray(allowed) && allowed.every((name) => typeof name === 'string') ? allowed : [],
      policyProfile,
      unknownGrammarText: oneOf(UNKNOWN_TEXT_POLICIES, stored.unknownGrammarText) ? stored.unknownGrammarText : 'preserve',
    }
  } catch {
    // e.g. the file holds `null` or a primitive
    return defaultDisplaySettings()
  }
}

/** Write the settings as tab-indented JSON plus a newline; failures are ignored. */
export function saveDisplaySettings(settings, path = displaySettingsPath()) {
  try {
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, `${JSON.stringify(settings, null, '\t')}\n`)
  } catch {
    // A settings write must never break the session.
  }
}

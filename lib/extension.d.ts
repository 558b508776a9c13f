// pi-native (root export): the pi extension factory, drop-in for the default export of
// @r3b1s/pi-repair-layer. The package root has no named exports.
import type { ExtensionAPI } from '@earendil-works/pi-coding-agent'

/**
 * Registers repairing overrides of pi's seven built-in tools (read, bash, edit, write, grep, find, ls)
 * on session start, attaches `<repair_note>` feedback to repaired tool results, recovers tool calls
 * leaked as text (per settings), and adds the `/repair-settings` and `/repair-stats` commands.
 */
export default function toolRepairExtension(pi: ExtensionAPI): void

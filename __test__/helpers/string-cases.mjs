// Lone surrogates and the plane-16 edges through every public entry point. Shared by
// __test__/strings.spec.ts (which holds the reference's observed outputs) and the one-off script
// that recorded them against pi-repair-layer 0.4.3; plain .mjs so both can import it.

/** Every edge of the string encoding: the escape U+10FFFF, its payload block U+10F000..U+10F7FF, the
 * old stand-in block U+10F800.., lone highs and lows (alone, reversed, next to the escape), pairs. */
export const EDGES = {
  'U+10F7FF': '\u{10F7FF}',
  'U+10F800': '\u{10F800}',
  'U+10FFFF': '\u{10FFFF}',
  'U+10F000': '\u{10F000}',
  'lone high D800': '\ud800',
  'lone high DBFF': '\udbff',
  'lone low DC00': '\udc00',
  'lone low DFFF': '\udfff',
  'low then high': '\udc00\ud800',
  'high then U+10F7FF': '\ud800\u{10F7FF}',
  'U+10FFFF then low': '\u{10FFFF}\udfff',
  'U+10FFFF then U+10F000': '\u{10FFFF}\u{10F000}',
  'U+10FFFF then U+10F7FF': '\u{10FFFF}\u{10F7FF}',
  'U+10FFFF twice': '\u{10FFFF}\u{10FFFF}',
  'high, U+10FFFF, low': '\udbff\u{10FFFF}\udfff',
  'pair U+1F600': '\ud83d\ude00',
  'mixed text': 'a\u{10F8AB}b\ud8abc\u{10FFFE}',
}

/** Pipeline configs (built from the given TypeBox `Type`) and inputs for one edge string `s`. */
export function pipelineCases(Type, s) {
  const legacyAdd = {
    name: 'legacyAdd',
    apply(args, toolName) {
      args.extra = toolName
      return `added for ${toolName}`
    },
  }
  return {
    // Tool name in the retry message and fingerprint; the value in `Received:`.
    'tool name + received': { config: { toolName: s, schema: Type.Number() }, input: s },
    // Alias selector and aliases holding the edge; the note names both and the tool.
    'alias selector': {
      config: {
        toolName: s,
        schema: Type.Object({ [s]: Type.String() }),
        preprocessors: [{ kind: 'alias', selector: s, aliases: [`p${s}`] }],
      },
      input: { [`p${s}`]: s },
    },
    // The legacy structural repair sees the tool name exactly.
    'legacy structural tool name': {
      config: { toolName: s, schema: Type.Object({ c: Type.Integer() }), legacyConfig: { structural: [legacyAdd] } },
      input: { c: '' },
    },
    // Legacy field aliases and a bare string wrapped into a field named by the edge.
    'legacy aliases + root string': {
      config: {
        toolName: 't',
        schema: Type.Object({ [s]: Type.String() }),
        legacyConfig: { fieldAliases: { [s]: [`x${s}`] }, rootString: { field: s } },
      },
      input: s,
    },
    'legacy field alias': {
      config: { toolName: 't', schema: Type.Object({ [s]: Type.String() }), legacyConfig: { fieldAliases: { [s]: [`x${s}`] } } },
      input: { [`x${s}`]: s },
    },
    // A JSON-stringified object (envelope decode) holding the edge in a key and a value.
    'stringified envelope': { config: { toolName: 't', schema: Type.Object({ [s]: Type.String() }) }, input: JSON.stringify({ [s]: s }) },
    // Lengths (TypeBox's grapheme count), patterns, enums and uniqueness over the edge.
    'maxLength 1': { config: { toolName: 't', schema: Type.Object({ a: Type.String({ maxLength: 1 }) }) }, input: { a: s } },
    'minLength 2': { config: { toolName: 't', schema: Type.Object({ a: Type.String({ minLength: 2 }) }) }, input: { a: s } },
    'pattern one unit': { config: { toolName: 't', schema: Type.Object({ a: Type.String({ pattern: '^.$' }) }) }, input: { a: s } },
    'literal match': { config: { toolName: 't', schema: Type.Object({ a: Type.Literal(s) }) }, input: { a: s } },
    'literal mismatch': { config: { toolName: 't', schema: Type.Object({ a: Type.Literal(s) }) }, input: { a: `${s}x` } },
    'unique items': { config: { toolName: 't', schema: Type.Array(Type.String(), { uniqueItems: true }) }, input: [s, '\ufffd', s.slice(0, 1)] },
    'sorted keys in received': {
      config: { toolName: 't', schema: Type.Object({ z: Type.String() }, { additionalProperties: false }) },
      input: { [s]: 1, '\ue000': 2, a: 3 },
    },
  }
}

/** Grammar texts and messages for one edge string. */
export function grammarCases(s) {
  return {
    parse: [
      `{"name":"p","arguments":{"${s}":"${s}"}}`,
      `<tool_call>{"name":"${s}","arguments":{"k":"${s}"}}</tool_call>`,
      `${s}[TOOL_CALLS][{"name":"f${s}","arguments":{"a":"${s}"}}]${s}`,
      `<｜DSML｜function_calls><｜DSML｜invoke name="f${s}"><｜DSML｜parameter name="p${s}" string="true">${s}</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜function_calls>`,
    ],
    recover: [
      {
        message: { role: 'assistant', content: [{ type: 'text', text: `<DSML｜invoke${s}` }] },
        options: { mode: 'strip', knownTools: new Set() },
      },
      {
        message: {
          role: 'assistant',
          stopReason: 'stop',
          content: [{ type: 'text', text: `${s} <tool_call>{"name":"${s}","arguments":{"k":"${s}"}}</tool_call> ${s}` }],
        },
        options: { mode: 'recover', knownTools: new Set([s]) },
      },
      {
        message: {
          role: 'assistant',
          content: [{ type: 'thinking', thinking: `${s}<tool_call>{"name":"x","arguments":{}}</tool_call>` }, { type: 'text', text: s }],
        },
        options: { mode: 'strip', knownTools: new Set(['x']) },
      },
    ],
  }
}

/** The observable parts of a pipeline result. */
export function pipelineView(r) {
  return {
    outcome: r.outcome,
    args: r.args,
    changes: r.changes,
    issueSummary: r.issueSummary,
    fingerprint: r.fingerprint,
    retryMessage: r.retryMessage,
  }
}

/** The observable parts of a grammar recovery (promoted call ids hold a clock, left out). */
export function recoveryView(r) {
  const { promotedCallIds, ...rest } = r
  const content = Array.isArray(r.message?.content) ? r.message.content.map(({ id, ...part }) => part) : r.message?.content
  return { ...rest, promotedCallIds: promotedCallIds.length, message: { ...r.message, content } }
}

/** JSON with every non-ASCII unit escaped, so expectations stay ASCII and exact. */
export function asciiJson(v) {
  return String(JSON.stringify(v, (_k, x) => (x instanceof Set ? [...x] : x))).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

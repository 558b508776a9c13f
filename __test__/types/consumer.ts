// Compile-only fixture (never executed): TypeScript a user of @r3b1s/pi-repair-layer/core and /pi
// would write, checked by `tsc -p tsconfig.json` against lib/core.d.ts and lib/pi.d.ts.
// Lines under `@ts-expect-error` must stay type errors; if one compiles, tsc reports it.
import { type Static, type TSchema, Type } from "typebox";
import {
  type AliasPreprocessor,
  attachRepairNotes,
  BUILTIN_TOOL_NAMES,
  BUILTIN_TOOL_REPAIRS,
  DEFAULT_ENVELOPE_LIMITS,
  type EnvelopeLimits,
  type EnvelopeRecoveryResult,
  escapeJsonStringControlCharacters,
  type FieldPreprocessor,
  foldFlatEditFields,
  formatRepairNotes,
  type GrammarPolicyMode,
  isPlainObject,
  type ObjectLocationSelector,
  type Preprocessor,
  preprocessInput,
  type RepairChange,
  type RepairFeedback,
  RepairLifecycle,
  type RepairLifecycleOptions,
  type RepairObservation,
  type RepairPipelineConfig,
  type RepairPipelineLimits,
  type RepairPipelineResult,
  type RepairPolicy,
  type RepairPolicyOverrides,
  type RepairPolicyProfile,
  type RepairResult,
  type RepairStage,
  recoverEnvelope,
  repairToolInput,
  resolveRepairPolicy,
  runRepairPipeline,
  type StructuralPreprocessor,
  type StructuralRepair,
  stableSerialize,
  type ToolRepairConfig,
  truncatedEnvelopeChange,
  type UnknownGrammarTextPolicy,
  unwrapMarkdownAutoLinks,
} from "../../lib/core.js";
import * as core from "../../lib/core.js";
import {
  adaptToolDefinition,
  type PiToolOwnerAdapterOptions,
  UnrepairableToolInputError,
} from "../../lib/pi.js";

// --- a stand-in for pi 0.80.6's tool types (@earendil-works/pi-coding-agent is not installed) ---

interface TextContent {
  type: "text";
  text: string;
}
interface ImageContent {
  type: "image";
  data: string;
  mimeType: string;
}
interface AgentToolResult<TDetails> {
  content: (TextContent | ImageContent)[];
  details: TDetails;
}
interface ExtensionContext {
  cwd: string;
}
interface ToolRenderContext<TState, TArgs> {
  state: TState;
  args: TArgs;
  expanded: boolean;
}
interface ToolDefinition<
  TParams extends TSchema = TSchema,
  TDetails = unknown,
  // biome-ignore lint/suspicious/noExplicitAny: pi's own default
  TState = any,
> {
  name: string;
  label: string;
  description: string;
  promptSnippet?: string;
  promptGuidelines?: string[];
  parameters: TParams;
  renderShell?: "default" | "self";
  prepareArguments?: (args: unknown) => Static<TParams>;
  executionMode?: "sequential" | "parallel";
  execute(
    toolCallId: string,
    params: Static<TParams>,
    signal: { readonly aborted: boolean } | undefined,
    onUpdate: ((partial: AgentToolResult<TDetails>) => void) | undefined,
    ctx: ExtensionContext,
  ): Promise<AgentToolResult<TDetails>>;
  renderCall?: (
    args: Static<TParams>,
    theme: { bold(text: string): string },
    context: ToolRenderContext<TState, Static<TParams>>,
  ) => { render(width: number): string[] };
  renderResult?: (
    result: AgentToolResult<TDetails>,
    options: { expanded: boolean; isPartial: boolean },
    theme: { bold(text: string): string },
    context: ToolRenderContext<TState, Static<TParams>>,
  ) => { render(width: number): string[] };
}
interface ExtensionAPI {
  registerTool<
    TParams extends TSchema = TSchema,
    TDetails = unknown,
    // biome-ignore lint/suspicious/noExplicitAny: pi's own default
    TState = any,
  >(tool: ToolDefinition<TParams, TDetails, TState>): void;
}
declare const pi: ExtensionAPI;

// --- schemas ---------------------------------------------------------------------------------------

const readSchema = Type.Object({
  path: Type.String(),
  offset: Type.Optional(Type.Number()),
  limit: Type.Optional(Type.Number()),
});
const editSchema = Type.Object({
  path: Type.String(),
  edits: Type.Array(Type.Object({ oldText: Type.String(), newText: Type.String() })),
});
const plainJsonSchema = {
  type: "object",
  properties: { path: { type: "string" } },
  required: ["path"],
};

// --- policy ----------------------------------------------------------------------------------------

const profiles: RepairPolicyProfile[] = ["conservative", "adaptive", "recover"];
const grammarMode: GrammarPolicyMode = "strip";
const unknownText: UnknownGrammarTextPolicy = "preserve";
const overrides: RepairPolicyOverrides = { grammarMode, unknownGrammarText: unknownText };
const policy: RepairPolicy = resolveRepairPolicy("recover", overrides);
const defaultPolicy: RepairPolicy = resolveRepairPolicy();
const allowed: boolean =
  policy.allowTruncatedEnvelopeCompletion && defaultPolicy.allowValidValueTransforms;
const mode: GrammarPolicyMode = policy.grammarMode;
// @ts-expect-error: not a profile
resolveRepairPolicy("strict");
// @ts-expect-error: not a grammar mode
resolveRepairPolicy("adaptive", { grammarMode: "aggressive" });

// --- preprocessors ---------------------------------------------------------------------------------

const rootSelector: ObjectLocationSelector = "";
const pathSelector: ObjectLocationSelector = "/path";
// @ts-expect-error: selectors start with "/"
const badSelector: ObjectLocationSelector = "path";

const alias: AliasPreprocessor = {
  kind: "alias",
  selector: pathSelector,
  aliases: ["file_path", "filePath"],
  accepts: "string",
  emptyEquivalentToMissing: true,
};
const field: FieldPreprocessor = {
  kind: "grammar-tokens",
  selector: "/edits/*",
  scalarType: "string",
  modelFamilies: [/qwen/i, /glm/i],
};
const structural: StructuralPreprocessor = {
  kind: "structural",
  selector: rootSelector,
  ruleId: "edit.fold-flat-fields",
  apply: foldFlatEditFields,
};
const custom: StructuralPreprocessor = {
  kind: "structural",
  selector: "",
  ruleId: "owner.custom",
  apply(value) {
    return isPlainObject(value) ? { value: { ...value }, note: "copied" } : undefined;
  },
};
const preprocessors: readonly Preprocessor[] = [
  alias,
  field,
  structural,
  custom,
  { kind: "scalar", selector: "/offset", scalarType: "number" },
  { kind: "alias", selector: "/limit", aliases: ["max"] },
];
// @ts-expect-error: unknown preprocessor kind
const badKind: Preprocessor = { kind: "rename", selector: "/a" };
// @ts-expect-error: alias preprocessors need `aliases`
const missingAliases: Preprocessor = { kind: "alias", selector: "/a" };

const preprocessed = preprocessInput({
  input: { file_path: "a.md" },
  toolName: "read",
  preprocessors,
  modelId: "qwen3-coder",
  allowValidValueTransforms: true,
});
const preprocessedChanges: RepairChange[] = preprocessed.changes;
const preprocessedObservations: string[] = preprocessed.observations;
const preprocessedValue: unknown = preprocessed.value;

// --- legacy config ---------------------------------------------------------------------------------

const fold: StructuralRepair = {
  name: "owner.fold",
  apply(args, toolName) {
    if (toolName !== "edit" || !("old" in args)) return false;
    args.edits = [{ oldText: args.old, newText: args.new }];
    delete args.old;
    delete args.new;
    return "Folded flat edit fields.";
  },
};
// @ts-expect-error: apply returns a note or false, never true
const badFold: StructuralRepair = { name: "x", apply: () => true };
const legacyConfig: ToolRepairConfig = {
  fieldAliases: { path: ["file_path"], edits: ["changes"] },
  rootString: { field: "path", wrapInArray: false },
  pathFields: ["path"],
  structural: [fold],
};
const legacy: RepairResult = repairToolInput({
  toolName: "edit",
  schema: editSchema,
  input: '{"file_path":"a.ts","edits":[]}',
  config: legacyConfig,
});
const legacyRules: string[] = legacy.rulesFired;
const legacyNotes: string[] = legacy.notes;
const legacyChangeIds: string[] = legacy.changes.map((change) => change.ruleId);
const legacySummary: string | undefined = legacy.issueSummary;
const legacyFingerprint: string | undefined = legacy.fingerprint;
const legacyRetry: string | undefined = legacy.retryMessage;
repairToolInput({ toolName: "read", schema: plainJsonSchema, input: {} });

// --- the pipeline ----------------------------------------------------------------------------------

const limits: RepairPipelineLimits = { maxInputBytes: 65536, maxWorkMs: 10 };
const observed: RepairObservation[] = [];
const config: RepairPipelineConfig = {
  toolName: "read",
  schema: readSchema,
  policy: "adaptive",
  policyOverrides: { grammarMode: "recover", unknownGrammarText: "strip" },
  preprocessors,
  legacyConfig,
  modelId: "qwen3-coder",
  ownerPrepareArguments: (input) => (typeof input === "string" ? { path: input } : input),
  limits,
  onObservation: (observation) => {
    observed.push(observation);
  },
  onOutcome: (outcome) => {
    const stages: RepairStage[] = outcome.changes.map((change) => change.stage);
    void stages;
  },
};
const minimalConfig: RepairPipelineConfig = { toolName: "read", schema: plainJsonSchema };
// @ts-expect-error: not a profile
const badPolicy: RepairPipelineConfig = { toolName: "read", schema: readSchema, policy: "aggressive" };
// @ts-expect-error: schema is required
const noSchema: RepairPipelineConfig = { toolName: "read" };

function describeResult(result: RepairPipelineResult): string {
  switch (result.outcome) {
    case "valid":
      return `valid under ${result.policy}`;
    case "repaired":
      return result.changes.map((change) => `${change.stage}:${change.ruleId}:${change.note}`).join(",");
    case "unrepairable": {
      const message: string = result.retryMessage ?? "no retry message";
      const summary: string | undefined = result.issueSummary;
      const fingerprint: string | undefined = result.fingerprint;
      return `${message} ${summary ?? ""} ${fingerprint ?? ""}`;
    }
    default: {
      const exhaustive: never = result.outcome;
      return exhaustive;
    }
  }
}
const result = runRepairPipeline({ input: '{"file_path":"a.md"}', config });
describeResult(result);
describeResult(runRepairPipeline({ input: {}, config: minimalConfig }));
if (result.outcome === "repaired" && isPlainObject(result.args)) {
  const path: unknown = result.args.path;
  void path;
}
for (const observation of result.observations) {
  const stage: RepairStage | "grammar" = observation.stage;
  const channel: "tool" | "message" = observation.channel;
  const outcome: "detected" | "valid" | "repaired" | "unrepairable" | undefined = observation.outcome;
  void [stage, channel, outcome, observation.toolName, observation.grammar];
}
// @ts-expect-error: not an outcome
const impossible = result.outcome === "fixed";
// @ts-expect-error: changes is an array, not a string
const notString: string = result.changes;
// @ts-expect-error: input is required
runRepairPipeline({ config });

function pipelineFor<P extends TSchema>(toolName: string, schema: P): RepairPipelineResult {
  return runRepairPipeline({ input: {}, config: { toolName, schema } });
}
pipelineFor("read", readSchema);

// --- envelope --------------------------------------------------------------------------------------

const envelopeLimits: EnvelopeLimits = { ...DEFAULT_ENVELOPE_LIMITS, maxCandidates: 2 };
const maxBytes: number = DEFAULT_ENVELOPE_LIMITS.maxInputBytes;
const recovered: EnvelopeRecoveryResult = recoverEnvelope('{"path":"a"', { maxDecodeAttempts: 2 });
const recoveredDefault: EnvelopeRecoveryResult = recoverEnvelope("{}");
const limited: boolean = recovered.limited;
const candidates: unknown[] = recovered.candidates;
const recoveredChanges: RepairChange[] = recovered.changes;
const truncated: RepairChange = truncatedEnvelopeChange();
const escaped: string = escapeJsonStringControlCharacters('{"a":"\n"}');
const unwrapped: string = unwrapMarkdownAutoLinks("[a.md](http://a.md)");
// @ts-expect-error: takes a string
escapeJsonStringControlCharacters(42);
// @ts-expect-error: limits are numbers
recoverEnvelope("{}", { maxWorkMs: "fast" });

function plainKeys(value: unknown): string[] {
  if (isPlainObject(value)) return Object.keys(value);
  // @ts-expect-error: not narrowed outside the guard
  return Object.keys(value).concat(value.extra);
}
plainKeys({});

// --- lifecycle and notes ---------------------------------------------------------------------------

const lifecycleOptions: RepairLifecycleOptions = {
  ttlMs: 60_000,
  maxPending: 16,
  maxAssociated: 32,
  now: () => 0,
};
const lifecycle = new RepairLifecycle(lifecycleOptions);
const defaultLifecycle = new RepairLifecycle();
const feedback: RepairFeedback = {
  rules: result.changes.map((change) => change.ruleId),
  notes: result.changes.map((change) => change.note),
  stages: [...new Set(result.changes.map((change) => change.stage))],
  profile: result.policy,
  model: "qwen3-coder",
  outcome: "repaired",
  fingerprint: result.fingerprint,
};
lifecycle.enqueue("read", result.args, feedback);
const correlated: RepairFeedback | undefined = lifecycle.correlate("read", result.args, "call-1");
lifecycle.associate("call-2", feedback);
const peeked: RepairFeedback | undefined = lifecycle.peek("call-1");
const taken: RepairFeedback | undefined = lifecycle.take("call-2");
lifecycle.cleanup();
defaultLifecycle.clear();
const pending: number = lifecycle.pendingCount;
// @ts-expect-error: pendingCount is read-only
lifecycle.pendingCount = 3;
// @ts-expect-error: "fixed" is not a feedback outcome
const badFeedback: RepairFeedback = { rules: [], notes: [], outcome: "fixed" };

const noteText: string = formatRepairNotes(feedback.notes);
const content: (TextContent | ImageContent)[] = [
  { type: "image", data: "", mimeType: "image/png" },
  { type: "text", text: "done" },
];
const withNotes: (TextContent | ImageContent)[] = attachRepairNotes(content, taken?.notes ?? []);
// @ts-expect-error: content items need a `type`
attachRepairNotes([{ text: "x" }], ["note"]);
const serialized: string = stableSerialize({ b: 1, a: [2] });

// --- pi-native extras ------------------------------------------------------------------------------

const folded = foldFlatEditFields({ path: "a", oldText: "x", newText: "y" });
if (folded) {
  const foldNote: string = folded.note;
  void foldNote;
}
const editTables = BUILTIN_TOOL_REPAIRS.edit;
const builtinPreprocessors: readonly Preprocessor[] = editTables.preprocessors;
const builtinLegacy: ToolRepairConfig = editTables.legacyConfig;
const names: readonly string[] = BUILTIN_TOOL_NAMES;
for (const name of ["read", "bash", "write", "grep", "find", "ls"] as const) {
  runRepairPipeline({
    input: {},
    config: { toolName: name, schema: readSchema, ...BUILTIN_TOOL_REPAIRS[name] },
  });
}
// @ts-expect-error: no table for unknown tools
void BUILTIN_TOOL_REPAIRS.cat;
// @ts-expect-error: the tables are read-only
BUILTIN_TOOL_REPAIRS.edit = editTables;
// @ts-expect-error: the name list is read-only
(BUILTIN_TOOL_NAMES as readonly string[]).push("cat");

// --- /pi -------------------------------------------------------------------------------------------

const repairOptions = {
  policy: "adaptive",
  preprocessors: [{ kind: "alias", selector: "/path", aliases: ["file_path"], accepts: "string" }],
} satisfies PiToolOwnerAdapterOptions;
const fullOptions: PiToolOwnerAdapterOptions = {
  policy: "recover",
  policyOverrides: { grammarMode: "observe" },
  preprocessors,
  legacyConfig,
  modelId: "glm-4.6",
  limits,
  onObservation: (observation) => observed.push(observation),
  onOutcome(outcome) {
    if (outcome.outcome !== "repaired") return;
    lifecycle.enqueue("read", outcome.args, {
      rules: outcome.changes.map((change) => change.ruleId),
      notes: outcome.changes.map((change) => change.note),
    });
  },
  unrepairable: "passthrough",
};
// @ts-expect-error: not an unrepairable mode
const badMode: PiToolOwnerAdapterOptions = { unrepairable: "ignore" };
// @ts-expect-error: the tool name comes from the definition
const withToolName: PiToolOwnerAdapterOptions = { toolName: "read" };

const definition: ToolDefinition<typeof readSchema> = {
  name: "inspect_asset",
  label: "Inspect asset",
  description: "compile-only fixture tool",
  parameters: readSchema,
  async execute(_toolCallId, params) {
    return { content: [{ type: "text", text: `Inspecting ${params.path}` }], details: undefined };
  },
};

// Declared definitions keep their exact type.
const adapted: ToolDefinition<typeof readSchema> = adaptToolDefinition(definition, repairOptions);
pi.registerTool(adapted);
pi.registerTool(adaptToolDefinition(definition, fullOptions));
const prepared: Static<typeof readSchema> | undefined = adapted.prepareArguments?.({ file_path: "a" });

// Inline definitions, as in the reference's own examples.
pi.registerTool(
  adaptToolDefinition(
    {
      name: "inline",
      label: "Inline",
      description: "inline definition",
      parameters: editSchema,
      async execute(_toolCallId, params) {
        const count: number = params.edits.length;
        return { content: [{ type: "text", text: `${params.path}: ${count}` }], details: { count } };
      },
    },
    { policy: "adaptive", preprocessors },
  ),
);
const standalone = adaptToolDefinition(
  {
    name: "owned",
    label: "Owned",
    description: "test",
    parameters: Type.Object({ path: Type.String() }),
    prepareArguments(input) {
      if (typeof input === "string") return { path: input };
      return input as { path: string };
    },
    async execute() {
      return { content: [{ type: "text", text: "ok" }], details: undefined };
    },
  },
  { onOutcome: (outcome) => observed.push(...outcome.observations) },
);
const standalonePath: string | undefined = standalone.prepareArguments?.("/x").path;
const standaloneLabel: string = standalone.label;
pi.registerTool(standalone);
pi.registerTool(
  adaptToolDefinition({
    name: "rendered",
    label: "Rendered",
    description: "inline definition with renderers",
    parameters: readSchema,
    executionMode: "sequential",
    renderShell: "self",
    async execute(toolCallId, params, signal, onUpdate, ctx) {
      onUpdate?.({ content: [{ type: "text", text: "working" }], details: undefined });
      const text = `${toolCallId} ${params.path} ${signal?.aborted} ${ctx.cwd}`;
      return {
        content: [
          { type: "text", text },
          { type: "image", data: "", mimeType: "image/png" },
        ],
        details: undefined,
      };
    },
    renderCall(args, theme, context) {
      return { render: () => [theme.bold(String(args.path)), String(context.expanded)] };
    },
    renderResult: (result, options) => ({
      render: () => [String(result.content.length), String(options.expanded)],
    }),
  }),
);
pi.registerTool(
  adaptToolDefinition({
    ...definition,
    prepareArguments(input) {
      return input as Static<typeof readSchema>;
    },
  }),
);

// Optional-integration recipe: the adapter's type is used as a value type.
async function loadAdapter(): Promise<typeof adaptToolDefinition | undefined> {
  try {
    const repair = await import("../../lib/pi.js");
    return repair.adaptToolDefinition;
  } catch {
    return undefined;
  }
}
async function activate(api: Pick<ExtensionAPI, "registerTool">): Promise<ToolDefinition<typeof readSchema>> {
  const adapt = await loadAdapter();
  const registered = adapt ? adapt(definition, repairOptions) : definition;
  api.registerTool(registered);
  return registered;
}
void activate(pi);

// Generic code over TypeBox's own TSchema.
function registerRepaired<P extends TSchema, D>(api: ExtensionAPI, tool: ToolDefinition<P, D>): void {
  api.registerTool(adaptToolDefinition(tool, { unrepairable: "throw" }));
}
registerRepaired(pi, definition);

pi.registerTool(
  // @ts-expect-error: pi has no "video" content (reported at the adapted definition)
  adaptToolDefinition({
    name: "wrong-content",
    label: "Wrong",
    description: "content items pi does not know",
    parameters: readSchema,
    async execute() {
      return { content: [{ type: "video", url: "" }], details: undefined };
    },
  }),
);
// @ts-expect-error: a definition needs a name
adaptToolDefinition({ parameters: readSchema });
// @ts-expect-error: a definition needs parameters
adaptToolDefinition({ name: "x" });
// @ts-expect-error: not an options object
adaptToolDefinition(definition, { policy: "aggressive" });

try {
  adapted.prepareArguments?.(42);
} catch (error) {
  if (error instanceof UnrepairableToolInputError) {
    const failed: RepairPipelineResult = error.result;
    const message: string = error.message;
    const retry: string | undefined = error.result.retryMessage;
    void [failed, message, retry];
    // @ts-expect-error: result is read-only
    error.result = failed;
  }
}
const thrown: Error = new UnrepairableToolInputError(result);
// @ts-expect-error: the result is required
new UnrepairableToolInputError();

// --- everything exported by /core has a declaration ------------------------------------------------

const coreValues = [
  core.runRepairPipeline,
  core.repairToolInput,
  core.preprocessInput,
  core.recoverEnvelope,
  core.truncatedEnvelopeChange,
  core.escapeJsonStringControlCharacters,
  core.isPlainObject,
  core.unwrapMarkdownAutoLinks,
  core.resolveRepairPolicy,
  core.DEFAULT_ENVELOPE_LIMITS,
  core.stableSerialize,
  core.formatRepairNotes,
  core.attachRepairNotes,
  core.RepairLifecycle,
  core.foldFlatEditFields,
  core.BUILTIN_TOOL_REPAIRS,
  core.BUILTIN_TOOL_NAMES,
] as const;

export const used = [
  profiles,
  allowed,
  mode,
  badSelector,
  badKind,
  missingAliases,
  preprocessedChanges,
  preprocessedObservations,
  preprocessedValue,
  badFold,
  legacyRules,
  legacyNotes,
  legacyChangeIds,
  legacySummary,
  legacyFingerprint,
  legacyRetry,
  badPolicy,
  noSchema,
  impossible,
  notString,
  envelopeLimits,
  maxBytes,
  recoveredDefault,
  limited,
  candidates,
  recoveredChanges,
  truncated,
  escaped,
  unwrapped,
  correlated,
  peeked,
  pending,
  badFeedback,
  noteText,
  withNotes,
  serialized,
  builtinPreprocessors,
  builtinLegacy,
  names,
  badMode,
  withToolName,
  prepared,
  standalonePath,
  standaloneLabel,
  thrown,
  coreValues,
];

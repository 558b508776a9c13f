// Type declarations for pi-native/core, the drop-in for @r3b1s/pi-repair-layer/core (0.4.3).
// Exported names and shapes follow the reference API so code typed against it compiles unchanged.

/**
 * A tool parameter schema: a TypeBox 1.x schema or a plain JSON Schema object.
 * Structurally identical to TypeBox's `TSchema` (an empty interface), declared here so that
 * `typebox` stays an optional dependency: any TypeBox schema, and any generic `T extends TSchema`,
 * is assignable to it.
 */
type TSchema = {};

// --- pipeline types -----------------------------------------------------------------------------

/** Where in the pipeline a change was made. */
export type RepairStage =
  | "envelope"
  | "owner-shim"
  | "preprocess"
  | "valid-value"
  | "strict-validation"
  | "schema-repair"
  | "final-validation";

/** One applied mutation. */
export interface RepairChange {
  ruleId: string;
  stage: RepairStage;
  note: string;
}

/** Telemetry record that never carries argument values. */
export interface RepairObservation {
  channel: "tool" | "message";
  stage: RepairStage | "grammar";
  ruleId: string;
  toolName?: string;
  grammar?: string;
  outcome?: "detected" | "valid" | "repaired" | "unrepairable";
}

/** Per-call overrides of the envelope-recovery budgets. */
export interface RepairPipelineLimits {
  maxInputBytes?: number;
  maxNestingDepth?: number;
  maxDecodeAttempts?: number;
  maxCandidates?: number;
  maxWorkMs?: number;
}

/** Full pipeline configuration for one tool. */
export interface RepairPipelineConfig {
  toolName: string;
  /** TypeBox 1.x schema (plain JSON Schema objects are accepted too). */
  schema: TSchema;
  /** Defaults to "adaptive". */
  policy?: RepairPolicyProfile;
  policyOverrides?: RepairPolicyOverrides;
  preprocessors?: readonly Preprocessor[];
  /** Inputs for the schema-repair stage in the older config format. */
  legacyConfig?: ToolRepairConfig;
  modelId?: string;
  /** The tool owner's own `prepareArguments`, run after envelope recovery. */
  ownerPrepareArguments?: (input: unknown) => unknown;
  limits?: RepairPipelineLimits;
  onObservation?: (observation: RepairObservation) => void;
  /** Called once with the final result; errors it throws are ignored. */
  onOutcome?: (outcome: RepairPipelineResult) => void;
}

/** What `runRepairPipeline` decided. */
export interface RepairPipelineResult {
  outcome: "valid" | "repaired" | "unrepairable";
  /** Valid: the caller's input. Repaired: the repaired value. Unrepairable: the caller's input. */
  args: unknown;
  policy: RepairPolicyProfile;
  changes: RepairChange[];
  observations: RepairObservation[];
  issueSummary?: string;
  fingerprint?: string;
  retryMessage?: string;
}

/** Run the whole repair pipeline (envelope, owner shim, preprocessors, validation, schema repair). */
export declare function runRepairPipeline(options: {
  input: unknown;
  config: RepairPipelineConfig;
}): RepairPipelineResult;

// --- envelope -----------------------------------------------------------------------------------

/** Envelope-recovery budgets with every field set. */
export interface EnvelopeLimits {
  maxInputBytes: number;
  maxNestingDepth: number;
  maxDecodeAttempts: number;
  maxCandidates: number;
  maxWorkMs: number;
}

export interface EnvelopeRecoveryResult {
  value: unknown;
  changes: RepairChange[];
  candidates: unknown[];
  limited: boolean;
}

/** `{ maxInputBytes: 262144, maxNestingDepth: 64, maxDecodeAttempts: 3, maxCandidates: 4, maxWorkMs: 25 }` */
export declare const DEFAULT_ENVELOPE_LIMITS: EnvelopeLimits;

/** Decode a string (or otherwise malformed) tool-argument envelope into an object where possible. */
export declare function recoverEnvelope(
  input: unknown,
  overrides?: RepairPipelineLimits,
): EnvelopeRecoveryResult;

/** The change recorded when a truncated JSON object is completed. */
export declare function truncatedEnvelopeChange(): RepairChange;

/** Escape raw control characters that appear inside JSON string literals. */
export declare function escapeJsonStringControlCharacters(text: string): string;

/** True for non-array objects whose prototype is `Object.prototype` or `null`. */
export declare function isPlainObject(
  value: unknown,
): value is Record<string, unknown>;

// --- policy -------------------------------------------------------------------------------------

export type RepairPolicyProfile = "conservative" | "adaptive" | "recover";

export type GrammarPolicyMode = "off" | "observe" | "strip" | "recover";

export type UnknownGrammarTextPolicy = "preserve" | "strip";

export interface RepairPolicy {
  profile: RepairPolicyProfile;
  allowTruncatedEnvelopeCompletion: boolean;
  allowValidValueTransforms: boolean;
  grammarMode: GrammarPolicyMode;
  unknownGrammarText: UnknownGrammarTextPolicy;
}

export interface RepairPolicyOverrides {
  grammarMode?: GrammarPolicyMode;
  unknownGrammarText?: UnknownGrammarTextPolicy;
}

/** The effective policy for a profile (default "adaptive") with optional overrides applied. */
export declare function resolveRepairPolicy(
  profile?: RepairPolicyProfile,
  overrides?: RepairPolicyOverrides,
): RepairPolicy;

// --- preprocessors ------------------------------------------------------------------------------

/** JSON-Pointer-like location of an object in the arguments: `""` is the root, `"/a/*"` every item of `a`. */
export type ObjectLocationSelector = `/${string}` | "";

export type Preprocessor =
  | AliasPreprocessor
  | FieldPreprocessor
  | StructuralPreprocessor;

/** Move a value found under one of `aliases` to the canonical field named by `selector`. */
export interface AliasPreprocessor {
  kind: "alias";
  selector: ObjectLocationSelector;
  aliases: readonly string[];
  accepts?: "string" | "number" | "boolean" | "array" | "object";
  emptyEquivalentToMissing?: boolean;
}

/** A value transform for the field named by `selector`. */
export interface FieldPreprocessor {
  kind:
    | "filesystem-path"
    | "filesystem-path-array"
    | "glob"
    | "string-or-array"
    | "scalar"
    | "anchor-bleed"
    | "grammar-tokens";
  selector: ObjectLocationSelector;
  scalarType?: "string" | "number" | "boolean";
  /** For the model-specific kinds: only run when the model id matches one of these. */
  modelFamilies?: readonly RegExp[];
}

/** A tool-specific reshaping of the object at `selector`; returns `undefined` when it does not apply. */
export interface StructuralPreprocessor {
  kind: "structural";
  selector: ObjectLocationSelector;
  ruleId: string;
  apply: (value: unknown) => { value: unknown; note: string } | undefined;
}

/** Run only the preprocessing stage. */
export declare function preprocessInput(options: {
  input: unknown;
  toolName: string;
  preprocessors: readonly Preprocessor[];
  modelId?: string;
  allowValidValueTransforms: boolean;
}): { value: unknown; changes: RepairChange[]; observations: string[] };

// --- legacy repair engine -----------------------------------------------------------------------

/** A tool-specific fold used by the schema-repair stage. */
export interface StructuralRepair {
  /** Rule id recorded when this repair fires. */
  name: string;
  /** Mutates `args`; returns a note when it changed something, otherwise `false`. */
  apply(args: Record<string, unknown>, toolName: string): string | false;
}

/** Older per-tool configuration for the schema-repair stage. */
export interface ToolRepairConfig {
  /** Canonical field name to the wrong names models use for it. */
  fieldAliases?: Record<string, readonly string[]>;
  /** Wrap a bare-string input as `{ [field]: value }` (or `{ [field]: [value] }`). */
  rootString?: { field: string; wrapInArray?: boolean };
  /** Top-level string fields that hold filesystem paths. */
  pathFields?: readonly string[];
  structural?: readonly StructuralRepair[];
}

/** Result of the older `repairToolInput` entry point; every key is always present. */
export interface RepairResult {
  outcome: "valid" | "repaired" | "unrepairable";
  args: unknown;
  rulesFired: string[];
  notes: string[];
  changes: Array<{ ruleId: string; note: string }>;
  issueSummary: string | undefined;
  fingerprint: string | undefined;
  retryMessage: string | undefined;
}

/** Older entry point: the pipeline with a legacy config and the older result shape. */
export declare function repairToolInput(options: {
  toolName: string;
  schema: TSchema;
  input: unknown;
  config?: ToolRepairConfig;
}): RepairResult;

/** Turn markdown auto-links such as `[a.md](http://a.md)` back into the bare text. */
export declare function unwrapMarkdownAutoLinks(value: string): string;

// --- lifecycle and repair notes -----------------------------------------------------------------

/** Model-facing feedback about a repaired call. */
export interface RepairFeedback {
  rules: string[];
  notes: string[];
  stages?: string[];
  profile?: string;
  model?: string;
  outcome?: "repaired" | "recovered";
  fingerprint?: string;
}

export interface RepairLifecycleOptions {
  /** Default 300000 (five minutes). */
  ttlMs?: number;
  /** Default 128. */
  maxPending?: number;
  /** Default 256. */
  maxAssociated?: number;
  /** Clock; defaults to `Date.now`. */
  now?: () => number;
}

/** Bounded store that carries repair feedback from `prepareArguments` to the later tool call id. */
export declare class RepairLifecycle {
  #private;
  constructor(options?: RepairLifecycleOptions);
  /** Queue feedback for a call not yet assigned an id. */
  enqueue(toolName: string, args: unknown, feedback: RepairFeedback): void;
  /** Match the oldest queued feedback for this call and bind it to `toolCallId`. */
  correlate(
    toolName: string,
    args: unknown,
    toolCallId: string,
  ): RepairFeedback | undefined;
  associate(toolCallId: string, feedback: RepairFeedback): void;
  /** Read bound feedback without removing it. */
  peek(toolCallId: string): RepairFeedback | undefined;
  /** Read and remove bound feedback. */
  take(toolCallId: string): RepairFeedback | undefined;
  /** Drop expired entries. */
  cleanup(): void;
  clear(): void;
  get pendingCount(): number;
}

/** Stable JSON text with object keys sorted; used only for equality. */
export declare function stableSerialize(value: unknown): string;

/** Each note wrapped in `<repair_note>` tags, one per line. */
export declare function formatRepairNotes(notes: readonly string[]): string;

/** A copy of `content` with the notes not already present prepended to the first text item. */
export declare function attachRepairNotes<
  T extends { type: string; text?: string },
>(content: readonly T[], notes: readonly string[]): T[];

// --- pi-native extras ---------------------------------------------------------------------------

/** The `edit` tool's flat-field fold, usable as a `StructuralPreprocessor`'s `apply` (mutates `value`). */
export declare function foldFlatEditFields(
  value: unknown,
): { value: unknown; note: string } | undefined;

/** Frozen repair tables for pi's seven built-in tools. */
export declare const BUILTIN_TOOL_REPAIRS: Readonly<
  Record<
    "read" | "bash" | "edit" | "write" | "grep" | "find" | "ls",
    {
      readonly preprocessors: readonly Preprocessor[];
      readonly legacyConfig: ToolRepairConfig;
    }
  >
>;

/** The keys of `BUILTIN_TOOL_REPAIRS`. */
export declare const BUILTIN_TOOL_NAMES: readonly string[];

export {};

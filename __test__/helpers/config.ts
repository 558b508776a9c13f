// Turn a data-only case config (conformance fixture form) into the live
// options of runRepairPipeline / repairToolInput.
import { BUILTIN_TOOL_REPAIRS, foldFlatEditFields } from "../../lib/core.js";
import { PI_OWNER_SHIMS, piBuiltinSchema } from "./pi-tools.ts";
import { withTypeBoxMarkers } from "./typebox-markers.ts";

export interface CaseConfig {
  toolName?: string;
  schema?: unknown;
  schemaMode?: "raw" | "typebox";
  builtin?: string;
  ownerShim?: "pi";
  policy?: string;
  policyOverrides?: Record<string, unknown>;
  preprocessors?: Array<Record<string, unknown>>;
  legacyConfig?: Record<string, unknown>;
  modelId?: string;
  limits?: Record<string, unknown>;
}

/** `/src/flags` → RegExp literal; anything else → case-insensitive RegExp. */
export function toRegExp(text: string): RegExp {
  const literal = /^\/(.*)\/([a-z]*)$/s.exec(text);
  if (literal) return new RegExp(literal[1] as string, literal[2]);
  return new RegExp(text, "i");
}

export function buildPreprocessor(spec: Record<string, unknown>): Record<string, unknown> {
  if (spec.kind === "structural" && spec.builtin === "foldFlatEditFields") {
    return {
      kind: "structural",
      selector: (spec.selector as string | undefined) ?? "",
      ruleId: "foldFlatEditFields",
      apply: foldFlatEditFields,
    };
  }
  const out: Record<string, unknown> = { ...spec };
  if (Array.isArray(spec.modelFamilies)) {
    out.modelFamilies = (spec.modelFamilies as unknown[]).map((f) => (typeof f === "string" ? toRegExp(f) : f));
  }
  return out;
}

export function buildSchema(config: CaseConfig): unknown {
  if (config.builtin) return piBuiltinSchema(config.builtin);
  return config.schemaMode === "raw" ? structuredClone(config.schema) : withTypeBoxMarkers(config.schema);
}

// biome-ignore lint/suspicious/noExplicitAny: test glue over the public API
export function buildPipelineConfig(config: CaseConfig): any {
  const out: Record<string, unknown> = {};
  if (config.builtin) {
    const table = (BUILTIN_TOOL_REPAIRS as Record<string, { preprocessors: unknown; legacyConfig: unknown }>)[
      config.builtin
    ];
    if (!table) throw new Error(`BUILTIN_TOOL_REPAIRS has no entry for ${config.builtin}`);
    out.toolName = config.builtin;
    out.schema = buildSchema(config);
    out.preprocessors = table.preprocessors;
    out.legacyConfig = table.legacyConfig;
  } else {
    out.toolName = config.toolName;
    out.schema = buildSchema(config);
    if (config.preprocessors) out.preprocessors = config.preprocessors.map(buildPreprocessor);
    if (config.legacyConfig) out.legacyConfig = structuredClone(config.legacyConfig);
  }
  if (config.ownerShim === "pi") {
    const shim = PI_OWNER_SHIMS[out.toolName as string];
    if (shim) out.ownerPrepareArguments = shim;
  }
  for (const key of ["policy", "policyOverrides", "modelId", "limits"] as const) {
    if (key in config) out[key] = structuredClone(config[key]);
  }
  return out;
}

/** Options for the legacy facade `repairToolInput`. */
// biome-ignore lint/suspicious/noExplicitAny: test glue over the public API
export function buildLegacyOptions(config: CaseConfig, input: unknown): any {
  const pipeline = buildPipelineConfig(config);
  const options: Record<string, unknown> = {
    toolName: pipeline.toolName,
    schema: pipeline.schema,
    input,
  };
  if (pipeline.legacyConfig) options.config = pipeline.legacyConfig;
  return options;
}

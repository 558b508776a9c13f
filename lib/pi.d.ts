// Type declarations for pi-native/pi, the drop-in for @r3b1s/pi-repair-layer/pi (0.4.3).
// No dependency on pi's own types: the adapter accepts any pi ToolDefinition structurally and
// hands back the same type it was given.

import type { RepairPipelineConfig, RepairPipelineResult } from "./core.js";

/** Structurally identical to TypeBox's `TSchema` (see core.d.ts). */
type TSchema = {};

/** Thrown from the adapted `prepareArguments` when the input cannot be repaired safely. */
export declare class UnrepairableToolInputError extends Error {
  readonly result: RepairPipelineResult;
  /** The message is `result.retryMessage`, or a generic sentence when there is none. */
  constructor(result: RepairPipelineResult);
}

/** Pipeline settings for an adapted tool; name, schema and owner shim come from the definition. */
export interface PiToolOwnerAdapterOptions
  extends Omit<
    RepairPipelineConfig,
    "toolName" | "schema" | "ownerPrepareArguments"
  > {
  onOutcome?: (result: RepairPipelineResult) => void;
  /** "throw" (the default) raises `UnrepairableToolInputError`; "passthrough" returns the raw input. */
  unrepairable?: "throw" | "passthrough";
}

/** A tool-result content item; the `type` union keeps `"text"`/`"image"` literals in inline definitions. */
interface ToolContentLike {
  type: "text" | "image" | (string & {});
}

/**
 * What the adapter needs from pi's `ToolDefinition<TParams, TDetails, TState>`; every pi tool
 * definition satisfies it. The optional members are there for definitions written inline as the
 * argument: callbacks get contextual parameter types and literal-typed fields stay literal, so
 * the returned copy is still assignable to pi's `ToolDefinition`.
 */
interface AdaptableToolDefinition {
  name: string;
  parameters: TSchema;
  renderShell?: "default" | "self" | (string & {});
  executionMode?: "sequential" | "parallel" | (string & {});
  prepareArguments?(args: unknown): unknown;
  execute?(
    toolCallId: string,
    params: any,
    ...rest: any[]
  ): PromiseLike<{ content: readonly ToolContentLike[] }>;
  renderCall?(args: any, ...rest: any[]): unknown;
  renderResult?(result: any, ...rest: any[]): unknown;
}

/**
 * A shallow copy of `definition` whose `prepareArguments` runs the repair pipeline (chaining the
 * definition's own `prepareArguments` first). Only the definition passed in is wrapped, and the
 * copy has the definition's own type (`NoInfer` keeps an outer `registerTool(...)` call from
 * widening an inline definition's types).
 */
export declare function adaptToolDefinition<T extends AdaptableToolDefinition>(
  definition: T,
  options?: PiToolOwnerAdapterOptions,
): NoInfer<T>;

export {};

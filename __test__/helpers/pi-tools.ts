// pi 0.80.6 built-in tool parameter schemas (spec §12), built with the real
// TypeBox `Type.*` builders so they carry TypeBox's own `~kind`/`~optional`
// markers, plus a behavioural stand-in for pi's own edit `prepareArguments`.
import { Type } from "typebox";

export const PI_BUILTIN_TOOL_NAMES = ["read", "bash", "edit", "write", "grep", "find", "ls"] as const;
export type PiBuiltinToolName = (typeof PI_BUILTIN_TOOL_NAMES)[number];

export function piBuiltinSchemas() {
  return {
    read: Type.Object({
      path: Type.String({ description: "Path to the file to read (relative or absolute)" }),
      offset: Type.Optional(Type.Number({ description: "Line number to start reading from (1-indexed)" })),
      limit: Type.Optional(Type.Number({ description: "Maximum number of lines to read" })),
    }),
    bash: Type.Object({
      command: Type.String({ description: "Bash command to execute" }),
      timeout: Type.Optional(Type.Number({ description: "Timeout in seconds (optional, no default timeout)" })),
    }),
    edit: Type.Object({
      path: Type.String({ description: "Path to the file to edit (relative or absolute)" }),
      edits: Type.Array(
        Type.Object({
          oldText: Type.String({ description: "Exact text for one targeted replacement." }),
          newText: Type.String({ description: "Replacement text for this targeted edit." }),
        }),
        { description: "One or more targeted replacements." },
      ),
    }),
    write: Type.Object({
      path: Type.String({ description: "Path to the file to write (relative or absolute)" }),
      content: Type.String({ description: "Content to write to the file" }),
    }),
    grep: Type.Object({
      pattern: Type.String({ description: "Search pattern (regex or literal string)" }),
      path: Type.Optional(Type.String({ description: "Directory or file to search" })),
      glob: Type.Optional(Type.String({ description: "Filter files by glob pattern" })),
      ignoreCase: Type.Optional(Type.Boolean({ description: "Case-insensitive search" })),
      literal: Type.Optional(Type.Boolean({ description: "Treat pattern as literal string" })),
      context: Type.Optional(Type.Number({ description: "Lines of context around each match" })),
      limit: Type.Optional(Type.Number({ description: "Maximum number of matches to return" })),
    }),
    find: Type.Object({
      pattern: Type.String({ description: "Glob pattern to match files" }),
      path: Type.Optional(Type.String({ description: "Directory to search in" })),
      limit: Type.Optional(Type.Number({ description: "Maximum number of results" })),
    }),
    ls: Type.Object({
      path: Type.Optional(Type.String({ description: "Directory to list" })),
      limit: Type.Optional(Type.Number({ description: "Maximum number of entries to return" })),
    }),
  } as const;
}

/** Fresh schema for one built-in tool (TypeBox schema objects are cheap). */
export function piBuiltinSchema(tool: string) {
  const schemas = piBuiltinSchemas() as Record<string, ReturnType<typeof Type.Object>>;
  const schema = schemas[tool];
  if (!schema) throw new Error(`not a pi built-in tool: ${tool}`);
  return schema;
}

/**
 * Behaviour of pi's edit `prepareArguments` compatibility shim (0.80.6):
 * - non-objects are returned as they are;
 * - a string `edits` holding a JSON array is parsed in place (other strings,
 *   invalid JSON and non-array JSON are left alone);
 * - when both `oldText` and `newText` are strings, a NEW object is returned:
 *   every other key in its original order, then `edits` = existing array
 *   edits (copied) + `{oldText, newText}` — an existing `edits` key keeps
 *   its position;
 * - otherwise the (possibly mutated) argument object itself is returned.
 * It never records a change.
 */
export function piEditPrepareArguments(input: unknown): unknown {
  if (!input || typeof input !== "object") return input;
  const args = input as Record<string, unknown>;
  if (typeof args.edits === "string") {
    let parsed: unknown;
    try {
      parsed = JSON.parse(args.edits);
    } catch {
      parsed = undefined;
    }
    if (Array.isArray(parsed)) args.edits = parsed;
  }
  if (typeof args.oldText !== "string" || typeof args.newText !== "string") return args;
  const edits: unknown[] = Array.isArray(args.edits) ? args.edits.slice() : [];
  edits.push({ oldText: args.oldText, newText: args.newText });
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(args)) {
    if (key === "oldText" || key === "newText") continue;
    // spread semantics: own data properties, `__proto__` included
    Object.defineProperty(out, key, { value: args[key], enumerable: true, writable: true, configurable: true });
  }
  Object.defineProperty(out, "edits", { value: edits, enumerable: true, writable: true, configurable: true });
  return out;
}

/** Owner shims by tool for `ownerShim: "pi"` (only edit has one in pi 0.80.6's table). */
export const PI_OWNER_SHIMS: Record<string, (input: unknown) => unknown> = {
  edit: piEditPrepareArguments,
};

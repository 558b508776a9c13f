// Spec §1.2 and §9: adaptToolDefinition and UnrepairableToolInputError.
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { BUILTIN_TOOL_REPAIRS } from "../lib/core.js";
import { adaptToolDefinition, UnrepairableToolInputError } from "../lib/pi.js";
import { piBuiltinSchema, piEditPrepareArguments } from "./helpers/pi-tools.ts";

// biome-ignore lint/suspicious/noExplicitAny: tool definitions are exercised structurally
type Any = any;

function definition(extra: Record<string, unknown> = {}): Any {
  return {
    name: "owned",
    label: "Owned",
    description: "test tool",
    parameters: Type.Object({ path: Type.String() }),
    async execute() {
      return { content: [{ type: "text", text: "ok" }], details: undefined };
    },
    ...extra,
  };
}

describe("adaptToolDefinition", () => {
  it("returns a shallow copy with only prepareArguments replaced; the original is untouched", () => {
    const owner = (v: unknown) => v;
    const original = definition({ prepareArguments: owner, renderCall: () => "x" });
    const adapted = adaptToolDefinition(original) as Any;
    expect(adapted).not.toBe(original);
    expect(Object.keys(adapted).sort()).toEqual(Object.keys(original).sort());
    for (const key of Object.keys(original)) {
      if (key !== "prepareArguments") expect(adapted[key]).toBe(original[key]);
    }
    expect(typeof adapted.prepareArguments).toBe("function");
    expect(adapted.prepareArguments).not.toBe(owner);
    expect(original.prepareArguments).toBe(owner);
  });

  it("adds prepareArguments to a definition that had none", () => {
    const adapted = adaptToolDefinition(definition()) as Any;
    const input = { path: "/x" };
    expect(adapted.prepareArguments(input)).toBe(input);
  });

  it("valid input: returns result.args (the caller's own object)", () => {
    const adapted = adaptToolDefinition(definition()) as Any;
    const input = { path: "/x", extra: 1 };
    expect(adapted.prepareArguments(input)).toBe(input);
  });

  it("repaired input: returns the repaired args", () => {
    const adapted = adaptToolDefinition(definition()) as Any;
    expect(adapted.prepareArguments('{"path":"/x"}')).toEqual({ path: "/x" });
    expect(adapted.prepareArguments([{ path: "/y" }])).toEqual({ path: "/y" });
  });

  it("chains the owner's own shim first, inside the pipeline", () => {
    const seen: unknown[] = [];
    const outcomes: string[] = [];
    const adapted = adaptToolDefinition(
      definition({
        prepareArguments(input: unknown) {
          seen.push(input);
          return typeof input === "string" ? { path: input } : input;
        },
      }),
      { onOutcome: (r: Any) => outcomes.push(r.outcome) },
    ) as Any;
    expect(adapted.prepareArguments("/x")).toEqual({ path: "/x" });
    expect(seen).toEqual(["/x"]);
    expect(outcomes).toEqual(["valid"]);
  });

  it("the owner shim sees a decoded envelope, and its throw is swallowed", () => {
    const seen: unknown[] = [];
    const adapted = adaptToolDefinition(
      definition({
        prepareArguments(input: unknown) {
          seen.push(input);
          throw new Error("owner failed");
        },
      }),
    ) as Any;
    expect(adapted.prepareArguments('{"path":"/x"}')).toEqual({ path: "/x" });
    expect(seen).toEqual([{ path: "/x" }]);
  });

  it("unrepairable (default): throws UnrepairableToolInputError carrying the result", () => {
    const adapted = adaptToolDefinition(definition()) as Any;
    const input = 42;
    let error: Any;
    try {
      adapted.prepareArguments(input);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UnrepairableToolInputError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("UnrepairableToolInputError");
    expect(error.message).toBe(
      'Invalid input for tool "owned". Fix these issues and retry:\n  • (root): must be object\nReceived: 42',
    );
    expect(error.result.outcome).toBe("unrepairable");
    expect(error.result.args).toBe(input);
    expect(error.result.retryMessage).toBe(error.message);
    expect(error.result.issueSummary).toBe("(root)|type|object");
    expect(error.result.fingerprint).toMatch(/^[0-9a-f]{8}$/);
  });

  it('unrepairable with unrepairable: "throw" also throws', () => {
    const adapted = adaptToolDefinition(definition(), { unrepairable: "throw" }) as Any;
    expect(() => adapted.prepareArguments({ nope: 1 })).toThrow(UnrepairableToolInputError);
  });

  it('unrepairable with unrepairable: "passthrough" returns the raw input reference', () => {
    const outcomes: string[] = [];
    const adapted = adaptToolDefinition(definition(), {
      unrepairable: "passthrough",
      onOutcome: (r: Any) => outcomes.push(r.outcome),
    }) as Any;
    const input = { nope: 1 };
    expect(adapted.prepareArguments(input)).toBe(input);
    expect(outcomes).toEqual(["unrepairable"]);
  });

  it("onOutcome receives each result exactly once; its throw is swallowed", () => {
    const results: Any[] = [];
    const adapted = adaptToolDefinition(definition(), {
      onOutcome(r: Any) {
        results.push(r);
        throw new Error("reporting failed");
      },
    }) as Any;
    expect(adapted.prepareArguments({ path: "a" })).toEqual({ path: "a" });
    expect(adapted.prepareArguments('{"path":"b"}')).toEqual({ path: "b" });
    expect(results.map((r) => r.outcome)).toEqual(["valid", "repaired"]);
    expect(results[1].changes[0].note).toBe(
      'Parsed your JSON-stringified arguments for tool "owned". Send the arguments as a JSON object next time, not a string.',
    );
  });

  it("passes pipeline options through (policy, preprocessors, legacyConfig, modelId, limits, onObservation)", () => {
    const observations: Any[] = [];
    const adapted = adaptToolDefinition(definition(), {
      policy: "conservative",
      modelId: "glm-4.6",
      preprocessors: [
        { kind: "alias", selector: "/path", aliases: ["file_path"] },
        { kind: "anchor-bleed", selector: "/path", modelFamilies: [/glm/i] },
      ],
      legacyConfig: { rootString: { field: "path" } },
      limits: { maxDecodeAttempts: 0 },
      onObservation: (o: Any) => observations.push(o),
    } as Any) as Any;
    expect(adapted.prepareArguments({ file_path: "^a$" })).toEqual({ path: "^a$" });
    expect(observations.map((o) => o.ruleId)).toEqual(["stripAnchorBleed"]);
    expect(adapted.prepareArguments("plain")).toEqual({ path: "plain" });
    // decoding disabled by limits: the JSON text is parsed by schema repair instead
    const results: Any[] = [];
    const adapted2 = adaptToolDefinition(definition(), {
      limits: { maxDecodeAttempts: 0 },
      onOutcome: (r: Any) => results.push(r),
    }) as Any;
    adapted2.prepareArguments('{"path":"x"}');
    expect(results[0].changes.map((c: Any) => c.ruleId)).toEqual(["parseJsonStringifiedRootObject"]);
  });

  it("the definition's name, parameters and prepareArguments win over same-named option keys", () => {
    const results: Any[] = [];
    let optionShimCalled = false;
    const adapted = adaptToolDefinition(definition(), {
      toolName: "impostor",
      schema: Type.Object({ other: Type.String() }),
      ownerPrepareArguments: () => {
        optionShimCalled = true;
        return {};
      },
      onOutcome: (r: Any) => results.push(r),
    } as Any) as Any;
    expect(adapted.prepareArguments('{"path":"x"}')).toEqual({ path: "x" });
    expect(optionShimCalled).toBe(false);
    expect(results[0].changes[0].note).toContain('tool "owned"');
  });

  it("works with pi's built-in edit schema and shim plus the edit repair table", () => {
    const table = (BUILTIN_TOOL_REPAIRS as Record<string, Any>).edit;
    const adapted = adaptToolDefinition(
      definition({ name: "edit", parameters: piBuiltinSchema("edit"), prepareArguments: piEditPrepareArguments }),
      { preprocessors: table.preprocessors, legacyConfig: table.legacyConfig },
    ) as Any;
    expect(adapted.prepareArguments({ file_path: "/x", old_string: "a", new_string: "b" })).toEqual({
      path: "/x",
      edits: [{ oldText: "a", newText: "b" }],
    });
    expect(adapted.prepareArguments({ path: "/x", oldText: "a", newText: "b" })).toEqual({
      path: "/x",
      edits: [{ oldText: "a", newText: "b" }],
    });
    expect(() => adapted.prepareArguments({ path: "/x" })).toThrow(UnrepairableToolInputError);
  });

  it("each adapted definition is independent", () => {
    const base = definition();
    const a = adaptToolDefinition(base, { unrepairable: "passthrough" }) as Any;
    const b = adaptToolDefinition(base) as Any;
    expect(a.prepareArguments(1)).toBe(1);
    expect(() => b.prepareArguments(1)).toThrow(UnrepairableToolInputError);
  });
});

describe("UnrepairableToolInputError", () => {
  it("uses result.retryMessage as the message", () => {
    const result = { outcome: "unrepairable", args: 1, policy: "adaptive", changes: [], observations: [], retryMessage: "fix it" };
    const error = new UnrepairableToolInputError(result as Any);
    expect(error.message).toBe("fix it");
    expect(error.name).toBe("UnrepairableToolInputError");
    expect(error.result).toBe(result);
    expect(error).toBeInstanceOf(Error);
    expect(typeof error.stack).toBe("string");
  });

  it("falls back to a fixed message when retryMessage is undefined", () => {
    const result = { outcome: "unrepairable", args: 1, policy: "adaptive", changes: [], observations: [] };
    const error = new UnrepairableToolInputError(result as Any);
    expect(error.message).toBe("Tool input could not be repaired safely.");
  });

  it("an empty retryMessage is kept (only undefined/null fall back)", () => {
    const error = new UnrepairableToolInputError({ retryMessage: "" } as Any);
    expect(error.message).toBe("");
  });
});

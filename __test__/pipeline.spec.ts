// Spec §3 (runRepairPipeline stage order and result rules), §13 purity
// contracts, §14 identity / key order / prototype safety / undefined handling.
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { BUILTIN_TOOL_REPAIRS, runRepairPipeline, stableSerialize } from "../lib/core.js";
import { piBuiltinSchema } from "./helpers/pi-tools.ts";

// biome-ignore lint/suspicious/noExplicitAny: exercising runtime shapes
type Any = any;

const readSchema = () => piBuiltinSchema("read");
const table = (tool: string) => (BUILTIN_TOOL_REPAIRS as Record<string, Any>)[tool];

function pipe(input: unknown, config: Record<string, unknown> = {}): Any {
  return runRepairPipeline({ input, config: { toolName: "read", schema: readSchema(), ...config } as Any });
}

const rules = (result: Any) => result.changes.map((c: { ruleId: string }) => c.ruleId);
const DECODE_NOTE = (tool: string) =>
  `Parsed your JSON-stringified arguments for tool "${tool}". Send the arguments as a JSON object next time, not a string.`;

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
}

describe("stage order", () => {
  it("envelope → owner shim → preprocess → schema repair → final validation", () => {
    const trace: string[] = [];
    const schema = Type.Object({ path: Type.String(), n: Type.Optional(Type.Number()), owner: Type.Boolean() });
    const result = pipe('{"file_path":"a","n":null}', {
      toolName: "tool",
      schema,
      ownerPrepareArguments(value: Any) {
        trace.push(`owner:${JSON.stringify(value)}`);
        return { ...value, owner: true };
      },
      preprocessors: [
        { kind: "alias", selector: "/path", aliases: ["file_path"] },
        {
          kind: "structural",
          selector: "",
          ruleId: "trace",
          apply(value: Any) {
            trace.push(`pre:${JSON.stringify(value)}`);
            return undefined;
          },
        },
      ],
      legacyConfig: {
        structural: [
          {
            name: "traceLegacy",
            apply(args: Any) {
              trace.push(`legacy:${JSON.stringify(args)}`);
              return false;
            },
          },
        ],
      },
    });
    expect(trace).toEqual([
      'owner:{"file_path":"a","n":null}',
      'pre:{"n":null,"owner":true,"path":"a"}',
      'legacy:{"n":null,"owner":true,"path":"a"}',
    ]);
    expect(rules(result)).toEqual(["envelope.decode-json", "preprocess.exact-alias", "dropNullOrUndefinedField"]);
    expect(result.changes.map((c: Any) => c.stage)).toEqual(["envelope", "preprocess", "schema-repair"]);
    expect(result.args).toEqual({ owner: true, path: "a" });
  });

  it("the envelope's decode note is replaced by the pipeline wording naming the tool", () => {
    const result = pipe('{"path":"a"}', { toolName: "reader" });
    expect(result.changes).toEqual([{ ruleId: "envelope.decode-json", stage: "envelope", note: DECODE_NOTE("reader") }]);
  });

  it("truncated candidates are tried before the primary value, only when the policy allows it", () => {
    const adaptive = pipe('{"path":"a', { policy: "adaptive" });
    expect(adaptive.outcome).toBe("repaired");
    expect(rules(adaptive)).toEqual(["envelope.complete-truncated-object"]);
    const conservative = pipe('{"path":"a', { policy: "conservative" });
    expect(conservative.outcome).toBe("unrepairable");
  });

  it("a candidate that fails the schema is rejected and the primary result stands", () => {
    const result = pipe('{"wrong":true', { policy: "adaptive" });
    expect(result.outcome).toBe("unrepairable");
    expect(result.issueSummary).toBe("(root)|type|object");
  });

  it("a candidate gets exactly one change, before any later-stage changes", () => {
    const result = pipe('{"file_path":"a","offset":null', {
      preprocessors: table("read").preprocessors,
      legacyConfig: table("read").legacyConfig,
    });
    expect(result.outcome).toBe("repaired");
    expect(rules(result)).toEqual([
      "envelope.complete-truncated-object",
      "preprocess.exact-alias",
      "dropNullOrUndefinedField",
    ]);
    expect(result.args).toEqual({ path: "a" });
  });
});

describe("args and outcome rules", () => {
  it("strictly valid input returns the caller's exact reference", () => {
    const input = { path: "/data/a" };
    const result = pipe(input);
    expect(result).toEqual({
      outcome: "valid",
      args: input,
      policy: "adaptive",
      changes: [],
      observations: [],
      issueSummary: undefined,
      fingerprint: undefined,
    });
    expect(result.args).toBe(input);
    expect("retryMessage" in result).toBe(false);
  });

  it("Convert-only validity returns the unconverted caller object", () => {
    const input = { path: "a", offset: "5" };
    const result = pipe(input);
    expect(result.outcome).toBe("valid");
    expect(result.args).toBe(input);
  });

  it("any change ⇒ post-Convert args", () => {
    expect(pipe('{"path":"a.txt","limit":"5"}').args).toEqual({ path: "a.txt", limit: 5 });
    const schema = Type.Object({ n: Type.Integer() });
    expect(pipe('{"n":"3.7"}', { schema }).args).toEqual({ n: 3 });
  });

  it("an owner shim that reshapes input yields valid with no changes but new args", () => {
    const input = "a.txt";
    const result = pipe(input, { ownerPrepareArguments: (v: unknown) => (typeof v === "string" ? { path: v } : v) });
    expect(result.outcome).toBe("valid");
    expect(result.changes).toEqual([]);
    expect(result.args).toEqual({ path: "a.txt" });
  });

  it("an owner shim returning an equal copy still yields the caller's reference", () => {
    const input = { path: "a" };
    const result = pipe(input, { ownerPrepareArguments: (v: Any) => ({ ...v }) });
    expect(result.outcome).toBe("valid");
    expect(result.args).toBe(input);
  });

  it("unrepairable returns the caller's original input and changes [] even after earlier stages changed it", () => {
    const input = { file_path: "a", offset: "abc" };
    const result = pipe(input, { preprocessors: table("read").preprocessors });
    expect(result.outcome).toBe("unrepairable");
    expect(result.args).toBe(input);
    expect(result.changes).toEqual([]);
    const decoded = '{"file_path":"a","offset":"abc"}';
    const r2 = pipe(decoded, { preprocessors: table("read").preprocessors });
    expect(r2.args).toBe(decoded);
    expect(r2.changes).toEqual([]);
  });

  it("unrepairable results carry every key, in the documented order", () => {
    const result = pipe(42);
    expect(Object.keys(result)).toEqual([
      "outcome",
      "args",
      "policy",
      "changes",
      "observations",
      "issueSummary",
      "fingerprint",
      "retryMessage",
    ]);
  });

  it("fails closed without turning input into {}", () => {
    for (const input of [[], [{ path: "/a" }, { path: "/b" }], 42, "", null]) {
      const result = pipe(input);
      expect(result.outcome).toBe("unrepairable");
      expect(result.args).toBe(input);
    }
  });

  it("args key order follows JS insertion rules (renamed keys last, integer-like keys first)", () => {
    const result = pipe({ z: 1, file_path: "a", "10": "x", "2": "y" }, { preprocessors: table("read").preprocessors });
    expect(JSON.stringify(result.args)).toBe('{"2":"y","10":"x","z":1,"path":"a"}');
  });
});

describe("owner shim isolation", () => {
  it("a throwing shim is swallowed; the value is left as before", () => {
    const input = { path: "a" };
    const result = pipe(input, {
      ownerPrepareArguments() {
        throw new Error("shim failed");
      },
    });
    expect(result.outcome).toBe("valid");
    expect(result.args).toBe(input);
  });

  it("a shim that mutates and then throws keeps its mutations (on the pipeline's copy)", () => {
    const input = { p: "x" };
    const result = pipe(input, {
      ownerPrepareArguments(value: Any) {
        value.path = "fixed";
        throw new Error("after mutation");
      },
    });
    expect(result.outcome).toBe("valid");
    expect(result.changes).toEqual([]);
    expect(result.args).toEqual({ p: "x", path: "fixed" });
    expect(result.args).not.toBe(input);
    expect(input).toEqual({ p: "x" });
  });

  it("the shim receives a deep copy of an object input, never the caller's object", () => {
    const input = { path: "a", nested: { k: 1 } };
    let seen: Any;
    pipe(input, {
      ownerPrepareArguments(value: Any) {
        seen = value;
        value.nested.k = 2;
        return value;
      },
    });
    expect(seen).not.toBe(input);
    expect(input.nested.k).toBe(1);
  });

  it("the shim receives decoded envelopes and each truncated candidate", () => {
    const seen: unknown[] = [];
    pipe('{"path":"a', { ownerPrepareArguments: (v: unknown) => (seen.push(v), v) });
    expect(seen).toEqual([{ path: "a" }]);
    const seen2: unknown[] = [];
    pipe('{"wrong":"a', { ownerPrepareArguments: (v: unknown) => (seen2.push(v), v) });
    expect(seen2).toEqual([{ wrong: "a" }, '{"wrong":"a']);
  });

  it("the shim's reshaping produces no change entry but is validated", () => {
    const result = pipe({ p: 1 }, { ownerPrepareArguments: () => ({ path: 5 }) });
    expect(result.outcome).toBe("valid"); // Convert turns 5 into "5" — still no change
    expect(result.args).toEqual({ path: 5 });
  });
});

describe("callbacks", () => {
  it("onOutcome is called exactly once with the returned result; its throw is swallowed", () => {
    const seen: unknown[] = [];
    const result = pipe('{"path":"a', {
      onOutcome(r: unknown) {
        seen.push(r);
        throw new Error("reporting failed");
      },
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBe(result);
    expect(result.outcome).toBe("repaired");
  });

  it("onOutcome fires once for valid and unrepairable outcomes too", () => {
    for (const input of [{ path: "a" }, 42]) {
      let calls = 0;
      pipe(input, { onOutcome: () => void calls++ });
      expect(calls).toBe(1);
    }
  });

  it("onObservation is called once per observation and its throws are swallowed", () => {
    const seen: unknown[] = [];
    const result = pipe(
      { path: "^a$" },
      {
        policy: "conservative",
        modelId: "glm-4.6",
        preprocessors: table("read").preprocessors,
        onObservation(o: unknown) {
          seen.push(o);
          throw new Error("telemetry failed");
        },
      },
    );
    const observation = { channel: "tool", stage: "valid-value", ruleId: "stripAnchorBleed", toolName: "read", outcome: "detected" };
    expect(result.outcome).toBe("valid");
    expect(result.observations).toEqual([observation]);
    expect(seen).toEqual([observation]);
  });

  it("observations of a rejected truncated candidate are reported but not returned", () => {
    const seen: unknown[] = [];
    const schema = Type.Object({ path: Type.String(), n: Type.Optional(Type.Number()) });
    const result = pipe('{"path":"^a$","n":"x"', {
      schema,
      policy: "adaptive",
      policyOverrides: { allowValidValueTransforms: false },
      modelId: "glm",
      preprocessors: [{ kind: "anchor-bleed", selector: "/path", modelFamilies: [/glm/i] }],
      onObservation: (o: unknown) => void seen.push(o),
    });
    expect(result.outcome).toBe("unrepairable");
    expect(result.observations).toEqual([]);
    expect(seen).toHaveLength(1);
    expect((seen[0] as Any).ruleId).toBe("stripAnchorBleed");
  });

  it("an accepted candidate's observations are returned and reported once", () => {
    const seen: unknown[] = [];
    const result = pipe('{"path":"^a$"', {
      policy: "adaptive",
      policyOverrides: { allowValidValueTransforms: false },
      modelId: "glm",
      preprocessors: [{ kind: "anchor-bleed", selector: "/path", modelFamilies: [/glm/i] }],
      onObservation: (o: unknown) => void seen.push(o),
    });
    expect(result.outcome).toBe("repaired");
    expect(result.args).toEqual({ path: "^a$" });
    expect(result.observations).toHaveLength(1);
    expect(seen).toHaveLength(1);
  });
});

describe("exceptions that propagate", () => {
  it("a throwing structural preprocessor propagates out of runRepairPipeline", () => {
    const boom = new Error("structural boom");
    expect(() =>
      pipe(
        { path: "a" },
        {
          preprocessors: [
            {
              kind: "structural",
              selector: "",
              ruleId: "r",
              apply() {
                throw boom;
              },
            },
          ],
        },
      ),
    ).toThrow(boom);
  });

  it("a throwing legacy structural repair propagates", () => {
    const boom = new Error("legacy boom");
    expect(() =>
      pipe(
        { nope: 1 },
        {
          legacyConfig: {
            structural: [
              {
                name: "x",
                apply() {
                  throw boom;
                },
              },
            ],
          },
        },
      ),
    ).toThrow(boom);
  });

  it("uncloneable input (a function inside) makes structuredClone throw, which propagates", () => {
    expect(() => pipe({ path: "a", fn: () => 1 })).toThrow();
  });
});

describe("purity (§13)", () => {
  it("never mutates the caller's input (deep-frozen inputs of every shape)", () => {
    const inputs = [
      { file_path: "a", offset: null, limit: "5" },
      { path: "[a.md](http://a.md)", extra: { deep: [1, { x: null }] } },
      [{ path: "a" }],
      { path: "^a$", "<arg_key>k</arg_key>": "<arg_value>v</arg_value>" },
    ];
    for (const raw of inputs) {
      const snapshot = structuredClone(raw);
      const input = deepFreeze(raw);
      const result = pipe(input, {
        modelId: "glm-4.6",
        preprocessors: table("read").preprocessors,
        legacyConfig: table("read").legacyConfig,
      });
      expect(input).toEqual(snapshot);
      expect(result.outcome).not.toBe("unrepairable");
    }
  });

  it("is deterministic and idempotent", () => {
    const config = { preprocessors: table("read").preprocessors, legacyConfig: table("read").legacyConfig };
    const input = { file_path: "/data/a", offset: null };
    const first = pipe(input, config);
    const second = pipe(input, config);
    expect(first).toEqual(second);
    expect(first.outcome).toBe("repaired");
    const again = pipe(first.args, config);
    expect(again.outcome).toBe("valid");
    expect(again.args).toBe(first.args);
  });

  it("result objects are fresh per call (no shared changes arrays)", () => {
    const a = pipe('{"path":"a"}');
    const b = pipe('{"path":"a"}');
    expect(a.changes).not.toBe(b.changes);
    expect(a.changes[0]).not.toBe(b.changes[0]);
  });
});

describe("undefined vs absent (§14.5)", () => {
  it("an optional key holding undefined is valid and returned by reference", () => {
    const input = { path: "a", offset: undefined };
    const result = pipe(input);
    expect(result.outcome).toBe("valid");
    expect(result.args).toBe(input);
  });

  it("a required key holding undefined is present-but-invalid; Received omits it", () => {
    const result = pipe({ path: undefined });
    expect(result.outcome).toBe("unrepairable");
    expect(result.issueSummary).toBe("/path|type|string");
    expect(result.retryMessage.endsWith("Received: {}")).toBe(true);
  });

  it("a required key holding undefined is replaced from an alias in place", () => {
    const result = pipe({ path: undefined, other: 1, file_path: "a" }, { legacyConfig: table("read").legacyConfig });
    expect(result.outcome).toBe("repaired");
    expect(JSON.stringify(result.args)).toBe('{"path":"a","other":1}');
  });

  it("stableSerialize treats {a: undefined} like {} (the valid-equality check)", () => {
    expect(stableSerialize({ a: undefined })).toBe(stableSerialize({}));
    expect(stableSerialize({ b: 1, a: [2, { d: 1, c: 0 }] })).toBe('{"a":[2,{"c":0,"d":1}],"b":1}');
    expect(stableSerialize(undefined)).toBe("undefined");
    const cyclic: Any = {};
    cyclic.self = cyclic;
    expect(stableSerialize(cyclic)).toBe("[object Object]");
  });
});

describe("prototype safety (§14.3)", () => {
  it('a parsed "__proto__" key stays own data and does not pollute', () => {
    const input = JSON.parse('{"path":"/x","__proto__":{"polluted":true}}');
    const result = pipe(input);
    expect(result.outcome).toBe("valid");
    expect(result.args).toBe(input);
    expect(({} as Any).polluted).toBeUndefined();
  });

  it('a decoded "__proto__" key survives repair as an own key, in place', () => {
    const result = pipe('{"__proto__":{"polluted":true},"file_path":"a"}', {
      preprocessors: table("read").preprocessors,
    });
    expect(result.outcome).toBe("repaired");
    expect(Object.getPrototypeOf(result.args)).toBe(Object.prototype);
    expect(Object.keys(result.args)).toEqual(["__proto__", "path"]);
    expect(Object.getOwnPropertyDescriptor(result.args, "__proto__")?.value).toEqual({ polluted: true });
    expect(result.args.polluted).toBeUndefined();
    expect(({} as Any).polluted).toBeUndefined();
  });

  it('"__proto__" in the Received text of a retry message', () => {
    const result = pipe('{"__proto__":{"x":1}}');
    expect(result.outcome).toBe("unrepairable");
    expect(result.retryMessage.endsWith('Received: {"__proto__":{"x":1}}')).toBe(true);
    expect(({} as Any).x).toBeUndefined();
  });
});

describe("limits through the pipeline", () => {
  it("a limited envelope skips decoding but schema repair can still parse a root object", () => {
    const input = '{"path":"a"}';
    const result = pipe(input, { limits: { maxInputBytes: 4 } });
    expect(result.outcome).toBe("repaired");
    expect(result.changes).toEqual([
      { ruleId: "parseJsonStringifiedRootObject", stage: "schema-repair", note: DECODE_NOTE("read") },
    ]);
  });

  it("an owner shim receives the caller's own reference when the envelope is limited", () => {
    const input = { path: "a", big: "x".repeat(64) };
    let seen: unknown;
    pipe(input, { limits: { maxInputBytes: 8 }, ownerPrepareArguments: (v: unknown) => ((seen = v), v) });
    expect(seen).toBe(input);
  });
});

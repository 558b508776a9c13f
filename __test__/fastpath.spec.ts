// The JS fast path of runRepairPipeline (lib/fastpath.js): a call proven valid without crossing
// must get exactly the native pipeline's result. A config with explicit default limits is
// semantically the same config but always takes the native path, so every result is compared
// against that twin on generated inputs; the plan builders are pinned on what they accept.
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { BUILTIN_TOOL_REPAIRS, DEFAULT_ENVELOPE_LIMITS, foldFlatEditFields, runRepairPipeline } from "../lib/core.js";
import { legacyProof, plainDataBytes, preprocessorProof, schemaChecker } from "../lib/fastpath.js";
import { piBuiltinSchema } from "./helpers/pi-tools.ts";

// biome-ignore lint/suspicious/noExplicitAny: exercising runtime shapes
type Any = any;

function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 0x1_0000_0000;
  };
}

const TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls"] as const;
const MODELS = [undefined, "qwen3-coder", "glm-4.6", "kimi-k2-instruct", "minimax-m2"];
const STRINGS = [
  "src/a.ts",
  "",
  "^src/a.ts$",
  "src$",
  "[a.ts](http://a.ts)",
  "<arg_value>a.ts</arg_value>",
  "a.ts</arg_key>",
  "    return x\n",
  "ünïcödé — “q”",
  "😀",
  "\uD800",
  "x".repeat(3000),
];

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)];
}

/** A plausible call for a tool, then a few random perturbations. */
function generate(r: () => number, tool: string): Any {
  const s = () => pick(r, STRINGS);
  const base: Record<string, Any> = {
    read: { path: s() },
    bash: { command: s() },
    edit: { path: s(), edits: [{ oldText: s(), newText: s() }] },
    write: { path: s(), content: s() },
    grep: { pattern: s() },
    find: { pattern: s() },
    ls: {},
  }[tool];
  const v: Any = structuredClone(base);
  const steps = Math.floor(r() * 3);
  for (let i = 0; i < steps; i++) {
    switch (Math.floor(r() * 12)) {
      case 0: v.file_path = s(); break;
      case 1: v.path = null; break;
      case 2: v.limit = pick(r, [5, "5", -0, 1.5, null, true]); break;
      case 3: v.extra = { nested: [1, "two", { three: s() }] }; break;
      case 4: v.old_string = s(); v.new_string = s(); break;
      case 5: if (Array.isArray(v.edits)) v.edits = []; break;
      case 6: if (Array.isArray(v.edits)) v.edits.push({ old_text: s(), newText: s() }); break;
      case 7: v.offset = pick(r, [0, 10, "abc", Number.NaN, Number.POSITIVE_INFINITY]); break;
      case 8: v[`<arg_key>${pick(r, ["path", "command"])}</arg_key>`] = s(); break;
      case 9: v.cmd = s(); break;
      case 10: v.ignoreCase = pick(r, [true, "true", 1]); break;
      case 11: v.path = [s()]; break;
    }
  }
  return v;
}

function comparable(result: Any): string {
  return JSON.stringify({ ...result, args: result.args }, (_k, x) => (typeof x === "number" && Object.is(x, -0) ? "-0" : x));
}

describe("fast path: results equal the native pipeline's", () => {
  for (const seed of [1, 2, 3]) {
    it(`seed ${seed}: 700 generated calls across the seven tools and five model ids`, () => {
      const r = lcg(seed);
      let fastEligible = 0;
      for (let i = 0; i < 700; i++) {
        const tool = pick(r, TOOLS);
        const modelId = pick(r, MODELS);
        const policy = pick(r, ["conservative", "adaptive", "recover"] as const);
        const config: Any = { toolName: tool, schema: piBuiltinSchema(tool), modelId, policy, ...BUILTIN_TOOL_REPAIRS[tool] };
        const native: Any = { ...config, limits: { ...DEFAULT_ENVELOPE_LIMITS } };
        const input = generate(r, tool);
        const twin = structuredClone(input);
        const a = runRepairPipeline({ input, config });
        const b = runRepairPipeline({ input: twin, config: native });
        expect(comparable(a)).toBe(comparable(b));
        // Identity: a valid result hands back the caller's own object on both paths.
        expect(a.args === input).toBe(b.args === twin);
        if (a.outcome === "valid") fastEligible++;
      }
      expect(fastEligible).toBeGreaterThan(100);
    });
  }
});

describe("schemaChecker: plans only for simple shapes", () => {
  it("plans pi's built-in tool schemas and checks them", () => {
    for (const tool of TOOLS) expect(schemaChecker(piBuiltinSchema(tool))).not.toBeNull();
    const read = schemaChecker(piBuiltinSchema("read")) as Any;
    expect(read({ path: "a" })).toBe(true);
    expect(read({ path: "a", offset: 3, extra: "kept" })).toBe(true);
    expect(read({ offset: 3 })).toBe(false);
    expect(read({ path: 5 })).toBe(false);
    expect(read([])).toBe(false);
  });

  it("refuses constraint keywords, unions, refs and unknown kinds", () => {
    for (const schema of [
      Type.Object({ a: Type.String({ minLength: 1 }) }),
      Type.Object({ a: Type.String({ pattern: "^x" }) }),
      Type.Object({ a: Type.Union([Type.String(), Type.Number()]) }),
      Type.Object({ a: Type.Literal("x") }),
      Type.Object({ a: Type.Array(Type.String(), { minItems: 1 }) }),
      Type.Intersect([Type.Object({ a: Type.String() })]),
      Type.Record(Type.String(), Type.String()),
      { type: "object", properties: { a: { $ref: "#/$defs/x" } } },
      { type: ["string", "null"] },
      JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}}}'),
      { type: "object", additionalProperties: { type: "string" } },
    ]) {
      expect(schemaChecker(schema)).toBeNull();
    }
  });

  it("honours additionalProperties: false", () => {
    const closed = schemaChecker(Type.Object({ a: Type.String() }, { additionalProperties: false })) as Any;
    expect(closed({ a: "x" })).toBe(true);
    expect(closed({ a: "x", b: 1 })).toBe(false);
  });
});

describe("plainDataBytes: only plain data crosses the fast path", () => {
  it("bounds the JSON size from above", () => {
    for (const v of [{ a: "x" }, { a: "\u0001\u0002\"\\" }, { n: -1.2345678901234567e-308 }, { a: [true, null, "😀\uD800"] }]) {
      expect(plainDataBytes(v, 0)).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify(v)));
    }
  });

  it("refuses what JSON would not carry exactly", () => {
    const holes = [1, , 3]; // eslint-disable-line no-sparse-arrays
    for (const v of [
      { a: undefined },
      { a: Number.NaN },
      { a: -0 },
      { a: 1n },
      { a: () => 1 },
      { a: new Date(0) },
      { a: holes },
      JSON.parse('{"__proto__": 1}'),
      Object.create({ inherited: 1 }),
      { toJSON: () => 1 },
    ]) {
      expect(plainDataBytes(v, 0)).toBe(-1);
    }
    let deep: Any = {};
    for (let i = 0; i < 40; i++) deep = { d: deep };
    expect(plainDataBytes(deep, 0)).toBe(-1);
  });
});

describe("preprocessorProof: no-op proofs per entry", () => {
  const edit = BUILTIN_TOOL_REPAIRS.edit.preprocessors;
  const proof = preprocessorProof(edit, (f: unknown) => f === foldFlatEditFields) as Any;

  it("proves a well-formed edit a no-op and refuses what some entry would change", () => {
    expect(proof).not.toBeNull();
    const ok = { path: "a.ts", edits: [{ oldText: "a", newText: "b" }] };
    expect(proof(ok, null)).toBe(true);
    expect(proof({ file_path: "a.ts", edits: ok.edits }, null)).toBe(false);
    expect(proof({ path: "[a.ts](http://a.ts)", edits: ok.edits }, null)).toBe(false);
    expect(proof({ path: "a.ts", edits: [] }, null)).toBe(false);
    expect(proof({ path: "a.ts", edits: [{ old_text: "a", newText: "b" }] }, null)).toBe(false);
  });

  it("heuristic entries matter only where the model family matches", () => {
    const read = BUILTIN_TOOL_REPAIRS.read.preprocessors;
    const p = preprocessorProof(read, () => false) as Any;
    const anchored = { path: "^src$" };
    const none = "0".repeat(read.length);
    const all = "1".repeat(read.length);
    expect(p(anchored, null)).toBe(true);
    expect(p(anchored, none)).toBe(true);
    expect(p(anchored, all)).toBe(false);
    expect(p({ path: "src" }, all)).toBe(true);
    expect(p({ path: "src" }, "2".repeat(read.length))).toBe(false);
  });

  it("a JS structural apply or a malformed entry has no proof", () => {
    expect(preprocessorProof([{ kind: "structural", selector: "", ruleId: "x", apply: () => undefined }], () => false)).toBeNull();
    expect(preprocessorProof([null], () => false)).toBeNull();
    expect(preprocessorProof([{ kind: "alias", selector: 5, aliases: [] }], () => false)).toBeNull();
  });

  it("legacy path fields: an auto-link needs the native unwrap", () => {
    const p = legacyProof({ pathFields: ["path"] });
    expect(p({ path: "a.ts" })).toBe(true);
    expect(p({ path: "[a.ts](https://a.ts)" })).toBe(false);
  });
});

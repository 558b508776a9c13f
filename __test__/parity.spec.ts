// Parity with @r3b1s/pi-repair-layer 0.4.3 on the differential fuzzer's minimal repros (issue #10).
// Every expected value below was observed on the reference (typebox 1.1.38); the suite never loads it.
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { BUILTIN_TOOL_REPAIRS, preprocessInput, runRepairPipeline } from "../lib/core.js";
import { recoverGrammarLeaks } from "../lib/grammar.js";
import { piBuiltinSchema } from "./helpers/pi-tools.ts";

// biome-ignore lint/suspicious/noExplicitAny: exercising runtime shapes
type Any = any;

const table = (tool: string) => (BUILTIN_TOOL_REPAIRS as Record<string, Any>)[tool];

function pipe(input: unknown, config: Record<string, unknown>): Any {
  return runRepairPipeline({ input, config: { toolName: "", ...config } as Any });
}

function builtin(tool: string, input: unknown, extra: Record<string, unknown> = {}): Any {
  const t = table(tool);
  return pipe(input, {
    toolName: tool,
    schema: piBuiltinSchema(tool),
    preprocessors: t.preprocessors,
    legacyConfig: t.legacyConfig,
    ...extra,
  });
}

function thrown(fn: () => unknown): { name: string; message: string } {
  try {
    fn();
  } catch (error) {
    return { name: (error as Error).name, message: (error as Error).message };
  }
  throw new Error("expected a throw");
}

/** An object literal with an own `__proto__` property among its keys (as JSON.parse makes). */
function withOwnProto(entries: [string, unknown][]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  return out;
}

describe("typebox-intersect-kind: Value.Convert converts inside Type.Intersect", () => {
  it("converts with the evaluated type: Intersect([Object({count: Literal(true)})]) accepts {count: 'true'}", () => {
    const input = { count: "true" };
    const r = pipe(input, { schema: Type.Intersect([Type.Object({ count: Type.Literal(true) })]) });
    expect(r.outcome).toBe("valid");
    expect(r.args).toBe(input);
    expect(r.changes).toEqual([]);
    expect(r.issueSummary).toBeUndefined();
  });

  it("merges the members' properties: shared keys narrow (Number & Integer converts as Integer)", () => {
    const schema = Type.Intersect([Type.Object({ n: Type.Number() }), Type.Object({ n: Type.Integer(), s: Type.String() })]);
    const input = { n: "5", s: "x" };
    const r = pipe(input, { schema });
    expect(r.outcome).toBe("valid");
    expect(r.args).toBe(input);
  });

  it("throws the reference's SyntaxError for a property name that is not a valid ^name$ expression", () => {
    const schema = Type.Intersect([Type.Object({ "a(": Type.Any() })]);
    expect(thrown(() => pipe({}, { schema }))).toEqual({
      name: "SyntaxError",
      message: "Invalid regular expression: /^a($/: Unterminated group",
    });
  });

  it("an Intersect whose Convert throws only in the final check is unrepairable (the reference catches there)", () => {
    const schema = Type.Object({
      query: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Intersect([Type.Object({ "a(": Type.Any() })])))),
    });
    const input = { query: [{ "": { "a(": 0 } }] };
    const r = pipe(input, {
      schema,
      preprocessors: [{ kind: "structural", selector: "/query", ruleId: "", apply: (v: unknown) => ({ value: v, note: 42 }) }],
    });
    expect(r.outcome).toBe("unrepairable");
    expect(r.args).toBe(input);
    expect(r.changes).toEqual([]);
  });
});

describe("own __proto__ data keys behave as in the reference, never touching a prototype", () => {
  const protoSchema = () => {
    const props: Record<string, unknown> = {};
    Object.defineProperty(props, "__proto__", { value: Type.String(), enumerable: true, writable: true, configurable: true });
    return Type.Object(props as Any, { additionalProperties: false });
  };

  it("a schema listing __proto__ accepts an own __proto__ key (additionalProperties: false)", () => {
    const input = JSON.parse('{"__proto__":"x"}');
    const r = pipe(input, { toolName: "t", schema: protoSchema() });
    expect(r.outcome).toBe("valid");
    expect(r.args).toBe(input);
  });

  it("Convert coerces an own __proto__ value; a missing one is a required error", () => {
    expect(pipe(JSON.parse('{"__proto__":5}'), { toolName: "t", schema: protoSchema() }).outcome).toBe("valid");
    const r = pipe({}, { toolName: "t", schema: protoSchema() });
    expect(r.outcome).toBe("unrepairable");
    expect(r.issueSummary).toBe("(root)|required|__proto__");
    expect(r.fingerprint).toBe("8be50d6b");
    expect(r.retryMessage).toBe(
      'Invalid input for tool "t". Fix these issues and retry:\n  • (root): must have required properties __proto__\nReceived: {}',
    );
  });

  it("an own __proto__ key in input rides along; repaired args keep it as an own data property", () => {
    const r = builtin("read", JSON.parse('{"__proto__":{"x":1},"file_path":"a"}'));
    expect(r.outcome).toBe("repaired");
    expect(r.changes.map((c: Any) => c.ruleId)).toEqual(["preprocess.exact-alias"]);
    expect(Object.getPrototypeOf(r.args)).toBe(Object.prototype);
    expect(Object.keys(r.args)).toEqual(["__proto__", "path"]);
    expect(Object.getOwnPropertyDescriptor(r.args, "__proto__")?.value).toEqual({ x: 1 });
    expect(r.args.x).toBeUndefined();
  });

  it("an Intersect member listing __proto__ converts as the reference's evaluated type (Never there)", () => {
    const props: Record<string, unknown> = {};
    Object.defineProperty(props, "__proto__", { value: Type.Number(), enumerable: true, writable: true, configurable: true });
    const schema = Type.Intersect([Type.Object(props as Any), Type.Object({ a: Type.Optional(Type.String()) })]);
    const r = pipe(JSON.parse('{"__proto__":"5"}'), { toolName: "t", schema });
    expect(r.outcome).toBe("unrepairable");
    expect(r.issueSummary).toBe("/__proto__|type|number");
    expect(r.fingerprint).toBe("1a625cf3");
    expect(r.retryMessage).toBe(
      'Invalid input for tool "t". Fix these issues and retry:\n  • /__proto__: must be number\nReceived: {"__proto__":"5"}',
    );
  });

  it("preprocessInput keeps an own __proto__ key through grammar-token cleanup", () => {
    const out: Any = preprocessInput({
      input: JSON.parse('{"__proto__":{"q":1},"<arg_key>k":"v"}'),
      toolName: "t",
      preprocessors: [{ kind: "grammar-tokens", selector: "", modelFamilies: [/glm/i] }] as Any,
      modelId: "glm",
      allowValidValueTransforms: true,
    });
    expect(Object.keys(out.value)).toEqual(["__proto__", "k"]);
    expect(out.value.q).toBeUndefined();
    expect(withOwnProto([["__proto__", { q: 1 }], ["k", "v"]])).toEqual(out.value);
  });
});

describe("errors where the reference throws (same class and message, only when it evaluates them)", () => {
  it("invalid `pattern`: nothing thrown when no string reaches it", () => {
    const schema = Type.Object({ $ref: Type.Optional(Type.String({ pattern: "[" })) });
    const input = {};
    const r = pipe(input, { schema });
    expect(r.outcome).toBe("valid");
    expect(r.args).toBe(input);
  });

  it("invalid `pattern` reached by a string: V8's SyntaxError", () => {
    expect(thrown(() => pipe("", { schema: Type.String({ pattern: "(?i)x" }) }))).toEqual({
      name: "SyntaxError",
      message: "Invalid regular expression: /(?i)x/u: Invalid group",
    });
  });

  it("property names Convert cannot compile: the exact SyntaxError (not a garbled one)", () => {
    expect(thrown(() => pipe({}, { schema: Type.Object({ "a(": Type.Any() }) }))).toEqual({
      name: "SyntaxError",
      message: "Invalid regular expression: /^a($/: Unterminated group",
    });
  });

  it("a null preprocessor entry", () => {
    expect(thrown(() => pipe(null, { schema: Type.Any(), preprocessors: [null] }))).toEqual({
      name: "TypeError",
      message: "Cannot read properties of null (reading 'kind')",
    });
  });

  it("a structural apply that returns a function: DataCloneError at the next structuredClone", () => {
    const apply = () => ({ value: () => 1, note: "fn" });
    const error = thrown(() =>
      pipe({}, { schema: Type.Any(), preprocessors: [{ kind: "structural", selector: "/x", ruleId: "r", apply }] }),
    );
    expect(error).toEqual({ name: "DataCloneError", message: "() => 1 could not be cloned." });
  });

  it("a BigInt where grammar-token cleanup serialises the value", () => {
    expect(thrown(() => builtin("ls", { "": 10n }, { modelId: "gLm" }))).toEqual({
      name: "TypeError",
      message: "Do not know how to serialize a BigInt",
    });
  });

  it("a boolean root schema is accepted", () => {
    const r = pipe(null, { schema: true });
    expect(r.outcome).toBe("valid");
    expect(r.args).toBe(null);
  });

  it("a structural note that is not a string is kept as given", () => {
    const r = pipe({}, {
      schema: Type.Any(),
      preprocessors: [{ kind: "structural", selector: "/x", ruleId: "", apply: (v: unknown) => ({ value: v, note: 42 }) }],
    });
    expect(r.outcome).toBe("repaired");
    expect(r.changes).toEqual([{ ruleId: "", stage: "preprocess", note: 42 }]);
    expect("x" in r.args && r.args.x === undefined).toBe(true);
  });

  it("an owner shim mutating the caller's input in place (limited envelope): args is the input", () => {
    const input: Record<string, unknown> = {};
    const r = builtin("ls", input, {
      limits: { maxNestingDepth: -1 },
      ownerPrepareArguments: (x: Any) => {
        x.owner = true;
        return x;
      },
    });
    expect(r.outcome).toBe("valid");
    expect(r.args).toBe(input);
    expect(input).toEqual({ owner: true });
  });
});

describe("preprocessInput and knownTools", () => {
  it("grammar-token cleanup returns null-prototype records, as the reference builds them", () => {
    const pre = [{ kind: "grammar-tokens", selector: "", modelFamilies: [/glm/i] }] as Any;
    const out: Any = preprocessInput({
      input: { "<arg_key>a</arg_key>": "<arg_value>x</arg_value>", n: { b: 1 } },
      toolName: "t",
      preprocessors: pre,
      modelId: "glm",
      allowValidValueTransforms: true,
    });
    expect(Object.getPrototypeOf(out.value)).toBe(null);
    expect(JSON.stringify(out.value)).toBe('{"a":"x","n":{"b":1}}');
    expect(Object.getPrototypeOf(out.value.n)).toBe(Object.prototype);
    const nested: Any = preprocessInput({
      input: { x: { "<arg_key>a": "b" } },
      toolName: "t",
      preprocessors: [{ kind: "grammar-tokens", selector: "/x", modelFamilies: [/glm/i] }] as Any,
      modelId: "glm",
      allowValidValueTransforms: true,
    });
    expect(Object.getPrototypeOf(nested.value)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(nested.value.x)).toBe(null);
    expect(JSON.stringify(nested.value)).toBe('{"x":{"a":"b"}}');
  });

  const leak = () => ({
    role: "assistant",
    content: [{ type: "text", text: '<tool_call>{"name":"read","arguments":{"path":"a"}}</tool_call>' }],
    stopReason: "stop",
  });

  it("knownTools as an Array: like the reference (it reads .size), no tool is known", () => {
    const r: Any = recoverGrammarLeaks(leak() as Any, { mode: "recover", knownTools: ["read"] as Any });
    expect(r.promoted).toBe(false);
    expect(r.changed).toBe(false);
    expect((recoverGrammarLeaks(leak() as Any, { mode: "recover", knownTools: new Set(["read"]) }) as Any).promoted).toBe(true);
  });

  it("knownTools missing: the reference's TypeError once a candidate is judged", () => {
    expect(thrown(() => recoverGrammarLeaks(leak() as Any, { mode: "recover" } as Any))).toEqual({
      name: "TypeError",
      message: "Cannot read properties of undefined (reading 'size')",
    });
    const plain = { role: "assistant", content: [{ type: "text", text: "hello" }] };
    expect((recoverGrammarLeaks(plain as Any, { mode: "recover" } as Any) as Any).changed).toBe(false);
  });
});

describe("deliberate divergence: grammar-token cleanup leaves token-free content byte-for-byte", () => {
  // The reference trims every oldText/newText for /glm/ models, breaking indentation-sensitive edits.
  it("edit from glm-4.6: indentation and trailing newline survive, valid, no note", () => {
    const input = { path: "a.ts", edits: [{ oldText: "    return x\n", newText: "    return y\n" }] };
    const r = builtin("edit", input, { modelId: "glm-4.6" });
    expect(r.outcome).toBe("valid");
    expect(r.args).toBe(input);
    expect(r.changes).toEqual([]);
    expect(r.observations).toEqual([]);
  });

  it("flat oldText/newText from glm-4.6 are folded, not trimmed", () => {
    const r = builtin("edit", { path: "a.ts", oldText: "    return x\n", newText: "    return y\n" }, { modelId: "glm-4.6" });
    expect(r.args.edits).toEqual([{ oldText: "    return x\n", newText: "    return y\n" }]);
    expect(r.changes.map((c: Any) => c.ruleId)).not.toContain("stripGrammarTokenLeak");
  });

  it("a leaked token is still stripped (and trimmed) as the reference does", () => {
    const r = builtin("edit", { path: "a.ts", edits: [{ oldText: "<arg_value> x ", newText: "y" }] }, { modelId: "glm-4.6" });
    expect(r.outcome).toBe("repaired");
    expect(r.args.edits[0].oldText).toBe("x");
    expect(r.changes.map((c: Any) => c.ruleId)).toContain("stripGrammarTokenLeak");
  });
});

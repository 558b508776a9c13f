// Spec §6 (validate-then-repair engine, legacy facade), §7 (strict check and
// TypeBox-style Convert as observable through the pipeline) and §8 (issue
// summary, fingerprint, retry message).
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { BUILTIN_TOOL_REPAIRS, repairToolInput, runRepairPipeline } from "../lib/core.js";
import { piBuiltinSchema } from "./helpers/pi-tools.ts";
import { withTypeBoxMarkers } from "./helpers/typebox-markers.ts";

// biome-ignore lint/suspicious/noExplicitAny: exercising runtime shapes
type Any = any;

const legacyOf = (tool: string) => (BUILTIN_TOOL_REPAIRS as Record<string, { legacyConfig: Any }>)[tool]?.legacyConfig;

const readSchema = () => piBuiltinSchema("read");
const editSchema = () => piBuiltinSchema("edit");

function pipe(input: unknown, config: Record<string, unknown>) {
  return runRepairPipeline({ input, config: { toolName: "t", ...config } as Any }) as Any;
}

function legacy(toolName: string, schema: unknown, input: unknown, config?: unknown) {
  return repairToolInput({ toolName, schema: schema as Any, input, config: config as Any }) as Any;
}

const rules = (result: { changes: Array<{ ruleId: string }> }) => result.changes.map((c) => c.ruleId);

/** FNV-1a over UTF-16 code units, as §8 defines it (used to cross-check fingerprints). */
function fnv(tool: string, describes: string[]): string {
  const text = `${tool}::${[...describes].sort().join(";")}`;
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, "0");
}

describe("legacy facade repairToolInput (§6.2)", () => {
  it("valid input: outcome valid, args by reference, all eight keys present", () => {
    const input = { path: "/a", limit: 10 };
    const result = legacy("read", readSchema(), input, legacyOf("read"));
    expect(result.args).toBe(input);
    expect(Object.keys(result).sort()).toEqual(
      ["args", "changes", "fingerprint", "issueSummary", "notes", "outcome", "retryMessage", "rulesFired"].sort(),
    );
    expect(result).toEqual({
      outcome: "valid",
      args: input,
      rulesFired: [],
      notes: [],
      changes: [],
      issueSummary: undefined,
      fingerprint: undefined,
      retryMessage: undefined,
    });
  });

  it("maps envelope.decode-json to parseJsonStringifiedRootObject; rulesFired is distinct, changes carry no stage", () => {
    const result = legacy("read", readSchema(), JSON.stringify(JSON.stringify({ path: "a" })));
    const note =
      'Parsed your JSON-stringified arguments for tool "read". Send the arguments as a JSON object next time, not a string.';
    expect(result.rulesFired).toEqual(["parseJsonStringifiedRootObject"]);
    expect(result.notes).toEqual([note, note]);
    expect(result.changes).toEqual([
      { ruleId: "parseJsonStringifiedRootObject", note },
      { ruleId: "parseJsonStringifiedRootObject", note },
    ]);
    expect(Object.keys(result.changes[0])).toEqual(["ruleId", "note"]);
  });

  it("other envelope rule ids pass through unchanged", () => {
    const result = legacy("read", readSchema(), [{ path: "a" }]);
    expect(result.rulesFired).toEqual(["envelope.unwrap-singleton-object-array"]);
  });

  it("unrepairable: original input, empty rulesFired/notes/changes, summary, fingerprint and retry message", () => {
    const input = { nothing: "useful" };
    const result = legacy("read", readSchema(), input, legacyOf("read"));
    expect(result.outcome).toBe("unrepairable");
    expect(result.args).toBe(input);
    expect(result.rulesFired).toEqual([]);
    expect(result.notes).toEqual([]);
    expect(result.changes).toEqual([]);
    expect(result.issueSummary).toBe("(root)|required|path");
    expect(result.fingerprint).toBe("c888829a");
    expect(result.retryMessage).toBe(
      'Invalid input for tool "read". Fix these issues and retry:\n  • (root): must have required properties path\nReceived: {"nothing":"useful"}',
    );
  });
});

describe("path fields and strict fast path (§6 steps 1–2)", () => {
  it("markdown auto-links in pathFields are unwrapped even though the input is valid", () => {
    const result = legacy("read", readSchema(), { path: "/home/[notes.md](http://notes.md)" }, legacyOf("read"));
    expect(result.outcome).toBe("repaired");
    expect(result.args).toEqual({ path: "/home/notes.md" });
    expect(result.changes).toEqual([
      {
        ruleId: "unwrapMarkdownAutoLink",
        note: 'Unwrapped a markdown auto-link in `path` for tool "read" (`/home/[notes.md](http://notes.md)` -> `/home/notes.md`). Send plain paths, not markdown links.',
      },
    ]);
    expect(result.issueSummary).toBeUndefined();
    expect(result.fingerprint).toBeUndefined();
  });

  it("non-path fields holding links or JSON-looking text are left alone", () => {
    const input = { path: "/a.md", content: 'see [x.md](http://x.md) ["a","b"]' };
    const result = legacy("write", piBuiltinSchema("write"), input, legacyOf("write"));
    expect(result.outcome).toBe("valid");
    expect(result.args).toBe(input);
  });

  it("Convert-only validity counts as valid and returns the unconverted input", () => {
    const input = { path: "/a", limit: "5" };
    const result = legacy("read", readSchema(), input, legacyOf("read"));
    expect(result.outcome).toBe("valid");
    expect(result.args).toBe(input);
    expect(result.issueSummary).toBeUndefined();
  });
});

describe("root repairs (§6 step 4)", () => {
  it("a JSON-stringified root object is parsed by schema repair when the envelope did not decode", () => {
    const result = pipe('  {"path":"a"}  ', { toolName: "read", schema: readSchema(), limits: { maxDecodeAttempts: 0 } });
    expect(result.outcome).toBe("repaired");
    expect(result.args).toEqual({ path: "a" });
    expect(result.changes).toEqual([
      {
        ruleId: "parseJsonStringifiedRootObject",
        stage: "schema-repair",
        note: 'Parsed your JSON-stringified arguments for tool "read". Send the arguments as a JSON object next time, not a string.',
      },
    ]);
    expect(result.issueSummary).toBe("(root)|type|object");
    expect(result.fingerprint).toBe("3c4599d5");
  });

  it("rootString wraps a bare string; pathFields then run on the wrapped object", () => {
    const result = legacy("read", readSchema(), "[a.md](http://a.md)", legacyOf("read"));
    expect(result.args).toEqual({ path: "a.md" });
    expect(result.rulesFired).toEqual(["wrapRootStringAsObject", "unwrapMarkdownAutoLink"]);
    expect(result.notes[0]).toBe(
      'Wrapped your bare string as `{path: "..."}` for tool "read". Call this tool with an object, not a bare string, next time.',
    );
  });

  it("rootString with wrapInArray wraps into an array and says so", () => {
    const schema = Type.Object({ paths: Type.Array(Type.String()) });
    const result = legacy("multi", schema, "a.txt", { rootString: { field: "paths", wrapInArray: true } });
    expect(result.outcome).toBe("repaired");
    expect(result.args).toEqual({ paths: ["a.txt"] });
    expect(result.notes).toEqual([
      'Wrapped your bare string as `{paths: ["..."]}` for tool "multi". Call this tool with an object, not a bare string, next time.',
    ]);
  });

  it("a brace-delimited string that is not JSON falls back to rootString", () => {
    const result = legacy("bash", piBuiltinSchema("bash"), "{ echo hi; }", legacyOf("bash"));
    expect(result.args).toEqual({ command: "{ echo hi; }" });
    expect(result.rulesFired).toEqual(["wrapRootStringAsObject"]);
  });

  it("non-record roots without a root repair are unrepairable (original reference, no changes)", () => {
    for (const input of [42, null, true, [], [{ path: "a" }, { path: "b" }], "plain"]) {
      const result = pipe(input, { toolName: "read", schema: readSchema() });
      expect(result.outcome).toBe("unrepairable");
      expect(result.args).toBe(input);
      expect(result.changes).toEqual([]);
      expect(result.issueSummary).toBe("(root)|type|object");
      expect(result.fingerprint).toBe("3c4599d5");
      expect(result.retryMessage).toBe(
        `Invalid input for tool "read". Fix these issues and retry:\n  • (root): must be object\nReceived: ${JSON.stringify(input)}`,
      );
    }
  });
});

describe("legacy structural repairs (§6 step 6)", () => {
  it("run in order on the record when strict validation fails; a string result fires the repair's name", () => {
    const order: string[] = [];
    const schema = Type.Object({ a: Type.String(), b: Type.String() });
    const result = legacy("s", schema, { a: "x" }, {
      structural: [
        { name: "noop", apply: () => (order.push("noop"), false) },
        {
          name: "addB",
          apply(args: Record<string, unknown>, tool: string) {
            order.push("addB");
            args.b = "y";
            return `added b for ${tool}`;
          },
        },
      ],
    });
    expect(order).toEqual(["noop", "addB"]);
    expect(result.outcome).toBe("repaired");
    expect(result.args).toEqual({ a: "x", b: "y" });
    expect(result.changes).toEqual([{ ruleId: "addB", note: "added b for s" }]);
  });

  it("do not run when the input is already strictly valid", () => {
    let called = false;
    const input = { a: "x" };
    const result = legacy("s", Type.Object({ a: Type.String() }), input, {
      structural: [{ name: "x", apply: () => ((called = true), "never") }],
    });
    expect(called).toBe(false);
    expect(result.args).toBe(input);
  });

  it("edit: flat aider-style search/replace plus aliased path are folded (legacy tables)", () => {
    const result = legacy("edit", editSchema(), { file_path: "/a", search: "foo", replace: "bar" }, legacyOf("edit"));
    expect(result.outcome).toBe("repaired");
    expect(result.args).toEqual({ path: "/a", edits: [{ oldText: "foo", newText: "bar" }] });
    expect(result.rulesFired).toEqual(["foldFlatEditFields", "renameAliasedField"]);
  });
});

describe("issue rules (§6.1)", () => {
  it("renameAliasedField: a required canonical key is taken from the first usable alias, appended last", () => {
    const result = legacy("read", readSchema(), { file_path: "", filePath: "/a", fileName: "/b" }, legacyOf("read"));
    expect(result.outcome).toBe("repaired");
    expect(JSON.stringify(result.args)).toBe('{"file_path":"","fileName":"/b","path":"/a"}');
    expect(result.changes).toEqual([
      {
        ruleId: "renameAliasedField",
        note: 'Renamed `filePath` to `path` for tool "read". Use `path` next time — `filePath` is not a valid field for this tool.',
      },
    ]);
    expect(result.issueSummary).toBe("(root)|required|path");
  });

  it("renameAliasedField: a present-but-null canonical key is replaced in place", () => {
    const result = legacy("read", readSchema(), { path: null, limit: 1, file: "/a" }, legacyOf("read"));
    expect(JSON.stringify(result.args)).toBe('{"path":"/a","limit":1}');
    expect(result.rulesFired).toEqual(["renameAliasedField"]);
  });

  it("renameAliasedField: an undefined canonical key counts as missing", () => {
    const result = legacy("read", readSchema(), { path: undefined, file: "/a" }, legacyOf("read"));
    expect(result.outcome).toBe("repaired");
    expect(Object.keys(result.args)).toEqual(["path"]);
    expect(result.args.path).toBe("/a");
  });

  it("aliases only act at validation failure sites (an optional absent key is not a site)", () => {
    const schema = Type.Object({ path: Type.Optional(Type.String()) });
    const input = { directory: "/tmp" };
    const result = legacy("ls", schema, input, legacyOf("ls"));
    expect(result.outcome).toBe("valid");
    expect(result.args).toBe(input);
  });

  it("dropNullOrUndefinedField: null optional fields are dropped with the documented note", () => {
    const result = legacy("read", readSchema(), { path: "/a", offset: null, limit: null }, legacyOf("read"));
    expect(result.args).toEqual({ path: "/a" });
    expect(result.rulesFired).toEqual(["dropNullOrUndefinedField"]);
    expect(result.notes).toEqual([
      'Dropped null `offset` from tool "read". Optional fields can be omitted entirely rather than sent as null.',
      'Dropped null `limit` from tool "read". Optional fields can be omitted entirely rather than sent as null.',
    ]);
    expect(result.issueSummary).toBe("/offset|type|number; /limit|type|number");
  });

  it("dropNullOrUndefinedField: dropping a required null field leaves it unrepairable", () => {
    const input = { command: null };
    const result = legacy("bash", piBuiltinSchema("bash"), input, legacyOf("bash"));
    expect(result.outcome).toBe("unrepairable");
    expect(result.args).toBe(input);
    expect(result.issueSummary).toBe("/command|type|string");
  });

  it("a null inside an array-typed slot is dropped, not wrapped", () => {
    const schema = Type.Object({ tags: Type.Optional(Type.Array(Type.String())) });
    const result = legacy("t", schema, { tags: null });
    expect(result.args).toEqual({});
    expect(result.rulesFired).toEqual(["dropNullOrUndefinedField"]);
  });

  it("dropEmptyObjectPlaceholder: only an empty {} where an array is expected", () => {
    const schema = Type.Object({ tags: Type.Optional(Type.Array(Type.String())) });
    const dropped = legacy("t", schema, { tags: {} });
    expect(dropped.args).toEqual({});
    expect(dropped.notes).toEqual([
      'Dropped empty `{}` placeholder from `tags` for tool "t". Send an actual array (or omit the field) next time.',
    ]);
    const kept = legacy("t", schema, { tags: { a: 1 } });
    expect(kept.outcome).toBe("unrepairable");
  });

  it("parseJsonStringifiedArray runs before wrapBareStringAsArray; trims first", () => {
    const schema = Type.Object({ include: Type.Array(Type.String()) });
    const parsed = legacy("x", schema, { include: '  ["a","b"]  ' });
    expect(parsed.args).toEqual({ include: ["a", "b"] });
    expect(parsed.rulesFired).toEqual(["parseJsonStringifiedArray"]);
    expect(parsed.issueSummary).toBe("/include|type|array");
  });

  it("wrapBareStringAsArray wraps strings, including malformed JSON arrays", () => {
    const schema = Type.Object({ include: Type.Array(Type.String()) });
    const wrapped = legacy("x", schema, { include: '["a"' });
    expect(wrapped.args).toEqual({ include: ['["a"'] });
    expect(wrapped.notes).toEqual([
      'Wrapped your bare string in a single-element array for `include` in tool "x". Send an array (e.g. `["foo"]`) next time, not a single string.',
    ]);
  });

  it("parseJsonStringifiedObject parses a {…} string where an object is expected", () => {
    const schema = Type.Object({ opts: Type.Object({ a: Type.Number() }) });
    const result = legacy("x", schema, { opts: ' {"a":1} ' });
    expect(result.args).toEqual({ opts: { a: 1 } });
    expect(result.notes).toEqual([
      'Parsed JSON-stringified object for `opts` in tool "x". Send the object literal directly next time, not a string.',
    ]);
    expect(legacy("x", schema, { opts: "{a:1}" }).outcome).toBe("unrepairable");
  });

  it("rules 4–6 also work on numeric keys (array elements)", () => {
    const schema = Type.Object({ m: Type.Array(Type.Array(Type.Number())) });
    const result = legacy("x", schema, { m: ["[1,2]", [3]] });
    expect(result.args).toEqual({ m: [[1, 2], [3]] });
    expect(result.changes).toEqual([
      {
        ruleId: "parseJsonStringifiedArray",
        note: 'Parsed JSON-stringified array for `0` in tool "x". Send the array literal directly (e.g. `["a","b"]`) next time, not a string.',
      },
    ]);
  });

  it("rules 1–3 never act on numeric keys: a null element is left to Convert/final check", () => {
    const schema = Type.Object({ l: Type.Array(Type.String()) });
    const input = { l: ["a", null] };
    const result = legacy("x", schema, input);
    // no rule fires; String Convert turns null into "null" so the input is reported valid, unconverted
    expect(result.outcome).toBe("valid");
    expect(result.args).toBe(input);
  });

  it("all-digit object keys become numeric segments, so rules 1–3 skip them", () => {
    const schema = withTypeBoxMarkers({ type: "object", properties: { "0": { type: "number" }, a: { type: "number" } } });
    const digits = { "0": null };
    const r1 = legacy("x", schema, digits);
    expect(r1.outcome).toBe("valid"); // Convert: null → 0
    expect(r1.args).toBe(digits);
    const r2 = legacy("x", schema, { a: null });
    expect(r2.outcome).toBe("repaired");
    expect(r2.args).toEqual({});
  });

  it("instancePath keys are not escaped: a key containing / is not resolvable as a site", () => {
    const schema = withTypeBoxMarkers({ type: "object", properties: { "a/b": { type: "number" } } });
    const input = { "a/b": null };
    const result = legacy("x", schema, input);
    expect(result.outcome).toBe("valid"); // no drop rule; Convert makes it a number
    expect(result.args).toBe(input);
  });

  it("the first issue at a path decides the expected type (site dedup)", () => {
    const numberFirst = withTypeBoxMarkers({
      type: "object",
      properties: { v: { anyOf: [{ type: "number" }, { type: "array", items: { type: "string" } }] } },
    });
    const input = { v: '["a"]' };
    const r1 = legacy("x", numberFirst, input);
    expect(r1.outcome).toBe("valid"); // no rule; Convert's array branch wraps the string
    expect(r1.args).toBe(input);
    const arrayFirst = withTypeBoxMarkers({
      type: "object",
      properties: { v: { anyOf: [{ type: "array", items: { type: "string" } }, { type: "number" }] } },
    });
    const r2 = legacy("x", arrayFirst, { v: '["a"]' });
    expect(r2.outcome).toBe("repaired");
    expect(r2.args).toEqual({ v: ["a"] });
    expect(r2.rulesFired).toEqual(["parseJsonStringifiedArray"]);
  });

  it("required issues inside array elements resolve their container", () => {
    const result = legacy("edit", editSchema(), { path: "/a", edits: [{ oldText: "a", new_string: "b" }] }, legacyOf("edit"));
    expect(result.args).toEqual({ path: "/a", edits: [{ oldText: "a", newText: "b" }] });
    expect(result.issueSummary).toBe("/edits/0|required|newText");
  });
});

describe("issue passes (§6 step 7)", () => {
  const nestedSchema = Type.Object({
    a: Type.Array(Type.Array(Type.Object({ x: Type.Number() }))),
  });
  const aliasX = { fieldAliases: { x: ["y"] } };

  it("repairs revealed by earlier repairs converge within three passes", () => {
    const input = { a: JSON.stringify([JSON.stringify([{ y: 1 }])]) };
    const result = legacy("x", nestedSchema, input, aliasX);
    expect(result.outcome).toBe("repaired");
    expect(result.args).toEqual({ a: [[{ x: 1 }]] });
    expect(result.rulesFired).toEqual(["parseJsonStringifiedArray", "renameAliasedField"]);
    expect(result.changes).toHaveLength(3);
  });

  it("a chain needing a fourth pass is unrepairable", () => {
    const input = { a: JSON.stringify([JSON.stringify([JSON.stringify({ y: 1 })])]) };
    const result = legacy("x", nestedSchema, input, aliasX);
    expect(result.outcome).toBe("unrepairable");
    expect(result.args).toBe(input);
  });

  it("each pass sees at most 8 issue sites; Convert settles what three passes leave", () => {
    const props: Record<string, unknown> = {};
    const input: Record<string, unknown> = {};
    for (let i = 0; i < 30; i++) {
      props[`p${i}`] = { type: "number" };
      input[`p${i}`] = null;
    }
    const result = legacy("x", withTypeBoxMarkers({ type: "object", properties: props }), input);
    expect(result.outcome).toBe("repaired");
    expect(result.changes).toHaveLength(24); // 3 passes × 8 sites
    expect(result.args).toEqual({ p24: 0, p25: 0, p26: 0, p27: 0, p28: 0, p29: 0 });
  });

  it("a pass that fires nothing stops: never invents values", () => {
    const r1 = legacy("edit", editSchema(), { path: "/a", edits: '[{"old_text":null,"new_text":"b"}]' }, legacyOf("edit"));
    expect(r1.outcome).toBe("unrepairable");
    const r2 = legacy("edit", editSchema(), { path: "/a", edits: [{ bogus: 42 }] }, legacyOf("edit"));
    expect(r2.outcome).toBe("unrepairable");
    expect(r2.rulesFired).toEqual([]);
  });

  it("every element of a stringified array gets its aliases renamed", () => {
    const result = legacy(
      "edit",
      editSchema(),
      { path: "/a", edits: '[{"old_text":"a","new_text":"b"},{"search":"c","replace":"d"}]' },
      legacyOf("edit"),
    );
    expect(result.args).toEqual({
      path: "/a",
      edits: [
        { oldText: "a", newText: "b" },
        { oldText: "c", newText: "d" },
      ],
    });
  });

  it("a stringified array of stringified objects is parsed level by level", () => {
    const result = legacy("edit", editSchema(), { path: "/a", edits: JSON.stringify([JSON.stringify({ oldText: "f", newText: "b" })]) }, legacyOf("edit"));
    expect(result.args).toEqual({ path: "/a", edits: [{ oldText: "f", newText: "b" }] });
    expect(result.rulesFired).toEqual(["parseJsonStringifiedArray", "parseJsonStringifiedObject"]);
  });
});

describe("verdict and Convert (§6 step 8, §7.2)", () => {
  it("any fired rule returns the Convert-ed value", () => {
    const result = legacy("read", readSchema(), { file_path: "/a", offset: "5" }, legacyOf("read"));
    expect(result.outcome).toBe("repaired");
    expect(result.args).toEqual({ offset: 5, path: "/a" });
  });

  it("Convert by kind after a change: String, Number, Integer, Boolean, Null, Union, Literal", () => {
    const schema = withTypeBoxMarkers({
      type: "object",
      properties: {
        s: { type: "string" },
        n: { type: "number" },
        h: { type: "number" },
        i: { type: "integer" },
        b: { type: "boolean" },
        z: { type: "null" },
        u: { anyOf: [{ type: "string" }, { type: "null" }] },
        l: { type: "number", const: 1 },
        k: { type: "boolean" },
      },
    });
    const input = JSON.stringify({ s: 5, n: "1e3", h: "0x10", i: "3.7", b: "TRUE", z: "null", u: 5, l: "1", k: 1 });
    const result = pipe(input, { schema });
    expect(result.outcome).toBe("repaired");
    expect(result.args).toEqual({ s: "5", n: 1000, h: 16, i: 3, b: true, z: null, u: "5", l: 1, k: true });
  });

  it("Convert wraps a non-array into an array and converts the items", () => {
    const schema = withTypeBoxMarkers({ type: "object", properties: { a: { type: "array", items: { type: "string" } } } });
    const result = pipe('{"a":5}', { schema });
    expect(result.args).toEqual({ a: ["5"] });
  });

  it("a plain JSON Schema (no ~kind markers) makes Convert the identity", () => {
    const plain = { type: "object", properties: { n: { type: "number" } } };
    expect(pipe('{"n":"5"}', { schema: withTypeBoxMarkers(plain) }).args).toEqual({ n: 5 });
    const raw = pipe('{"n":"5"}', { schema: structuredClone(plain) });
    expect(raw.outcome).toBe("unrepairable");
    expect(raw.args).toBe('{"n":"5"}');
    expect(raw.issueSummary).toBe("/n|type|number");
  });

  it("Convert skips optional properties whose value is undefined (key stays, value undefined)", () => {
    const result = pipe({ file_path: "/a", offset: undefined }, {
      toolName: "read",
      schema: readSchema(),
      preprocessors: [{ kind: "alias", selector: "/path", aliases: ["file_path"] }],
    });
    expect(result.outcome).toBe("repaired");
    expect(Object.keys(result.args)).toEqual(["offset", "path"]);
    expect(result.args.offset).toBeUndefined();
  });

  it("Convert treats declared property names as unescaped regular expressions", () => {
    const schema = withTypeBoxMarkers({ type: "object", properties: { "a.c": { type: "number" } } });
    const result = pipe('{"abc":"5","a.c":"6"}', { schema });
    expect(result.args).toEqual({ abc: 5, "a.c": 6 });
  });

  it("Convert never adds missing properties", () => {
    const schema = withTypeBoxMarkers({ type: "object", properties: { a: { type: "number" }, b: { type: "string" } } });
    const result = pipe('{"a":"1"}', { schema });
    expect(JSON.stringify(result.args)).toBe('{"a":1}');
  });

  it("a property name that is an invalid regex makes Convert throw, and the throw propagates", () => {
    const schema = withTypeBoxMarkers({ type: "object", properties: { "a(": { type: "string" } } });
    expect(() => legacy("x", schema, { "a(": 5 })).toThrow(SyntaxError);
  });
});

describe("strict validation semantics seen through outcomes (§7.1)", () => {
  it("an undefined optional value passes; a required undefined value fails at its own path", () => {
    const ok = { path: "/a", offset: undefined };
    expect(legacy("read", readSchema(), ok).args).toBe(ok);
    const bad = { path: undefined };
    const result = pipe(bad, { toolName: "read", schema: readSchema() });
    expect(result.outcome).toBe("unrepairable");
    expect(result.issueSummary).toBe("/path|type|string");
    expect(result.retryMessage).toBe(
      'Invalid input for tool "read". Fix these issues and retry:\n  • /path: must be string\nReceived: {}',
    );
  });

  it("number rejects Infinity (1e400 decodes to Infinity)", () => {
    const result = pipe('{"path":"a","offset":1e400}', { toolName: "read", schema: readSchema() });
    expect(result.outcome).toBe("unrepairable");
    expect(result.issueSummary).toBe("/offset|type|number");
    expect(result.retryMessage).toContain('Received: {"path":"a","offset":null}');
  });

  it("minLength counts TypeBox's simplified grapheme clusters", () => {
    const schema = Type.Object({ s: Type.String({ minLength: 2 }) });
    // TypeBox counts UTF-16 units until it meets a high surrogate, U+0300–036F or U+200D,
    // then switches to its own cluster walk (combining marks, variation selectors, ZWJ, flag pairs)
    for (const short of ["e\u0301", "👨‍👩‍👧", "🇫🇷", "😀"]) {
      const result = pipe({ s: short }, { schema });
      expect(result.outcome, JSON.stringify(short)).toBe("unrepairable");
      expect(result.issueSummary).toBe("/s|minLength|");
      expect(result.retryMessage).toContain("  • /s: must not have fewer than 2 characters");
    }
    // skin-tone modifiers are not joined; a lone variation selector after a BMP char is a unit of its own
    for (const long of ["ab", "👍🏽", "éé", "❤\ufe0f"]) expect(pipe({ s: long }, { schema }).outcome, long).toBe("valid");
  });

  it("pattern is a unicode-aware JS regular expression", () => {
    const schema = Type.Object({ s: Type.String({ pattern: "^\\p{L}+$" }) });
    expect(pipe({ s: "éß" }, { schema }).outcome).toBe("valid");
    const bad = pipe({ s: "a1" }, { schema });
    expect(bad.outcome).toBe("unrepairable");
    expect(bad.retryMessage).toContain('  • /s: must match pattern "^\\p{L}+$"');
  });

  it("anyOf failures list every branch error then the anyOf error", () => {
    const schema = withTypeBoxMarkers({
      type: "object",
      required: ["v"],
      properties: { v: { anyOf: [{ type: "string" }, { type: "null" }] } },
    });
    const result = pipe({ v: {} }, { schema });
    expect(result.outcome).toBe("unrepairable");
    expect(result.issueSummary).toBe("/v|type|string; /v|type|null; /v|anyOf|");
    expect(result.retryMessage).toBe(
      'Invalid input for tool "t". Fix these issues and retry:\n  • /v: must be string\n  • /v: must be null\n  • /v: must match a schema in anyOf\nReceived: {"v":{}}',
    );
  });

  it("array-valued type: detail is empty and the message says either/or", () => {
    const schema = { type: "object", properties: { v: { type: ["string", "null"] } } };
    const result = pipe({ v: 1 }, { schema });
    expect(result.outcome).toBe("unrepairable");
    expect(result.issueSummary).toBe("/v|type|");
    expect(result.retryMessage).toContain("  • /v: must be either string or null");
  });

  it("additionalProperties false: leftover alias keys make the call unrepairable", () => {
    const schema = withTypeBoxMarkers({
      type: "object",
      required: ["path"],
      additionalProperties: false,
      properties: { path: { type: "string" } },
    });
    const result = pipe({ file_path: "a", filePath: "b" }, { schema, legacyConfig: { fieldAliases: { path: ["file_path"] } } });
    expect(result.outcome).toBe("unrepairable");
    expect(result.issueSummary).toBe("(root)|required|path; (root)|additionalProperties|");
  });

  it("enum and const compare objects deeply", () => {
    const schema = { type: "object", properties: { e: { enum: [{ a: 1 }, "x"] }, c: { const: [1, 2] } } };
    expect(pipe({ e: { a: 1 }, c: [1, 2] }, { schema }).outcome).toBe("valid");
    const bad = pipe({ e: { a: 2 }, c: [2, 1] }, { schema });
    expect(bad.issueSummary).toBe("/e|enum|; /c|const|");
    expect(bad.retryMessage).toContain("  • /e: must be equal to one of the allowed values\n  • /c: must be equal to constant");
  });

  it("integer accepts integral numbers only; minimum/maximum messages", () => {
    const schema = Type.Object({ i: Type.Integer({ minimum: 1, maximum: 3 }) });
    expect(pipe({ i: 2 }, { schema }).outcome).toBe("valid");
    const low = pipe({ i: 0 }, { schema });
    expect(low.issueSummary).toBe("/i|minimum|");
    expect(low.retryMessage).toContain("  • /i: must be >= 1");
    const high = pipe({ i: 4 }, { schema });
    expect(high.retryMessage).toContain("  • /i: must be <= 3");
  });
});

describe("issue summary, fingerprint and retry message (§8)", () => {
  it("fingerprint examples from the spec", () => {
    expect(pipe({}, { toolName: "read", schema: readSchema() }).fingerprint).toBe("c888829a");
    expect(pipe({ path: "a", offset: "abc" }, { toolName: "read", schema: readSchema() }).fingerprint).toBe("601455cc");
    expect(pipe(42, { toolName: "read", schema: readSchema() }).fingerprint).toBe("3c4599d5");
    expect(fnv("read", ["(root)|required|path"])).toBe("c888829a");
  });

  it("fingerprint hashes the sorted describes; the summary keeps issue order", () => {
    const result = pipe({ offset: "abc" }, { toolName: "read", schema: readSchema() });
    expect(result.issueSummary).toBe("(root)|required|path; /offset|type|number");
    expect(result.fingerprint).toBe(fnv("read", ["(root)|required|path", "/offset|type|number"]));
    expect(result.fingerprint).toBe("9dd327e6");
  });

  it("fingerprint is stable for the same failure shape and includes the tool name", () => {
    const a = pipe({ x: 1 }, { toolName: "read", schema: readSchema() });
    const b = pipe({ x: 2 }, { toolName: "read", schema: readSchema() });
    const c = pipe({ x: 1 }, { toolName: "other", schema: readSchema() });
    expect(a.fingerprint).toBe(b.fingerprint);
    expect(c.fingerprint).toBe(fnv("other", ["(root)|required|path"]));
  });

  it("fingerprint hashes UTF-16 code units (non-BMP tool names)", () => {
    const result = pipe({}, { toolName: "🔧é", schema: readSchema() });
    expect(result.fingerprint).toBe(fnv("🔧é", ["(root)|required|path"]));
  });

  it("repaired results carry the original issue summary and fingerprint", () => {
    const result = pipe({ path: "a", offset: null }, { toolName: "read", schema: readSchema() });
    expect(result.outcome).toBe("repaired");
    expect(result.issueSummary).toBe("/offset|type|number");
    expect(result.fingerprint).toBe("601455cc");
    expect("retryMessage" in result).toBe(false);
  });

  it("TypeBox reports at most 8 errors: the summary and the retry message hold the first 8", () => {
    const props: Record<string, unknown> = {};
    const input: Record<string, unknown> = {};
    for (let i = 0; i < 40; i++) {
      props[`p${i}`] = { type: "number" };
      input[`p${i}`] = "x";
    }
    const result = pipe(input, { schema: withTypeBoxMarkers({ type: "object", properties: props }) });
    expect(result.outcome).toBe("unrepairable");
    const summary = result.issueSummary.split("; ");
    expect(summary).toEqual(Array.from({ length: 8 }, (_, i) => `/p${i}|type|number`));
    const lines = result.retryMessage.split("\n");
    expect(lines[0]).toBe('Invalid input for tool "t". Fix these issues and retry:');
    expect(lines.slice(1, -1)).toEqual(Array.from({ length: 8 }, (_, i) => `  • /p${i}: must be number`));
    expect(lines.at(-1)?.startsWith("Received: {")).toBe(true);
    expect(result.fingerprint).toBe(fnv("t", summary));
  });

  it("Received is cut at 300 UTF-16 code units followed by …, even inside a surrogate pair", () => {
    const input = { offset: "abc", junk: "😀".repeat(200) };
    const result = pipe(input, { toolName: "read", schema: readSchema() });
    const json = JSON.stringify(input);
    const received = result.retryMessage.split("\nReceived: ")[1];
    expect(received).toBe(`${json.slice(0, 300)}…`);
    expect(received.length).toBe(301);
  });

  it("Received is not cut at exactly 300 code units, and is cut at 301", () => {
    const base = JSON.stringify({ offset: "abc", junk: "" }).length;
    const exact = { offset: "abc", junk: "x".repeat(300 - base) };
    expect(JSON.stringify(exact).length).toBe(300);
    const r1 = pipe(exact, { toolName: "read", schema: readSchema() });
    expect(r1.retryMessage.endsWith(`Received: ${JSON.stringify(exact)}`)).toBe(true);
    const over = { offset: "abc", junk: "x".repeat(301 - base) };
    const r2 = pipe(over, { toolName: "read", schema: readSchema() });
    expect(r2.retryMessage.endsWith(`Received: ${JSON.stringify(over).slice(0, 300)}…`)).toBe(true);
  });

  it("Received shows the value after envelope decoding and preprocessing (renamed alias moved last)", () => {
    const table = (BUILTIN_TOOL_REPAIRS as Record<string, Any>).read;
    const result = pipe('{"file_path":"a","offset":"abc"}', {
      toolName: "read",
      schema: readSchema(),
      preprocessors: table.preprocessors,
      legacyConfig: table.legacyConfig,
    });
    expect(result.outcome).toBe("unrepairable");
    expect(result.retryMessage.endsWith('Received: {"offset":"abc","path":"a"}')).toBe(true);
  });

  it("Received falls back to String() when JSON.stringify yields undefined", () => {
    const result = pipe(undefined, { toolName: "read", schema: readSchema() });
    expect(result.outcome).toBe("unrepairable");
    expect(result.args).toBeUndefined();
    expect(result.retryMessage.endsWith("Received: undefined")).toBe(true);
  });
});

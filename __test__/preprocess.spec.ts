// Spec §5 (preprocessInput, selectors, every preprocessor kind,
// unwrapMarkdownAutoLinks) and §12 (foldFlatEditFields, BUILTIN_TOOL_REPAIRS).
import { describe, expect, it } from "vitest";
import { BUILTIN_TOOL_REPAIRS, foldFlatEditFields, preprocessInput, unwrapMarkdownAutoLinks } from "../lib/core.js";

// biome-ignore lint/suspicious/noExplicitAny: preprocessors are exercised with runtime-only shapes too
type Pre = any;

function pre(input: unknown, preprocessors: Pre[], extra: { modelId?: string; allow?: boolean; toolName?: string } = {}) {
  return preprocessInput({
    input,
    toolName: extra.toolName ?? "t",
    preprocessors,
    modelId: extra.modelId,
    allowValidValueTransforms: extra.allow ?? true,
  });
}

const applied = (kind: string, at: string, tool = "t") => `Applied configured ${kind} preprocessing at ${at} for tool "${tool}".`;
const unwrapped = (at: string, tool = "t") =>
  `Unwrapped a markdown auto-link at ${at} for tool "${tool}". Send plain filesystem paths, not markdown links.`;
const renamed = (alias: string, canonical: string, tool = "t") =>
  `Renamed \`${alias}\` to \`${canonical}\` for tool "${tool}". Use \`${canonical}\` next time.`;
const ANCHOR_NOTE = (tool = "t") =>
  `Stripped leaked regex anchors (\`^\` / \`$\`) from a configured value for tool "${tool}".`;
const GRAMMAR_NOTE = (tool = "t") =>
  `Removed leaked grammar tokens (\`<arg_key>\`/\`<arg_value>\`) from configured keys or values for tool "${tool}".`;

describe("preprocessInput basics", () => {
  it("no preprocessors: deep-cloned value, no changes, no observations, input untouched", () => {
    const input = { a: { b: [1] } };
    const result = pre(input, []);
    expect(result).toEqual({ value: input, changes: [], observations: [] });
    expect(result.value).not.toBe(input);
  });

  it("preprocessors run in array order, each seeing the previous result", () => {
    const result = pre({ file: "[a.md](http://a.md)" }, [
      { kind: "alias", selector: "/path", aliases: ["file"] },
      { kind: "filesystem-path", selector: "/path" },
    ]);
    expect(result.value).toEqual({ path: "a.md" });
    expect(result.changes.map((c: { ruleId: string }) => c.ruleId)).toEqual([
      "preprocess.exact-alias",
      "preprocess.filesystem-path",
    ]);
    expect(result.changes.every((c: { stage: string }) => c.stage === "preprocess")).toBe(true);
  });

  it("never mutates the caller's input (deep-frozen input works)", () => {
    const input = deepFreeze({ file: "x", list: [{ old: "a" }], n: "5" });
    const result = pre(input, [
      { kind: "alias", selector: "/path", aliases: ["file"] },
      { kind: "alias", selector: "/list/*/oldText", aliases: ["old"] },
      { kind: "scalar", selector: "/n", scalarType: "number" },
    ]);
    expect(result.value).toEqual({ list: [{ oldText: "a" }], n: 5, path: "x" });
    expect(input).toEqual({ file: "x", list: [{ old: "a" }], n: "5" });
  });

  it("unrecognised kinds are ignored silently; glob is a recognised no-op", () => {
    const result = pre({ p: "a", q: "b" }, [
      { kind: "future-kind", selector: "/p" },
      { kind: "glob", selector: "/p" },
      { kind: "string-or-array", selector: "/q" },
      { kind: "", selector: "" },
    ]);
    expect(result.value).toEqual({ p: "a", q: ["b"] });
    expect(result.changes).toEqual([
      { ruleId: "preprocess.string-or-array", stage: "preprocess", note: applied("string-or-array", "/q") },
    ]);
  });
});

describe("selectors", () => {
  it('"" and "/" address the root', () => {
    for (const selector of ["", "/"]) {
      const result = pre("x", [{ kind: "string-or-array", selector }]);
      expect(result.value).toEqual(["x"]);
      expect(result.changes[0].note).toBe(applied("string-or-array", selector || "/"));
    }
  });

  it("~1 decodes to / and ~0 to ~ (in that order)", () => {
    const result = pre({ "a/b": "x", "a~b": "y", "~1": "z", "/0": "w" }, [
      { kind: "string-or-array", selector: "/a~1b" },
      { kind: "string-or-array", selector: "/a~0b" },
      { kind: "string-or-array", selector: "/~01" },
      { kind: "string-or-array", selector: "/~10" },
    ]);
    expect(result.value).toEqual({ "a/b": ["x"], "a~b": ["y"], "~1": ["z"], "/0": ["w"] });
  });

  it("* fans out over array elements only (objects contribute nothing)", () => {
    const result = pre({ list: ["a", 1, "b"], obj: { k: "c" } }, [
      { kind: "string-or-array", selector: "/list/*" },
      { kind: "string-or-array", selector: "/obj/*" },
    ]);
    expect(result.value).toEqual({ list: [["a"], 1, ["b"]], obj: { k: "c" } });
    expect(result.changes).toHaveLength(2);
  });

  it("numeric segments do not index arrays", () => {
    const result = pre({ list: ["a"] }, [{ kind: "string-or-array", selector: "/list/0" }]);
    expect(result.value).toEqual({ list: ["a"] });
    expect(result.changes).toEqual([]);
  });

  it("numeric segments do address record keys", () => {
    const result = pre({ rec: { "0": "a" } }, [{ kind: "string-or-array", selector: "/rec/0" }]);
    expect(result.value).toEqual({ rec: { "0": ["a"] } });
  });

  it("a selector without a leading slash loses its first segment", () => {
    const result = pre({ path: "[a.md](http://a.md)", x: { path: "[b.md](http://b.md)" } }, [
      { kind: "filesystem-path", selector: "x/path" },
    ]);
    expect(result.value).toEqual({ path: "a.md", x: { path: "[b.md](http://b.md)" } });
    expect(result.changes[0].note).toBe(unwrapped("x/path"));
  });

  it("an alias selector without a leading slash still targets the root record", () => {
    const result = pre({ file: "x" }, [{ kind: "alias", selector: "path", aliases: ["file"] }]);
    expect(result.value).toEqual({ path: "x" });
  });

  it("a missing key is still a location (value undefined); writing appends the key", () => {
    const seen: unknown[] = [];
    const result = pre({ a: 1 }, [
      {
        kind: "structural",
        selector: "/missing",
        ruleId: "fill",
        apply(value: unknown) {
          seen.push(value);
          return { value: "filled", note: "filled it" };
        },
      },
    ]);
    expect(seen).toEqual([undefined]);
    expect(JSON.stringify(result.value)).toBe('{"a":1,"missing":"filled"}');
  });

  it("locations under non-records are skipped", () => {
    const calls: unknown[] = [];
    pre({ a: "str", b: null, c: [1] }, [
      { kind: "structural", selector: "/a/x", ruleId: "r", apply: (v: unknown) => void calls.push(v) },
      { kind: "structural", selector: "/b/x", ruleId: "r", apply: (v: unknown) => void calls.push(v) },
      { kind: "structural", selector: "/c/x", ruleId: "r", apply: (v: unknown) => void calls.push(v) },
    ]);
    expect(calls).toEqual([]);
  });
});

describe("alias", () => {
  const alias = (extra: Record<string, unknown> = {}) => ({
    kind: "alias",
    selector: "/path",
    aliases: ["file_path", "filePath"],
    ...extra,
  });

  it("renames the first usable alias, appends the canonical key last, with the documented note", () => {
    const result = pre({ file_path: "a", other: 1 }, [alias()], { toolName: "read" });
    expect(JSON.stringify(result.value)).toBe('{"other":1,"path":"a"}');
    expect(result.changes).toEqual([
      { ruleId: "preprocess.exact-alias", stage: "preprocess", note: renamed("file_path", "path", "read") },
    ]);
  });

  it("at most one alias per parent location; the rest stay", () => {
    const result = pre({ file_path: "a", filePath: "b" }, [alias()]);
    expect(result.value).toEqual({ filePath: "b", path: "a" });
    expect(result.changes).toHaveLength(1);
  });

  it("skipped when the canonical value is present and not null/undefined", () => {
    const result = pre({ path: "p", file_path: "a" }, [alias()]);
    expect(result.value).toEqual({ path: "p", file_path: "a" });
    expect(result.changes).toEqual([]);
  });

  it("a null or undefined canonical value is replaced in place (key keeps its position)", () => {
    const nullResult = pre({ path: null, x: 1, file_path: "a" }, [alias()]);
    expect(JSON.stringify(nullResult.value)).toBe('{"path":"a","x":1}');
    const undefResult = pre({ path: undefined, x: 1, file_path: "a" }, [alias()]);
    expect(Object.keys(undefResult.value as object)).toEqual(["path", "x"]);
  });

  it('an empty canonical "" blocks the alias unless emptyEquivalentToMissing', () => {
    expect(pre({ path: "", file_path: "a" }, [alias()]).value).toEqual({ path: "", file_path: "a" });
    expect(pre({ path: "", file_path: "a" }, [alias({ emptyEquivalentToMissing: true })]).value).toEqual({
      path: "a",
    });
  });

  it('empty-string aliases and absent aliases are skipped in favour of later ones', () => {
    const result = pre({ file_path: "", filePath: "b" }, [alias()]);
    expect(result.value).toEqual({ file_path: "", path: "b" });
    expect(result.changes[0].note).toBe(renamed("filePath", "path"));
  });

  it("accepts: undefined → anything but null/undefined; typed forms check typeof/array/object", () => {
    expect(pre({ file_path: null, filePath: 0 }, [alias()]).value).toEqual({ file_path: null, path: 0 });
    expect(pre({ file_path: 1, filePath: "s" }, [alias({ accepts: "string" })]).value).toEqual({
      file_path: 1,
      path: "s",
    });
    expect(pre({ file_path: "s", filePath: 2 }, [alias({ accepts: "number" })]).value).toEqual({
      file_path: "s",
      path: 2,
    });
    expect(pre({ file_path: "true", filePath: false }, [alias({ accepts: "boolean" })]).value).toEqual({
      file_path: "true",
      path: false,
    });
    expect(pre({ file_path: {}, filePath: [1] }, [alias({ accepts: "array" })]).value).toEqual({
      file_path: {},
      path: [1],
    });
    expect(pre({ file_path: [1], filePath: {} }, [alias({ accepts: "object" })]).value).toEqual({
      file_path: [1],
      path: {},
    });
    expect(pre({ file_path: null }, [alias({ accepts: "object" })]).changes).toEqual([]);
  });

  it("applies for every record matched by a * parent selector", () => {
    const result = pre({ edits: [{ old_string: "a" }, { oldText: "k", old_string: "b" }, "s"] }, [
      { kind: "alias", selector: "/edits/*/oldText", aliases: ["old_string"] },
    ]);
    expect(result.value).toEqual({ edits: [{ oldText: "a" }, { oldText: "k", old_string: "b" }, "s"] });
    expect(result.changes).toHaveLength(1);
  });

  it("does nothing when the parent is not a record", () => {
    expect(pre("str", [alias()]).value).toBe("str");
    expect(pre([{ file_path: "a" }], [alias()]).value).toEqual([{ file_path: "a" }]);
  });

  it("applies even when valid-value transforms are disallowed", () => {
    expect(pre({ file_path: "a" }, [alias()], { allow: false }).value).toEqual({ path: "a" });
  });
});

describe("field kinds", () => {
  it("filesystem-path unwraps degenerate markdown auto-links in strings only", () => {
    const result = pre({ path: "/home/[notes.md](http://notes.md)", n: 1 }, [
      { kind: "filesystem-path", selector: "/path" },
      { kind: "filesystem-path", selector: "/n" },
    ]);
    expect(result.value).toEqual({ path: "/home/notes.md", n: 1 });
    expect(result.changes).toEqual([
      { ruleId: "preprocess.filesystem-path", stage: "preprocess", note: unwrapped("/path") },
    ]);
  });

  it("filesystem-path leaves a real link alone (no change)", () => {
    const result = pre({ path: "[notes](http://example.com/notes.md)" }, [{ kind: "filesystem-path", selector: "/path" }]);
    expect(result.changes).toEqual([]);
  });

  it("filesystem-path-array unwraps string elements and keeps others", () => {
    const result = pre({ paths: ["[a.md](https://a.md)", 7, "b"] }, [
      { kind: "filesystem-path-array", selector: "/paths" },
    ]);
    expect(result.value).toEqual({ paths: ["a.md", 7, "b"] });
    expect(result.changes).toEqual([
      { ruleId: "preprocess.filesystem-path-array", stage: "preprocess", note: unwrapped("/paths") },
    ]);
  });

  it("string-or-array wraps strings only", () => {
    const result = pre({ a: "x", b: ["y"], c: 1 }, [
      { kind: "string-or-array", selector: "/a" },
      { kind: "string-or-array", selector: "/b" },
      { kind: "string-or-array", selector: "/c" },
    ]);
    expect(result.value).toEqual({ a: ["x"], b: ["y"], c: 1 });
    expect(result.changes).toHaveLength(1);
  });

  it('scalar "string" stringifies numbers and booleans with JS String()', () => {
    const result = pre({ a: 5, b: true, c: 1e21, d: -0, e: null, f: "s" }, [
      { kind: "scalar", selector: "/a", scalarType: "string" },
      { kind: "scalar", selector: "/b", scalarType: "string" },
      { kind: "scalar", selector: "/c", scalarType: "string" },
      { kind: "scalar", selector: "/d", scalarType: "string" },
      { kind: "scalar", selector: "/e", scalarType: "string" },
      { kind: "scalar", selector: "/f", scalarType: "string" },
    ]);
    expect(result.value).toEqual({ a: "5", b: "true", c: "1e+21", d: "0", e: null, f: "s" });
    expect(result.changes).toHaveLength(4);
    expect(result.changes[0]).toEqual({
      ruleId: "preprocess.scalar",
      stage: "preprocess",
      note: applied("scalar", "/a"),
    });
  });

  it('scalar "number" uses JS Number() on non-blank strings and keeps only finite results', () => {
    const input = { a: " 0x10 ", b: "1e3", c: "abc", d: "", e: "   ", f: "Infinity", g: "-2.5", h: 4, i: "0b11" };
    const result = pre(
      input,
      Object.keys(input).map((k) => ({ kind: "scalar", selector: `/${k}`, scalarType: "number" })),
    );
    expect(result.value).toEqual({ a: 16, b: 1000, c: "abc", d: "", e: "   ", f: "Infinity", g: -2.5, h: 4, i: 3 });
    expect(result.changes).toHaveLength(4);
  });

  it('scalar "boolean" accepts true/false in any case only', () => {
    const input = { a: "TRUE", b: "False", c: "yes", d: 1, e: " true" };
    const result = pre(
      input,
      Object.keys(input).map((k) => ({ kind: "scalar", selector: `/${k}`, scalarType: "boolean" })),
    );
    expect(result.value).toEqual({ a: true, b: false, c: "yes", d: 1, e: " true" });
  });

  it("scalar without scalarType does nothing", () => {
    expect(pre({ a: 5 }, [{ kind: "scalar", selector: "/a" }]).changes).toEqual([]);
  });

  it("non-heuristic kinds apply even when valid-value transforms are disallowed", () => {
    const result = pre({ a: "x", p: "[a](http://a)" }, [
      { kind: "string-or-array", selector: "/a" },
      { kind: "filesystem-path", selector: "/p" },
    ], { allow: false });
    expect(result.value).toEqual({ a: ["x"], p: "a" });
    expect(result.observations).toEqual([]);
  });
});

describe("heuristic kinds (anchor-bleed, grammar-tokens)", () => {
  const anchor = (selector: string, families: RegExp[] = [/glm/i]) => ({ kind: "anchor-bleed", selector, modelFamilies: families });
  const grammar = (selector: string, families: RegExp[] = [/glm/i]) => ({ kind: "grammar-tokens", selector, modelFamilies: families });

  it("anchor-bleed strips all leading ^ and trailing $ for a matching model", () => {
    const result = pre({ p: "^^src/a$b.ts$$", q: "a^b" }, [anchor("/p"), anchor("/q")], { modelId: "GLM-4.6" });
    expect(result.value).toEqual({ p: "src/a$b.ts", q: "a^b" });
    expect(result.changes).toEqual([{ ruleId: "stripAnchorBleed", stage: "preprocess", note: ANCHOR_NOTE() }]);
  });

  it("skipped without a modelId, with an empty modelId, or when no family matches", () => {
    for (const modelId of [undefined, "", "gpt-5"]) {
      const result = pre({ p: "^a$" }, [anchor("/p")], { modelId, allow: true });
      expect(result).toEqual({ value: { p: "^a$" }, changes: [], observations: [] });
    }
    expect(pre({ p: "^a$" }, [{ kind: "anchor-bleed", selector: "/p" }], { modelId: "glm" }).changes).toEqual([]);
  });

  it("when disallowed, the change is not applied and its ruleId is observed once", () => {
    const result = pre({ list: ["^a", "b$"], k: "<arg_key>x" }, [anchor("/list/*"), grammar("/k")], {
      modelId: "glm",
      allow: false,
    });
    expect(result).toEqual({
      value: { list: ["^a", "b$"], k: "<arg_key>x" },
      changes: [],
      observations: ["stripAnchorBleed", "stripGrammarTokenLeak"],
    });
  });

  it("grammar-tokens on a string strips one leading and one trailing token, then trims", () => {
    // `d` carries no token: left byte-for-byte (deliberate divergence; the reference trims it to "z").
    const result = pre(
      { a: "<arg_key>path</arg_key>", b: "<arg_value> x </arg_value>", c: "<arg_key><arg_key>y", d: "  z  ", e: "m<arg_key>n" },
      ["a", "b", "c", "d", "e"].map((k) => grammar(`/${k}`)),
      { modelId: "glm-4.6" },
    );
    expect(result.value).toEqual({ a: "path", b: "x", c: "<arg_key>y", d: "  z  ", e: "m<arg_key>n" });
    expect(result.changes).toHaveLength(3);
    expect(result.changes[0]).toEqual({ ruleId: "stripGrammarTokenLeak", stage: "preprocess", note: GRAMMAR_NOTE() });
  });

  it("grammar-tokens on a record strips keys and string values; later colliding keys win", () => {
    const result = pre(
      { "<arg_key>path</arg_key>": "<arg_value>a.ts</arg_value>", n: 1, "path</arg_key>": "second" },
      [grammar("")],
      { modelId: "glm" },
    );
    expect(JSON.stringify(result.value)).toBe('{"path":"second","n":1}');
    expect(result.changes).toHaveLength(1);
  });

  it("grammar-tokens on a record with nothing to strip is a no-op", () => {
    const input = { path: "a", n: [1] };
    const result = pre(input, [grammar("")], { modelId: "glm" });
    expect(result).toEqual({ value: input, changes: [], observations: [] });
  });

  it("a shared global-flag family RegExp is stateful: the second .test on the same id fails", () => {
    const family = /glm/g;
    const result = pre({ a: "^x", b: "^y", c: "^z" }, [anchor("/a", [family]), anchor("/b", [family]), anchor("/c", [family])], {
      modelId: "glm-4.6",
    });
    // test #1 matches (lastIndex 3), #2 starts at 3 and fails (lastIndex reset), #3 matches again
    expect(result.value).toEqual({ a: "x", b: "^y", c: "z" });
    expect(family.lastIndex).toBe(3);
  });

  it("families are tested in order until one matches", () => {
    const calls: string[] = [];
    const spy = (name: string, answer: boolean) =>
      Object.assign(/never-matches-anything/, { test: (id: string) => (calls.push(`${name}:${id}`), answer) });
    const result = pre({ p: "^a" }, [{ kind: "anchor-bleed", selector: "/p", modelFamilies: [spy("one", false), spy("two", true), spy("three", true)] }], {
      modelId: "m",
    });
    expect(result.value).toEqual({ p: "a" });
    expect(calls).toEqual(["one:m", "two:m"]);
  });
});

describe("structural", () => {
  it("writes the returned value at the location and records ruleId/note", () => {
    const result = pre({ a: { b: 1 } }, [
      { kind: "structural", selector: "/a", ruleId: "my.rule", apply: (v: { b: number }) => ({ value: { b: v.b + 1 }, note: "bumped" }) },
    ]);
    expect(result.value).toEqual({ a: { b: 2 } });
    expect(result.changes).toEqual([{ ruleId: "my.rule", stage: "preprocess", note: "bumped" }]);
  });

  it("at the root, replaces the whole value", () => {
    const result = pre({ a: 1 }, [{ kind: "structural", selector: "", ruleId: "r", apply: () => ({ value: ["new"], note: "n" }) }]);
    expect(result.value).toEqual(["new"]);
  });

  it("apply that mutates in place and returns the same object is recorded", () => {
    const result = pre({ a: 1 }, [
      {
        kind: "structural",
        selector: "",
        ruleId: "r",
        apply(v: Record<string, unknown>) {
          v.b = 2;
          return { value: v, note: "added b" };
        },
      },
    ]);
    expect(result.value).toEqual({ a: 1, b: 2 });
    expect(result.changes).toHaveLength(1);
  });

  it("apply that mutates in place and returns undefined records nothing but the mutation stays", () => {
    const input = { a: 1 };
    const result = pre(input, [
      {
        kind: "structural",
        selector: "",
        ruleId: "r",
        apply(v: Record<string, unknown>) {
          v.b = 2;
          return undefined;
        },
      },
    ]);
    expect(result.value).toEqual({ a: 1, b: 2 });
    expect(result.changes).toEqual([]);
    expect(input).toEqual({ a: 1 });
  });

  it("apply receives a copy, never the caller's object", () => {
    const input = { a: { b: 1 } };
    let received: unknown;
    pre(input, [{ kind: "structural", selector: "/a", ruleId: "r", apply: (v: unknown) => void (received = v) }]);
    expect(received).toEqual({ b: 1 });
    expect(received).not.toBe(input.a);
  });

  it("a throwing apply propagates", () => {
    const boom = new Error("boom");
    expect(() =>
      pre({ a: 1 }, [
        {
          kind: "structural",
          selector: "",
          ruleId: "r",
          apply() {
            throw boom;
          },
        },
      ]),
    ).toThrow(boom);
  });

  it("is not policy-gated", () => {
    const result = pre({ a: 1 }, [{ kind: "structural", selector: "/a", ruleId: "r", apply: () => ({ value: 2, note: "n" }) }], {
      allow: false,
    });
    expect(result.value).toEqual({ a: 2 });
  });

  it("is called once per * location, including for array elements", () => {
    const seen: unknown[] = [];
    const result = pre({ l: [1, 2] }, [
      {
        kind: "structural",
        selector: "/l/*",
        ruleId: "double",
        apply: (v: number) => (seen.push(v), { value: v * 2, note: `doubled ${v}` }),
      },
    ]);
    expect(seen).toEqual([1, 2]);
    expect(result.value).toEqual({ l: [2, 4] });
    expect(result.changes.map((c: { note: string }) => c.note)).toEqual(["doubled 1", "doubled 2"]);
  });
});

describe("unwrapMarkdownAutoLinks", () => {
  it("unwraps only when the URL without protocol equals the text", () => {
    expect(unwrapMarkdownAutoLinks("[notes.md](http://notes.md)")).toBe("notes.md");
    expect(unwrapMarkdownAutoLinks("/x/[a.ts](https://a.ts) and [b](http://b)")).toBe("/x/a.ts and b");
    expect(unwrapMarkdownAutoLinks("[notes](http://example.com/notes.md)")).toBe("[notes](http://example.com/notes.md)");
    expect(unwrapMarkdownAutoLinks("[a.md](ftp://a.md)")).toBe("[a.md](ftp://a.md)");
    expect(unwrapMarkdownAutoLinks("[a\nb](http://a\nb)")).toBe("[a\nb](http://a\nb)");
    expect(unwrapMarkdownAutoLinks("[a.md](HTTP://a.md)")).toBe("[a.md](HTTP://a.md)");
    expect(unwrapMarkdownAutoLinks("plain")).toBe("plain");
  });
});

describe("foldFlatEditFields (structural apply)", () => {
  const NOTE = (o: string, n: string) =>
    `Folded flat \`${o}\`/\`${n}\` fields into \`edits: [{oldText, newText}]\` for tool "edit". This tool takes an array of edit objects — send \`edits\` next time.`;

  it("folds an aliased flat pair, mutating and returning the same record", () => {
    const record: Record<string, unknown> = { path: "/x", old_string: "a", new_string: "b" };
    const result = foldFlatEditFields(record);
    expect(result).toEqual({ value: record, note: NOTE("old_string", "new_string") });
    expect(result?.value).toBe(record);
    expect(JSON.stringify(record)).toBe('{"path":"/x","edits":[{"oldText":"a","newText":"b"}]}');
  });

  it("prefers oldText/newText, then aliases in list order, skipping non-strings; deletes every old/new key", () => {
    const record: Record<string, unknown> = { oldText: 1, search: "s", old: "o", newText: "n", to: 5, replace: "r" };
    const result = foldFlatEditFields(record);
    expect(result?.note).toBe(NOTE("old", "newText"));
    expect(record).toEqual({ edits: [{ oldText: "o", newText: "n" }] });
  });

  it("no-op (undefined, untouched) when edits is a non-empty array or a side is missing", () => {
    const withEdits = { edits: [{}], oldText: "a", newText: "b" };
    expect(foldFlatEditFields(withEdits)).toBeUndefined();
    expect(withEdits).toEqual({ edits: [{}], oldText: "a", newText: "b" });
    const half = { old_string: "a", new_string: 3 };
    expect(foldFlatEditFields(half)).toBeUndefined();
    expect(half).toEqual({ old_string: "a", new_string: 3 });
  });

  it("replaces an empty or non-array edits value (assignment keeps an existing key's position)", () => {
    const record: Record<string, unknown> = { edits: [], path: "p", oldText: "a", newText: "b" };
    foldFlatEditFields(record);
    expect(JSON.stringify(record)).toBe('{"edits":[{"oldText":"a","newText":"b"}],"path":"p"}');
    const str: Record<string, unknown> = { edits: "x", oldText: "a", newText: "b" };
    foldFlatEditFields(str);
    expect(str).toEqual({ edits: [{ oldText: "a", newText: "b" }] });
  });

  it("returns undefined for non-records", () => {
    for (const value of ["s", 1, null, undefined, [{ oldText: "a", newText: "b" }]]) {
      expect(foldFlatEditFields(value)).toBeUndefined();
    }
  });
});

describe("BUILTIN_TOOL_REPAIRS (spec §12 tables)", () => {
  const PATH = ["file_path", "filePath", "filepath", "absolute_path", "absolutePath", "pathname", "file", "filename", "fileName", "target_file", "targetFile"];
  const OLD = ["old_string", "oldString", "old_str", "oldStr", "old_text", "oldValue", "old_value", "oldContent", "old_content", "old", "from", "search"];
  const NEW = ["new_string", "newString", "new_str", "newStr", "new_text", "newValue", "new_value", "newContent", "new_content", "new", "to", "replace"];
  const BASH = ["cmd", "script", "shell", "bash_command", "bashCommand", "command_line", "commandLine"];
  const CONTENT = ["text", "body", "data", "contents", "file_content", "fileContent", "file_text", "fileText", "new_content", "newContent"];
  const GREP = ["query", "regex", "search", "q", "expression", "search_pattern", "searchPattern"];
  const FIND = ["glob", "query", "name_pattern", "namePattern", "file_pattern", "filePattern", "search", "name"];
  const LS = ["directory", "dir", "folder", "directory_path", "directoryPath", ...PATH];
  const EDITS = ["changes", "replacements", "modifications", "operations"];
  const ANCHOR = ["/kimi-k2/i", "/minimax/i", "/glm/i"];
  const GLM = ["/glm/i"];

  const alias = (selector: string, aliases: string[], empty = false, accepts = "string") => ({
    kind: "alias",
    selector,
    aliases,
    accepts,
    emptyEquivalentToMissing: empty,
  });
  const fsPath = (selector: string) => ({ kind: "filesystem-path", selector });
  const anchor = (selector: string) => ({ kind: "anchor-bleed", selector, modelFamilies: ANCHOR });
  const grammar = (selector: string) => ({ kind: "grammar-tokens", selector, modelFamilies: GLM });
  const fold = { kind: "structural", selector: "", ruleId: "foldFlatEditFields" };

  const expected: Record<string, unknown[]> = {
    read: [alias("/path", PATH, true), fsPath("/path"), anchor("/path"), grammar("")],
    bash: [alias("/command", BASH), grammar("")],
    edit: [
      alias("/path", PATH, true),
      alias("/edits", EDITS, false, "array"),
      alias("/edits/*/oldText", OLD),
      alias("/edits/*/newText", NEW),
      fsPath("/path"),
      anchor("/path"),
      grammar(""),
      grammar("/edits/*"),
      fold,
    ],
    write: [alias("/path", PATH, true), alias("/content", CONTENT), fsPath("/path"), anchor("/path"), grammar("")],
    grep: [alias("/pattern", GREP), fsPath("/path"), anchor("/path"), grammar("")],
    find: [alias("/pattern", FIND), fsPath("/path"), anchor("/path"), anchor("/pattern"), grammar("")],
    ls: [alias("/path", LS, true), fsPath("/path"), anchor("/path"), grammar("")],
  };

  // Normalise a live preprocessor into data: RegExp → "/src/flags", functions dropped, optional falsy flags explicit.
  function describePre(p: Record<string, unknown>): Record<string, unknown> {
    const out: Record<string, unknown> = { kind: p.kind, selector: p.selector };
    if (p.kind === "alias") {
      out.aliases = [...(p.aliases as string[])];
      out.accepts = p.accepts;
      out.emptyEquivalentToMissing = p.emptyEquivalentToMissing === true;
    } else if (p.kind === "structural") {
      out.ruleId = p.ruleId;
      expect(typeof p.apply).toBe("function");
    } else if (p.modelFamilies) {
      out.modelFamilies = (p.modelFamilies as RegExp[]).map((r) => `/${r.source}/${r.flags}`);
    }
    return out;
  }

  it("covers exactly pi's seven built-in tools", () => {
    expect(Object.keys(BUILTIN_TOOL_REPAIRS).sort()).toEqual(["bash", "edit", "find", "grep", "ls", "read", "write"]);
  });

  for (const tool of Object.keys(expected)) {
    it(`${tool}: preprocessors in order`, () => {
      const table = (BUILTIN_TOOL_REPAIRS as Record<string, { preprocessors: Record<string, unknown>[] }>)[tool];
      expect(table?.preprocessors.map(describePre)).toEqual(expected[tool]);
    });
  }

  it("legacy configs", () => {
    const legacy = Object.fromEntries(
      Object.entries(BUILTIN_TOOL_REPAIRS as Record<string, { legacyConfig: Record<string, unknown> }>).map(([tool, t]) => {
        const { structural, ...rest } = t.legacyConfig;
        const data = JSON.parse(JSON.stringify(rest));
        if (structural) data.structural = (structural as Array<{ name: string }>).map((s) => s.name);
        return [tool, data];
      }),
    );
    expect(legacy).toEqual({
      read: { fieldAliases: { path: PATH }, rootString: { field: "path" }, pathFields: ["path"] },
      bash: { fieldAliases: { command: BASH }, rootString: { field: "command" } },
      edit: {
        fieldAliases: { path: PATH, edits: EDITS, oldText: OLD, newText: NEW },
        pathFields: ["path"],
        structural: ["foldFlatEditFields"],
      },
      write: { fieldAliases: { path: PATH, content: CONTENT }, pathFields: ["path"] },
      grep: { fieldAliases: { pattern: GREP }, rootString: { field: "pattern" }, pathFields: ["path"] },
      find: { fieldAliases: { pattern: FIND }, rootString: { field: "pattern" }, pathFields: ["path"] },
      ls: { fieldAliases: { path: LS }, rootString: { field: "path" }, pathFields: ["path"] },
    });
  });

  it("edit's structural preprocessor applies foldFlatEditFields", () => {
    const fold = (BUILTIN_TOOL_REPAIRS as Record<string, { preprocessors: Pre[] }>).edit?.preprocessors.find(
      (p: Pre) => p.kind === "structural",
    );
    const record = { path: "p", search: "a", replace: "b" };
    const out = fold.apply(record);
    expect(out.value).toBe(record);
    expect(record).toEqual({ path: "p", edits: [{ oldText: "a", newText: "b" }] });
    expect(out.note).toContain("`search`/`replace`");
    expect(fold.apply("x")).toBeUndefined();
  });

  it("edit's legacy structural repair folds in place and names the given tool", () => {
    const repair = (BUILTIN_TOOL_REPAIRS as Record<string, { legacyConfig: Pre }>).edit?.legacyConfig.structural[0];
    const args: Record<string, unknown> = { path: "p", oldText: "a", newText: "b" };
    expect(repair.apply(args, "my-edit")).toBe(
      'Folded flat `oldText`/`newText` fields into `edits: [{oldText, newText}]` for tool "my-edit". This tool takes an array of edit objects — send `edits` next time.',
    );
    expect(args).toEqual({ path: "p", edits: [{ oldText: "a", newText: "b" }] });
    expect(repair.apply({ path: "p" }, "edit")).toBe(false);
  });
});

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
}

// Spec §4: envelope recovery (recoverEnvelope, escapeJsonStringControlCharacters,
// isPlainObject, truncatedEnvelopeChange, DEFAULT_ENVELOPE_LIMITS).
import { describe, expect, it } from "vitest";
import {
  DEFAULT_ENVELOPE_LIMITS,
  escapeJsonStringControlCharacters,
  isPlainObject,
  recoverEnvelope,
  truncatedEnvelopeChange,
} from "../lib/core.js";

const DECODE = {
  ruleId: "envelope.decode-json",
  stage: "envelope",
  note: "Decoded a JSON-encoded tool-argument envelope. Send the argument object directly next time.",
};
const ESCAPE = {
  ruleId: "envelope.escape-control-character",
  stage: "envelope",
  note: "Escaped a raw control character inside the JSON argument envelope.",
};
const UNWRAP = {
  ruleId: "envelope.unwrap-singleton-object-array",
  stage: "envelope",
  note: "Unwrapped a singleton object array used as the tool-argument envelope.",
};

function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 0; i < depth - 1; i++) value = { n: value };
  return value; // nested(k) has nesting depth k - 1
}

describe("limits", () => {
  it("DEFAULT_ENVELOPE_LIMITS has the documented values", () => {
    expect(DEFAULT_ENVELOPE_LIMITS).toEqual({
      maxInputBytes: 262144,
      maxNestingDepth: 64,
      maxDecodeAttempts: 3,
      maxCandidates: 4,
      maxWorkMs: 25,
    });
  });

  it("maxInputBytes counts UTF-8 bytes of a string input", () => {
    expect(recoverEnvelope("éé", { maxInputBytes: 3 }).limited).toBe(true);
    expect(recoverEnvelope("éé", { maxInputBytes: 4 }).limited).toBe(false);
  });

  it("a lone surrogate counts 3 bytes", () => {
    expect(recoverEnvelope("\uD800", { maxInputBytes: 2 }).limited).toBe(true);
    expect(recoverEnvelope("\uD800", { maxInputBytes: 3 }).limited).toBe(false);
  });

  it("maxInputBytes counts the JSON.stringify bytes of a non-string input", () => {
    // '{"a":"é"}' is 10 UTF-8 bytes
    expect(recoverEnvelope({ a: "é" }, { maxInputBytes: 9 }).limited).toBe(true);
    expect(recoverEnvelope({ a: "é" }, { maxInputBytes: 10 }).limited).toBe(false);
  });

  it("the default byte limit is 256 KiB", () => {
    expect(recoverEnvelope("x".repeat(262144)).limited).toBe(false);
    expect(recoverEnvelope("x".repeat(262145)).limited).toBe(true);
  });

  it("an input JSON.stringify cannot serialise (BigInt) counts as infinitely large", () => {
    const input = { a: 1n };
    const result = recoverEnvelope(input);
    expect(result).toEqual({ value: input, changes: [], candidates: [], limited: true });
    expect(result.value).toBe(input);
  });

  it("undefined input counts 0 bytes and is not limited", () => {
    expect(recoverEnvelope(undefined, { maxInputBytes: 0 })).toEqual({
      value: undefined,
      changes: [],
      candidates: [],
      limited: false,
    });
  });

  it("maxNestingDepth: root is depth 0, primitives count as a level", () => {
    expect(recoverEnvelope({ a: 1 }, { maxNestingDepth: 0 }).limited).toBe(true);
    expect(recoverEnvelope({ a: 1 }, { maxNestingDepth: 1 }).limited).toBe(false);
    expect(recoverEnvelope({ a: { b: [1] } }, { maxNestingDepth: 2 }).limited).toBe(true);
    expect(recoverEnvelope({ a: { b: [1] } }, { maxNestingDepth: 3 }).limited).toBe(false);
    expect(recoverEnvelope([], { maxNestingDepth: 0 }).limited).toBe(false);
    expect(recoverEnvelope("str", { maxNestingDepth: 0 }).limited).toBe(false);
  });

  it("default nesting limit is 64", () => {
    expect(recoverEnvelope(nested(65)).limited).toBe(false); // depth 64
    expect(recoverEnvelope(nested(66)).limited).toBe(true); // depth 65
  });

  it("a shared (non-cyclic) sub-object or a cycle is reported as limited", () => {
    const shared = { x: 1 };
    const input = { a: shared, b: shared };
    const result = recoverEnvelope(input);
    expect(result.limited).toBe(true);
    expect(result.value).toBe(input);
    const cyclic: Record<string, unknown> = { path: "a" };
    cyclic.self = cyclic;
    expect(recoverEnvelope(cyclic).limited).toBe(true);
    expect(recoverEnvelope(cyclic).value).toBe(cyclic);
  });

  it("a limited result returns the caller's reference with no changes or candidates", () => {
    const input = '{"a":1}';
    expect(recoverEnvelope(input, { maxInputBytes: 1 })).toEqual({
      value: input,
      changes: [],
      candidates: [],
      limited: true,
    });
    const obj = { a: "long" };
    expect(recoverEnvelope(obj, { maxInputBytes: 1 }).value).toBe(obj);
  });

  it("the decoded value is re-checked for depth; decode changes are then discarded", () => {
    const input = '{"a":{"b":{"c":1}}}'; // string itself has depth 0, decoded value depth 3
    expect(recoverEnvelope(input, { maxNestingDepth: 2 })).toEqual({
      value: input,
      changes: [],
      candidates: [],
      limited: true,
    });
    expect(recoverEnvelope(input, { maxNestingDepth: 3 }).limited).toBe(false);
  });

  it("override key present with value undefined: maxDecodeAttempts undefined disables decoding", () => {
    const result = recoverEnvelope('{"a":1}', { maxDecodeAttempts: undefined });
    expect(result).toEqual({ value: '{"a":1}', changes: [], candidates: [], limited: false });
  });

  it("override key present with value undefined: maxInputBytes undefined disables the byte guard", () => {
    expect(recoverEnvelope("x".repeat(300000), { maxInputBytes: undefined }).limited).toBe(false);
  });

  it("override key present with value undefined: maxNestingDepth undefined disables the depth guard", () => {
    const shared = {};
    expect(recoverEnvelope({ a: shared, b: shared }, { maxNestingDepth: undefined }).limited).toBe(false);
    expect(recoverEnvelope(nested(200), { maxNestingDepth: undefined }).limited).toBe(false);
  });

  it("override key present with value undefined: maxWorkMs undefined stops decoding but not candidates", () => {
    expect(recoverEnvelope('{"a":1}', { maxWorkMs: undefined })).toEqual({
      value: '{"a":1}',
      changes: [],
      candidates: [],
      limited: false,
    });
    expect(recoverEnvelope('{"a":"b', { maxWorkMs: undefined }).candidates).toEqual([{ a: "b" }]);
  });

  it("override key present with value undefined: maxCandidates undefined removes the candidate cap", () => {
    expect(recoverEnvelope('{"a":"b', { maxCandidates: undefined }).candidates).toEqual([{ a: "b" }]);
  });

  it("a negative maxWorkMs budget stops both decoding and candidate search", () => {
    expect(recoverEnvelope('{"a":1}', { maxWorkMs: -1 })).toEqual({
      value: '{"a":1}',
      changes: [],
      candidates: [],
      limited: false,
    });
    expect(recoverEnvelope('{"a":"b', { maxWorkMs: -1 }).candidates).toEqual([]);
  });

  it("maxCandidates 0 yields no candidates", () => {
    expect(recoverEnvelope('{"a":"b', { maxCandidates: 0 }).candidates).toEqual([]);
    expect(recoverEnvelope('{"a":"b', { maxCandidates: 1 }).candidates).toEqual([{ a: "b" }]);
  });

  it("overrides merge over the defaults (other limits keep their default)", () => {
    // only maxCandidates overridden: decoding (default 3 attempts) still works
    expect(recoverEnvelope('{"a":1}', { maxCandidates: 0 }).value).toEqual({ a: 1 });
  });
});

describe("decoding", () => {
  it("a plain object input is deep-cloned, with no changes", () => {
    const input = { a: { b: [1, "x"] } };
    const result = recoverEnvelope(input);
    expect(result).toEqual({ value: input, changes: [], candidates: [], limited: false });
    expect(result.value).not.toBe(input);
    expect((result.value as { a: unknown }).a).not.toBe(input.a);
  });

  it("a JSON string is decoded with the generic envelope note", () => {
    expect(recoverEnvelope('{"path":"a"}')).toEqual({
      value: { path: "a" },
      changes: [DECODE],
      candidates: [],
      limited: false,
    });
  });

  it("double and triple encoding give one decode change per layer", () => {
    const once = JSON.stringify({ a: 1 });
    const twice = JSON.stringify(once);
    const thrice = JSON.stringify(twice);
    expect(recoverEnvelope(twice).changes).toEqual([DECODE, DECODE]);
    expect(recoverEnvelope(thrice)).toEqual({
      value: { a: 1 },
      changes: [DECODE, DECODE, DECODE],
      candidates: [],
      limited: false,
    });
  });

  it("a value still a string after 3 attempts is undecodable: input returned, changes discarded", () => {
    const four = JSON.stringify(JSON.stringify(JSON.stringify(JSON.stringify({ a: 1 }))));
    expect(recoverEnvelope(four)).toEqual({ value: four, changes: [], candidates: [], limited: false });
  });

  it("maxDecodeAttempts bounds the layers", () => {
    const twice = JSON.stringify(JSON.stringify({ a: 1 }));
    expect(recoverEnvelope(twice, { maxDecodeAttempts: 1 })).toEqual({
      value: twice,
      changes: [],
      candidates: [],
      limited: false,
    });
    expect(recoverEnvelope('{"a":1}', { maxDecodeAttempts: 0 }).value).toBe('{"a":1}');
  });

  it("a raw control character inside a JSON string is escaped; change follows the decode change", () => {
    expect(recoverEnvelope('{"a":"x\ny"}')).toEqual({
      value: { a: "x\ny" },
      changes: [DECODE, ESCAPE],
      candidates: [],
      limited: false,
    });
  });

  it("whitespace between tokens is not a control-character repair", () => {
    expect(recoverEnvelope('\n{\t"a":1\r\n} ').changes).toEqual([DECODE]);
  });

  it("the escape change is only recorded for the first decode attempt", () => {
    // outer layer encodes the newline as \n; the inner layer then holds a raw newline
    const twice = JSON.stringify('{"a":"x\ny"}');
    expect(recoverEnvelope(twice)).toEqual({
      value: { a: "x\ny" },
      changes: [DECODE, DECODE],
      candidates: [],
      limited: false,
    });
  });

  it("a decoded non-object reverts to the original input and discards changes", () => {
    expect(recoverEnvelope("42")).toEqual({ value: "42", changes: [], candidates: [], limited: false });
    expect(recoverEnvelope('"hello"')).toEqual({ value: '"hello"', changes: [], candidates: [], limited: false });
    expect(recoverEnvelope("[1,2]")).toEqual({ value: "[1,2]", changes: [], candidates: [], limited: false });
    expect(recoverEnvelope("not json")).toEqual({ value: "not json", changes: [], candidates: [], limited: false });
  });

  it("non-object, non-string inputs are returned as they are", () => {
    for (const input of [42, null, true, [1, 2], []]) {
      const result = recoverEnvelope(input);
      expect(result).toEqual({ value: input, changes: [], candidates: [], limited: false });
      expect(result.value).toBe(input);
    }
  });

  it("JSON.parse semantics: last duplicate wins at the first position; __proto__ stays an own key", () => {
    const dup = recoverEnvelope('{"a":1,"b":2,"a":3}').value;
    expect(JSON.stringify(dup)).toBe('{"a":3,"b":2}');
    const proto = recoverEnvelope('{"__proto__":{"polluted":true},"k":1}').value as Record<string, unknown>;
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
    expect(Object.keys(proto)).toEqual(["__proto__", "k"]);
    expect(Object.getOwnPropertyDescriptor(proto, "__proto__")?.value).toEqual({ polluted: true });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("JSON.parse semantics: 1e400 → Infinity, lone surrogate escapes survive", () => {
    expect(recoverEnvelope('{"n":1e400}').value).toEqual({ n: Number.POSITIVE_INFINITY });
    const s = (recoverEnvelope('{"s":"\\uD800x"}').value as { s: string }).s;
    expect(s.length).toBe(2);
    expect(s.charCodeAt(0)).toBe(0xd800);
  });

  it("only JSON whitespace surrounds a decodable envelope (NBSP is not JSON whitespace)", () => {
    expect(recoverEnvelope(' \t\n\r{"a":1} ').value).toEqual({ a: 1 });
    const nbsp = '\u00a0{"a":1}';
    expect(recoverEnvelope(nbsp)).toEqual({ value: nbsp, changes: [], candidates: [], limited: false });
  });
});

describe("singleton unwrap", () => {
  it("a direct singleton object array is unwrapped", () => {
    expect(recoverEnvelope([{ a: 1 }])).toEqual({
      value: { a: 1 },
      changes: [UNWRAP],
      candidates: [],
      limited: false,
    });
  });

  it("a decoded singleton object array is unwrapped after the decode change", () => {
    expect(recoverEnvelope('[{"a":1}]').changes).toEqual([DECODE, UNWRAP]);
  });

  it("only one level, only length 1, only object elements", () => {
    for (const input of [[[{ a: 1 }]], [{ a: 1 }, { b: 2 }], [1], [[1]], [null]]) {
      const result = recoverEnvelope(input);
      expect(result.value).toBe(input);
      expect(result.changes).toEqual([]);
    }
  });
});

describe("truncation candidates", () => {
  it("suffixes close an unterminated string, object, array and array of objects", () => {
    expect(recoverEnvelope('{"a":1').candidates).toEqual([{ a: 1 }]);
    expect(recoverEnvelope('{"a":"b').candidates).toEqual([{ a: "b" }]);
    expect(recoverEnvelope('{"a":[1').candidates).toEqual([{ a: [1] }]);
    expect(recoverEnvelope('{"a":[{"b":"c').candidates).toEqual([{ a: [{ b: "c" }] }]);
  });

  it("candidates carry no change and the value stays the original input", () => {
    const input = '{"a":"b';
    const result = recoverEnvelope(input);
    expect(result).toEqual({ value: input, changes: [], candidates: [{ a: "b" }], limited: false });
  });

  it("leading whitespace is allowed (trimStart), other first characters are not", () => {
    expect(recoverEnvelope('  \n{"a":1').candidates).toEqual([{ a: 1 }]);
    expect(recoverEnvelope('[{"a":1').candidates).toEqual([]);
    expect(recoverEnvelope('x{"a":1').candidates).toEqual([]);
  });

  it("raw control characters are escaped in candidates too", () => {
    expect(recoverEnvelope('{"a":"x\ny').candidates).toEqual([{ a: "x\ny" }]);
  });

  it("a complete but non-object JSON string gives no candidates", () => {
    expect(recoverEnvelope('{"a":1}}').candidates).toEqual([]);
  });

  it("the input is never mutated and results are deterministic", () => {
    const input = { a: [{ b: "c" }], d: "x" };
    const snapshot = structuredClone(input);
    const first = recoverEnvelope(input);
    const second = recoverEnvelope(input);
    expect(first).toEqual(second);
    expect(input).toEqual(snapshot);
  });
});

describe("truncatedEnvelopeChange", () => {
  it("returns the documented change, a fresh object each call", () => {
    const a = truncatedEnvelopeChange();
    const b = truncatedEnvelopeChange();
    expect(a).toEqual({
      ruleId: "envelope.complete-truncated-object",
      stage: "envelope",
      note: "Completed a truncated JSON object envelope after the completed candidate passed the tool schema.",
    });
    expect(a).not.toBe(b);
    expect(Object.keys(a)).toEqual(["ruleId", "stage", "note"]);
  });
});

describe("escapeJsonStringControlCharacters", () => {
  it("escapes control characters inside strings as \\u + 4 lowercase hex digits", () => {
    expect(escapeJsonStringControlCharacters('{"a":"x\ny"}')).toBe('{"a":"x\\u000ay"}');
    expect(escapeJsonStringControlCharacters('"\u001f\u0000\t"')).toBe('"\\u001f\\u0000\\u0009"');
  });

  it("leaves characters outside strings alone and returns the same string when nothing changed", () => {
    const text = '\n{\t"a":1}\r';
    expect(escapeJsonStringControlCharacters(text)).toBe(text);
  });

  it("does not touch U+007F or higher code points", () => {
    const text = '"\u007f\u0085\u2028😀"';
    expect(escapeJsonStringControlCharacters(text)).toBe(text);
  });

  it("a backslash inside a string escapes the next code point (which is kept verbatim)", () => {
    expect(escapeJsonStringControlCharacters('"\\\n"')).toBe('"\\\n"');
    expect(escapeJsonStringControlCharacters('"a\\"\n"')).toBe('"a\\"\\u000a"');
  });

  it("string state toggles at each unescaped quote", () => {
    expect(escapeJsonStringControlCharacters('"a"\n"b\n"\n')).toBe('"a"\n"b\\u000a"\n');
  });

  it("an unterminated string keeps being escaped to the end", () => {
    expect(escapeJsonStringControlCharacters('{"a":"x\ny')).toBe('{"a":"x\\u000ay');
  });
});

describe("isPlainObject (envelope sense)", () => {
  it("accepts Object.prototype and null-prototype objects only", () => {
    expect(isPlainObject({})).toBe(true);
    expect(isPlainObject(Object.create(null))).toBe(true);
    expect(isPlainObject(JSON.parse('{"__proto__":{}}'))).toBe(true);
    class Foo {}
    for (const value of [[], null, undefined, "x", 1, new Date(0), new Foo(), Object.create({}), new Map()]) {
      expect(isPlainObject(value)).toBe(false);
    }
  });
});

// Seeded property tests over bounded JSON-domain inputs, plus hostile inputs.
// Expected behaviour: spec §3 (result rules), §4 (limits), §13 (purity), §14.3.
import { Type } from "typebox";
import { Value } from "typebox/value";
import { describe, expect, it } from "vitest";
import { BUILTIN_TOOL_REPAIRS, recoverEnvelope, runRepairPipeline } from "../lib/core.js";
import { piBuiltinSchema } from "./helpers/pi-tools.ts";

// biome-ignore lint/suspicious/noExplicitAny: exercising runtime shapes
type Any = any;

const SEEDS = [0x5eedc0de, 0x00c0ffee, 20260713];
const CASES_PER_SEED = 150;

/** Numerical Recipes LCG → [0, 1). */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 0x1_0000_0000;
  };
}

const STRINGS = [
  "",
  "text",
  "{",
  '["x"',
  "\u0000",
  "a\nb",
  "__proto__",
  "^src/a.ts$",
  "[notes.md](http://notes.md)",
  "<arg_value>v</arg_value>",
  " padded ",
  "5",
  "3.7",
  "true",
  "null",
  "😀\uD800",
];
const KEYS = [
  "path",
  "file_path",
  "offset",
  "limit",
  "content",
  "nested",
  "__proto__",
  "constructor",
  "0",
  "edits",
  "old_string",
  "new_string",
  "<arg_key>path</arg_key>",
];

/** Own data property, even for "__proto__". */
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function pick<T>(next: () => number, list: readonly T[]): T {
  return list[Math.floor(next() * list.length)] as T;
}

function genJson(next: () => number, depth = 0): unknown {
  const choice = Math.floor(next() * (depth >= 3 ? 5 : 8));
  switch (choice) {
    case 0:
      return null;
    case 1:
      return next() < 0.5;
    case 2:
      return next() < 0.5 ? Math.floor(next() * 20000) - 10000 : Math.round(next() * 1e6) / 1e3;
    case 3:
    case 4:
      return pick(next, STRINGS);
    case 5:
      return Array.from({ length: Math.floor(next() * 4) }, () => genJson(next, depth + 1));
    default:
      return genRecord(next, depth + 1);
  }
}

function genRecord(next: () => number, depth = 0): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  const count = Math.floor(next() * 5);
  for (let i = 0; i < count; i++) put(record, pick(next, KEYS), genJson(next, depth));
  if (next() < 0.5) put(record, "path", next() < 0.7 ? pick(next, STRINGS) : genJson(next, depth));
  return record;
}

/** Top-level input: a record, its JSON text, a truncated or double-encoded text, a singleton array, or anything. */
function genInput(next: () => number): unknown {
  const record = genRecord(next);
  const text = JSON.stringify(record);
  switch (Math.floor(next() * 7)) {
    case 0:
    case 1:
      return record;
    case 2:
      return text;
    case 3:
      return text.slice(0, Math.max(1, Math.floor(next() * text.length)));
    case 4:
      return JSON.stringify(text);
    case 5:
      return [record];
    default:
      return genJson(next);
  }
}

interface Setup {
  name: string;
  schema: Any;
  config: Record<string, unknown>;
}

function setups(next: () => number): Setup[] {
  const policy = pick(next, ["conservative", "adaptive", "recover"]);
  const modelId = pick(next, [undefined, "glm-4.6", "kimi-k2", "gpt-5"]);
  const read = (BUILTIN_TOOL_REPAIRS as Record<string, Any>).read;
  const edit = (BUILTIN_TOOL_REPAIRS as Record<string, Any>).edit;
  return [
    {
      name: "read-builtin",
      schema: piBuiltinSchema("read"),
      config: { toolName: "read", policy, modelId, preprocessors: read.preprocessors, legacyConfig: read.legacyConfig },
    },
    {
      name: "read-plain",
      schema: Type.Object({ path: Type.String() }),
      config: {
        toolName: "fuzz",
        policy,
        limits: { maxInputBytes: 32 * 1024, maxNestingDepth: 16, maxDecodeAttempts: 3, maxCandidates: 4, maxWorkMs: 1000 },
      },
    },
    {
      name: "edit-builtin",
      schema: piBuiltinSchema("edit"),
      config: { toolName: "edit", policy, modelId, preprocessors: edit.preprocessors, legacyConfig: edit.legacyConfig },
    },
  ];
}

function run(setup: Setup, input: unknown): Any {
  return runRepairPipeline({ input, config: { ...setup.config, schema: setup.schema } as Any });
}

function assertNoPollution(): void {
  expect(Object.keys(Object.prototype)).toEqual([]);
  expect(({} as Any).polluted).toBeUndefined();
  expect(({} as Any).path).toBeUndefined();
  expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain("polluted");
}

const STAGES = new Set(["envelope", "preprocess", "schema-repair"]);

describe("seeded properties", () => {
  for (const seed of SEEDS) {
    it(`seed ${seed.toString(16)}: ${CASES_PER_SEED} inputs × 3 configurations`, () => {
      const next = lcg(seed);
      for (let index = 0; index < CASES_PER_SEED; index++) {
        const input = genInput(next);
        for (const setup of setups(next)) {
          const label = `seed=${seed} case=${index} setup=${setup.name} input=${JSON.stringify(input)}`;
          const snapshotText = JSON.stringify(input);
          const snapshot = structuredClone(input);

          const first = run(setup, input); // never throws for JSON-domain input
          const second = run(setup, input);

          // never mutates the input
          expect(JSON.stringify(input), label).toBe(snapshotText);
          expect(input, label).toEqual(snapshot);
          // deterministic
          expect(second, label).toEqual(first);
          expect(JSON.stringify(second.args), label).toBe(JSON.stringify(first.args));

          expect(["valid", "repaired", "unrepairable"], label).toContain(first.outcome);
          if (first.outcome === "unrepairable") {
            expect(first.args === input, label).toBe(true);
            expect(first.changes, label).toEqual([]);
            expect(typeof first.retryMessage, label).toBe("string");
            expect(first.fingerprint, label).toMatch(/^[0-9a-f]{8}$/);
            continue;
          }
          if (first.outcome === "valid") {
            // no owner shim: a valid outcome is the caller's own, untouched input
            expect(first.args === input, label).toBe(true);
            expect(first.changes, label).toEqual([]);
          } else {
            expect(first.changes.length, label).toBeGreaterThan(0);
            expect(Value.Check(setup.schema, first.args), label).toBe(true);
            for (const change of first.changes) {
              expect(change.ruleId, label).not.toBe("");
              expect(change.note, label).not.toBe("");
              expect(STAGES.has(change.stage), label).toBe(true);
            }
          }
          // idempotent: a repaired/valid result is valid (and kept by reference) the second time round
          const again = run(setup, first.args);
          expect(again.outcome, label).toBe("valid");
          expect(again.args === first.args, label).toBe(true);
        }
      }
      assertNoPollution();
    });
  }

  it("strictly valid input with no preprocessors is returned untouched (===)", () => {
    const next = lcg(0xabcdef);
    const schema = Type.Object({ path: Type.String(), offset: Type.Optional(Type.Number()) });
    let checked = 0;
    for (let i = 0; i < 300; i++) {
      const input = genRecord(next);
      if (!Value.Check(schema, input)) continue;
      const md = typeof input.path === "string" && /\]\(https?:\/\//.test(input.path);
      const result = runRepairPipeline({ input, config: { toolName: "t", schema } as Any }) as Any;
      expect(result.outcome).toBe("valid");
      expect(result.args).toBe(input);
      expect(md || result.changes.length === 0).toBe(true);
      checked++;
    }
    expect(checked).toBeGreaterThan(20);
  });

  it("recoverEnvelope never throws, never mutates, is deterministic", () => {
    const next = lcg(0x1234);
    for (let i = 0; i < 300; i++) {
      const input = genInput(next);
      const snapshot = JSON.stringify(input);
      const a = recoverEnvelope(input);
      const b = recoverEnvelope(input);
      expect(a).toEqual(b);
      expect(JSON.stringify(input)).toBe(snapshot);
      expect(a.limited).toBe(false);
      if (a.changes.length === 0 && a.candidates.length === 0 && typeof input === "string") expect(a.value).toBe(input);
    }
  });
});

describe("hostile inputs", () => {
  const plainRead = () => Type.Object({ path: Type.String(), offset: Type.Optional(Type.Number()) });
  const pipe = (input: unknown, extra: Record<string, unknown> = {}) =>
    runRepairPipeline({ input, config: { toolName: "read", schema: plainRead(), ...extra } as Any }) as Any;

  it("a 1 MB bare string is limited by the envelope and unrepairable without a rootString", () => {
    const input = "x".repeat(1 << 20);
    const envelope = recoverEnvelope(input);
    expect(envelope.limited).toBe(true);
    expect(envelope.value).toBe(input);
    const result = pipe(input);
    expect(result.outcome).toBe("unrepairable");
    expect(result.args).toBe(input);
    expect(result.changes).toEqual([]);
    expect(result.retryMessage.endsWith(`Received: "${"x".repeat(299)}…`)).toBe(true);
  });

  it("a 1 MB bare string is wrapped by read's rootString repair even though the envelope is limited", () => {
    const input = "x".repeat(1 << 20);
    const read = (BUILTIN_TOOL_REPAIRS as Record<string, Any>).read;
    const result = pipe(input, { legacyConfig: read.legacyConfig, preprocessors: read.preprocessors });
    expect(result.outcome).toBe("repaired");
    expect(result.changes.map((c: Any) => c.ruleId)).toEqual(["wrapRootStringAsObject"]);
    expect(result.args.path.length).toBe(1 << 20);
  });

  it("a 1 MB JSON text skips the envelope decoder and is parsed by the schema root repair", () => {
    const input = `{"path":"${"a".repeat(1 << 20)}"}`;
    expect(recoverEnvelope(input).limited).toBe(true);
    const result = pipe(input, { policy: "conservative" });
    expect(result.outcome).toBe("repaired");
    expect(result.changes.map((c: Any) => [c.ruleId, c.stage])).toEqual([["parseJsonStringifiedRootObject", "schema-repair"]]);
    expect(result.args.path.length).toBe(1 << 20);
  });

  it("a 1 MB valid object is limited but still returned as valid by reference", () => {
    const input = { path: "a", blob: "x".repeat(1 << 20) };
    expect(recoverEnvelope(input).limited).toBe(true);
    const result = pipe(input);
    expect(result.outcome).toBe("valid");
    expect(result.args).toBe(input);
  });

  /**
   * Beyond the envelope guard the reference deep-copies with structuredClone, which
   * exhausts the JS stack around 1–2 thousand levels and the RangeError propagates
   * (spec §3: structuredClone throws propagate). A port may instead return the result
   * §3 prescribes, or fail closed (unrepairable, caller's input, no changes); it must
   * never crash the process.
   */
  function rangeErrorOr(fn: () => Any, input: unknown, check: (result: Any) => void): void {
    let result: Any;
    try {
      result = fn();
    } catch (error) {
      expect(error).toBeInstanceOf(RangeError);
      return;
    }
    if (result.outcome === "unrepairable") {
      expect(result.args).toBe(input);
      expect(result.changes).toEqual([]);
      return;
    }
    check(result);
  }

  function deepObject(depth: number): Any {
    let deep: Any = {};
    for (let i = 0; i < depth; i++) deep = { nested: deep };
    return deep;
  }

  it("an object nested 500 deep is limited by the envelope; undeclared depth does not affect validity", () => {
    const input = { path: "a", nested: deepObject(500) };
    const envelope = recoverEnvelope(input);
    expect(envelope).toEqual({ value: input, changes: [], candidates: [], limited: true });
    expect(envelope.value).toBe(input);
    const result = pipe(input);
    expect(result.outcome).toBe("valid");
    expect(result.args).toBe(input);
    const bad = { offset: "abc", nested: deepObject(500) };
    const unrepairable = pipe(bad);
    expect(unrepairable.outcome).toBe("unrepairable");
    expect(unrepairable.args).toBe(bad);
    expect(unrepairable.issueSummary).toBe("(root)|required|path; /offset|type|number");
  });

  it("an object nested 10 000 deep: envelope limited; pipeline returns §3's result, fails closed, or throws RangeError", () => {
    const input = { path: "a", nested: deepObject(10_000) };
    const envelope = recoverEnvelope(input);
    expect(envelope.limited).toBe(true);
    expect(envelope.value).toBe(input);
    rangeErrorOr(
      () => pipe(input),
      input,
      (result) => {
        expect(result.outcome).toBe("valid");
        expect(result.args).toBe(input);
      },
    );
    const bad = { offset: "abc", nested: deepObject(10_000) };
    rangeErrorOr(
      () => pipe(bad),
      bad,
      (result) => {
        expect(result.outcome).toBe("unrepairable");
        expect(result.args).toBe(bad);
      },
    );
  });

  it("JSON text nested 500 deep: decoded value is over the depth limit, schema repair parses it", () => {
    const input = `{"path":"a","n":${"[".repeat(500)}${"]".repeat(500)}}`;
    const envelope = recoverEnvelope(input);
    expect(envelope).toEqual({ value: input, changes: [], candidates: [], limited: true });
    const result = pipe(input);
    expect(result.outcome).toBe("repaired");
    expect(result.changes.map((c: Any) => c.ruleId)).toEqual(["parseJsonStringifiedRootObject"]);
    expect(result.args.path).toBe("a");
  });

  it("JSON text nested 10 000 deep: envelope limited; pipeline repairs it, fails closed, or throws RangeError", () => {
    const input = `{"path":"a","n":${"[".repeat(10_000)}${"]".repeat(10_000)}}`;
    const envelope = recoverEnvelope(input);
    expect(envelope).toEqual({ value: input, changes: [], candidates: [], limited: true });
    rangeErrorOr(
      () => pipe(input),
      input,
      (result) => {
        expect(result.outcome).toBe("repaired");
        expect(result.changes.map((c: Any) => c.ruleId)).toEqual(["parseJsonStringifiedRootObject"]);
      },
    );
  });

  it("unbalanced deep text ends unrepairable without hanging", () => {
    for (const input of ["[".repeat(10_000), `{"a":${"[".repeat(10_000)}`, `{"path":"${"\\".repeat(4999)}`]) {
      const started = performance.now();
      const result = pipe(input);
      expect(result.outcome).toBe("unrepairable");
      expect(result.args).toBe(input);
      expect(performance.now() - started).toBeLessThan(2000);
    }
  });

  it('{"__proto__": {"polluted": true}} decoded from a string is inert', () => {
    const input = '{"__proto__": {"polluted": true}}';
    const result = pipe(input);
    expect(result.outcome).toBe("unrepairable");
    expect(result.args).toBe(input);
    expect(result.issueSummary).toBe("(root)|required|path");
    assertNoPollution();

    const withPath = pipe('{"__proto__": {"polluted": true}, "path": "a"}');
    expect(withPath.outcome).toBe("repaired");
    expect(Object.getPrototypeOf(withPath.args)).toBe(Object.prototype);
    expect(Object.hasOwn(withPath.args, "__proto__")).toBe(true);
    expect(withPath.args.polluted).toBeUndefined();
    assertNoPollution();

    const nested = pipe('[{"path":"a","x":{"__proto__":{"polluted":true}}}]');
    expect(nested.outcome).toBe("repaired");
    expect(Object.hasOwn(nested.args.x, "__proto__")).toBe(true);
    assertNoPollution();
  });

  it("prototype-named keys through the builtin tables stay inert", () => {
    const read = (BUILTIN_TOOL_REPAIRS as Record<string, Any>).read;
    for (const text of [
      '{"constructor":{"prototype":{"polluted":true}},"file_path":"a"}',
      '{"<arg_key>__proto__</arg_key>":{"polluted":true},"path":"a"}',
      '{"__proto__":null,"path":null,"file":"a"}',
    ]) {
      const result = pipe(text, { modelId: "glm-4.6", preprocessors: read.preprocessors, legacyConfig: read.legacyConfig });
      expect(result.outcome, text).not.toBe("unrepairable");
      expect(Object.getPrototypeOf(result.args)).toBe(Object.prototype);
      assertNoPollution();
    }
  });
});

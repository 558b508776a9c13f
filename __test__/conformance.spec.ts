// Recorded behaviour of @r3b1s/pi-repair-layer 0.4.3 (smoke/tricky/edge sets),
// replayed against this package's public API. Fixture: fixtures/repair/conformance.json.
import { readFileSync } from "node:fs";
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { repairToolInput, runRepairPipeline } from "../lib/core.js";
import { buildLegacyOptions, buildPipelineConfig, buildPreprocessor, type CaseConfig, toRegExp } from "./helpers/config.ts";
import { piBuiltinSchemas, piEditPrepareArguments } from "./helpers/pi-tools.ts";
import { collectMarkers, withTypeBoxMarkers } from "./helpers/typebox-markers.ts";

interface ConformanceCase {
  name: string;
  entry: "pipeline" | "legacy";
  input: unknown;
  config: CaseConfig;
  expected:
    | { ok: true; argsIsInput: boolean; result: Record<string, unknown> }
    | { ok: false; error: { name: string; message: string } };
}

const fixture = JSON.parse(
  readFileSync(new URL("./fixtures/repair/conformance.json", import.meta.url), "utf8"),
) as { cases: ConformanceCase[] };

/** Result as JSON would carry it (undefined-valued keys vanish, like the recording). */
function asJson(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

function run(testCase: ConformanceCase, input: unknown): Record<string, unknown> {
  if (testCase.entry === "legacy") return repairToolInput(buildLegacyOptions(testCase.config, input));
  return runRepairPipeline({ input, config: buildPipelineConfig(testCase.config) }) as Record<string, unknown>;
}

const PIPELINE_KEYS = ["outcome", "args", "policy", "changes", "observations"];
const LEGACY_KEYS = ["outcome", "args", "rulesFired", "notes", "changes", "issueSummary", "fingerprint", "retryMessage"];

describe("conformance fixture", () => {
  it("holds every recorded smoke/tricky/edge case", () => {
    const counts: Record<string, number> = {};
    for (const c of fixture.cases) {
      const set = c.name.split("/")[0] as string;
      counts[set] = (counts[set] ?? 0) + 1;
    }
    expect(counts).toEqual({ smoke: 18, tricky: 16, edge: 5 });
  });

  it("typebox-markers helper reproduces TypeBox's own markers for pi's built-in schemas", () => {
    for (const [tool, schema] of Object.entries(piBuiltinSchemas())) {
      const plain = JSON.parse(JSON.stringify(schema));
      expect(collectMarkers(withTypeBoxMarkers(plain)), tool).toEqual(collectMarkers(schema));
    }
    const mixed = Type.Object({
      u: Type.Optional(Type.Union([Type.String(), Type.Null()])),
      l: Type.Literal("x"),
      i: Type.Integer(),
      b: Type.Optional(Type.Boolean()),
      a: Type.Array(Type.Object({ k: Type.Optional(Type.Unknown()) })),
    });
    expect(collectMarkers(withTypeBoxMarkers(JSON.parse(JSON.stringify(mixed))))).toEqual(collectMarkers(mixed));
  });

  it("config helper: modelFamilies strings and the structural fold marker", () => {
    expect(toRegExp("/glm-\\d/gi")).toEqual(/glm-\d/gi);
    expect(toRegExp("kimi")).toEqual(/kimi/i);
    const built = buildPreprocessor({ kind: "anchor-bleed", selector: "/p", modelFamilies: ["/a/", "b"] });
    expect(built.modelFamilies).toEqual([/a/, /b/i]);
    const fold = buildPreprocessor({ kind: "structural", builtin: "foldFlatEditFields" });
    expect(fold).toMatchObject({ kind: "structural", selector: "", ruleId: "foldFlatEditFields" });
    expect(typeof fold.apply).toBe("function");
  });

  it("pi edit shim stand-in folds a flat pair and parses a stringified edits array", () => {
    expect(piEditPrepareArguments({ path: "p", oldText: "a", newText: "b" })).toEqual({
      path: "p",
      edits: [{ oldText: "a", newText: "b" }],
    });
    const appended = piEditPrepareArguments({
      edits: '[{"oldText":"x","newText":"y"}]',
      path: "p",
      oldText: "a",
      newText: "b",
    });
    expect(JSON.stringify(appended)).toBe(
      '{"edits":[{"oldText":"x","newText":"y"},{"oldText":"a","newText":"b"}],"path":"p"}',
    );
    const untouched = { path: "p", edits: "not json" };
    expect(piEditPrepareArguments(untouched)).toBe(untouched);
    expect(piEditPrepareArguments("str")).toBe("str");
  });
});

describe("recorded reference results", () => {
  for (const testCase of fixture.cases) {
    it(testCase.name, () => {
      const input = structuredClone(testCase.input);
      const before = JSON.stringify(input);
      const { expected } = testCase;

      if (!expected.ok) {
        let thrown: unknown;
        try {
          run(testCase, input);
        } catch (error) {
          thrown = error;
        }
        expect(thrown).toBeInstanceOf(Error);
        expect((thrown as Error).name).toBe(expected.error.name);
        expect((thrown as Error).message).toBe(expected.error.message);
        return;
      }

      const result = run(testCase, input);
      const want = expected.result;

      // Whole result, JSON view (undefined-valued keys vanish as in the recording).
      expect(asJson(result)).toEqual(want);
      // Key order is observable: args, each change/observation, top-level keys.
      expect(JSON.stringify(result.args)).toBe(JSON.stringify(want.args));
      expect(JSON.stringify(result.changes)).toBe(JSON.stringify(want.changes));
      if ("observations" in want) expect(JSON.stringify(result.observations)).toBe(JSON.stringify(want.observations));
      expect(Object.keys(asJson(result) as object)).toEqual(Object.keys(want));
      // Field by field, for readable failures.
      expect(result.outcome).toBe(want.outcome);
      expect(result.issueSummary).toBe(want.issueSummary);
      expect(result.fingerprint).toBe(want.fingerprint);
      expect(result.retryMessage).toBe(want.retryMessage);
      if (testCase.entry === "pipeline") expect(result.policy).toBe(want.policy);
      // Identity of the returned args.
      expect(result.args === input).toBe(expected.argsIsInput);
      // Required keys are always own keys.
      for (const key of testCase.entry === "legacy" ? LEGACY_KEYS : PIPELINE_KEYS) {
        expect(Object.hasOwn(result, key), key).toBe(true);
      }
      // The caller's input is never mutated.
      expect(JSON.stringify(input)).toBe(before);
      expect(input).toEqual(testCase.input);
    });
  }
});

describe("recorded results are deterministic", () => {
  for (const testCase of fixture.cases) {
    if (!testCase.expected.ok) continue;
    it(`${testCase.name} (second run, same config object)`, () => {
      const config = buildPipelineConfig(testCase.config);
      const runOnce = () =>
        testCase.entry === "legacy"
          ? repairToolInput(buildLegacyOptions(testCase.config, structuredClone(testCase.input)))
          : runRepairPipeline({ input: structuredClone(testCase.input), config });
      expect(asJson(runOnce())).toEqual(asJson(runOnce()));
    });
  }
});

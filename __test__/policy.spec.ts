// Spec §2: resolveRepairPolicy and how the pipeline consults the policy.
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { resolveRepairPolicy, runRepairPipeline } from "../lib/core.js";

// biome-ignore lint/suspicious/noExplicitAny: runtime-only override shapes are part of the contract
type Any = any;

const KEY_ORDER = ["profile", "allowTruncatedEnvelopeCompletion", "allowValidValueTransforms", "grammarMode", "unknownGrammarText"];

describe("resolveRepairPolicy", () => {
  it("conservative", () => {
    const policy = resolveRepairPolicy("conservative");
    expect(policy).toEqual({
      profile: "conservative",
      allowTruncatedEnvelopeCompletion: false,
      allowValidValueTransforms: false,
      grammarMode: "observe",
      unknownGrammarText: "preserve",
    });
    expect(Object.keys(policy)).toEqual(KEY_ORDER);
  });

  it("adaptive", () => {
    expect(resolveRepairPolicy("adaptive")).toEqual({
      profile: "adaptive",
      allowTruncatedEnvelopeCompletion: true,
      allowValidValueTransforms: true,
      grammarMode: "strip",
      unknownGrammarText: "preserve",
    });
  });

  it("recover", () => {
    expect(resolveRepairPolicy("recover")).toEqual({
      profile: "recover",
      allowTruncatedEnvelopeCompletion: true,
      allowValidValueTransforms: true,
      grammarMode: "recover",
      unknownGrammarText: "preserve",
    });
  });

  it("defaults to adaptive (no argument or undefined)", () => {
    expect(resolveRepairPolicy()).toEqual(resolveRepairPolicy("adaptive"));
    expect(resolveRepairPolicy(undefined, { grammarMode: "off" })).toMatchObject({ profile: "adaptive", grammarMode: "off" });
  });

  it("declared overrides are spread over the profile defaults", () => {
    const policy = resolveRepairPolicy("recover", { unknownGrammarText: "strip", grammarMode: "observe" });
    expect(policy).toEqual({
      profile: "recover",
      allowTruncatedEnvelopeCompletion: true,
      allowValidValueTransforms: true,
      grammarMode: "observe",
      unknownGrammarText: "strip",
    });
    expect(Object.keys(policy)).toEqual(KEY_ORDER);
  });

  it("an override key whose value is undefined replaces the default with undefined", () => {
    const policy = resolveRepairPolicy("adaptive", { grammarMode: undefined });
    expect("grammarMode" in policy).toBe(true);
    expect(policy.grammarMode).toBeUndefined();
  });

  it("undeclared override keys are spread too (runtime booleans included)", () => {
    const policy = resolveRepairPolicy("adaptive", { allowValidValueTransforms: false, extra: 1 } as Any) as Any;
    expect(policy.allowValidValueTransforms).toBe(false);
    expect(policy.extra).toBe(1);
    expect(Object.keys(policy)).toEqual([...KEY_ORDER, "extra"]);
  });

  it("profile is always the requested profile, even if the overrides name another", () => {
    expect(resolveRepairPolicy("conservative", { profile: "recover" } as Any).profile).toBe("conservative");
  });

  it("an unknown profile yields only the override keys plus profile", () => {
    expect(resolveRepairPolicy("bogus" as Any)).toEqual({ profile: "bogus" });
    expect(resolveRepairPolicy("bogus" as Any, { grammarMode: "strip" })).toEqual({ grammarMode: "strip", profile: "bogus" });
  });

  it("names of Object.prototype members are unknown profiles too", () => {
    for (const name of ["toString", "__proto__", "constructor", "hasOwnProperty"]) {
      expect(resolveRepairPolicy(name as Any)).toEqual({ profile: name });
    }
  });

  it("returns a fresh object each call", () => {
    const a = resolveRepairPolicy("adaptive");
    const b = resolveRepairPolicy("adaptive");
    expect(a).not.toBe(b);
    (a as Any).grammarMode = "off";
    expect(resolveRepairPolicy("adaptive").grammarMode).toBe("strip");
  });
});

describe("policy inside runRepairPipeline", () => {
  const schema = Type.Object({ path: Type.String() });
  const anchor = { kind: "anchor-bleed", selector: "/path", modelFamilies: [/glm/i] };
  const run = (input: unknown, extra: Record<string, unknown>) =>
    runRepairPipeline({ input, config: { toolName: "t", schema, ...extra } as Any }) as Any;

  it("result.policy echoes the profile, defaulting to adaptive", () => {
    expect(run({ path: "a" }, {}).policy).toBe("adaptive");
    expect(run({ path: "a" }, { policy: "recover" }).policy).toBe("recover");
  });

  it("an unknown profile: no truncated completion, heuristics observed not applied, policy echoed", () => {
    const truncated = run('{"path":"a', { policy: "bogus" });
    expect(truncated.outcome).toBe("unrepairable");
    expect(truncated.policy).toBe("bogus");
    const heuristic = run({ path: "^a$" }, { policy: "bogus", modelId: "glm", preprocessors: [anchor] });
    expect(heuristic.outcome).toBe("valid");
    expect(heuristic.observations.map((o: Any) => o.ruleId)).toEqual(["stripAnchorBleed"]);
  });

  it("recover behaves like adaptive inside the pipeline", () => {
    expect(run('{"path":"a', { policy: "recover" }).outcome).toBe("repaired");
    expect(run({ path: "^a$" }, { policy: "recover", modelId: "glm", preprocessors: [anchor] }).args).toEqual({ path: "a" });
  });

  it("runtime boolean overrides switch the two consulted flags", () => {
    expect(run('{"path":"a', { policy: "adaptive", policyOverrides: { allowTruncatedEnvelopeCompletion: false } }).outcome).toBe(
      "unrepairable",
    );
    expect(run('{"path":"a', { policy: "conservative", policyOverrides: { allowTruncatedEnvelopeCompletion: true } }).outcome).toBe(
      "repaired",
    );
    const observed = run({ path: "^a$" }, {
      policy: "adaptive",
      policyOverrides: { allowValidValueTransforms: false },
      modelId: "glm",
      preprocessors: [anchor],
    });
    expect(observed.outcome).toBe("valid");
    expect(observed.observations).toHaveLength(1);
  });

  it("grammarMode / unknownGrammarText overrides do not change pipeline outcomes", () => {
    const base = run('{"path":"a', { policy: "adaptive" });
    const overridden = run('{"path":"a', { policy: "adaptive", policyOverrides: { grammarMode: "off", unknownGrammarText: "strip" } });
    expect(overridden).toEqual(base);
  });
});

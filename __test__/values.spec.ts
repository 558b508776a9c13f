// Dates in tool input (class non-plain-object-in-input): structuredClone keeps a Date, JSON.stringify
// calls its toJSON (retry messages, owner shims), invalid dates serialise as null. Expected values are
// pi-repair-layer 0.4.3's observed output; the reference is not needed.
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { runRepairPipeline } from "../lib/core.js";

// biome-ignore lint/suspicious/noExplicitAny: exercising runtime shapes
type Any = any;

const EXPECTED: Any = {"retry":{"outcome":"unrepairable","args":{"path":"1970-01-01T00:00:00.000Z","b":[null,"+275760-09-13T00:00:00.000Z","-000001-01-01T00:00:00.000Z"]},"argsDates":"{\"path\":\"1970-01-01T00:00:00.000Z\",\"b\":[null,\"+275760-09-13T00:00:00.000Z\",\"-000001-01-01T00:00:00.000Z\"]}","changes":[],"issueSummary":"/path|type|string","fingerprint":"9c7983c3","retryMessage":"Invalid input for tool \"ls\". Fix these issues and retry:\n  • /path: must be string\nReceived: {\"path\":\"1970-01-01T00:00:00.000Z\",\"b\":[null,\"+275760-09-13T00:00:00.000Z\",\"-000001-01-01T00:00:00.000Z\"]}"},"ownerStringify":{"outcome":"repaired","args":{"query":"1970-01-01T00:00:00.000Z"},"argsDates":"{\"query\":\"1970-01-01T00:00:00.000Z\"}","changes":[{"ruleId":"parseJsonStringifiedRootObject","stage":"schema-repair","note":"Parsed your JSON-stringified arguments for tool \"q\". Send the arguments as a JSON object next time, not a string."}],"issueSummary":"(root)|type|object","fingerprint":"1148da00"},"keptInArgs":{"outcome":"repaired","isDate":true,"time":8640000000000000,"same":false}};

const d0 = new Date(0);
const bad = new Date(Number.NaN);
const far = new Date(8.64e15);
const neg = new Date(-62198755200000);
const view = (r: Any) => ({
  outcome: r.outcome,
  args: r.args,
  argsDates: JSON.stringify(r.args),
  changes: r.changes,
  issueSummary: r.issueSummary,
  fingerprint: r.fingerprint,
  retryMessage: r.retryMessage,
});
const json = (v: unknown) => JSON.stringify(v);

describe("Dates in tool input", () => {
  it("retry messages serialise Dates with toJSON (ISO, extended years, null for invalid)", () => {
    const r = runRepairPipeline({ input: { path: d0, b: [bad, far, neg] }, config: { toolName: "ls", schema: Type.Object({ path: Type.String() }) } as Any });
    expect(json(view(r))).toBe(json(EXPECTED.retry));
    expect(r.args.path).toBe(d0);
  });

  it("an owner shim sees a Date and its JSON.stringify uses toJSON", () => {
    const r = runRepairPipeline({
      input: { query: d0 },
      config: { toolName: "q", schema: Type.Object({ query: Type.String() }), ownerPrepareArguments: (x: unknown) => JSON.stringify(x) } as Any,
    });
    expect(json(view(r))).toBe(json(EXPECTED.ownerStringify));
  });

  it("repaired args keep a Date (a copy with the same time value)", () => {
    const r = runRepairPipeline({
      input: { q: null, when: far },
      config: { toolName: "t", schema: Type.Object({ q: Type.Optional(Type.String()), when: Type.Any() }) } as Any,
    });
    const when = r.args.when as Any;
    expect({ outcome: r.outcome, isDate: when instanceof Date, time: when.getTime(), same: when === far }).toEqual(EXPECTED.keptInArgs);
  });
});

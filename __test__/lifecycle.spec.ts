// Spec §10: the repair lifecycle (FIFO correlation, TTL, caps, injectable clock) and notes.
import { describe, expect, it } from "vitest";
import { RepairLifecycle, attachRepairNotes, formatRepairNotes, stableSerialize } from "../lib/core.js";

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any

function clock(start = 1_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

const fb = (note: string, extra: Any = {}) => ({ rules: ["r"], notes: [note], ...extra });

describe("RepairLifecycle", () => {
  it("correlates identical calls first-in first-out, by tool and stable-serialized args", () => {
    const l = new RepairLifecycle();
    l.enqueue("read", { path: "a", offset: 1 }, fb("first"));
    l.enqueue("read", { offset: 1, path: "a" }, fb("second"));
    l.enqueue("write", { path: "a", offset: 1 }, fb("other tool"));
    expect(l.pendingCount).toBe(3);
    expect(l.correlate("read", { path: "a", offset: 1 }, "c1")?.notes).toEqual(["first"]);
    expect(l.correlate("read", { path: "a", offset: 1 }, "c2")?.notes).toEqual(["second"]);
    expect(l.correlate("read", { path: "a", offset: 1 }, "c3")).toBeUndefined();
    expect(l.pendingCount).toBe(1);
    expect(l.peek("c1")?.notes).toEqual(["first"]);
    expect(l.take("c1")?.notes).toEqual(["first"]);
    expect(l.take("c1")).toBeUndefined();
  });

  it("correlate returns exactly the feedback fields, with copied arrays", () => {
    const l = new RepairLifecycle();
    const feedback = fb("n", { stages: ["preprocess"], profile: "adaptive", model: "glm", outcome: "repaired", fingerprint: "abcd1234", extra: 1 });
    l.enqueue("bash", { command: "ls" }, feedback);
    feedback.notes.push("mutated later");
    const got = l.correlate("bash", { command: "ls" }, "id");
    expect(got).toEqual({ rules: ["r"], notes: ["n"], stages: ["preprocess"], profile: "adaptive", model: "glm", outcome: "repaired", fingerprint: "abcd1234" });
    expect(Object.keys(got as object)).toEqual(["rules", "notes", "stages", "profile", "model", "outcome", "fingerprint"]);
  });

  it("drops entries older than the TTL (pending from the front, associated anywhere)", () => {
    const c = clock();
    const l = new RepairLifecycle({ ttlMs: 100, now: c.now });
    l.enqueue("read", { path: "a" }, fb("old"));
    c.advance(60);
    l.enqueue("read", { path: "b" }, fb("young"));
    l.associate("kept", fb("assoc"));
    c.advance(50);
    expect(l.pendingCount).toBe(2); // cleanup only runs on an operation
    expect(l.correlate("read", { path: "a" }, "x")).toBeUndefined();
    expect(l.pendingCount).toBe(1);
    expect(l.peek("kept")?.notes).toEqual(["assoc"]);
    c.advance(60);
    expect(l.peek("kept")).toBeUndefined();
  });

  it("caps pending (oldest dropped) and associated (earliest inserted evicted; re-association keeps position)", () => {
    const l = new RepairLifecycle({ maxPending: 2, maxAssociated: 2 });
    l.enqueue("t", { n: 1 }, fb("1"));
    l.enqueue("t", { n: 2 }, fb("2"));
    l.enqueue("t", { n: 3 }, fb("3"));
    expect(l.pendingCount).toBe(2);
    expect(l.correlate("t", { n: 1 }, "x")).toBeUndefined();
    l.associate("a", fb("a"));
    l.associate("b", fb("b"));
    l.associate("a", fb("a2"));
    l.associate("c", fb("c"));
    expect(l.peek("a")).toBeUndefined();
    expect(l.peek("b")?.notes).toEqual(["b"]);
    expect(l.peek("c")?.notes).toEqual(["c"]);
  });

  it("clear empties everything", () => {
    const l = new RepairLifecycle();
    l.enqueue("t", {}, fb("x"));
    l.associate("id", fb("y"));
    l.clear();
    expect(l.pendingCount).toBe(0);
    expect(l.peek("id")).toBeUndefined();
  });
});

describe("notes", () => {
  it("formatRepairNotes wraps each note and joins with newlines", () => {
    expect(formatRepairNotes(["a", "b"])).toBe("<repair_note>a</repair_note>\n<repair_note>b</repair_note>");
    expect(formatRepairNotes([])).toBe("");
  });

  it("attachRepairNotes prepends missing notes to the first text part, never mutating", () => {
    const content = [{ type: "image", data: "x" }, { type: "text", text: "result" }, { type: "text", text: "more" }];
    const out = attachRepairNotes(content, ["fixed"]);
    expect(out).toEqual([{ type: "image", data: "x" }, { type: "text", text: "<repair_note>fixed</repair_note>\nresult" }, { type: "text", text: "more" }]);
    expect(content[1].text).toBe("result");
    expect(out[0]).not.toBe(content[0]);
    expect(attachRepairNotes(out, ["fixed"])).toEqual(out);
  });

  it("inserts a text part when there is none; no notes gives a shallow copy", () => {
    const content = [{ type: "image", data: "x" }];
    expect(attachRepairNotes(content, ["n"])).toEqual([{ type: "text", text: "<repair_note>n</repair_note>" }, { type: "image", data: "x" }]);
    const copy = attachRepairNotes(content, []);
    expect(copy).toEqual(content);
    expect(copy).not.toBe(content);
    expect(copy[0]).toBe(content[0]);
  });

  it("stableSerialize sorts keys recursively and drops undefined-valued keys", () => {
    expect(stableSerialize({ b: 1, a: { d: 2, c: [3, { f: 4, e: 5 }] } })).toBe('{"a":{"c":[3,{"e":5,"f":4}],"d":2},"b":1}');
    expect(stableSerialize({ a: undefined })).toBe("{}");
    expect(stableSerialize(undefined)).toBe("undefined");
  });
});

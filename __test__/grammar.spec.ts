// /grammar through the public API: the recorded reference cases exactly (promoted ids by
// pattern, since they carry Date.now()), plus identity, UTF-16 offsets and JS regex semantics.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  GRAMMAR_NAMES,
  GRAMMAR_RECOVERY_MODELS,
  modelLeaksGrammar,
  parseToolGrammarLeaks,
  recoverGrammarLeaks,
} from "../lib/grammar.js";

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any
const fixtures = JSON.parse(readFileSync(new URL("./fixtures/repair/grammar.json", import.meta.url), "utf8")).cases;
const ID = /^tool_repair_[a-z0-9_]+_[0-9a-z]+_\d+$/;

function run(c: Any) {
  switch (c.entry) {
    case "grammarParse":
      return parseToolGrammarLeaks(c.text, c.grammars);
    case "modelLeaksGrammar":
      return modelLeaksGrammar(c.modelId);
    case "grammarRecover": {
      const message = structuredClone(c.message);
      const options = { ...c.options, knownTools: new Set(c.options.knownTools ?? []) };
      const result: Any = recoverGrammarLeaks(message, options);
      return { ...result, messageIsInput: result.message === message };
    }
  }
  throw new Error(`unknown entry ${c.entry}`);
}

/** Replace time-stamped ids in `actual` by the recorded ones once they match the id pattern. */
function alignIds(actual: Any, expected: Any): Any {
  const text = JSON.stringify(actual);
  const want = JSON.stringify(expected);
  const got = text.match(/tool_repair_[a-z0-9_]+_[0-9a-z]+_\d+/g) ?? [];
  const rec = want.match(/tool_repair_[a-z0-9_]+_[0-9a-z]+_\d+/g) ?? [];
  let out = text;
  got.forEach((id, i) => {
    expect(id).toMatch(ID);
    if (rec[i]) out = out.split(id).join(rec[i]);
  });
  return JSON.parse(out);
}

describe("grammar conformance: recorded reference cases", () => {
  for (const { case: c, expected } of fixtures) {
    it(c.id, () => {
      expect(expected.ok).toBe(true);
      expect(alignIds(run(c), expected.result)).toEqual(expected.result);
    });
  }
});

describe("grammar surface", () => {
  it("exports the ten families and the nine model gates as real RegExps", () => {
    expect(GRAMMAR_NAMES).toEqual(["dsml", "invoke", "qwen", "kimi", "mistral", "llama", "glm", "granite", "minimax-text", "olmo"]);
    expect(GRAMMAR_RECOVERY_MODELS.every((r: RegExp) => r instanceof RegExp && r.flags === "i")).toBe(true);
    expect(modelLeaksGrammar("GLM-4.6")).toBe(true);
    expect(modelLeaksGrammar("claude-sonnet-4-5")).toBe(false);
    expect(modelLeaksGrammar(undefined)).toBe(false);
    expect(modelLeaksGrammar("")).toBe(false);
  });

  it("offsets are UTF-16: astral and non-ASCII text before a leak is kept intact", () => {
    const message = {
      role: "assistant",
      stopReason: "stop",
      content: [{ type: "text", text: "𝔘𝔫𝔦 ü 😀 first.\n<tool_call>read\n<arg_key>path</arg_key>\n<arg_value>a.ts</arg_value>\n</tool_call>\nafter" }],
    };
    const r: Any = recoverGrammarLeaks(message, { mode: "strip", knownTools: new Set(["read"]) });
    expect(r.message.content[0].text).toBe("𝔘𝔫𝔦 ü 😀 first.\n\nafter");
    expect(r.strippedRanges).toBe(1);
  });

  it("no-u case folding is ASCII-only: uppercase tags match, the long-s look-alike does not", () => {
    expect(parseToolGrammarLeaks('<TOOL_CALL>{"name":"read","arguments":{"path":"a"}}</TOOL_CALL>')).toHaveLength(1);
    expect(parseToolGrammarLeaks('<tool_call>{"name":"read","arguments":{"path":"a"}}</toolſcall>', ["qwen"])).toHaveLength(0);
  });

  it("unchanged messages keep their identity; a non-assistant role is never touched", () => {
    const message = { role: "assistant", stopReason: "stop", content: [{ type: "text", text: "plain text" }] };
    expect(recoverGrammarLeaks(message, { mode: "recover", knownTools: new Set(["read"]) }).message).toBe(message);
    const user = { role: "user", content: [{ type: "text", text: '<tool_call>{"name":"read","arguments":{"path":"a"}}</tool_call>' }] };
    expect(recoverGrammarLeaks(user, { mode: "recover", knownTools: new Set(["read"]) }).message).toBe(user);
  });

  it("promotion needs stopReason stop, no real tool call, known tool, non-empty arguments", () => {
    const leak = '<tool_call>read\n<arg_key>path</arg_key>\n<arg_value>a.ts</arg_value>\n</tool_call>';
    const base = (extra: Any = {}) => ({ role: "assistant", stopReason: "stop", content: [{ type: "text", text: leak }], ...extra });
    const known = { mode: "recover", knownTools: new Set(["read"]) };
    expect(recoverGrammarLeaks(base(), known).promoted).toBe(true);
    expect(recoverGrammarLeaks(base({ stopReason: "length" }), known).promoted).toBe(false);
    const withCall = base();
    withCall.content.push({ type: "toolCall", id: "x", name: "read", arguments: {} } as Any);
    expect(recoverGrammarLeaks(withCall, known).promoted).toBe(false);
    expect(recoverGrammarLeaks(base(), { mode: "recover", knownTools: new Set(["write"]) }).promoted).toBe(false);
    const empty = { role: "assistant", stopReason: "stop", content: [{ type: "text", text: "<tool_call>read</tool_call>" }] };
    expect(recoverGrammarLeaks(empty, known).promoted).toBe(false);
    const images = base();
    images.content.unshift({ type: "image", data: "AAAA", mimeType: "image/png" } as Any);
    const r: Any = recoverGrammarLeaks(images, known);
    expect(r.message.content[0]).toBe(images.content[0]);
    expect(r.message.content.at(-1).arguments).toBe(r.recoveredCalls[0].arguments);
  });
});

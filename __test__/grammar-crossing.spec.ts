// recoverGrammarLeaks crosses each text part as UTF-16 and gets a changed text back as slices of
// the old one (lib/grammar.js, src/binding/grammar.rs). These pin what that must preserve: texts
// that begin with U+0000 (once misread as an internal wire tag: fuzzer class `nul-leading-string`),
// the tidy rules across removed ranges (blanks before breaks, 3+ breaks, trim), several parts of
// both kinds, identity of untouched parts, and non-text parts that never cross. Expected values
// were recorded from pi-repair-layer 0.4.3.
import { describe, expect, it } from "vitest";
import { recoverGrammarLeaks } from "../lib/grammar.js";

// biome-ignore lint/suspicious/noExplicitAny: exercising runtime shapes
type Any = any;

const QWEN = "<tool_call>\n<function=read>\n<parameter=path>a.ts</parameter>\n</function>\n</tool_call>";
const options = { mode: "recover" as const, knownTools: new Set(["read"]) };
const call = (id: string) => ({ type: "toolCall", id, name: "read", arguments: { path: "a.ts" } });

function run(content: Any[]) {
  const message = { role: "assistant", stopReason: "stop", content };
  const r: Any = recoverGrammarLeaks(message as Any, options);
  return { message, r };
}

describe("recoverGrammarLeaks across the UTF-16 crossing", () => {
  it("a text part beginning with U+0000 is read as text", () => {
    const { r } = run([{ type: "text", text: `\u0000Reading.\n${QWEN}` }]);
    expect(r.message.content[0]).toEqual({ type: "text", text: "\u0000Reading." });
    expect(r.promotedCallIds).toHaveLength(1);
    expect(r.message.content[1]).toEqual(call(r.promotedCallIds[0]));
    expect(r.message.stopReason).toBe("toolUse");
  });

  it("U+0000 then 's' (the old escape tag) survives, and the tidy rules apply around the cut", () => {
    const { r } = run([{ type: "text", text: `\u0000s${QWEN}  \n\n\n\nafter \t\nend  ` }]);
    expect(r.message.content[0].text).toBe("\u0000s\n\nafter\nend");
  });

  it("several parts: thinking and text are cut, other parts keep their identity", () => {
    const image = { type: "image", data: "AAAA" };
    const untouched = { type: "text", text: "no leak" };
    const { message, r } = run([{ type: "thinking", thinking: `plan\n${QWEN}\n` }, { type: "text", text: `x${QWEN}y` }, image, untouched]);
    expect(r.message.content.slice(0, 4)).toEqual([{ type: "thinking", thinking: "plan" }, { type: "text", text: "xy" }, image, untouched]);
    expect(r.message.content[2]).toBe(image);
    expect(r.message.content[3]).toBe(untouched);
    expect(r.message.content[0]).not.toBe(message.content[0]);
    expect(r.strippedRanges).toBe(2);
    expect(r.recoveredCalls.map((c: Any) => c.grammar)).toEqual(["qwen", "qwen"]);
    // Promoted calls share their arguments object with recoveredCalls.
    expect(r.message.content[4].arguments).toBe(r.recoveredCalls[0].arguments);
  });

  it("runs of breaks that meet across a removed range collapse to two", () => {
    const { r } = run([{ type: "text", text: `a \n${QWEN}\n \n \n\nb${QWEN}` }]);
    expect(r.message.content[0].text).toBe("a\n\nb");
  });

  it("a text that is all leak becomes empty", () => {
    const { r } = run([{ type: "text", text: `  ${QWEN}\n\n` }]);
    expect(r.message.content[0].text).toBe("");
  });

  it("a 100 KB text with leaks far apart keeps everything between them byte for byte", () => {
    const filler = "The build failed in `src/main.rs` (line 42): expected `;`.\n".repeat(900);
    const { r } = run([{ type: "text", text: `${filler}${QWEN}\n${filler}${QWEN}` }]);
    expect(r.message.content[0].text).toBe(`${filler}\n${filler}`.trim());
  });
});

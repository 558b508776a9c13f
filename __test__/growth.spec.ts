// Linear growth of /grammar and runRepairPipeline on adversarial and long-but-allowed inputs.
// No wall-clock limits: each case is timed at size n and 8n (best of 3 runs each) and the ratio
// must stay under 40 (linear is 8, quadratic 64). Times under 5 ms at n count as 5 ms, so noise
// on small inputs cannot fail a case, while a quadratic blow-up (seconds at 8n) still shows.
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { BUILTIN_TOOL_REPAIRS, runRepairPipeline } from "../lib/core.js";
import { parseToolGrammarLeaks, recoverGrammarLeaks } from "../lib/grammar.js";
import { piBuiltinSchema } from "./helpers/pi-tools.ts";

// biome-ignore lint/suspicious/noExplicitAny: exercising runtime shapes
type Any = any;

const N = 1250;
const BOUND = 40;
const FLOOR_MS = 5;

function best(run: () => unknown): number {
  let min = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    run();
    min = Math.min(min, performance.now() - t0);
  }
  return min;
}

function ratio<T>(make: (n: number) => T, run: (input: T) => unknown): { small: number; large: number; ratio: number } {
  const a = make(N);
  const b = make(8 * N);
  run(a); // warm up
  const small = best(() => run(a));
  const large = best(() => run(b));
  const r = { small, large, ratio: large / Math.max(small, FLOOR_MS) };
  if (process.env.GROWTH_REPORT) console.log(`${small.toFixed(2)} ms -> ${large.toFixed(2)} ms (ratio ${(large / small).toFixed(1)})`);
  return r;
}

const F = "｜DSML｜";
const GRAMMAR: Array<[string, (n: number) => string]> = [
  ["mistral markers", (n) => "[TOOL_CALLS] x ".repeat(n)],
  ["mistral unclosed arrays", (n) => '[TOOL_CALLS] [{"name":"read",'.repeat(n)],
  ["mistral unclosed v11 arguments", (n) => "[TOOL_CALLS]read[CALL_ID]1[ARGS]{".repeat(n)],
  ["qwen unclosed openers", (n) => '<tool_call>{"name":"read"'.repeat(n)],
  ["qwen closed JSON calls", (n) => '<tool_call>{"name":"read","arguments":{"path":"a"}}</tool_call>'.repeat(n)],
  ["qwen parameters", (n) => `<tool_call><function=read>${"<parameter=k>v</parameter>".repeat(n)}</function></tool_call>`],
  ["glm argument pairs", (n) => `<tool_call>read${"<arg_key>k</arg_key><arg_value>v</arg_value>".repeat(n)}</tool_call>`],
  ["minimax unclosed calls", (n) => "<function_call>functions.read(".repeat(n)],
  ["minimax closed calls", (n) => '<function_call>functions.read({"path":"a"})\n'.repeat(n)],
  [
    "kimi calls in a section",
    (n) =>
      `<|tool_calls_section_begin|>${'<|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{"path":"a"}<|tool_call_end|>'.repeat(n)}<|tool_calls_section_end|>`,
  ],
  ["kimi unclosed sections", (n) => "<|tool_calls_section_begin|>".repeat(n)],
  [
    "dsml parameters",
    (n) =>
      `<${F}tool_calls><${F}invoke name="read">${`<${F}parameter name="k" string="true">v</${F}parameter>`.repeat(n)}</${F}invoke></${F}tool_calls>`,
  ],
  ["dsml unclosed blocks", (n) => `<${F}tool_calls><${F}invoke name="a">`.repeat(n)],
  ["invoke parameters", (n) => `<invoke name="read">${'<parameter name="k">v</parameter>'.repeat(n)}</invoke>`],
  ["invoke unclosed", (n) => '<invoke name="a">'.repeat(n)],
  ["invoke malformed parameters", (n) => `invoke name="a">\n${'parameter name="k">v parameter>\n'.repeat(n)}`],
  ["olmo unclosed lines", (n) => `<function_calls>\n${'read(path="a"\n'.repeat(n)}</function_calls>`],
  ["llama python_tag lines", (n) => '<|python_tag|>read(path="a")\n'.repeat(n)],
  ["bare JSON objects", (n) => '{"name": "read", "arguments": {"path": "a"}} '.repeat(n)],
  ["granite unclosed pythonic lines", (n) => 'read(path="a"\n'.repeat(n)],
  ["granite nested parentheses", (n) => `read(${"(".repeat(n)}${")".repeat(n)})\n`],
  ["fences", (n) => "```\n".repeat(n)],
];

const knownTools = new Set(["read", "bash", "a"]);
const message = (text: string) => ({ role: "assistant", stopReason: "stop", content: [{ type: "text", text }] });

describe("grammar grows linearly", () => {
  for (const [name, make] of GRAMMAR) {
    it(name, () => {
      const parse = ratio(make, (t) => parseToolGrammarLeaks(t));
      expect(parse.ratio, `parse ${JSON.stringify(parse)}`).toBeLessThan(BOUND);
      const strip = ratio(make, (t) => recoverGrammarLeaks(message(t) as Any, { mode: "strip", knownTools }));
      expect(strip.ratio, `strip ${JSON.stringify(strip)}`).toBeLessThan(BOUND);
    });
  }
});

const table = (tool: string) => (BUILTIN_TOOL_REPAIRS as Record<string, Any>)[tool];
function pipe(tool: string, input: unknown, schema: unknown = piBuiltinSchema(tool)): Any {
  return runRepairPipeline({ input, config: { toolName: tool, schema, ...table(tool) } as Any });
}

const manyKeys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`key_${i}`, i]));
const deep = (n: number) => {
  let v: unknown = "leaf";
  for (let i = 0; i < n; i++) v = { child: v };
  return v;
};

const PIPELINE: Array<[string, (n: number) => () => Any]> = [
  ["read with a long path", (n) => () => pipe("read", { path: "a/".repeat(20 * n) })],
  ["read with a long stringified path", (n) => () => pipe("read", JSON.stringify({ file_path: "a/".repeat(20 * n) }))],
  ["bash with a long command", (n) => () => pipe("bash", { command: "echo hi; ".repeat(10 * n) })],
  [
    "edit with many edits",
    (n) => () => pipe("edit", { path: "a.ts", edits: Array.from({ length: n }, (_, i) => ({ oldText: `a${i}`, newText: `b${i}` })) }),
  ],
  [
    "edit with many stringified edits",
    (n) =>
      () =>
        pipe("edit", JSON.stringify({ path: "a.ts", edits: JSON.stringify(Array.from({ length: n }, (_, i) => ({ old_text: `a${i}`, new_text: `b${i}` }))) })),
  ],
  [
    "edit with many unrepairable edits",
    (n) => () => pipe("edit", { path: "a.ts", edits: Array.from({ length: n }, (_, i) => ({ oldText: i, newText: null })) }),
  ],
  ["read with many unknown keys", (n) => () => pipe("read", { path: "a", ...manyKeys(n) })],
  ["read with many unknown keys, stringified", (n) => () => pipe("read", JSON.stringify({ path: "a", ...manyKeys(n) }))],
  [
    "open object with many properties",
    (n) => () => pipe("tool", manyKeys(n), Type.Object({ key_0: Type.Number() }, { additionalProperties: true })),
  ],
  [
    "record of many numbers from strings",
    (n) =>
      () =>
        pipe(
          "tool",
          Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, String(i)])),
          Type.Record(Type.String(), Type.Number()),
        ),
  ],
  ["array of many numbers from strings", (n) => () => pipe("tool", { xs: Array.from({ length: 8 * n }, (_, i) => String(i)) }, Type.Object({ xs: Type.Array(Type.Number()) }))],
  ["deep nesting (n/10 and 8n/10 levels)", (n) => () => pipe("tool", { v: deep(Math.floor(n / 10)) }, Type.Object({ v: Type.Unknown() }))],
  ["big stringified envelope", (n) => () => pipe("read", JSON.stringify(JSON.stringify({ path: "a", extra: "x".repeat(40 * n), list: manyKeys(n) })))],
];

describe("runRepairPipeline grows linearly", () => {
  for (const [name, make] of PIPELINE) {
    it(name, () => {
      const r = ratio((n) => make(n), (run) => run());
      expect(r.ratio, JSON.stringify(r)).toBeLessThan(BOUND);
    });
  }
});

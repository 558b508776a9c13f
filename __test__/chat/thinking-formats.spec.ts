// Every thinking-format branch of the Chat Completions compat table at every level, against the
// reference (issue 8, item 5): the reasoning fields pi-native sends equal what Blade + pi-ai 0.84.2
// sent for one catalog model per (thinking format, provider, thinkingLevelMap), reasoning on and
// off, with assistant history (fixture recorded from the reference; see its `source`). Before the
// fix, a DeepSeek model at `medium` sent `reasoning_effort: "high"` (levels were clamped as
// pi-ai's streamSimple does; Blade calls `stream` with the level as it is).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createChatService } from "../../lib/chat.js";
import { type Any, closeServersAfterEach, collect, completionsFrame, loopbackServer } from "./support.js";

closeServersAfterEach();

const fixture = JSON.parse(readFileSync(new URL("../fixtures/chat/derived/thinking-formats.json", import.meta.url), "utf8"));
const KEYS = ["thinking", "reasoning_effort", "reasoning", "enable_thinking", "chat_template_kwargs", "chat_template_args", "thinking_budget", "extra_body"];
const HISTORY = [
  { role: "user", content: "a" },
  { role: "assistant", content: "b", reasoningContent: "r" },
  { role: "user", content: "c" },
];

const byModel = new Map<string, Any[]>();
for (const row of fixture.rows) {
  const key = `${row.provider}/${row.model}`;
  if (!byModel.has(key)) byModel.set(key, []);
  byModel.get(key)!.push(row);
}

describe("Chat Completions thinking formats, level by level, as the reference sends them", () => {
  it("covers every recorded combination", () => {
    expect(byModel.size).toBeGreaterThan(70);
    expect(fixture.rows.length).toBe(byModel.size * 14);
  });
  for (const [key, rows] of byModel) {
    it(key, async () => {
      const server = await loopbackServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(`${completionsFrame({ content: "hi" }, "stop")}data: [DONE]\n\n`);
      });
      for (const row of rows) {
        const config: Any = { provider: row.provider, model: row.model, apiKey: "k", baseUrl: `${server.url}/v1`, maxRetries: 0, reasoningEnabled: row.reasoningEnabled };
        if (row.reasoningEffort) config.reasoningEffort = row.reasoningEffort;
        const before = server.requests.length;
        const { error } = await collect(createChatService(config).streamChat(HISTORY));
        expect(error, `${row.reasoningEffort} ${row.reasoningEnabled}`).toBeUndefined();
        const body = JSON.parse(server.requests[before].body);
        const sent: Any = {};
        for (const k of KEYS) if (k in body) sent[k] = body[k];
        expect(sent, `${key} ${row.reasoningEffort} reasoning ${row.reasoningEnabled ? "on" : "off"}`).toEqual(row.sent);
      }
    });
  }
});

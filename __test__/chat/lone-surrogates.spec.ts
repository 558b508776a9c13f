// Any string a caller passes survives to the wire (issue 8, item 5): lone surrogates (legal in a
// JS string) in message text, tool schemas and tool-call arguments, next to U+10FFFF and astral
// characters. Before, "\ud800" anywhere ended the request with serde_json's "unexpected end of hex
// escape" and nothing was sent. The bodies equal what Blade + pi-ai 0.84.2 sent for the same input
// (recorded fixture): message text goes through pi-ai's sanitizeSurrogates, schemas and arguments
// keep the lone surrogates as JSON.stringify escapes them.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createChatService } from "../../lib/chat.js";
import { type Any, closeServersAfterEach, collect, loopbackServer } from "./support.js";

closeServersAfterEach();

const recorded = JSON.parse(readFileSync(new URL("../fixtures/chat/derived/lone-surrogates.json", import.meta.url), "utf8")).bodies;

const S = "x\ud800y\udfffz\u{10FFFF}w\u{1F600}";
const MESSAGES = [
  { role: "system", content: `sys${S}` },
  { role: "user", content: `u${S}` },
  { role: "assistant", content: `a${S}`, tool_calls: [{ id: "t1", type: "function", function: { name: "read", arguments: JSON.stringify({ path: `p${S}` }) } }] },
  { role: "tool", tool_call_id: "t1", content: `t${S}` },
  { role: "user", content: [{ type: "text", text: `part${S}` }] },
];
const TOOLS = [{ name: "read", description: `d${S}`, parameters: { type: "object", properties: { path: { type: "string", description: `pd${S}` } } } }];

const PROVIDERS: Array<[string, string, string]> = [
  ["openai-compatible", "m", "/v1"],
  ["anthropic-compatible", "m", ""],
  ["openai", "gpt-5", "/v1"],
  ["azure-openai-responses", "gpt-5", "/openai/v1"],
];

describe("lone surrogates in the request", () => {
  for (const [provider, model, path] of PROVIDERS) {
    it(`${provider}: sent, and the body equals the reference's`, async () => {
      const server = await loopbackServer((_req, res) => {
        res.writeHead(400, { "content-type": "application/json" });
        res.end('{"error":{"message":"no"}}');
      });
      const config: Any = { provider, model, apiKey: "k", baseUrl: `${server.url}${path}`, maxRetries: 0, apiVersion: "2025-04-01-preview" };
      const { error } = await collect(createChatService(config).streamChat(MESSAGES, TOOLS));
      expect(error.message).not.toContain("hex escape");
      expect(server.requests).toHaveLength(1);
      const body = JSON.parse(server.requests[0].body);
      expect(body).toEqual(recorded[provider]);
      // The wire text escapes each lone surrogate as JSON.stringify does; the other characters are raw.
      expect(server.requests[0].body).toContain(String.raw`"dx\ud800y\udfffz`);
      expect(server.requests[0].body).toContain("z\u{10FFFF}w\u{1F600}");
    });
  }
});

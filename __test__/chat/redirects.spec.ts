// Redirects (issue 12, finding 1): a provider's redirect to another origin must never carry the
// API key (any auth style), custom headers or the conversation there. Same-origin redirects are
// followed; cross-origin ones and loops end with an error of ours that names the status and the
// target origin, and the other origin receives nothing.
import { describe, expect, it } from "vitest";
import { createChatService } from "../../lib/chat.js";
import { type Any, closeServersAfterEach, collect, loopbackServer, USER } from "./support.js";

closeServersAfterEach();

const SSE = [
  `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"moved"},"finish_reason":null}]}`,
  `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
  "data: [DONE]",
  "",
].join("\n\n");

const AUTH_STYLES: Array<[string, Any]> = [
  ["Bearer (openai-compatible)", { provider: "openai-compatible", model: "m", apiKey: "sk-secret-key", baseUrl: "" }],
  ["x-api-key (anthropic-compatible)", { provider: "anthropic-compatible", model: "m", apiKey: "sk-ant-secret-key", baseUrl: "" }],
  ["api-key (azure-openai-responses)", { provider: "azure-openai-responses", model: "gpt-5", apiKey: "sk-azure-secret-key", baseUrl: "", apiVersion: "2025-04-01-preview" }],
];
const basePath: Record<string, string> = { "openai-compatible": "/v1", "anthropic-compatible": "", "azure-openai-responses": "/openai/v1" };

describe("redirects", () => {
  for (const status of [301, 302, 303, 307, 308]) {
    for (const [style, base] of AUTH_STYLES) {
      it(`${status} to another origin is not followed (${style})`, async () => {
        const other = await loopbackServer((_req, res) => res.end("should never be reached"));
        const provider = await loopbackServer((req, res) => {
          res.writeHead(status, { location: `${other.url}${req.url}` });
          res.end();
        });
        const service = createChatService({
          ...base,
          baseUrl: `${provider.url}${basePath[base.provider]}`,
          maxRetries: 0,
          customHeaders: { "x-team-token": "team-secret" },
        });
        const { error } = await collect(service.streamChat([{ role: "user", content: "hello, secret conversation" }]));
        expect(provider.requests).toHaveLength(1);
        expect(JSON.stringify(provider.requests[0].headers)).toContain(base.apiKey);
        expect(other.requests).toHaveLength(0);
        expect(String(error?.message)).toContain(`answered ${status} with a redirect to another origin`);
        expect(String(error?.message)).toContain(`http://127.0.0.1:${other.port}`);
        expect(String(error?.message)).not.toContain("secret");
      });
    }
  }

  it("a same-origin redirect is followed with the request intact", async () => {
    const provider = await loopbackServer((req, res) => {
      if (req.url?.startsWith("/v1/")) {
        res.writeHead(307, { location: req.url.replace("/v1/", "/v2/") });
        return res.end();
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(SSE);
    });
    const service = createChatService({ provider: "openai-compatible", model: "m", apiKey: "sk-secret-key", baseUrl: `${provider.url}/v1`, maxRetries: 0 });
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(error).toBeUndefined();
    expect(chunks.map((c: Any) => c.content).join("")).toContain("moved");
    expect(provider.requests.map((r) => r.path)).toEqual(["/v1/chat/completions", "/v2/chat/completions"]);
    expect(provider.requests[1].headers.authorization).toBe("Bearer sk-secret-key");
    expect(provider.requests[1].body).toBe(provider.requests[0].body);
  });

  it("a redirect loop ends after ten hops with an error of ours", async () => {
    const provider = await loopbackServer((req, res) => {
      res.writeHead(307, { location: req.url ?? "/" });
      res.end();
    });
    const service = createChatService({ provider: "openai-compatible", model: "m", apiKey: "sk-secret-key", baseUrl: `${provider.url}/v1`, maxRetries: 0 });
    const { error } = await collect(service.streamChat(USER));
    expect(String(error?.message)).toContain("too many redirects");
    expect(provider.requests.length).toBeLessThanOrEqual(12);
  });
});

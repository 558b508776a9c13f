// The service surface (spec §1, §2): construction and config, factories and default headers,
// chat() aggregation, pre-request checks, images, request shaping, and credential hygiene in errors.
// Blade ideas: pi-ai-chat-service.test.ts (prechecks, images, aggregation), pi-context-adapter.test.ts.
import { describe, expect, it } from "vitest";
import { createChatService, createChatServiceAsync, getModel, type ModelDefinition, PiNativeChatService } from "../../lib/chat.js";
import { type Any, closeServersAfterEach, collect, completionsConfig, loopbackServer, mockProvider, sleep, TEXT_CHUNKS, USER } from "./support.js";

closeServersAfterEach();

const VISION_MODEL: ModelDefinition = {
  id: "vision-model",
  name: "Vision Model",
  provider: "openai-compatible",
  api: "openai-completions",
  input: ["text", "image"],
  contextWindow: 64_000,
  maxTokens: 2_000,
};

describe("construction and config", () => {
  it("getConfig() reports the catalog's context window and output limit", () => {
    const service = createChatService({ provider: "openai", model: "gpt-5", apiKey: "sk-test" });
    expect(service).toBeInstanceOf(PiNativeChatService);
    expect(service.getConfig()).toEqual({ provider: "openai", model: "gpt-5", apiKey: "sk-test", maxContextTokens: 400_000, maxOutputTokens: 128_000 });
    const capped = createChatService({ provider: "anthropic", model: "claude-opus-4-6", maxOutputTokens: 4_096, maxContextTokens: 5 });
    expect(capped.getConfig()).toMatchObject({ maxContextTokens: 1_000_000, maxOutputTokens: 4_096 });
  });

  it("getConfig() returns a copy", () => {
    const service = createChatService({ provider: "openai", model: "gpt-5" });
    const config = service.getConfig();
    config.model = "changed";
    expect(service.getConfig().model).toBe("gpt-5");
  });

  it("updateConfig() merges and re-resolves the model", () => {
    const service = createChatService({ provider: "openai", model: "gpt-4", temperature: 0.3 });
    expect(service.getConfig()).toMatchObject({ maxContextTokens: 8_192, maxOutputTokens: 8_192 });
    service.updateConfig({ model: "gpt-4.1" });
    // Blade merges the previous effective config, so the derived maxOutputTokens carries over.
    expect(service.getConfig()).toMatchObject({ model: "gpt-4.1", temperature: 0.3, maxContextTokens: 1_047_576, maxOutputTokens: 8_192 });
    service.updateConfig({ maxOutputTokens: 1_000 });
    expect(service.getConfig().maxOutputTokens).toBe(1_000);
  });

  it("an unknown model throws 'Unknown pi-ai model: <provider>/<id>' (and updateConfig keeps the old config)", async () => {
    expect(() => createChatService({ provider: "acme", model: "nope" })).toThrow(new Error("Unknown pi-ai model: acme/nope"));
    expect(() => createChatService({ provider: "openai", model: "gpt-99" })).toThrow("Unknown pi-ai model: openai/gpt-99");
    await expect(createChatServiceAsync({ provider: "acme", model: "nope" })).rejects.toThrow("Unknown pi-ai model: acme/nope");
    const service = createChatService({ provider: "openai", model: "gpt-5" });
    expect(() => service.updateConfig({ model: "gpt-99" })).toThrow("Unknown pi-ai model: openai/gpt-99");
    expect(service.getConfig()).toMatchObject({ model: "gpt-5", maxContextTokens: 400_000 });
    expect(getModel("acme", "nope")).toBeUndefined();
  });

  it("openai-compatible ids are created on the fly with the §2.0 defaults", () => {
    expect(createChatService({ provider: "openai-compatible", model: "anything-local" }).getConfig()).toMatchObject({
      maxContextTokens: 128_000,
      maxOutputTokens: 32_768,
    });
  });

  it("init.models adds definitions and replaces catalog entries", () => {
    const added = createChatService({ provider: "openai-compatible", model: "vision-model" }, { models: [VISION_MODEL] });
    expect(added.getConfig()).toMatchObject({ maxContextTokens: 64_000, maxOutputTokens: 2_000 });
    expect(getModel("openai-compatible", "vision-model", { models: [VISION_MODEL] })).toMatchObject({ name: "Vision Model", input: ["text", "image"] });

    const gpt5 = getModel("openai", "gpt-5")!;
    const replaced = createChatService({ provider: "openai", model: "gpt-5" }, { models: [{ ...gpt5, contextWindow: 1_234, maxTokens: 567 }] });
    expect(replaced.getConfig()).toMatchObject({ maxContextTokens: 1_234, maxOutputTokens: 567 });
    // The catalog itself is untouched for other services.
    expect(createChatService({ provider: "openai", model: "gpt-5" }).getConfig().maxContextTokens).toBe(400_000);
  });

  it("an init.models definition shapes the request (model id, output limit)", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "text", { model: "vision-model" }), { models: [VISION_MODEL] });
    await service.chat(USER);
    expect(mock.requests[0].body).toMatchObject({ model: "vision-model", max_completion_tokens: 2_000, stream: true });
  });
});

describe("factories and default headers", () => {
  it("createChatServiceAsync merges the OpenRouter headers under customHeaders (caller wins, case-insensitively)", async () => {
    const mock = await mockProvider();
    const service = await createChatServiceAsync({
      provider: "openrouter",
      model: "ai21/jamba-large-1.7",
      apiKey: "sk-or",
      baseUrl: `${mock.baseUrl}/v1`,
      customHeaders: { "x-mock-scenario": "text", "x-title": "Mine" },
    });
    await service.chat(USER);
    const headers = mock.requests[0].headers;
    expect(headers["http-referer"]).toBe("https://github.com/echoVic/blade-code");
    expect(headers["x-title"]).toBe("Mine");
    expect(headers.authorization).toBe("Bearer sk-or");
  });

  it("createChatServiceAsync adds the Cerebras integration header; createChatService adds nothing", async () => {
    const mock = await mockProvider();
    const base = { apiKey: "sk-c", baseUrl: `${mock.baseUrl}/v1`, customHeaders: { "x-mock-scenario": "text" } };
    await (await createChatServiceAsync({ provider: "cerebras", model: "gpt-oss-120b", ...base })).chat(USER);
    await createChatService({ provider: "openrouter", model: "ai21/jamba-large-1.7", ...base }).chat(USER);
    await createChatService({ provider: "cerebras", model: "gpt-oss-120b", ...base }).chat(USER);
    expect(mock.requests[0].headers["x-cerebras-3rd-party-integration"]).toBe("blade");
    for (const r of mock.requests.slice(1)) {
      expect(r.headers["http-referer"]).toBeUndefined();
      expect(r.headers["x-title"]).toBeUndefined();
      expect(r.headers["x-cerebras-3rd-party-integration"]).toBeUndefined();
    }
  });

  it("createChatServiceAsync leaves other providers' headers alone", async () => {
    const service = await createChatServiceAsync({ provider: "openai", model: "gpt-5", customHeaders: { a: "b" } });
    expect(service.getConfig().customHeaders).toEqual({ a: "b" });
  });
});

describe("chat() and request shaping", () => {
  it("chat() aggregates content, reasoning, tool calls, usage and finish reason", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "full"));
    const response = await service.chat(USER, [{ name: "read_file", description: "Read", parameters: { type: "object", properties: {} } }]);
    expect(response).toEqual({
      content: "I'll read the file now.",
      reasoningContent: "The user wants the file. I should call read_file.",
      toolCalls: [{ index: 0, id: "call_mock_1", type: "function", function: { name: "read_file", arguments: '{"path":"src/main.rs","limit":20}' } }],
      usage: { promptTokens: 1_200, completionTokens: 85, totalTokens: 1_285, costUsd: 0, reasoningTokens: 30, cacheReadInputTokens: 1_024 },
      finishReason: "toolUse",
    });
  });

  it("chat() ignores control chunks and omits empty reasoning/tool calls", async () => {
    const mock = await mockProvider();
    const response = await createChatService(completionsConfig(mock, "fail-once-500+text", { maxRetries: 1 })).chat(USER);
    expect(response).toEqual({
      content: "I'll read the file now.",
      usage: expect.objectContaining({ promptTokens: 1_200 }),
      finishReason: "stop",
    });
  });

  it("a streamed turn with the `length` stop reports finishReason length", async () => {
    const mock = await mockProvider();
    const { chunks } = await collect(createChatService(completionsConfig(mock, "length")).streamChat(USER));
    expect(chunks.slice(0, 2)).toEqual(TEXT_CHUNKS);
    expect(chunks[2]).toMatchObject({ finishReason: "length" });
  });

  it("orphan tool history, Blade-only fields and tool order are handled before the wire", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "text"));
    const messages: Any[] = [
      { role: "system", content: "sys" },
      { role: "user", content: "hi", id: "u1", metadata: { isCompactSummary: true } },
      { role: "tool", tool_call_id: "orphan", content: "dropped" },
      { role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function", function: { name: "read_file", arguments: '{"path":"a"}' } }] },
      { role: "tool", tool_call_id: "c1", name: "read_file", content: "file body" },
      { role: "assistant", content: "", tool_calls: [{ id: "c2", type: "function", function: { name: "read_file", arguments: "{}" } }] },
      { role: "user", content: "next" },
    ];
    const tool = (name: string) => ({ name, description: name, parameters: { type: "object", properties: {} } });
    await service.chat(messages, [tool("zeta"), tool("alpha")]);
    const body = mock.requests[0].body;
    expect(body.messages).toEqual([
      { role: "system", content: "sys" },
      { role: "user", content: "hi" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "read_file", arguments: '{"path":"a"}' } }] },
      { role: "tool", content: "file body", tool_call_id: "c1" },
      { role: "user", content: "next" },
    ]);
    expect(body.tools.map((t: Any) => t.function.name)).toEqual(["alpha", "zeta"]);
  });

  it("per-request maxOutputTokens and temperature win over the config", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "text", { temperature: 0.7, maxOutputTokens: 3_000 }));
    await service.chat(USER);
    await service.chat(USER, [], undefined, { maxOutputTokens: 100, temperature: 0.1 });
    expect(mock.requests[0].body).toMatchObject({ temperature: 0.7, max_completion_tokens: 3_000 });
    expect(mock.requests[1].body).toMatchObject({ temperature: 0.1, max_completion_tokens: 100 });
  });
});

describe("pre-request checks (no network)", () => {
  it("a required tool that is not offered fails before any request", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "text"));
    const tools = [{ name: "read_file", description: "Read", parameters: { type: "object" } }];
    const { chunks, error } = await collect(service.streamChat(USER, tools, undefined, { toolChoice: { type: "tool", toolName: "x" } }));
    expect(chunks).toEqual([]);
    expect(error.message).toBe("Required tool is unavailable: x");
    expect(error.replayBoundaryCrossed).toBe(false);
    await expect(service.chat(USER, undefined, undefined, { toolChoice: { type: "tool", toolName: "write_file" } })).rejects.toThrow(
      "Required tool is unavailable: write_file",
    );
    await sleep(50);
    expect(mock.requests).toHaveLength(0);
  });

  it("image input is rejected for a text-only model, new or historical, before any request", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "text"));
    const image = { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } };
    const fresh: Any[] = [{ role: "user", content: [{ type: "text", text: "what is this?" }, image] }];
    const historical: Any[] = [{ role: "user", content: [image] }, { role: "assistant", content: "a cat" }, { role: "user", content: "thanks" }];
    for (const messages of [fresh, historical]) {
      const { error } = await collect(service.streamChat(messages));
      expect(error.message).toBe("mock-model does not support image input");
    }
    await sleep(50);
    expect(mock.requests).toHaveLength(0);
  });

  it("an invalid bounded-recovery budget fails before any request", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "text"));
    const { error } = await collect(service.streamChat(USER, [], undefined, { providerRecovery: { mode: "bounded_foreground", budgetMs: 5 } }));
    expect(error.message).toBe("Invalid bounded foreground Provider recovery budget");
    await sleep(50);
    expect(mock.requests).toHaveLength(0);
  });
});

describe("images", () => {
  const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");

  async function imageServer() {
    return loopbackServer((req, res) => {
      if (req.url === "/cat.png") {
        res.writeHead(200, { "content-type": "image/png; charset=binary" });
        res.end(PNG);
      } else if (req.url === "/raw") {
        res.writeHead(200); // no content-type: image/png is assumed
        res.end(PNG);
      } else {
        res.writeHead(404, { "content-type": "text/plain" });
        res.end("not found");
      }
    });
  }

  it("an http image URL is downloaded and sent as base64", async () => {
    const mock = await mockProvider();
    const images = await imageServer();
    const service = createChatService(completionsConfig(mock, "text", { model: "vision-model" }), { models: [VISION_MODEL] });
    const messages: Any[] = [
      {
        role: "user",
        content: [
          { type: "text", text: "what is this?" },
          { type: "image_url", image_url: { url: `${images.url}/cat.png` } },
          { type: "image_url", image_url: { url: `${images.url}/raw` } },
          { type: "image_url", image_url: { url: "data:image/gif;base64,R0lGODlh" } },
        ],
      },
    ];
    const response = await service.chat(messages);
    expect(response.content).toBe("I'll read the file now.");
    expect(images.requests.map((r) => [r.method, r.path])).toEqual([
      ["GET", "/cat.png"],
      ["GET", "/raw"],
    ]);
    // A plain GET like Blade's fetch(url): the provider's credential and custom headers stay with the provider.
    for (const r of images.requests) {
      expect(r.headers.authorization).toBeUndefined();
      expect(r.headers["x-mock-scenario"]).toBeUndefined();
    }
    const b64 = PNG.toString("base64");
    expect(mock.requests[0].body.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "what is this?" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${b64}` } },
          { type: "image_url", image_url: { url: `data:image/png;base64,${b64}` } },
          { type: "image_url", image_url: { url: "data:image/gif;base64,R0lGODlh" } },
        ],
      },
    ]);
  });

  it("an image that cannot be loaded fails with its HTTP status and sends no chat request", async () => {
    const mock = await mockProvider();
    const images = await imageServer();
    const service = createChatService(completionsConfig(mock, "text", { model: "vision-model" }), { models: [VISION_MODEL] });
    const url = `${images.url}/missing.png`;
    const { chunks, error } = await collect(service.streamChat([{ role: "user", content: [{ type: "image_url", image_url: { url } }] }]));
    expect(chunks).toEqual([]);
    expect(error.message).toBe(`Failed to load image ${url}: HTTP 404`);
    expect(images.requests).toHaveLength(1);
    expect(mock.requests).toHaveLength(0);
  });
});

describe("credentials never appear in errors", () => {
  /** A provider that answers 401 and echoes every credential it received. */
  async function echoingProvider() {
    return loopbackServer((req, res) => {
      const seen = [req.headers.authorization, req.headers["x-api-key"], req.headers["api-key"]].filter(Boolean).join(" / ");
      const body = req.url?.endsWith("/v1/messages")
        ? { type: "error", error: { type: "authentication_error", message: `invalid x-api-key: ${seen}` } }
        : { error: { message: `Incorrect API key provided: ${seen}. Got ${seen}.`, type: "invalid_request_error", param: null, code: "invalid_api_key" } };
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    });
  }

  it.each([
    ["openai-completions", "openai-compatible", "some-model", "sk-secret-completions-0123456789", "401: "],
    ["openai-responses", "openai", "gpt-5", "sk-secret-responses-0123456789", "OpenAI API error (401): "],
    ["anthropic-messages", "anthropic", "claude-sonnet-4-5", "sk-secret-anthropic-0123456789", "401 "],
  ])("a 401 body echoing the key (%s) is redacted", async (_api, provider, model, apiKey, prefix) => {
    const server = await echoingProvider();
    const service = createChatService({ provider, model, apiKey, baseUrl: server.url, maxRetries: 2 });
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(server.requests).toHaveLength(1); // 401 is not retried
    expect(error.message.startsWith(prefix)).toBe(true);
    expect(error.message).not.toContain(apiKey);
    expect(String(error.stack)).not.toContain(apiKey);
    expect(JSON.stringify(chunks)).not.toContain(apiKey);
  });

  it("a fallback channel's key is redacted too", async () => {
    const mock = await mockProvider();
    const server = await echoingProvider();
    const fallbackKey = "sk-secret-fallback-0123456789";
    const service = createChatService(
      completionsConfig(mock, "http503", {
        apiKey: "sk-secret-primary-0123456789",
        fallbackModels: [{ provider: "openai-compatible", model: "backup", channel: { apiKey: fallbackKey, baseUrl: server.url } }],
      }),
    );
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(chunks.some((c) => c.modelFallback)).toBe(true);
    expect(error.message.startsWith("401: ")).toBe(true);
    expect(error.message).not.toContain(fallbackKey);
  });

  it("a credential supplied as a custom Authorization header is redacted too", async () => {
    const server = await echoingProvider();
    const token = "sk-secret-header-0123456789";
    const service = createChatService({
      provider: "openai-compatible",
      model: "some-model",
      baseUrl: server.url,
      maxRetries: 0,
      customHeaders: { Authorization: `Bearer ${token}`, "api-key": token },
    });
    const { error } = await collect(service.streamChat(USER));
    expect(server.requests[0].headers.authorization).toBe(`Bearer ${token}`);
    expect(error.message.startsWith("401: ")).toBe(true);
    expect(error.message).not.toContain(token);
  });

  it("configuration errors do not mention the key", async () => {
    const apiKey = "sk-secret-config-0123456789";
    let thrown: Any;
    try {
      createChatService({ provider: "acme", model: "nope", apiKey });
    } catch (e) {
      thrown = e;
    }
    expect(thrown.message).toBe("Unknown pi-ai model: acme/nope");
    const service = createChatService({ provider: "openai", model: "gpt-5", apiKey });
    try {
      service.updateConfig({ model: "nope" });
    } catch (e) {
      thrown = e;
    }
    expect(thrown.message).toBe("Unknown pi-ai model: openai/nope");
    expect(String(thrown.stack)).not.toContain(apiKey);
  });
});

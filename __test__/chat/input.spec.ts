// Input validation at the boundary (issue 12, finding 4): malformed messages, tools, numbers and
// URLs are rejected with an error that names the field, and nothing reaches the provider (before:
// `streamChat("hello")` sent `messages: []` and billed a call, `timeout: -1` was accepted, and
// `http://user:pw@host` replaced the API key with Basic auth). Where Blade + pi-ai throw a TypeError
// for the same input, so does pi-native; `timeout` keeps the provider SDK's own texts.
import { describe, expect, it } from "vitest";
import { createChatService } from "../../lib/chat.js";
import { type Any, closeServersAfterEach, collect, completionsFrame, loopbackServer, USER } from "./support.js";

closeServersAfterEach();

const OK = `${completionsFrame({ content: "ok" })}${completionsFrame({}, "stop")}data: [DONE]\n\n`;

async function provider() {
  return loopbackServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(OK);
  });
}

const config = (url: string, extra: Any = {}): Any => ({ provider: "openai-compatible", model: "m", apiKey: "sk-secret-key", baseUrl: `${url}/v1`, maxRetries: 0, ...extra });

describe("messages and tools", () => {
  const cases: Array<[string, Any, Any, RegExp]> = [
    ["a string", "hello", undefined, /^pi-native: messages must be an array of chat messages, got a string/],
    ["null", null, undefined, /^pi-native: messages must be an array of chat messages, got null/],
    ["a number", 42, undefined, /messages must be an array of chat messages, got the number 42/],
    ["an object", {}, undefined, /messages must be an array of chat messages, got an object/],
    ["a null message", [null], undefined, /^pi-native: messages\[0\] must be a message object, got null/],
    ["a string message", ["hi"], undefined, /messages\[0\] must be a message object/],
    ["an unknown role", [{ role: "wizard", content: "x" }], undefined, /messages\[0\]\.role must be one of system, user, assistant, tool, got a string/],
    ["a missing role", [{ content: "x" }], undefined, /messages\[0\]\.role must be one of/],
    ["numeric content", [{ role: "user", content: 42 }], undefined, /messages\[0\]\.content must be a string or an array of content parts, got the number 42/],
    ["null content", [{ role: "user", content: "a" }, { role: "assistant", content: null }], undefined, /messages\[1\]\.content must be a string or an array/],
    ["a null part", [{ role: "user", content: [null] }], undefined, /messages\[0\]\.content\[0\] must be a content part object/],
    ["a string part", [{ role: "user", content: ["x"] }], undefined, /messages\[0\]\.content\[0\] must be a content part object/],
    ["tools as a string", USER, "x", /^pi-native: tools must be an array of tool definitions/],
    ["a null tool", USER, [null], /tools\[0\] must be a tool definition object, got null/],
    ["a nameless tool", USER, [{ description: "d", parameters: {} }], /tools\[0\]\.name must be a non-empty string/],
  ];
  for (const [label, messages, tools, message] of cases) {
    it(`${label}: TypeError naming the field, nothing sent`, async () => {
      const server = await provider();
      const { chunks, error } = await collect(createChatService(config(server.url)).streamChat(messages, tools));
      expect(chunks).toEqual([]);
      expect(error).toBeInstanceOf(TypeError);
      expect(error.message).toMatch(message);
      expect(server.requests).toHaveLength(0);
    });
  }

  it("well-formed input still streams (parts, tool history, empty tools)", async () => {
    const server = await provider();
    const messages = [
      { role: "system", content: [{ type: "text", text: "be brief" }] },
      { role: "user", content: "read it" },
      { role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function", function: { name: "read", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: "file" },
    ];
    const { chunks, error } = await collect(createChatService(config(server.url)).streamChat(messages, null));
    expect(error).toBeUndefined();
    expect(chunks[0]).toEqual({ content: "ok" });
    expect(server.requests).toHaveLength(1);
  });
});

describe("numeric settings", () => {
  const cases: Array<[string, Any, Any, Any, RegExp]> = [
    ["timeout -1", { timeout: -1 }, undefined, Error, /^timeout must be a positive integer$/],
    ["timeout 1.5", { timeout: 1.5 }, undefined, Error, /^timeout must be an integer$/],
    ["timeout NaN", { timeout: NaN }, undefined, Error, /^timeout must be an integer$/],
    ["timeout as text", { timeout: "abc" }, undefined, Error, /^timeout must be an integer$/],
    ["streamIdleTimeout NaN", { streamIdleTimeout: NaN }, undefined, RangeError, /config\.streamIdleTimeout must be a number of milliseconds from 1 to 2147483647, got the number NaN/],
    ["streamIdleTimeout -5", { streamIdleTimeout: -5 }, undefined, RangeError, /config\.streamIdleTimeout must be/],
    ["streamIdleTimeout as text", { streamIdleTimeout: "abc" }, undefined, TypeError, /config\.streamIdleTimeout must be a number/],
    ["maxRetries 1e12", { maxRetries: 1e12 }, undefined, RangeError, /config\.maxRetries must be a number of retries from 0 to 1000, got the number 1000000000000/],
    ["maxRetries -1", { maxRetries: -1 }, undefined, RangeError, /config\.maxRetries must be/],
    ["maxRetries as text", { maxRetries: "x" }, undefined, TypeError, /config\.maxRetries must be/],
    ["temperature as text", { temperature: "hot" }, undefined, TypeError, /config\.temperature must be a number from 0 to 2/],
    ["temperature 5", { temperature: 5 }, undefined, RangeError, /config\.temperature must be a number from 0 to 2/],
    ["maxOutputTokens -1", { maxOutputTokens: -1 }, undefined, RangeError, /config\.maxOutputTokens must be a positive integer/],
    ["maxOutputTokens 1.5", { maxOutputTokens: 1.5 }, undefined, RangeError, /config\.maxOutputTokens must be a positive integer/],
    ["options.temperature", {}, { temperature: Infinity }, RangeError, /options\.temperature must be a number from 0 to 2/],
    ["options.maxOutputTokens", {}, { maxOutputTokens: 0 }, RangeError, /options\.maxOutputTokens must be a positive integer/],
    [
      "a fallback channel's timeout",
      { fallbackModels: [{ provider: "openai-compatible", model: "m2", channel: { streamIdleTimeout: -1 } }] },
      undefined,
      RangeError,
      /fallbackModels\[0\]\.channel\.streamIdleTimeout must be/,
    ],
  ];
  for (const [label, extra, options, type, message] of cases) {
    it(`${label} is rejected before sending`, async () => {
      const server = await provider();
      const service = createChatService(config(server.url, extra));
      const { chunks, error } = await collect(service.streamChat(USER, [], undefined, options));
      expect(chunks).toEqual([]);
      expect(error).toBeInstanceOf(type);
      expect(error.message).toMatch(message);
      expect(server.requests).toHaveLength(0);
    });
  }

  it("values in range are accepted (maxRetries 1.5 as in the reference, temperature 0, idle 1 ms .. 2^31-1)", async () => {
    const server = await provider();
    for (const extra of [{ maxRetries: 1.5 }, { temperature: 0, timeout: 30_000 }, { streamIdleTimeout: 2 ** 31 - 1, maxOutputTokens: 1 }]) {
      const { error } = await collect(createChatService(config(server.url, extra)).streamChat(USER));
      expect(error).toBeUndefined();
    }
    expect(server.requests).toHaveLength(3);
  });
});

describe("URLs", () => {
  for (const auth of ["user:pw@", "user@", ":pw@"]) {
    it(`a baseUrl with "${auth}" is refused without echoing it, nothing sent`, async () => {
      const server = await provider();
      const baseUrl = `${server.url.replace("http://", `http://${auth}`)}/v1`;
      const { chunks, error } = await collect(createChatService(config(server.url, { baseUrl })).streamChat(USER));
      expect(chunks).toEqual([]);
      expect(error).toBeInstanceOf(TypeError);
      expect(error.message).toBe("pi-native: config.baseUrl must not embed credentials (user:password@host); pass the key as apiKey");
      expect(error.message).not.toContain("pw");
      expect(server.requests).toHaveLength(0);
    });
  }

  it("a fallback channel's baseUrl with credentials is refused too", async () => {
    const server = await provider();
    const fallbackModels = [{ provider: "openai-compatible", model: "m2", channel: { baseUrl: server.url.replace("http://", "http://u:p@") } }];
    const { error } = await collect(createChatService(config(server.url, { fallbackModels })).streamChat(USER));
    expect(error.message).toMatch(/fallbackModels\[0\]\.channel\.baseUrl must not embed credentials/);
    expect(server.requests).toHaveLength(0);
  });
});

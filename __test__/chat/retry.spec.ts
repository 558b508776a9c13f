// Retry classification, backoff, lifecycle events and fallback models (spec §6.5–6.9) through the
// public pi-native/chat API against the loopback mock. Blade ideas: pi-ai-chat-service.test.ts
// (retry/fallback cases) and pi-request-options.test.ts (response observer, fallbackable errors).
import { describe, expect, it } from "vitest";
import { createChatService, replayBoundaryCrossed } from "../../lib/chat.js";
import { type Any, closeServersAfterEach, collect, completionsConfig, kind, mockProvider, retries, TEXT_CHUNKS, USER } from "./support.js";

closeServersAfterEach();

const ERR_500 = '500: {"message":"Internal server error","type":"server_error","param":null,"code":"server_error"}';
const ERR_503 = '503: {"message":"Service unavailable","type":"overloaded_error","param":null,"code":"overloaded_error"}';
const ERR_429 = '429: {"message":"Rate limit reached for requests","type":"rate_limit_error","param":null,"code":"rate_limit_error"}';
const ERR_400 = '400: {"message":"Invalid request: messages.0.content is malformed","type":"invalid_request_error","param":null,"code":"invalid_request_error"}';

const fallback = (mock: Any, scenario: string, model = "backup-model", apiKey = "sk-fallback"): Any => ({
  provider: "openai-compatible",
  model,
  channel: { apiKey, baseUrl: `${mock.baseUrl}/v1`, customHeaders: { "x-mock-scenario": scenario } },
});

describe("retry lifecycle", () => {
  it("a retryable failure before output: scheduled → attempt → recovered, then the same request again", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "fail-once-500", { maxRetries: 2 }));
    const before = Date.now();
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(error).toBeUndefined();
    expect(chunks.slice(0, 3)).toEqual([
      { providerRetry: { phase: "scheduled", attempt: 1, maxRetries: 2, reason: "server_error", statusCode: 500, delayMs: 20, nextRetryAt: expect.any(Number), mode: "standard" } },
      { providerRetry: { phase: "attempt", attempt: 1, maxRetries: 2, reason: "server_error", statusCode: 500, mode: "standard" } },
      { providerRetry: { phase: "recovered", attempt: 1, maxRetries: 2, reason: "server_error", statusCode: 500, mode: "standard" } },
    ]);
    const next = chunks[0].providerRetry.nextRetryAt;
    expect(next).toBeGreaterThanOrEqual(before + 20);
    expect(next).toBeLessThan(Date.now() + 1_000);
    expect(chunks.slice(3).map(kind)).toEqual(["reasoning", "reasoning", "content", "content", "toolCalls", "finish:toolUse"]);
    expect(mock.requests.map((r: Any) => r.status)).toEqual([500, 200]);
    expect(mock.requests[1].body).toEqual(mock.requests[0].body);
  });

  it("Retry-After in (fractional) seconds sets the delay when retry-after-ms is absent", async () => {
    const mock = await mockProvider();
    const service = createChatService(
      completionsConfig(mock, "fail-once-429", { maxRetries: 1 }, { "x-mock-retry-after-ms": "none", "x-mock-retry-after": "0.25" }),
    );
    const marks: number[] = [];
    const { chunks, error } = await collect(service.streamChat(USER), () => marks.push(performance.now()));
    expect(error).toBeUndefined();
    expect(retries(chunks)[0]).toMatchObject({ phase: "scheduled", reason: "rate_limit", statusCode: 429, delayMs: 250 });
    expect(marks[1] - marks[0]).toBeGreaterThanOrEqual(200); // the backoff really waited
  });

  it("retry-after-ms wins over Retry-After; an HTTP date in the past means no wait", async () => {
    const mock = await mockProvider();
    const a = createChatService(completionsConfig(mock, "fail-once-503", { maxRetries: 1 }, { "x-mock-retry-after-ms": "30", "x-mock-retry-after": "10" }));
    expect(retries((await collect(a.streamChat(USER))).chunks)[0]).toMatchObject({ phase: "scheduled", delayMs: 30, statusCode: 503 });

    const b = createChatService(
      completionsConfig(mock, "fail-once-500", { maxRetries: 1 }, { "x-mock-retry-after-ms": "none", "x-mock-retry-after": new Date(Date.now() - 60_000).toUTCString() }),
    );
    expect(retries((await collect(b.streamChat(USER))).chunks)[0]).toMatchObject({ phase: "scheduled", delayMs: 0 });
  });

  it("a server delay is capped at 60 s", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "fail-once-500", { maxRetries: 1 }, { "x-mock-retry-after-ms": "3600000" }));
    const controller = new AbortController();
    const { chunks, error } = await collect(service.streamChat(USER, [], controller.signal), (c) => {
      if (c.providerRetry?.phase === "scheduled") controller.abort();
    });
    expect(chunks[0].providerRetry.delayMs).toBe(60_000);
    expect(error.name).toBe("AbortError");
  });

  it("without a server delay the backoff is jittered exponential (375–500 ms, then 750–1000 ms)", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "http500", { maxRetries: 2 }, { "x-mock-retry-after-ms": "none" }));
    const controller = new AbortController();
    const { chunks } = await collect(service.streamChat(USER, [], controller.signal), (c) => {
      if (c.providerRetry?.phase === "scheduled" && c.providerRetry.attempt === 2) controller.abort();
    });
    const [first, second] = retries(chunks).filter((r) => r.phase === "scheduled");
    expect(first.delayMs).toBeGreaterThanOrEqual(375);
    expect(first.delayMs).toBeLessThanOrEqual(500);
    expect(second.delayMs).toBeGreaterThanOrEqual(750);
    expect(second.delayMs).toBeLessThanOrEqual(1_000);
  });

  it("retries exhausted: every attempt reported, then exhausted and the last error", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "http429", { maxRetries: 2 }));
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(chunks.map(kind)).toEqual(["retry:scheduled", "retry:attempt", "retry:scheduled", "retry:attempt", "retry:exhausted"]);
    expect(retries(chunks).map((r) => [r.phase, r.attempt])).toEqual([
      ["scheduled", 1],
      ["attempt", 1],
      ["scheduled", 2],
      ["attempt", 2],
      ["exhausted", 2],
    ]);
    expect(retries(chunks)[4]).toEqual({ phase: "exhausted", attempt: 2, maxRetries: 2, reason: "rate_limit", statusCode: 429, mode: "standard" });
    expect(error.message).toBe(ERR_429);
    expect(error.replayBoundaryCrossed).toBe(false);
    expect(mock.requests).toHaveLength(3);
  });

  it("maxRetries 0 is authoritative: one request, exhausted at attempt 0", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "http503", { maxRetries: 0 }));
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(chunks).toEqual([{ providerRetry: { phase: "exhausted", attempt: 0, maxRetries: 0, reason: "server_error", statusCode: 503, mode: "standard" } }]);
    expect(error.message).toBe(ERR_503);
    expect(mock.requests).toHaveLength(1);
  });

  it("the default is two retries", async () => {
    const mock = await mockProvider();
    const { maxRetries: _drop, ...config } = completionsConfig(mock, "http503");
    const { chunks } = await collect(createChatService(config).streamChat(USER));
    expect(retries(chunks).at(-1)).toMatchObject({ phase: "exhausted", attempt: 2, maxRetries: 2 });
    expect(mock.requests).toHaveLength(3);
  });
});

describe("retry classification on the wire", () => {
  it("x-should-retry: false stops a 500 from being retried", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "http500", { maxRetries: 2 }, { "x-mock-should-retry": "false" }));
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(chunks).toEqual([]);
    expect(error.message).toBe(ERR_500);
    expect(mock.requests).toHaveLength(1);
  });

  it("x-should-retry: true makes a 400 retryable (server_error)", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "http400", { maxRetries: 1 }, { "x-mock-should-retry": "true" }));
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(chunks.map(kind)).toEqual(["retry:scheduled", "retry:attempt", "retry:exhausted"]);
    expect(retries(chunks)[0]).toMatchObject({ reason: "server_error", statusCode: 400 });
    expect(error.message).toBe(ERR_400);
    expect(mock.requests).toHaveLength(2);
  });

  it("a 400 is not retried and does not fall back", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "http400", { maxRetries: 2, fallbackModels: [fallback(mock, "text")] }));
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(chunks).toEqual([]);
    expect(error.message).toBe(ERR_400);
    expect(error.replayBoundaryCrossed).toBe(false);
    expect(mock.requests).toHaveLength(1);
  });

  it("a context overflow is never retried, even with x-should-retry: true", async () => {
    const mock = await mockProvider();
    const service = createChatService(
      completionsConfig(mock, "context", { maxRetries: 2, fallbackModels: [fallback(mock, "text")] }, { "x-mock-should-retry": "true" }),
    );
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(chunks).toEqual([]);
    expect(error.message).toContain("maximum context length is 128000 tokens");
    expect(error.message.startsWith("400: ")).toBe(true);
    expect(mock.requests).toHaveLength(1);
  });

  it("a non-retryable failure after a retry reports exhausted with the previous reason", async () => {
    // First request 503 (retryable), the retry gets a 400: exhausted{reason: server_error} then the 400.
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "fail-once-503+http400", { maxRetries: 2 }));
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(mock.requests.map((r: Any) => r.status)).toEqual([503, 400]);
    expect(chunks.map(kind)).toEqual(["retry:scheduled", "retry:attempt", "retry:exhausted"]);
    expect(retries(chunks)[2]).toMatchObject({ phase: "exhausted", attempt: 1, reason: "server_error" });
    expect(error.message).toBe(ERR_400);
  });
});

describe("fallback models", () => {
  it("a failing primary falls back after its retries; the fallback uses its own channel", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "http503", { maxRetries: 1, fallbackModels: [fallback(mock, "text")] }));
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(error).toBeUndefined();
    expect(chunks.map(kind)).toEqual(["retry:scheduled", "retry:attempt", "retry:exhausted", "fallback", "content", "content", "finish:stop"]);
    expect(chunks[3]).toEqual({ modelFallback: true });
    expect(chunks.slice(4, 6)).toEqual(TEXT_CHUNKS);
    const [p1, p2, f] = mock.requests;
    expect([p1.body.model, p2.body.model, f.body.model]).toEqual(["mock-model", "mock-model", "backup-model"]);
    expect(p1.headers.authorization).toBe("Bearer sk-test-key");
    expect(f.headers.authorization).toBe("Bearer sk-fallback");
    expect(f.scenario).toBe("text");
  });

  it("an idle timeout before output switches to the fallback without retrying the primary", async () => {
    const mock = await mockProvider();
    const service = createChatService(
      completionsConfig(mock, "hang", { maxRetries: 2, streamIdleTimeout: 1_000, fallbackModels: [fallback(mock, "text")] }),
    );
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(error).toBeUndefined();
    // The stall warning is not real output: it does not cross the replay boundary.
    expect(chunks.map(kind)).toEqual(["stall:detected", "fallback", "content", "content", "finish:stop"]);
    expect(mock.requests.map((r: Any) => r.scenario)).toEqual(["hang", "text"]);
    expect(mock.requests[0].clientClosedEarly).toBe(true);
  });

  it("fallbacks are tried in order; all failing throws the last error", async () => {
    const mock = await mockProvider();
    const service = createChatService(
      completionsConfig(mock, "http503", {
        maxRetries: 0,
        fallbackModels: [fallback(mock, "http500", "backup-1"), fallback(mock, "http429", "backup-2")],
      }),
    );
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(chunks.map(kind)).toEqual(["retry:exhausted", "fallback", "retry:exhausted", "fallback", "retry:exhausted"]);
    expect(error.message).toBe(ERR_429);
    expect(mock.requests.map((r: Any) => r.body.model)).toEqual(["mock-model", "backup-1", "backup-2"]);
  });

  it("a second fallback succeeds after the first fails", async () => {
    const mock = await mockProvider();
    const service = createChatService(
      completionsConfig(mock, "http503", { maxRetries: 0, fallbackModels: [fallback(mock, "http500", "backup-1"), fallback(mock, "text", "backup-2")] }),
    );
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(error).toBeUndefined();
    expect(chunks.filter((c) => c.modelFallback)).toHaveLength(2);
    expect(chunks.slice(-3).map(kind)).toEqual(["content", "content", "finish:stop"]);
  });

  it("a same-provider fallback without a channel inherits the primary's endpoint, key and headers", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "http503", { maxRetries: 0, fallbackModels: [{ provider: "openai-compatible", model: "sibling" }] }));
    const { error } = await collect(service.streamChat(USER));
    expect(error.message).toBe(ERR_503);
    expect(mock.requests).toHaveLength(2);
    expect(mock.requests[1].body.model).toBe("sibling");
    expect(mock.requests[1].headers.authorization).toBe("Bearer sk-test-key");
    expect(mock.requests[1].scenario).toBe("http503");
  });

  it("once the fallback has produced output its truncation is final", async () => {
    const mock = await mockProvider();
    const service = createChatService(
      completionsConfig(mock, "http503", { maxRetries: 0, fallbackModels: [fallback(mock, "eof-after-text", "backup-1"), fallback(mock, "text", "backup-2")] }),
    );
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(chunks.map(kind)).toEqual(["retry:exhausted", "fallback", "content", "content"]);
    expect(error.message).toBe("Stream ended without finish_reason");
    expect(replayBoundaryCrossed(error)).toBe(true);
    expect(mock.requests.map((r: Any) => r.body.model)).toEqual(["mock-model", "backup-1"]);
  });
});

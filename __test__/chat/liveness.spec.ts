// Cancellation, the replay boundary and stream liveness (spec §5.2, §6.1–6.4) through the public
// pi-native/chat API against the loopback mock. Blade ideas: pi-stream-adapter.test.ts and the
// abort/replay/deadline cases of pi-ai-chat-service.test.ts.
import { describe, expect, it, vi } from "vitest";
import {
  createChatService,
  ProviderRequestDeadlineExceededError,
  replayBoundaryCrossed,
  StreamIdleTimeoutError,
} from "../../lib/chat.js";
import {
  type Any,
  closeServersAfterEach,
  collect,
  COMPLETIONS_USAGE_FRAME,
  completionsConfig,
  completionsFrame,
  expectAbortError,
  kind,
  loopbackServer,
  mockProvider,
  retries,
  sleep,
  TEXT_CHUNKS,
  USER,
} from "./support.js";

closeServersAfterEach();

/** An abort must surface well before any timer of the request could have fired. */
const QUICK_MS = 1_500;

async function expectConnectionClosed(mock: Any, index = 0) {
  await vi.waitFor(
    () => {
      expect(mock.requests[index]?.clientClosedEarly).toBe(true);
      expect(mock.openConnections()).toBe(0);
    },
    { timeout: 3_000, interval: 20 },
  );
}

describe("abort at every phase", () => {
  it("a signal aborted before the call throws AbortError without any request", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "text"));
    const controller = new AbortController();
    controller.abort();
    const started = performance.now();
    const { chunks, error, endedAt } = await collect(service.streamChat(USER, [], controller.signal));
    expect(chunks).toEqual([]);
    expectAbortError(error);
    expect(error.replayBoundaryCrossed).toBe(false);
    expect(endedAt - started).toBeLessThan(QUICK_MS);
    await sleep(150);
    expect(mock.requests).toHaveLength(0);

    // chat() propagates the same error.
    await expect(service.chat(USER, [], controller.signal)).rejects.toMatchObject({ name: "AbortError", message: "Aborted" });
  });

  it("aborting while waiting for response headers closes the connection", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "hang-headers", { maxRetries: 2, timeout: 60_000 }));
    const controller = new AbortController();
    const iterator = service.streamChat(USER, [], controller.signal)[Symbol.asyncIterator]();
    const pending = iterator.next().then(
      (value) => ({ value }),
      (error) => ({ error, at: performance.now() }),
    );
    await vi.waitFor(() => expect(mock.requests).toHaveLength(1), { timeout: 5_000, interval: 10 });
    const abortedAt = performance.now();
    controller.abort();
    const result: Any = await pending;
    expectAbortError(result.error);
    expect(result.at - abortedAt).toBeLessThan(QUICK_MS);
    await expectConnectionClosed(mock);
    expect(mock.requests).toHaveLength(1);
    expect(await iterator.next()).toEqual({ done: true, value: undefined });
  });

  it("aborting mid-stream stops the stream and closes the connection", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "text+slow:100", { maxRetries: 2 }));
    const controller = new AbortController();
    let abortedAt = 0;
    const { chunks, error, endedAt } = await collect(service.streamChat(USER, [], controller.signal), (chunk) => {
      if (chunk.content !== undefined && !controller.signal.aborted) {
        abortedAt = performance.now();
        controller.abort();
      }
    });
    expect(chunks).toEqual([TEXT_CHUNKS[0]]);
    expectAbortError(error);
    // Blade throws a fresh DOMException for a caller abort (handleAbort): never replay-marked.
    expect(replayBoundaryCrossed(error)).toBe(false);
    expect(endedAt - abortedAt).toBeLessThan(QUICK_MS);
    await expectConnectionClosed(mock);
    expect(mock.requests).toHaveLength(1);
  });

  it("no chunk is yielded after the caller aborted, even when more were already received", async () => {
    // stream:40 arrives in one write, so later chunks are already buffered when the caller aborts.
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "stream:40"));
    const controller = new AbortController();
    const { chunks, error } = await collect(service.streamChat(USER, [], controller.signal), (chunk) => {
      if (chunk.content === "t0 ") controller.abort();
    });
    expectAbortError(error);
    expect(chunks).toEqual([{ content: "t0 " }]);
  });

  it("an abort reason that is an Error still surfaces as Blade's AbortError('Aborted')", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "hang"));
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("user pressed Esc")), 100);
    const { error } = await collect(service.streamChat(USER, [], controller.signal));
    expectAbortError(error);
    await expectConnectionClosed(mock);
  });

  it("aborting during a retry backoff throws at once and sends no further request", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "fail-once-500", { maxRetries: 2 }, { "x-mock-retry-after-ms": "30000" }));
    const controller = new AbortController();
    let abortedAt = 0;
    const { chunks, error, endedAt } = await collect(service.streamChat(USER, [], controller.signal), (chunk) => {
      if (chunk.providerRetry?.phase === "scheduled") {
        abortedAt = performance.now();
        controller.abort();
      }
    });
    expect(chunks.map(kind)).toEqual(["retry:scheduled"]);
    expect(chunks[0].providerRetry).toMatchObject({ attempt: 1, reason: "server_error", statusCode: 500, delayMs: 30_000 });
    expectAbortError(error);
    expect(error.replayBoundaryCrossed).toBe(false);
    expect(endedAt - abortedAt).toBeLessThan(QUICK_MS);
    await sleep(300);
    expect(mock.requests).toHaveLength(1);
    expect(mock.requests[0].status).toBe(500);
  });

  it("aborting while an http image is being downloaded closes that download and sends no chat request", async () => {
    const mock = await mockProvider();
    const images = await loopbackServer(() => undefined); // never answers
    const service = createChatService(completionsConfig(mock, "text", { model: "vision" }), {
      models: [{ id: "vision", provider: "openai-compatible", api: "openai-completions", input: ["text", "image"] }],
    });
    const controller = new AbortController();
    const messages: Any[] = [{ role: "user", content: [{ type: "image_url", image_url: { url: `${images.url}/slow.png` } }] }];
    const pending = collect(service.streamChat(messages, [], controller.signal));
    await vi.waitFor(() => expect(images.requests).toHaveLength(1), { timeout: 5_000, interval: 10 });
    const abortedAt = performance.now();
    controller.abort();
    const { error, endedAt } = await pending;
    expectAbortError(error);
    expect(endedAt - abortedAt).toBeLessThan(QUICK_MS);
    await vi.waitFor(() => expect(images.openConnections()).toBe(0), { timeout: 3_000, interval: 20 });
    expect(mock.requests).toHaveLength(0);
  });

  it("aborting during a stall warning wins over the idle timeout", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "stall:20000", { streamIdleTimeout: 2_000, maxRetries: 2 }));
    const controller = new AbortController();
    let abortedAt = 0;
    const { chunks, error, endedAt } = await collect(service.streamChat(USER, [], controller.signal), (chunk) => {
      if (chunk.providerStall?.phase === "detected") {
        abortedAt = performance.now();
        controller.abort();
      }
    });
    expect(chunks).toEqual([
      {
        providerStall: { phase: "detected", stallCount: 1, durationMs: 1_000, warningAfterMs: 1_000, timeoutMs: 2_000, outputStarted: false },
      },
    ]);
    expectAbortError(error);
    expect(endedAt - abortedAt).toBeLessThan(QUICK_MS);
    await expectConnectionClosed(mock);
    expect(mock.requests).toHaveLength(1);
  });
});

describe("abandoning the iterator cancels the request", () => {
  it("break out of for await closes the provider connection", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "stream:20+slow:100"));
    const seen: Any[] = [];
    for await (const chunk of service.streamChat(USER)) {
      seen.push(chunk);
      if (seen.length === 2) break;
    }
    expect(seen).toEqual([{ content: "t0 " }, { content: "t1 " }]);
    await expectConnectionClosed(mock);
    expect(mock.requests).toHaveLength(1);
  });

  it("iterator.return() closes the provider connection and ends the iterator", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "stream:20+slow:100"));
    const iterator = service.streamChat(USER)[Symbol.asyncIterator]();
    expect(await iterator.next()).toEqual({ done: false, value: { content: "t0 " } });
    expect(await iterator.return(undefined)).toEqual({ done: true, value: undefined });
    await expectConnectionClosed(mock);
    expect(await iterator.next()).toEqual({ done: true, value: undefined });
  });

  it("chat() that rejects on abort leaves no open connection", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "text+slow:150"));
    const controller = new AbortController();
    const pending = service.chat(USER, [], controller.signal);
    await vi.waitFor(() => expect(mock.requests).toHaveLength(1), { timeout: 5_000, interval: 10 });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: "AbortError", message: "Aborted" });
    await expectConnectionClosed(mock);
  });
});

describe("replay boundary", () => {
  it("an error after real output is final: marked, no retry, no fallback", async () => {
    const mock = await mockProvider();
    const service = createChatService(
      completionsConfig(mock, "eof-after-text", {
        maxRetries: 2,
        fallbackModels: [{ provider: "openai-compatible", model: "backup", channel: { baseUrl: `${mock.baseUrl}/v1`, apiKey: "sk-b", customHeaders: { "x-mock-scenario": "text" } } }],
      }),
    );
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(chunks).toEqual(TEXT_CHUNKS);
    expect(error.name).toBe("Error");
    expect(error.message).toBe("Stream ended without finish_reason");
    expect(error.replayBoundaryCrossed).toBe(true);
    expect(replayBoundaryCrossed(error)).toBe(true);
    expect(mock.requests).toHaveLength(1);
  });

  it("the same truncation before any output is retried and not marked", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "eof", { maxRetries: 1 }));
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(chunks.map(kind)).toEqual(["retry:scheduled", "retry:attempt", "retry:exhausted"]);
    expect(retries(chunks)[0]).toMatchObject({ attempt: 1, maxRetries: 1, reason: "stream_closed", statusCode: 200, mode: "standard" });
    expect(retries(chunks)[0].delayMs).toBeGreaterThanOrEqual(375);
    expect(retries(chunks)[0].delayMs).toBeLessThanOrEqual(500);
    expect(error.message).toBe("Stream ended without finish_reason");
    expect(error.replayBoundaryCrossed).toBe(false);
    expect(replayBoundaryCrossed(error)).toBe(false);
    expect(mock.requests).toHaveLength(2);
  });

  it("a deadline after reasoning output is thrown as replay-unsafe without retry", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "full+slow:250", { maxRetries: 2, timeout: 900 }));
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks.every((c) => c.reasoningContent !== undefined || c.content !== undefined)).toBe(true);
    expect(error).toBeInstanceOf(ProviderRequestDeadlineExceededError);
    expect(error.replayBoundaryCrossed).toBe(true);
    expect(mock.requests).toHaveLength(1);
  });

  it("replayBoundaryCrossed() is false for foreign values", () => {
    expect(replayBoundaryCrossed(new Error("x"))).toBe(false);
    expect(replayBoundaryCrossed("Stream ended without finish_reason")).toBe(false);
    expect(replayBoundaryCrossed(null)).toBe(false);
    expect(replayBoundaryCrossed(undefined)).toBe(false);
  });
});

describe("liveness", () => {
  it("a pre-output stall is reported, recovered on the same read, and does not block the turn", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "text+stall:1300", { streamIdleTimeout: 2_000, maxRetries: 0 }));
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(error).toBeUndefined();
    expect(chunks.map(kind)).toEqual(["stall:detected", "stall:recovered", "content", "content", "finish:stop"]);
    expect(chunks[0].providerStall).toEqual({
      phase: "detected",
      stallCount: 1,
      durationMs: 1_000,
      warningAfterMs: 1_000,
      timeoutMs: 2_000,
      outputStarted: false,
    });
    const recovered = chunks[1].providerStall;
    expect(recovered).toMatchObject({ phase: "recovered", stallCount: 1, warningAfterMs: 1_000, timeoutMs: 2_000, outputStarted: false });
    expect(recovered.durationMs).toBeGreaterThanOrEqual(1_000);
    expect(recovered.durationMs).toBeLessThan(2_000);
    expect(mock.requests).toHaveLength(1);
  });

  it("a stall after visible output is marked outputStarted", async () => {
    const server = await loopbackServer(async (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(completionsFrame({ role: "assistant", content: "a" }));
      await sleep(1_400);
      if (res.destroyed) return;
      res.write(completionsFrame({ content: "b" }));
      res.write(completionsFrame({}, "stop"));
      res.end(COMPLETIONS_USAGE_FRAME);
    });
    const service = createChatService({ provider: "openai-compatible", model: "mock-model", apiKey: "k-1234", baseUrl: server.url, streamIdleTimeout: 2_000 });
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(error).toBeUndefined();
    expect(chunks.map(kind)).toEqual(["content", "stall:detected", "stall:recovered", "content", "finish:stop"]);
    expect(chunks[1].providerStall).toEqual({ phase: "detected", stallCount: 1, durationMs: 1_000, warningAfterMs: 1_000, timeoutMs: 2_000, outputStarted: true });
    expect(chunks[2].providerStall).toMatchObject({ phase: "recovered", stallCount: 1, outputStarted: true });
    expect(chunks[2].providerStall.durationMs).toBeGreaterThanOrEqual(1_000);
  });

  it("a silent stream ends in StreamIdleTimeoutError, not retried", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "hang", { streamIdleTimeout: 1_000, maxRetries: 2 }));
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(chunks).toEqual([
      { providerStall: { phase: "detected", stallCount: 1, durationMs: 500, warningAfterMs: 500, timeoutMs: 1_000, outputStarted: false } },
    ]);
    expect(error).toBeInstanceOf(StreamIdleTimeoutError);
    expect(error.name).toBe("StreamIdleTimeoutError");
    expect(error.code).toBe("STREAM_IDLE_TIMEOUT");
    expect(error.timeoutMs).toBe(1_000);
    expect(error.message).toBe("Provider stream idle timeout after 1000ms without an event");
    expect(error.replayBoundaryCrossed).toBe(false);
    await expectConnectionClosed(mock);
    expect(mock.requests).toHaveLength(1);
  });

  it("the idle watchdog also covers a provider that never sends response headers", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "hang-headers", { streamIdleTimeout: 1_000, maxRetries: 0 }));
    const started = performance.now();
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(chunks).toEqual([
      { providerStall: { phase: "detected", stallCount: 1, durationMs: 500, warningAfterMs: 500, timeoutMs: 1_000, outputStarted: false } },
    ]);
    expect(error).toBeInstanceOf(StreamIdleTimeoutError);
    expect(performance.now() - started).toBeLessThan(5_000);
    await expectConnectionClosed(mock);
  });

  it("the total attempt deadline ends a silent stream with ProviderRequestDeadlineExceededError", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "hang", { timeout: 700, maxRetries: 0 }));
    const started = performance.now();
    const { chunks, error, endedAt } = await collect(service.streamChat(USER));
    expect(error).toBeInstanceOf(ProviderRequestDeadlineExceededError);
    expect(error).toMatchObject({
      name: "ProviderRequestDeadlineExceededError",
      code: "PROVIDER_REQUEST_DEADLINE_EXCEEDED",
      timeoutMs: 700,
      message: "Provider request deadline exceeded after 700ms",
      replayBoundaryCrossed: false,
    });
    expect(endedAt - started).toBeGreaterThanOrEqual(650);
    // Retryable (timeout) but no attempts left.
    expect(retries(chunks)).toEqual([expect.objectContaining({ phase: "exhausted", attempt: 0, maxRetries: 0, reason: "timeout" })]);
    await expectConnectionClosed(mock);
  });

  it("the deadline is rebuilt for each retry before output", async () => {
    const mock = await mockProvider();
    const service = createChatService(completionsConfig(mock, "hang-headers", { timeout: 400, maxRetries: 1 }));
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(chunks.map(kind)).toEqual(["retry:scheduled", "retry:attempt", "retry:exhausted"]);
    expect(retries(chunks)[0]).toMatchObject({ attempt: 1, reason: "timeout" });
    expect(error).toBeInstanceOf(ProviderRequestDeadlineExceededError);
    expect(mock.requests).toHaveLength(2);
    await expectConnectionClosed(mock, 0);
    await expectConnectionClosed(mock, 1);
  });

  it.each([
    ["openai-completions", "openai-compatible", "mock-model", "/v1", "Stream ended without finish_reason"],
    ["openai-responses", "openai", "gpt-5", "/v1", "OpenAI Responses stream ended before a terminal response event"],
    ["anthropic-messages", "anthropic", "claude-sonnet-4-5", "", "Anthropic stream ended without a stop reason"],
  ])("an empty 200 stream on %s fails with the wire's truncation message (maxRetries 0)", async (_api, provider, model, path, message) => {
    const mock = await mockProvider();
    const service = createChatService({ provider, model, apiKey: "sk-test-key", baseUrl: `${mock.baseUrl}${path}`, maxRetries: 0, customHeaders: { "x-mock-scenario": "eof" } });
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(error.message).toBe(message);
    expect(error.replayBoundaryCrossed).toBe(false);
    expect(retries(chunks)).toEqual([{ phase: "exhausted", attempt: 0, maxRetries: 0, reason: "stream_closed", statusCode: 200, mode: "standard" }]);
    expect(mock.requests).toHaveLength(1);
  });

  it("Anthropic truncation after text is final and replay-marked", async () => {
    const mock = await mockProvider();
    const service = createChatService({
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      apiKey: "sk-ant-test",
      baseUrl: `${mock.baseUrl}/v1`, // the trailing /v1 is stripped for anthropic-messages
      maxRetries: 2,
      customHeaders: { "x-mock-scenario": "eof-after-text" },
    });
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(chunks).toEqual(TEXT_CHUNKS);
    expect(error.message).toBe("Anthropic stream ended before message_stop");
    expect(replayBoundaryCrossed(error)).toBe(true);
    expect(mock.requests.map((r: Any) => r.path)).toEqual(["/v1/messages"]);
  });

  it("a connection torn down mid-body surfaces undici's 'terminated' (not a retry marker, as in the reference)", async () => {
    const server = await loopbackServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(": keep-alive\n\n");
      setTimeout(() => res.socket?.destroy(), 50);
    });
    const service = createChatService({ provider: "openai-compatible", model: "m", apiKey: "k-1234", baseUrl: server.url, maxRetries: 2 });
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(error.message).toBe("terminated");
    expect(error.replayBoundaryCrossed).toBe(false);
    expect(chunks).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it("a refused connection is a retryable transport failure", async () => {
    const closed = await loopbackServer(() => undefined);
    await closed.close();
    const service = createChatService({ provider: "openai-compatible", model: "m", apiKey: "sk-secret-refused-0001", baseUrl: closed.url, maxRetries: 1 });
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(chunks.map(kind)).toEqual(["retry:scheduled", "retry:attempt", "retry:exhausted"]);
    expect(retries(chunks)[0]).toMatchObject({ attempt: 1, reason: "transport" });
    expect(retries(chunks)[0].statusCode).toBeUndefined();
    expect(error.message).toBe("Connection error.");
    expect(error.message).not.toContain("sk-secret");
  });
});

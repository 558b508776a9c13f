// google-generative-ai (Gemini API, x-goog-api-key) through pi-native/chat against the loopback mock:
// requests and chunks equal to what the reference sent and yielded for the same inputs
// (derived/google-generative-ai.json), cancellation at every phase, liveness, truncation, retry
// classification, transport errors and credential redaction.
import { readFileSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";
import { createChatService, ProviderRequestDeadlineExceededError, replayBoundaryCrossed, StreamIdleTimeoutError } from "../../lib/chat.js";
import { normalizeRequests } from "./fixtures.mjs";
import {
  type Any,
  closeServersAfterEach,
  collect,
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

const derived = JSON.parse(readFileSync(new URL("../fixtures/chat/derived/google-generative-ai.json", import.meta.url), "utf8"));

const QUICK_MS = 1_500;
const GENERATED_ID = /^[A-Za-z_]+_\d{13}_\d+$/;

/** A ChatConfig for google/gemini-2.5-flash pointed at the mock's `/v1beta`. */
function googleConfig(mock: Any, scenario: string, extra: Any = {}, headers: Record<string, string> = {}): Any {
  return {
    provider: "google",
    model: "gemini-2.5-flash",
    apiKey: "sk-goog-test-0123456789",
    baseUrl: `${mock.baseUrl}/v1beta`,
    maxRetries: 0,
    ...extra,
    customHeaders: { "x-mock-scenario": scenario, ...headers, ...(extra.customHeaders ?? {}) },
  };
}

async function expectConnectionClosed(mock: Any, index = 0) {
  await vi.waitFor(
    () => {
      expect(mock.requests[index]?.clientClosedEarly).toBe(true);
      expect(mock.openConnections()).toBe(0);
    },
    { timeout: 3_000, interval: 20 },
  );
}

/** Generated tool-call ids checked by pattern, then replaced by the expected ones. */
function withExpectedIds(actual: Any[], expected: Any[]): Any[] {
  return actual.map((chunk, i) => {
    if (!chunk.toolCalls) return chunk;
    const calls = chunk.toolCalls.map((call: Any, j: number) => {
      const want = expected[i]?.toolCalls?.[j];
      if (want && GENERATED_ID.test(want.id)) {
        expect(call.id).toMatch(GENERATED_ID);
        expect(call.id.split("_").slice(0, -2).join("_")).toBe(call.function.name);
        return { ...call, id: want.id };
      }
      return call;
    });
    return { ...chunk, toolCalls: calls };
  });
}

describe("google-generative-ai: requests and chunks equal the reference's", () => {
  it.each(derived.rows.map((r: Any) => [r.name, r]))("%s", async (_name, row: Any) => {
    const mock = await mockProvider();
    const service = createChatService({ ...row.case.config, baseUrl: `${mock.baseUrl}/v1beta` });
    const { chunks, error } = await collect(service.streamChat(row.case.messages, row.case.tools, undefined, row.case.requestOptions));
    const lines = error ? [...chunks, { error: { name: error.name, ...(error.code ? { code: error.code } : {}), message: error.message } }] : chunks;
    // The reference's Google path has no response hook, so its retry events carry no status; pi-native
    // captures the status for every API (spec §3.7): the only difference, checked here.
    const statuses = mock.requests.map((r: Any) => r.status);
    const normalized = withExpectedIds(lines, row.chunks).map((c: Any) => {
      if (!c.providerRetry) return c;
      expect(c.providerRetry.statusCode).toBe(statuses[0]);
      const { statusCode: _s, ...rest } = c.providerRetry;
      return { providerRetry: rest };
    });
    expect(normalized).toEqual(row.chunks);
    expect(normalizeRequests(mock.requests)).toEqual(row.requests);
  });
});

describe("google-generative-ai: abort at every phase", () => {
  it("a signal aborted before the call throws AbortError without a request", async () => {
    const mock = await mockProvider();
    const controller = new AbortController();
    controller.abort();
    const { chunks, error } = await collect(createChatService(googleConfig(mock, "text")).streamChat(USER, [], controller.signal));
    expect(chunks).toEqual([]);
    expectAbortError(error);
    expect(error.replayBoundaryCrossed).toBe(false);
    await sleep(150);
    expect(mock.requests).toHaveLength(0);
  });

  it("aborting while waiting for response headers closes the connection", async () => {
    const mock = await mockProvider();
    const service = createChatService(googleConfig(mock, "hang-headers", { maxRetries: 2, timeout: 60_000 }));
    const controller = new AbortController();
    const pending = collect(service.streamChat(USER, [], controller.signal));
    await vi.waitFor(() => expect(mock.requests).toHaveLength(1), { timeout: 5_000, interval: 10 });
    const abortedAt = performance.now();
    controller.abort();
    const { error, endedAt } = await pending;
    expectAbortError(error);
    expect(endedAt - abortedAt).toBeLessThan(QUICK_MS);
    await expectConnectionClosed(mock);
    expect(mock.requests).toHaveLength(1);
  });

  it("aborting mid-stream stops the stream and closes the connection", async () => {
    const mock = await mockProvider();
    const service = createChatService(googleConfig(mock, "text+slow:100", { maxRetries: 2 }));
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
    expect(replayBoundaryCrossed(error)).toBe(false);
    expect(endedAt - abortedAt).toBeLessThan(QUICK_MS);
    await expectConnectionClosed(mock);
    expect(mock.requests).toHaveLength(1);
  });

  it("aborting during a stall warning wins over the idle timeout", async () => {
    const mock = await mockProvider();
    const service = createChatService(googleConfig(mock, "stall:20000", { streamIdleTimeout: 2_000 }));
    const controller = new AbortController();
    const { chunks, error } = await collect(service.streamChat(USER, [], controller.signal), (chunk) => {
      if (chunk.providerStall?.phase === "detected") controller.abort();
    });
    expect(chunks.map(kind)).toEqual(["stall:detected"]);
    expectAbortError(error);
    await expectConnectionClosed(mock);
  });

  it("aborting during a retry backoff sends no further request", async () => {
    const mock = await mockProvider();
    const service = createChatService(googleConfig(mock, "fail-once-503", { maxRetries: 2 }, { "x-mock-retry-after-ms": "30000" }));
    const controller = new AbortController();
    const { chunks, error } = await collect(service.streamChat(USER, [], controller.signal), (chunk) => {
      if (chunk.providerRetry?.phase === "scheduled") controller.abort();
    });
    expect(chunks.map(kind)).toEqual(["retry:scheduled"]);
    expect(chunks[0].providerRetry).toMatchObject({ attempt: 1, reason: "server_error", statusCode: 503, delayMs: 30_000 });
    expectAbortError(error);
    expect(mock.requests).toHaveLength(1);
  });

  it("breaking out of for await closes the provider connection", async () => {
    const mock = await mockProvider();
    const seen: Any[] = [];
    for await (const chunk of createChatService(googleConfig(mock, "stream:20+slow:100")).streamChat(USER)) {
      seen.push(chunk);
      if (seen.length === 2) break;
    }
    expect(seen).toEqual([{ content: "t0 " }, { content: "t1 " }]);
    await expectConnectionClosed(mock);
  });
});

describe("google-generative-ai: liveness, truncation and retries", () => {
  it("a silent stream ends in StreamIdleTimeoutError", async () => {
    const mock = await mockProvider();
    const { chunks, error } = await collect(createChatService(googleConfig(mock, "hang", { streamIdleTimeout: 1_000, maxRetries: 2 })).streamChat(USER));
    expect(chunks.map(kind)).toEqual(["stall:detected"]);
    expect(error).toBeInstanceOf(StreamIdleTimeoutError);
    await expectConnectionClosed(mock);
    expect(mock.requests).toHaveLength(1);
  });

  it("the total attempt deadline ends a silent stream", async () => {
    const mock = await mockProvider();
    const { error } = await collect(createChatService(googleConfig(mock, "hang", { timeout: 600 })).streamChat(USER));
    expect(error).toBeInstanceOf(ProviderRequestDeadlineExceededError);
    await expectConnectionClosed(mock);
  });

  it("an empty 200 stream is retried before output; after output the truncation is final", async () => {
    const mock = await mockProvider();
    const eof = await collect(createChatService(googleConfig(mock, "eof", { maxRetries: 1 })).streamChat(USER));
    expect(eof.chunks.map(kind)).toEqual(["retry:scheduled", "retry:attempt", "retry:exhausted"]);
    expect(retries(eof.chunks)[0]).toMatchObject({ reason: "stream_closed", statusCode: 200 });
    expect(eof.error.message).toBe("Google stream ended without a finish reason");
    expect(eof.error.replayBoundaryCrossed).toBe(false);
    expect(mock.requests).toHaveLength(2);

    const cut = await collect(createChatService(googleConfig(mock, "eof-after-text", { maxRetries: 2 })).streamChat(USER));
    expect(cut.chunks).toEqual(TEXT_CHUNKS);
    expect(cut.error.message).toBe("Google stream ended without a finish reason");
    expect(replayBoundaryCrossed(cut.error)).toBe(true);
    expect(mock.requests).toHaveLength(3);
  });

  it("a 429 is retried with the server's delay and recovers", async () => {
    const mock = await mockProvider();
    const { chunks, error } = await collect(createChatService(googleConfig(mock, "fail-once-429", { maxRetries: 1 })).streamChat(USER));
    expect(error).toBeUndefined();
    expect(chunks.slice(0, 3).map(kind)).toEqual(["retry:scheduled", "retry:attempt", "retry:recovered"]);
    expect(retries(chunks)[0]).toMatchObject({ reason: "rate_limit", statusCode: 429, delayMs: 20 });
    expect(chunks.at(-1)).toMatchObject({ finishReason: "toolUse" });
  });

  it("400 and context errors are not retried", async () => {
    const mock = await mockProvider();
    for (const scenario of ["http400", "context"]) {
      const { chunks, error } = await collect(createChatService(googleConfig(mock, scenario, { maxRetries: 2 })).streamChat(USER));
      expect(chunks).toEqual([]);
      expect(JSON.parse(error.message).error.status).toBe("INVALID_ARGUMENT");
    }
    expect(mock.requests).toHaveLength(2);
  });

  it("a refused connection is fetch's `fetch failed`, a retryable transport failure", async () => {
    const closed = await loopbackServer(() => undefined);
    await closed.close();
    const apiKey = "sk-goog-refused-0123456789";
    const service = createChatService({ provider: "google", model: "gemini-2.5-flash", apiKey, baseUrl: closed.url, maxRetries: 1 });
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(chunks.map(kind)).toEqual(["retry:scheduled", "retry:attempt", "retry:exhausted"]);
    expect(retries(chunks)[0]).toMatchObject({ attempt: 1, reason: "transport" });
    expect(error.message).toBe("fetch failed");
    expect(JSON.stringify({ ...error, message: error.message, stack: error.stack })).not.toContain(apiKey);
  });

  it("a missing key fails before any request", async () => {
    const mock = await mockProvider();
    const { chunks, error } = await collect(createChatService(googleConfig(mock, "text", { apiKey: undefined })).streamChat(USER));
    expect(chunks).toEqual([]);
    expect(error.message).toBe("No API key for provider: google");
    expect(mock.requests).toHaveLength(0);
  });
});

describe("google-generative-ai: credentials never appear in errors", () => {
  /** A provider that answers 401 echoing the x-goog-api-key it received. */
  async function echoingProvider() {
    return loopbackServer((req, res) => {
      const key = req.headers["x-goog-api-key"];
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { code: 401, message: `API key not valid: ${key}. Got ${key}.`, status: "UNAUTHENTICATED" } }));
    });
  }

  it("a 401 body echoing the configured key is redacted", async () => {
    const server = await echoingProvider();
    const apiKey = "sk-goog-secret-0123456789";
    const service = createChatService({ provider: "google", model: "gemini-2.5-flash", apiKey, baseUrl: server.url, maxRetries: 2 });
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0].headers["x-goog-api-key"]).toBe(apiKey);
    expect(error.message.startsWith('{"error":{"code":401,"message":"API key not valid: ')).toBe(true);
    expect(error.message).not.toContain(apiKey);
    expect(String(error.stack)).not.toContain(apiKey);
    expect(JSON.stringify(chunks)).not.toContain(apiKey);
  });

  it("a key supplied as a custom x-goog-api-key header is sent instead and redacted too", async () => {
    const server = await echoingProvider();
    const headerKey = "sk-goog-header-0123456789";
    const service = createChatService({
      provider: "google",
      model: "gemini-2.5-flash",
      apiKey: "sk-goog-config-0123456789",
      baseUrl: server.url,
      maxRetries: 0,
      customHeaders: { "X-Goog-Api-Key": headerKey },
    });
    const { error } = await collect(service.streamChat(USER));
    expect(server.requests[0].headers["x-goog-api-key"]).toBe(headerKey);
    expect(error.message).not.toContain(headerKey);
    expect(error.message).toContain("[redacted]");
  });
});

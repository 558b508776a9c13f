// mistral-conversations through the public pi-native/chat API against the loopback mock: abort at
// every phase, the error and truncation texts pi-ai produces (derived/error-messages.json), the
// attempt deadline in place of the wire's 60 s bound, transport failures, and a fallback from
// another wire (derived/mistral-fallback.json, recorded from Blade's service against this mock).
// The 60 s bound itself is pinned by the Rust tests (src/chat/wire/mistral.rs, on a paused clock).
import { readFileSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";
import { createChatService, ProviderRequestDeadlineExceededError, replayBoundaryCrossed } from "../../lib/chat.js";
import { normalizeRequests, withBase } from "./fixtures.mjs";
import { type Any, closeServersAfterEach, collect, expectAbortError, kind, loopbackServer, mockProvider, retries, sleep, USER } from "./support.js";

closeServersAfterEach();

const QUICK_MS = 1_500;
const KEY = "sk-mistral-test-key-0042";

const derived = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/chat/derived/${name}.json`, import.meta.url), "utf8"));

/** A ChatConfig for a catalog Mistral model pointed at the mock's /mistral path. */
function mistralConfig(mock: Any, scenario: string, extra: Any = {}, headers: Record<string, string> = {}): Any {
  return {
    provider: "mistral",
    model: "mistral-medium-latest",
    apiKey: KEY,
    baseUrl: `${mock.baseUrl}/mistral`,
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

describe("Mistral: abort at every phase", () => {
  it("before the call: AbortError, no request", async () => {
    const mock = await mockProvider();
    const controller = new AbortController();
    controller.abort();
    const { chunks, error } = await collect(createChatService(mistralConfig(mock, "full")).streamChat(USER, [], controller.signal));
    expect(chunks).toEqual([]);
    expectAbortError(error);
    await sleep(150);
    expect(mock.requests).toHaveLength(0);
  });

  it.each(["hang-headers", "hang"])("while waiting for %s: the connection closes at once", async (scenario) => {
    const mock = await mockProvider();
    const controller = new AbortController();
    const pending = collect(createChatService(mistralConfig(mock, scenario, { maxRetries: 2 })).streamChat(USER, [], controller.signal));
    await vi.waitFor(() => expect(mock.requests).toHaveLength(1), { timeout: 5_000, interval: 10 });
    await sleep(50);
    const abortedAt = performance.now();
    controller.abort();
    const { chunks, error, endedAt } = await pending;
    expect(chunks).toEqual([]);
    expectAbortError(error);
    expect(endedAt - abortedAt).toBeLessThan(QUICK_MS);
    await expectConnectionClosed(mock);
    expect(mock.requests).toHaveLength(1);
  });

  it("mid-stream: no further chunk, not replay-marked, the connection closes", async () => {
    const mock = await mockProvider();
    const controller = new AbortController();
    let abortedAt = 0;
    const service = createChatService(mistralConfig(mock, "text+slow:100", { maxRetries: 2 }));
    const { chunks, error, endedAt } = await collect(service.streamChat(USER, [], controller.signal), (chunk) => {
      if (chunk.content === "I'll read ") {
        abortedAt = performance.now();
        controller.abort();
      }
    });
    // The empty first content is a real chunk (spec §5.9), then the first text.
    expect(chunks).toEqual([{ content: "" }, { content: "I'll read " }]);
    expectAbortError(error);
    expect(replayBoundaryCrossed(error)).toBe(false);
    expect(endedAt - abortedAt).toBeLessThan(QUICK_MS);
    await expectConnectionClosed(mock);
  });

  it("during a retry backoff: at once, no further request", async () => {
    const mock = await mockProvider();
    const controller = new AbortController();
    const service = createChatService(mistralConfig(mock, "fail-once-500", { maxRetries: 2 }, { "x-mock-retry-after-ms": "30000" }));
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
    expect(endedAt - abortedAt).toBeLessThan(QUICK_MS);
    await sleep(200);
    expect(mock.requests).toHaveLength(1);
  });

  it("leaving the loop early, and iterator.return(), close the connection", async () => {
    const mock = await mockProvider();
    const service = createChatService(mistralConfig(mock, "stream:20+slow:100"));
    const seen: Any[] = [];
    for await (const chunk of service.streamChat(USER)) {
      seen.push(chunk);
      if (seen.length === 2) break;
    }
    expect(seen).toEqual([{ content: "" }, { content: "t0 " }]);
    await expectConnectionClosed(mock, 0);
    const iterator = service.streamChat(USER)[Symbol.asyncIterator]();
    expect(await iterator.next()).toEqual({ done: false, value: { content: "" } });
    expect(await iterator.return(undefined)).toEqual({ done: true, value: undefined });
    await expectConnectionClosed(mock, 1);
  });

  it("chat() rejects on abort and leaves no open connection", async () => {
    const mock = await mockProvider();
    const controller = new AbortController();
    const pending = createChatService(mistralConfig(mock, "text+slow:150")).chat(USER, [], controller.signal);
    await vi.waitFor(() => expect(mock.requests).toHaveLength(1), { timeout: 5_000, interval: 10 });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: "AbortError", message: "Aborted" });
    await expectConnectionClosed(mock);
  });
});

describe("Mistral: errors", () => {
  const rows = derived("error-messages").rows.filter((r: Any) => r.api === "mistral-conversations");

  it("covers every error and truncation scenario", () => {
    expect(rows.map((r: Any) => r.scenario)).toEqual(["http429", "http500", "http503", "noretry503", "http400", "context", "eof", "eof-after-text"]);
  });

  it.each(rows.map((r: Any) => [r.scenario, r]))("%s: pi-ai's text, after the same chunks", async (_scenario, row: Any) => {
    const mock = await mockProvider();
    const { chunks, error } = await collect(createChatService(mistralConfig(mock, row.scenario)).streamChat(USER));
    expect(chunks.filter((c) => !c.providerRetry)).toEqual(row.chunks);
    expect(error.name).toBe("Error");
    expect(error.message).toBe(row.message);
    // An empty text delta commits the attempt like any other chunk (spec §8 quirk 8).
    expect(replayBoundaryCrossed(error)).toBe(row.chunks.length > 0);
    expect(error.message).not.toContain(KEY);
  });

  it("a configured timeout ends a silent stream with the attempt deadline (not the wire's 60 s bound)", async () => {
    const mock = await mockProvider();
    const started = performance.now();
    const { error } = await collect(createChatService(mistralConfig(mock, "hang", { timeout: 400 })).streamChat(USER));
    expect(error).toBeInstanceOf(ProviderRequestDeadlineExceededError);
    expect(error.message).toBe("Provider request deadline exceeded after 400ms");
    expect(performance.now() - started).toBeLessThan(5_000);
    await expectConnectionClosed(mock);
  });

  it("a refused connection is fetch's `fetch failed`, retried as a transport failure", async () => {
    const closed = await loopbackServer(() => undefined);
    await closed.close();
    const service = createChatService({ provider: "mistral", model: "mistral-medium-latest", apiKey: KEY, baseUrl: closed.url, maxRetries: 1 });
    const { chunks, error } = await collect(service.streamChat(USER));
    expect(chunks.map(kind)).toEqual(["retry:scheduled", "retry:attempt", "retry:exhausted"]);
    expect(retries(chunks)[0]).toMatchObject({ attempt: 1, reason: "transport" });
    expect(error.message).toBe("fetch failed");
  });

  it("an error body that echoes the key is reported without it", async () => {
    const server = await loopbackServer((_req, res) => {
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ message: `Unauthorized: ${KEY} is not a valid key` }));
    });
    const service = createChatService({ provider: "mistral", model: "mistral-medium-latest", apiKey: KEY, baseUrl: server.url, maxRetries: 0 });
    const { error } = await collect(service.streamChat(USER));
    expect(error.message.startsWith('Mistral API error (401): {"message":"Unauthorized: ')).toBe(true);
    expect(error.message).not.toContain(KEY);
    expect(server.requests[0].path).toBe("/v1/chat/completions");
    expect(server.requests[0].headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it("no API key: pi-ai's text, and a caller authorization header does not stand in for it", async () => {
    const mock = await mockProvider();
    const config = { ...mistralConfig(mock, "full"), apiKey: undefined, customHeaders: { authorization: `Bearer ${KEY}` } };
    const { error } = await collect(createChatService(config).streamChat(USER));
    expect(error.message).toBe("No API key for provider: mistral");
    expect(mock.requests).toHaveLength(0);
  });
});

describe("Mistral as a fallback model", () => {
  it("reuses the primary's context: renamed tool-call ids, reasoning as text (as the reference)", async () => {
    const f = derived("mistral-fallback");
    const mock = await mockProvider();
    const c = withBase(f.case, mock.baseUrl);
    const service = createChatService({ ...c.config, provider: c.model.provider, model: c.model.id, baseUrl: c.model.baseUrl });
    const { chunks, error } = await collect(service.streamChat(c.messages, c.tools, undefined, c.requestOptions));
    expect(error).toBeUndefined();
    expect(chunks).toEqual(f.expectedChunks);
    expect(normalizeRequests(mock.requests)).toEqual(withBase(f.expectedRequests, mock.baseUrl));
  });
});

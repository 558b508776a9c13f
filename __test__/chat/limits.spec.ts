// Bounds of the chat client under hostile or huge responses (issue 12, findings 2 and 5):
// - backpressure end to end: while the consumer pauses, pi-native stops reading the socket after a
//   bounded number of bytes (before: it read the whole body ahead, 2.1 GB RSS for 60 x 10 MB);
// - a chunk or SSE event beyond our bounds ends in ProviderResponseTooLargeError (before: a napi
//   `GenericFailure` once a batch passed V8's string limit), with replayBoundaryCrossed right;
// - provider error bodies are cut at 16 KiB in messages (before: a 50 MB body gave a 1.4-million
//   character message).
import { describe, expect, it } from "vitest";
import { createChatService, ProviderResponseTooLargeError, replayBoundaryCrossed } from "../../lib/chat.js";
import { type Any, closeServersAfterEach, collect, completionsFrame, loopbackServer, sleep, USER } from "./support.js";

closeServersAfterEach();

const config = (url: string, extra: Any = {}): Any => ({
  provider: "openai-compatible",
  model: "m",
  apiKey: "sk-test-key",
  baseUrl: `${url}/v1`,
  maxRetries: 0,
  ...extra,
});

const MB = 1024 * 1024;
const STOP = `${completionsFrame({}, "stop")}data: [DONE]\n\n`;

/** Writes `frames` one after another, honouring the socket's backpressure; counts flushed bytes. */
function writer() {
  const state = { flushed: 0, frames: 0, done: false };
  const write = async (res: Any, frames: Iterable<string>) => {
    for (const f of frames) {
      const buf = Buffer.from(f);
      await new Promise<void>((resolve, reject) =>
        res.write(buf, (err: Error | null | undefined) => {
          if (err) return reject(err);
          state.flushed += buf.length;
          state.frames += 1;
          resolve();
        }),
      );
    }
    state.done = true;
    res.end();
  };
  return { state, write };
}

describe("backpressure", () => {
  it("a paused consumer stops the socket reads after a bounded number of bytes, then gets every chunk", async () => {
    const COUNT = 24;
    const SIZE = 10 * MB;
    const big = "a".repeat(SIZE);
    const { state, write } = writer();
    const server = await loopbackServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      function* frames() {
        for (let i = 0; i < COUNT; i++) yield completionsFrame({ content: big });
        yield STOP;
      }
      write(res, frames()).catch(() => {});
    });
    const service = createChatService(config(server.url));
    const it = service.streamChat(USER)[Symbol.asyncIterator]();
    const first = await it.next();
    expect(first.value.content.length).toBe(SIZE);
    await sleep(1500);
    // Everything the client has not consumed fits in its bounded buffers plus the kernel's socket
    // buffers: far less than the 240 MB the server has to send.
    const whilePaused = state.flushed;
    expect(whilePaused).toBeLessThan(120 * MB);
    expect(state.done).toBe(false);
    let contents = 1;
    let chars = SIZE;
    for (;;) {
      const r = await it.next();
      if (r.done) break;
      if (typeof r.value.content === "string") {
        contents += 1;
        chars += r.value.content.length;
      }
    }
    expect(contents).toBe(COUNT);
    expect(chars).toBe(COUNT * SIZE);
    expect(state.done).toBe(true);
  }, 60_000);
});

describe("oversized response parts", () => {
  it("an SSE event beyond 16 MiB ends in ProviderResponseTooLargeError before any output (no replay mark)", async () => {
    const server = await loopbackServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(completionsFrame({ content: "x".repeat(17 * MB) }) + STOP);
    });
    const { chunks, error } = await collect(createChatService(config(server.url)).streamChat(USER));
    expect(chunks).toEqual([]);
    expect(error).toBeInstanceOf(ProviderResponseTooLargeError);
    expect(error.code).toBe("PROVIDER_RESPONSE_TOO_LARGE");
    expect(error.part).toBe("event");
    expect(error.limitBytes).toBe(16 * MB);
    expect(replayBoundaryCrossed(error)).toBe(false);
    expect(server.requests).toHaveLength(1); // not retried: the same response would come back
  }, 30_000);

  it("after real output the same error carries the replay mark", async () => {
    const server = await loopbackServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(completionsFrame({ content: "hello " }) + completionsFrame({ content: "y".repeat(17 * MB) }) + STOP);
    });
    const { chunks, error } = await collect(createChatService(config(server.url, { maxRetries: 3 })).streamChat(USER));
    expect(chunks).toEqual([{ content: "hello " }]);
    expect(error).toBeInstanceOf(ProviderResponseTooLargeError);
    expect(replayBoundaryCrossed(error)).toBe(true);
    expect(error.replayBoundaryCrossed).toBe(true);
  }, 30_000);

  it("a tool call whose arguments add up to more than 64 MiB is refused as a chunk, not sent half-way", async () => {
    const piece = JSON.stringify("z".repeat(MB - 16)).slice(1, -1);
    const server = await loopbackServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      let body = completionsFrame({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "write", arguments: '{"content":"' } }] });
      for (let i = 0; i < 66; i++) body += completionsFrame({ tool_calls: [{ index: 0, function: { arguments: piece } }] });
      body += completionsFrame({ tool_calls: [{ index: 0, function: { arguments: '"}' } }] });
      res.end(body + `${completionsFrame({}, "tool_calls")}data: [DONE]\n\n`);
    });
    const { chunks, error } = await collect(createChatService(config(server.url)).streamChat(USER));
    expect(chunks.filter((c: Any) => c.toolCalls)).toEqual([]);
    expect(error).toBeInstanceOf(ProviderResponseTooLargeError);
    expect(error.part).toBe("chunk");
    expect(error.limitBytes).toBe(64 * MB);
    expect(replayBoundaryCrossed(error)).toBe(false);
  }, 60_000);
});

describe("provider error bodies", () => {
  it("a 50 MB error body gives a message cut at 16 KiB and marked as truncated", async () => {
    const body = `upstream exploded: ${"e".repeat(50 * MB)}`;
    const server = await loopbackServer((_req, res) => {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(body);
    });
    const { error } = await collect(createChatService(config(server.url)).streamChat(USER));
    expect(error).toBeInstanceOf(Error);
    expect(error.message.length).toBeLessThan(17 * 1024);
    expect(error.message).toContain("upstream exploded");
    expect(error.message).toMatch(/truncated by pi-native: first 16384 of more than 1048576 bytes of error body\]$/);
  }, 30_000);

  it("a 20 KB error body is cut too and says how long it was; a short one is untouched", async () => {
    // (Chat Completions errors keep pi-ai's own 4,000-character cut; Anthropic's keep the body.)
    const long = `{"error":{"message":"${"m".repeat(20_000)}"}}`;
    let answer = long;
    const server = await loopbackServer((_req, res) => {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(answer);
    });
    const service = createChatService({ ...config(server.url), provider: "anthropic-compatible", baseUrl: server.url });
    const cut = (await collect(service.streamChat(USER))).error;
    expect(cut.message.length).toBeLessThan(17 * 1024);
    expect(cut.message).toMatch(/\[truncated by pi-native: first 16384 of 200\d\d bytes\]$/);
    answer = `{"error":{"message":"bad request: short"}}`;
    const whole = (await collect(service.streamChat(USER))).error;
    expect(whole.message).toContain("bad request: short");
    expect(whole.message).not.toContain("truncated");
  }, 30_000);
});

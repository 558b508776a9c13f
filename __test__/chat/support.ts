// Shared helpers of the chat behaviour specs (service, liveness, retry, helpers). Everything talks
// to 127.0.0.1 only: the loopback mock (mock-provider.mjs) or a tiny `http.createServer`.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { afterEach, expect } from "vitest";
import { startMockProvider } from "./mock-provider.mjs";

export type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any

export const USER: Any[] = [{ role: "user", content: "Read src/main.rs" }];

/** The `text` scenario as StreamChunks (Chat Completions; cost 0 for an openai-compatible model). */
export const TEXT_CHUNKS = [{ content: "I'll read " }, { content: "the file now." }];

const cleanups: Array<() => Promise<unknown> | unknown> = [];

/** Registers the afterEach that closes every mock/server a test started. Call once per spec file. */
export function closeServersAfterEach() {
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });
}

export async function mockProvider(ttlMs = 15_000): Promise<Any> {
  const mock = await startMockProvider({ ttlMs });
  cleanups.push(() => mock.close());
  return mock;
}

/**
 * A ChatConfig for the synthetic `openai-compatible` provider (wire openai-completions, created on
 * the fly, cost 0) pointed at the mock's `/v1`, with the mock scenario and extra request headers.
 */
export function completionsConfig(mock: Any, scenario: string, extra: Any = {}, headers: Record<string, string> = {}): Any {
  return {
    provider: "openai-compatible",
    model: "mock-model",
    apiKey: "sk-test-key",
    baseUrl: `${mock.baseUrl}/v1`,
    maxRetries: 0,
    ...extra,
    customHeaders: { "x-mock-scenario": scenario, ...headers, ...(extra.customHeaders ?? {}) },
  };
}

export interface Collected {
  chunks: Any[];
  error: Any;
  /** performance.now() when the stream ended (normally or by throwing). */
  endedAt: number;
}

/** Drains a stream; `onChunk` may act on a chunk (e.g. abort) before the next one is pulled. */
export async function collect(stream: AsyncIterable<Any>, onChunk?: (chunk: Any, index: number) => void): Promise<Collected> {
  const chunks: Any[] = [];
  let error: Any;
  try {
    for await (const chunk of stream) {
      chunks.push(chunk);
      onChunk?.(chunk, chunks.length - 1);
    }
  } catch (e) {
    error = e;
  }
  return { chunks, error, endedAt: performance.now() };
}

/** Blade's caller-cancellation error: DOMException('Aborted', 'AbortError'), never marked as replay. */
export function expectAbortError(error: Any) {
  expect(error).toBeInstanceOf(DOMException);
  expect(error.name).toBe("AbortError");
  expect(error.message).toBe("Aborted");
  expect(error.code).toBe(20);
}

export const kind = (chunk: Any): string => {
  if (chunk.providerRetry) return `retry:${chunk.providerRetry.phase}`;
  if (chunk.providerStall) return `stall:${chunk.providerStall.phase}`;
  if (chunk.modelFallback) return "fallback";
  if (chunk.finishReason) return `finish:${chunk.finishReason}`;
  if (chunk.toolCalls) return "toolCalls";
  if (chunk.reasoningContent !== undefined) return "reasoning";
  if (chunk.content !== undefined) return "content";
  return JSON.stringify(chunk);
};

export const retries = (chunks: Any[]) => chunks.filter((c) => c.providerRetry).map((c) => c.providerRetry);

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface LoopbackServer {
  url: string;
  port: number;
  requests: Array<{ method: string; path: string; headers: Record<string, Any>; body: string }>;
  openConnections: () => number;
  close: () => Promise<void>;
}

/** A plain loopback HTTP server; `handler` answers after the request body has been read. */
export async function loopbackServer(
  handler: (req: IncomingMessage, res: ServerResponse, body: string) => void | Promise<void>,
): Promise<LoopbackServer> {
  const requests: LoopbackServer["requests"] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (c) => parts.push(c));
    req.on("end", () => {
      const body = Buffer.concat(parts).toString("utf8");
      requests.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers as Any, body });
      Promise.resolve(handler(req, res, body)).catch(() => res.destroy());
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as Any;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
      server.closeAllConnections?.();
    }));
  cleanups.push(close);
  return { url: `http://127.0.0.1:${port}`, port, requests, openConnections: () => sockets.size, close };
}

/** A Chat Completions SSE frame (`data: {...}`) of a text delta / the final frames. */
export function completionsFrame(delta: Any, finish: string | null = null): string {
  const chunk = {
    id: "chatcmpl-x",
    object: "chat.completion.chunk",
    created: 1,
    model: "mock-model",
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

export const COMPLETIONS_USAGE_FRAME = `data: ${JSON.stringify({
  id: "chatcmpl-x",
  object: "chat.completion.chunk",
  created: 1,
  model: "mock-model",
  choices: [],
  usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
})}\n\ndata: [DONE]\n\n`;

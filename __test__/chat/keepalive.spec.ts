// Keep-alive reuse races (issue 12, finding 7): a server may close an idle keep-alive connection
// at the very moment the client sends the next request on it (Node's http server does so
// keepAliveTimeout + keepAliveTimeoutBuffer after a response; its headersTimeout check closes a
// never-used pooled connection with a 408). The request then fails before any response byte, on
// a connection the client took from its pool, and the server never handled it. Browsers (and
// undici, by closing idle sockets before the server's Keep-Alive hint) make this invisible;
// pi-native surfaced it as `Connection error.`.
//
// The race is made deterministic here with a raw TCP server that answers the first request of a
// connection normally and treats a later request on the same connection as if its idle timer had
// just fired: it closes the connection (FIN or RST) without reading further or answering, or
// answers 408 and closes. The expectation is what a keep-alive client should do: the stream
// succeeds, its request sent again on a fresh connection, once — no retry chunk, because no
// attempt failed as far as the provider is concerned.
//
// Before the fix the second stream ended with `Connection error.` or the 408 error. pi-native now
// sends such a request once more, at once, on a fresh connection (it cannot tell a reused
// connection from a new one, so a server that drops every request sees it twice), and closes idle
// pooled connections after 4 s, as undici does without a server hint.
import { createServer, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { createChatService } from "../../lib/chat.js";
import { type Any, closeServersAfterEach, collect, COMPLETIONS_USAGE_FRAME, completionsFrame, USER } from "./support.js";

closeServersAfterEach();

const BODY = completionsFrame({ role: "assistant", content: "" }) + completionsFrame({ content: "hello" }) + completionsFrame({}, "stop") + COMPLETIONS_USAGE_FRAME;

type Reuse = "fin" | "rst" | "408";

interface RawServer {
  url: string;
  /** Requests per connection, in connection order (a refused request counts). */
  perConnection: number[];
  /** Ends (FIN) every open connection, as an idle timer would. */
  closeConnections: () => void;
  close: () => Promise<void>;
}

/** A minimal HTTP/1.1 server: the first request of a connection gets the SSE body (keep-alive), a later one `reuse`. */
async function rawServer(reuse: Reuse): Promise<RawServer> {
  const perConnection: number[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    const index = perConnection.push(0) - 1;
    let buffer = Buffer.alloc(0);
    socket.on("data", (data) => {
      buffer = Buffer.concat([buffer, data]);
      for (;;) {
        const end = buffer.indexOf("\r\n\r\n");
        if (end < 0) return;
        const head = buffer.subarray(0, end).toString("latin1");
        const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        if (buffer.length < end + 4 + length) return;
        buffer = buffer.subarray(end + 4 + length);
        const n = ++perConnection[index];
        if (n === 1) {
          socket.write(`HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: ${Buffer.byteLength(BODY)}\r\n\r\n${BODY}`);
        } else if (reuse === "fin") {
          socket.end();
          return;
        } else if (reuse === "rst") {
          socket.resetAndDestroy();
          return;
        } else {
          socket.end("HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
          return;
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as Any;
  const close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  const closeConnections = () => {
    for (const s of sockets) s.end();
  };
  return { url: `http://127.0.0.1:${port}`, perConnection, closeConnections, close };
}

const config = (url: string): Any => ({ provider: "openai-compatible", model: "m", apiKey: "sk-test-key", baseUrl: `${url}/v1`, maxRetries: 0 });

describe("keep-alive: a request that fails on a reused connection before any response byte", () => {
  for (const [reuse, what] of [
    ["fin", "the server closes the connection (FIN) as the request arrives"],
    ["rst", "the server resets the connection (RST) as the request arrives"],
    ["408", "the server answers 408 Request Timeout and closes (Node's headersTimeout check)"],
  ] as const) {
    it(`${what}: the stream still succeeds, sent again on a new connection`, async () => {
      const server = await rawServer(reuse);
      try {
        const service = createChatService(config(server.url));
        const first = await collect(service.streamChat(USER));
        expect(first.error).toBeUndefined();
        // The first connection is now idle in the client's pool; the next stream takes it.
        const second = await collect(service.streamChat(USER));
        expect(second.error?.message).toBeUndefined();
        expect(second.chunks.filter((c: Any) => c.content).map((c: Any) => c.content)).toEqual(["hello"]);
        expect(second.chunks.some((c: Any) => c.providerRetry)).toBe(false);
        // Connection 1: the first stream and the refused request; connection 2: the resent one.
        expect(server.perConnection).toEqual([2, 1]);
      } finally {
        await server.close();
      }
    });
  }

  it("a connection the server closed while it sat idle is not reused (passes today)", async () => {
    const server = await rawServer("fin");
    try {
      const service = createChatService(config(server.url));
      expect((await collect(service.streamChat(USER))).error).toBeUndefined();
      // The server's idle timer fires well before the next request: the client sees the FIN first.
      server.closeConnections();
      await new Promise((r) => setTimeout(r, 100));
      const second = await collect(service.streamChat(USER));
      expect(second.error).toBeUndefined();
      expect(server.perConnection).toEqual([1, 1]);
    } finally {
      await server.close();
    }
  });

  it("a server that drops every request: sent once more at most, then the ordinary transport error", async () => {
    let requests = 0;
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.on("error", () => {});
      socket.on("data", (d) => {
        if (d.includes("\r\n\r\n")) {
          requests += 1;
          socket.resetAndDestroy();
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as Any).port}`;
      const { error } = await collect(createChatService(config(url)).streamChat(USER));
      expect(error.message).toBe("Connection error.");
      // What failed underneath, as the OpenAI SDK's connection errors carry it (never the URL).
      expect(error.cause).toBeInstanceOf(Error);
      expect(error.cause.message).toMatch(/reset|closed/i);
      expect(error.cause.message).not.toContain("127.0.0.1");
      expect(requests).toBe(2);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

// Content encodings (issue 12, finding 3): pi-native asks for gzip, deflate, br and zstd and decodes
// them, like the reference's fetch does (before: nothing was sent, and a compressing proxy's
// response ended in "Stream ended without finish_reason"). The decoded body is bounded: one event
// by 16 MiB, the whole body by 1 GiB, so a decompression bomb ends in ProviderResponseTooLargeError.
import * as zlib from "node:zlib";
import { describe, expect, it } from "vitest";
import { createChatService, ProviderResponseTooLargeError, replayBoundaryCrossed } from "../../lib/chat.js";
import { type Any, closeServersAfterEach, collect, completionsFrame, loopbackServer, USER } from "./support.js";

closeServersAfterEach();

const config = (url: string): Any => ({ provider: "openai-compatible", model: "m", apiKey: "sk-test-key", baseUrl: `${url}/v1`, maxRetries: 0 });

const SSE = `${completionsFrame({ role: "assistant", content: "compressed " })}${completionsFrame({ content: "and decoded" })}${completionsFrame({}, "stop")}data: [DONE]\n\n`;

const ZSTD_SSE =
  "KLUv/WAQAY0FACKMJB5gadMG4fxLY5Nt/GE3K7sHCXcMz4ADo/6AqQpWdSuGgRggKBA4XNnmY+Je4oFqhtEgmpQUWtdly8UAYaQI4af5gcmci5KsZuu2WjNittcz7XKmbp0SfwDqi0RFZw51zkOL3E8hcZu8nhI3+QmoY7blcj9PqAI5gy7qTEqyZ+jLhIP9+aKQlOTakHsd0ZmjrA0DCQBGaxTGeGAC1F+2BWOhpYcH0VFVgIU5CjKbZA==";

const ENCODERS: Array<[string, ((b: Buffer) => Buffer | undefined) | undefined]> = [
  ["gzip", zlib.gzipSync],
  ["deflate", zlib.deflateSync],
  ["br", zlib.brotliCompressSync],
  // zlib gained zstd in Node 22.15 / 23.8; before that, SSE as a zstd frame made by Node 22's zlib.
  ["zstd", (zlib as Any).zstdCompressSync ?? ((b: Buffer) => (b.toString() === SSE ? Buffer.from(ZSTD_SSE, "base64") : undefined))],
];

describe("content encodings", () => {
  it("asks for every encoding it decodes", async () => {
    const server = await loopbackServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(SSE);
    });
    await collect(createChatService(config(server.url)).streamChat(USER));
    const asked = String(server.requests[0].headers["accept-encoding"]).split(/\s*,\s*/).sort();
    expect(asked).toEqual(["br", "deflate", "gzip", "zstd"]);
  });

  for (const [encoding, encode] of ENCODERS) {
    it(`decodes a ${encoding} stream, written in small pieces`, async () => {
      const body = encode!(Buffer.from(SSE))!;
      const server = await loopbackServer(async (_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream", "content-encoding": encoding });
        for (let i = 0; i < body.length; i += 7) {
          res.write(body.subarray(i, i + 7));
          await new Promise((r) => setImmediate(r));
        }
        res.end();
      });
      const { chunks, error } = await collect(createChatService(config(server.url)).streamChat(USER));
      expect(error).toBeUndefined();
      expect(chunks.map((c: Any) => c.content ?? "").join("")).toBe("compressed and decoded");
      expect(chunks.at(-1).finishReason).toBe("stop");
    });
  }

  it("a compressed error body is decoded into the message", async () => {
    const server = await loopbackServer((_req, res) => {
      res.writeHead(400, { "content-type": "application/json", "content-encoding": "gzip" });
      res.end(zlib.gzipSync(Buffer.from('{"error":{"message":"compressed refusal","type":"invalid_request_error"}}')));
    });
    const { error } = await collect(createChatService(config(server.url)).streamChat(USER));
    expect(error.message).toContain("compressed refusal");
  });

  it("a gzip bomb without line breaks ends at the 16 MiB event bound", async () => {
    const bomb = zlib.gzipSync(Buffer.concat([Buffer.from("data: "), Buffer.alloc(200 * 1024 * 1024, 0x61)]), { level: 9 });
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const server = await loopbackServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream", "content-encoding": "gzip" });
      res.end(bomb);
    });
    const { chunks, error } = await collect(createChatService(config(server.url)).streamChat(USER));
    expect(chunks).toEqual([]);
    expect(error).toBeInstanceOf(ProviderResponseTooLargeError);
    expect(error.part).toBe("event");
    expect(replayBoundaryCrossed(error)).toBe(false);
  }, 30_000);

  it("a gzip bomb of comment lines ends at the 1 GiB body bound", async () => {
    // The same sync-flushed deflate segment repeated: each decodes on its own to 1 MiB of ':' lines,
    // so about 1.1 GiB decode from a couple of megabytes.
    const block = Buffer.from(`:${"k".repeat(1022)}\n`.repeat(1024));
    const segment = zlib.deflateRawSync(block, { finishFlush: zlib.constants.Z_SYNC_FLUSH, level: 9 });
    const header = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
    const server = await loopbackServer(async (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream", "content-encoding": "gzip" });
      res.write(header);
      for (let i = 0; i < 1200; i++) {
        if (!res.write(segment)) await new Promise((r) => res.once("drain", r));
        if (res.destroyed) return;
      }
      res.end();
    });
    const { chunks, error } = await collect(createChatService(config(server.url)).streamChat(USER));
    expect(chunks).toEqual([]);
    expect(error).toBeInstanceOf(ProviderResponseTooLargeError);
    expect(error.part).toBe("body");
    expect(error.limitBytes).toBe(2 ** 30);
  }, 60_000);
});

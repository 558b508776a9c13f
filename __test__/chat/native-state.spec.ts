// No native stream state outlives its stream (issue 12, finding 6): after many streams that end
// normally, fail, are aborted mid-stream or are abandoned by their consumer, the chat core holds no
// stream handle, no request task and no stream buffer once the handles are collected. (RSS after
// bursts is measured by `npm run bench:chat-memory`; this pins the leak classes a count can see.)
import v8 from "node:v8";
import vm from "node:vm";
import { describe, expect, it } from "vitest";
import { chatNativeStats, createChatService } from "../../lib/chat.js";
import { type Any, closeServersAfterEach, collect, completionsFrame, loopbackServer, sleep, USER } from "./support.js";

closeServersAfterEach();

v8.setFlagsFromString("--expose-gc");
const gc: () => void = vm.runInNewContext("gc");

async function settled() {
  for (let i = 0; i < 100; i++) {
    gc();
    await sleep(20);
    const s = chatNativeStats();
    if (s.handles === 0 && s.tasks === 0 && s.outboxes === 0) return s;
  }
  return chatNativeStats();
}

describe("native stream state", () => {
  it("returns to zero after completed, failed, aborted and abandoned streams", async () => {
    expect(await settled()).toEqual({ handles: 0, tasks: 0, outboxes: 0 });
    const server = await loopbackServer(async (req, res) => {
      if (req.headers["x-fail"]) {
        res.writeHead(500, { "content-type": "text/plain" });
        return res.end("boom");
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (let i = 0; i < 20; i++) {
        res.write(completionsFrame({ content: `w${i} ` }));
        await sleep(2);
      }
      res.end(`${completionsFrame({}, "stop")}data: [DONE]\n\n`);
    });
    const config: Any = { provider: "openai-compatible", model: "m", apiKey: "k", baseUrl: `${server.url}/v1`, maxRetries: 0 };
    const ok = createChatService(config);
    const failing = createChatService({ ...config, customHeaders: { "x-fail": "1" } });
    const runs: Promise<unknown>[] = [];
    for (let i = 0; i < 150; i++) runs.push(collect(ok.streamChat(USER)));
    for (let i = 0; i < 50; i++) runs.push(collect(failing.streamChat(USER)));
    for (let i = 0; i < 50; i++) {
      const controller = new AbortController();
      runs.push(collect(ok.streamChat(USER, [], controller.signal), (_c, n) => n === 2 && controller.abort()));
    }
    for (let i = 0; i < 50; i++) {
      runs.push(
        (async () => {
          for await (const _chunk of ok.streamChat(USER)) break;
        })(),
      );
    }
    // While they run, the state is there to see.
    await sleep(5);
    const during = chatNativeStats();
    expect(during.handles).toBeGreaterThan(0);
    expect(during.tasks).toBeGreaterThan(0);
    await Promise.all(runs);
    expect(await settled()).toEqual({ handles: 0, tasks: 0, outboxes: 0 });
  }, 60_000);

  it("an iterator dropped without return() is collected and its request ended", async () => {
    const server = await loopbackServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(completionsFrame({ content: "never ends" }));
    });
    const service = createChatService({ provider: "openai-compatible", model: "m", apiKey: "k", baseUrl: `${server.url}/v1`, maxRetries: 0 });
    // Opened and dropped in a function of their own, so no frame of this test keeps one alive.
    const openAndDrop = async () => {
      for (let i = 0; i < 20; i++) {
        const it = service.streamChat(USER)[Symbol.asyncIterator]();
        await it.next();
      }
    };
    await openAndDrop();
    expect(chatNativeStats().handles).toBeGreaterThanOrEqual(20);
    expect(await settled()).toEqual({ handles: 0, tasks: 0, outboxes: 0 });
    await sleep(50);
    expect(server.openConnections()).toBe(0);
  }, 60_000);
});

// The recorded reference runs (Blade's PiAIChatService over pi-ai 0.84.2) reproduced through
// pi-native/chat against the loopback mock: the exact HTTP requests and the exact chunk sequence.
import { afterEach, describe, expect, it } from "vitest";
import { createChatService, getModel } from "../../lib/chat.js";
import { chatFixtureNames, errorLine, loadChatFixture, normalizeChunks, normalizeRequests, withBase } from "./fixtures.mjs";
import { startMockProvider } from "./mock-provider.mjs";

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const mocks: Any[] = [];
afterEach(async () => {
  while (mocks.length) await mocks.pop().close();
});

/** The model definition the reference resolved: the catalog entry with the case's fields laid over it. */
function definition(model: Any): Any {
  const { catalog: _c, ...fields } = model;
  const base = getModel(model.provider, model.id) ?? {};
  return { ...base, ...fields, name: base.name ?? model.name ?? model.id };
}

const zstdReadable = (() => {
  const [major, minor] = process.versions.node.split(".").map(Number);
  return major > 22 || (major === 22 && minor >= 15);
})();

async function run(name: string) {
  const f = loadChatFixture(name);
  const mock = await startMockProvider({ ttlMs: 20_000 });
  mocks.push(mock);
  const c = withBase(f.case, mock.baseUrl);
  const models = [c.model, ...(c.extraModels ?? [])].map(definition);
  const lines: Any[] = [];
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  if (c.abortAfterMs) timer = setTimeout(() => controller.abort(), c.abortAfterMs);
  try {
    const service = createChatService({ ...c.config, provider: c.model.provider, model: c.model.id }, { models });
    if (c.mode === "chat") {
      lines.push({ response: await service.chat(c.messages, c.tools, controller.signal, c.requestOptions) });
    } else {
      for await (const chunk of service.streamChat(c.messages, c.tools, controller.signal, c.requestOptions)) lines.push(chunk);
    }
  } catch (error) {
    lines.push(errorLine(error));
  } finally {
    if (timer) clearTimeout(timer);
  }
  return { f, mock, lines };
}

describe("chat conformance: recorded reference runs", () => {
  for (const name of chatFixtureNames()) {
    it(name, async () => {
      const { f, mock, lines } = await run(name);
      expect(normalizeChunks(lines, f)).toEqual(f.expectedChunks);
      const raw = mock.requests.filter((r: Any) => !r.upgrade);
      const actual = normalizeRequests(mock.requests);
      const expected = withBase(f.expectedRequests, mock.baseUrl);
      for (const [i, req] of expected.entries()) {
        const got = actual[i];
        expect(got, `request ${i + 1}`).toBeDefined();
        for (const [header, pattern] of Object.entries(f.headerPatterns ?? {})) {
          expect(raw[i].headers[header]).toMatch(new RegExp(pattern as string));
          delete got.headers[header];
          delete req.headers[header];
        }
        if (req.bodyEncoding === "zstd" && !zstdReadable) {
          expect(got.bodyEncoding).toBe("zstd");
          got.body = req.body;
        }
        expect(got).toEqual(req);
      }
      expect(actual.length).toBe(expected.length);
    });
  }
});

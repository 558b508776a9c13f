// Tests of the loopback mock provider (mock-provider.mjs) and of the chat fixtures it must reproduce.
// A small SSE parser and a minimal per-dialect projection (spec §5.2–5.5, §5.10 usage/cost) act as the
// "faithful client": replaying each fixture's recorded requests against the mock must give back the
// recorded StreamChunk sequence.
import { readFileSync } from "node:fs";
import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatFixtureNames, errorLine, loadChatFixture, normalizeChunks, normalizeRequests, withBase } from "./fixtures.mjs";
import { MOCK_TURN, dialectForPath, mockScript, parseScenario, startMockProvider } from "./mock-provider.mjs";

// biome-ignore lint/suspicious/noExplicitAny: JSON shapes from the wire
type Any = any;
type Mock = Awaited<ReturnType<typeof startMockProvider>>;
interface SseEvent {
  event?: string;
  data: string;
}

/** Minimal SSE parser (LF/CRLF lines, blank-line dispatch, comments ignored, multi-line data joined). */
function parseSse(text: string): SseEvent[] {
  const out: SseEvent[] = [];
  let event: string | undefined;
  let data: string[] = [];
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line === "") {
      if (data.length > 0 || event) out.push({ ...(event ? { event } : {}), data: data.join("\n") });
      event = undefined;
      data = [];
    } else if (line.startsWith(":")) {
      // comment
    } else {
      const i = line.indexOf(":");
      const field = i < 0 ? line : line.slice(0, i);
      const value = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
      if (field === "event") event = value;
      else if (field === "data") data.push(value);
    }
  }
  return out;
}

async function post(mock: Mock, path: string, scenario?: string, body: unknown = { model: "m" }, headers: Record<string, string> = {}) {
  return fetch(mock.baseUrl + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...(scenario ? { "x-mock-scenario": scenario } : {}), ...headers },
    body: JSON.stringify(body),
  });
}

const PATHS: Record<string, string> = {
  "openai-completions": "/v1/chat/completions",
  "openai-responses": "/v1/responses",
  azure: "/openai/v1/responses?api-version=2025-04-01-preview",
  "openai-codex-responses": "/backend-api/codex/responses",
  "anthropic-messages": "/v1/messages",
  google: "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
  mistral: "/mistral/v1/chat/completions",
};

// ---------------------------------------------------------------------------------------------------
// Minimal projection to StreamChunks (a test oracle for the mock's own streams, not a general client).

interface Cost {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}
interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  total: number;
  reasoning?: number;
  multiplier?: number;
}

function usageInfo(u: Usage, rate: Cost): Any {
  const m = u.multiplier ?? 1;
  const cost =
    (rate.input / 1e6) * u.input * m +
    (rate.output / 1e6) * u.output * m +
    (rate.cacheRead / 1e6) * u.cacheRead * m +
    ((rate.cacheWrite * u.cacheWrite) / 1e6) * m;
  return {
    promptTokens: u.input + u.cacheRead + u.cacheWrite,
    completionTokens: u.output,
    totalTokens: u.total,
    costUsd: cost,
    ...(u.reasoning !== undefined ? { reasoningTokens: u.reasoning } : {}),
    ...(u.cacheWrite > 0 ? { cacheCreationInputTokens: u.cacheWrite } : {}),
    ...(u.cacheRead > 0 ? { cacheReadInputTokens: u.cacheRead } : {}),
  };
}

let googleCallCounter = 0;

const toolChunk = (index: number, id: string, name: string, args: string) => ({
  toolCalls: [{ index, id, type: "function", function: { name, arguments: JSON.stringify(JSON.parse(args || "{}")) } }],
});

function project(dialect: string, events: SseEvent[], rate: Cost): { chunks: Any[]; error?: string } {
  const chunks: Any[] = [];
  let usage: Usage | undefined;
  let finish: string | undefined;
  if (dialect === "mistral") {
    // Tool calls keyed by id and index, ended with the stream; empty text deltas are forwarded.
    const calls = new Map<string, { id: string; name: string; args: string }>();
    for (const { data } of events) {
      if (data === "[DONE]") break;
      const c = JSON.parse(data);
      if (c.usage) {
        const cached = Math.min(c.usage.prompt_tokens, c.usage.prompt_tokens_details?.cached_tokens ?? 0);
        const input = c.usage.prompt_tokens - cached;
        usage = { input, output: c.usage.completion_tokens, cacheRead: cached, cacheWrite: 0, total: c.usage.total_tokens };
      }
      const choice = c.choices[0];
      if (!choice) continue;
      if (choice.finish_reason) finish = { stop: "stop", length: "length", model_length: "length", tool_calls: "toolUse" }[choice.finish_reason as string];
      const content = choice.delta.content;
      for (const item of typeof content === "string" ? [content] : (content ?? [])) {
        if (typeof item === "string") chunks.push({ content: item });
        else if (item.type === "thinking") chunks.push({ reasoningContent: item.thinking.map((p: Any) => p.text).join("") });
        else if (item.type === "text") chunks.push({ content: item.text });
      }
      for (const tc of choice.delta.tool_calls ?? []) {
        const key = `${tc.id}:${tc.index ?? 0}`;
        const call = calls.get(key) ?? { id: tc.id, name: tc.function.name, args: "" };
        call.args += typeof tc.function.arguments === "string" ? tc.function.arguments : JSON.stringify(tc.function.arguments);
        calls.set(key, call);
      }
    }
    [...calls.values()].forEach((c, i) => chunks.push(toolChunk(i, c.id, c.name, c.args)));
    if (!finish) return { chunks, error: "Mistral stream ended without a finish reason" };
  } else if (dialect === "openai-completions") {
    const calls = new Map<number, { id: string; name: string; args: string }>();
    for (const { data } of events) {
      if (data === "[DONE]") continue;
      const c = JSON.parse(data);
      if (c.usage) {
        const cached = c.usage.prompt_tokens_details?.cached_tokens ?? 0;
        const input = c.usage.prompt_tokens - cached;
        usage = { input, output: c.usage.completion_tokens, cacheRead: cached, cacheWrite: 0, total: input + c.usage.completion_tokens + cached };
        usage.reasoning = c.usage.completion_tokens_details?.reasoning_tokens ?? 0;
      }
      const choice = c.choices?.[0];
      if (!choice) continue;
      if (choice.finish_reason) finish = { stop: "stop", length: "length", tool_calls: "toolUse" }[choice.finish_reason as string];
      const d = choice.delta ?? {};
      if (d.content) chunks.push({ content: d.content });
      if (d.reasoning_content) chunks.push({ reasoningContent: d.reasoning_content });
      for (const tc of d.tool_calls ?? []) {
        const call = calls.get(tc.index) ?? { id: "", name: "", args: "" };
        call.id ||= tc.id ?? "";
        call.name ||= tc.function?.name ?? "";
        call.args += tc.function?.arguments ?? "";
        calls.set(tc.index, call);
      }
    }
    [...calls.values()].forEach((c, i) => chunks.push(toolChunk(i, c.id, c.name, c.args)));
    if (!finish) return { chunks, error: "Stream ended without finish_reason" };
  } else if (dialect === "anthropic-messages") {
    let started = false;
    let stopped = false;
    let calls = 0;
    const blocks = new Map<number, Any>();
    for (const { event, data } of events) {
      const e = JSON.parse(data);
      expect(e.type).toBe(event);
      if (e.type === "message_start") {
        started = true;
        const u = e.message.usage;
        usage = { input: u.input_tokens, output: u.output_tokens, cacheRead: u.cache_read_input_tokens, cacheWrite: u.cache_creation_input_tokens, total: 0 };
      } else if (e.type === "content_block_start") blocks.set(e.index, { ...e.content_block, json: "" });
      else if (e.type === "content_block_delta") {
        if (e.delta.type === "text_delta") chunks.push({ content: e.delta.text });
        if (e.delta.type === "thinking_delta") chunks.push({ reasoningContent: e.delta.thinking });
        if (e.delta.type === "input_json_delta") blocks.get(e.index).json += e.delta.partial_json;
      } else if (e.type === "content_block_stop") {
        const b = blocks.get(e.index);
        if (b.type === "tool_use") chunks.push(toolChunk(calls++, b.id, b.name, b.json));
      } else if (e.type === "message_delta") {
        finish = { end_turn: "stop", max_tokens: "length", tool_use: "toolUse" }[e.delta.stop_reason as string];
        const u = e.usage;
        if (usage && u) {
          usage.output = u.output_tokens ?? usage.output;
          usage.cacheRead = u.cache_read_input_tokens ?? usage.cacheRead;
          usage.cacheWrite = u.cache_creation_input_tokens ?? usage.cacheWrite;
          if (u.output_tokens_details?.thinking_tokens != null) usage.reasoning = u.output_tokens_details.thinking_tokens;
        }
      } else if (e.type === "message_stop") stopped = true;
    }
    if (started && !stopped) return { chunks, error: "Anthropic stream ended before message_stop" };
    if (!finish) return { chunks, error: "Anthropic stream ended without a stop reason" };
    if (usage) usage.total = usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
  } else if (dialect === "google") {
    let calls = 0;
    for (const { event, data } of events) {
      expect(event).toBeUndefined();
      const r = JSON.parse(data);
      const candidate = r.candidates[0];
      for (const part of candidate.content.parts) {
        if (part.text !== undefined) chunks.push(part.thought === true ? { reasoningContent: part.text } : { content: part.text });
        if (part.functionCall) {
          // No id on the wire: clients generate <name>_<epoch ms>_<counter>.
          const id = part.functionCall.id ?? `${part.functionCall.name}_${Date.now()}_${++googleCallCounter}`;
          chunks.push(toolChunk(calls++, id, part.functionCall.name, JSON.stringify(part.functionCall.args ?? {})));
        }
      }
      if (candidate.finishReason) finish = { STOP: calls > 0 ? "toolUse" : "stop", MAX_TOKENS: "length" }[candidate.finishReason as string];
      const u = r.usageMetadata;
      if (u) {
        const cached = u.cachedContentTokenCount ?? 0;
        usage = { input: u.promptTokenCount - cached, output: (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0), cacheRead: cached, cacheWrite: 0, total: u.totalTokenCount };
        usage.reasoning = u.thoughtsTokenCount ?? 0;
      }
    }
    if (!finish) return { chunks, error: "Google stream ended without a finish reason" };
  } else {
    const calls = new Map<number, Any>();
    let n = 0;
    let terminal = false;
    let expectedSeq = 0;
    for (const { event, data } of events) {
      const e = JSON.parse(data);
      expect(e.type).toBe(event);
      expect(e.sequence_number).toBe(expectedSeq++);
      if (e.type === "response.reasoning_summary_text.delta") chunks.push({ reasoningContent: e.delta });
      else if (e.type === "response.reasoning_summary_part.done") chunks.push({ reasoningContent: "\n\n" });
      else if (e.type === "response.output_text.delta") chunks.push({ content: e.delta });
      else if (e.type === "response.output_item.added" && e.item.type === "function_call") calls.set(e.output_index, e.item);
      else if (e.type === "response.output_item.done" && e.item.type === "function_call") {
        chunks.push(toolChunk(n++, `${e.item.call_id}|${e.item.id}`, e.item.name, e.item.arguments));
      } else if (e.type === "response.completed" || e.type === "response.incomplete") {
        terminal = true;
        const r = e.response;
        const cached = r.usage.input_tokens_details?.cached_tokens ?? 0;
        usage = { input: r.usage.input_tokens - cached, output: r.usage.output_tokens, cacheRead: cached, cacheWrite: 0, total: r.usage.total_tokens };
        usage.reasoning = r.usage.output_tokens_details?.reasoning_tokens ?? 0;
        usage.multiplier = r.service_tier === "flex" ? 0.5 : r.service_tier === "priority" ? 2 : 1;
        finish = r.status === "completed" ? (n > 0 ? "toolUse" : "stop") : r.incomplete_details?.reason === "max_output_tokens" ? "length" : undefined;
      }
    }
    if (!terminal) return { chunks, error: "OpenAI Responses stream ended before a terminal response event" };
  }
  chunks.push({ finishReason: finish, usage: usageInfo(usage as Usage, rate) });
  return { chunks };
}

// ---------------------------------------------------------------------------------------------------

describe("mock provider: dialects answer `full` with well-formed SSE", () => {
  let mock: Mock;
  beforeAll(async () => {
    mock = await startMockProvider({ ttlMs: 10_000 });
  });
  afterAll(() => mock.close());

  it("chooses the dialect by path", () => {
    expect(dialectForPath("/v1/chat/completions")).toBe("openai-completions");
    expect(dialectForPath("/mistral/v1/chat/completions")).toBe("mistral");
    expect(dialectForPath("/mistral/chat/completions")).toBe("openai-completions");
    expect(dialectForPath("/v1/responses")).toBe("openai-responses");
    expect(dialectForPath("/openai/v1/responses")).toBe("openai-responses");
    expect(dialectForPath("/backend-api/codex/responses")).toBe("openai-codex-responses");
    expect(dialectForPath("/v1/messages")).toBe("anthropic-messages");
    expect(dialectForPath("/v1beta/models/gemini-2.5-pro:streamGenerateContent")).toBe("google");
    expect(dialectForPath("/v1/publishers/google/models/gemini-2.5-pro:streamGenerateContent")).toBe("google");
    expect(dialectForPath("/v1/models")).toBeNull();
  });

  it("Chat Completions: data-only frames, reasoning → content → tool-call fragments → finish → usage → [DONE]", async () => {
    const res = await post(mock, PATHS["openai-completions"], "full", { model: "gpt-5" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const text = await res.text();
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
    const events = parseSse(text);
    expect(events.every((e) => e.event === undefined)).toBe(true);
    const shape = events.map(({ data }) => {
      if (data === "[DONE]") return "DONE";
      const c = JSON.parse(data);
      expect(c).toMatchObject({ id: "chatcmpl-mock1", object: "chat.completion.chunk", model: "gpt-5" });
      if (c.choices.length === 0) return "usage";
      const [ch] = c.choices;
      if (ch.finish_reason) return `finish:${ch.finish_reason}`;
      if (ch.delta.role) return "role";
      if (ch.delta.reasoning_content) return "reasoning";
      if (ch.delta.content) return "content";
      return ch.delta.tool_calls[0].id ? "tool" : "args";
    });
    expect(shape).toEqual([
      "role",
      "reasoning",
      "reasoning",
      "content",
      "content",
      "tool",
      "args",
      "args",
      "args",
      "args",
      "finish:tool_calls",
      "usage",
      "DONE",
    ]);
    const usage = JSON.parse(events.at(-2)?.data as string).usage;
    expect(usage).toMatchObject({
      prompt_tokens: 1200,
      completion_tokens: 85,
      total_tokens: 1285,
      prompt_tokens_details: { cached_tokens: 1024 },
      completion_tokens_details: { reasoning_tokens: 30 },
    });
  });

  it.each(["openai-responses", "azure", "openai-codex-responses"])("Responses (%s): event/type pairs in order, increasing sequence numbers", async (key) => {
    const res = await post(mock, PATHS[key] as string, "full", { model: "gpt-5" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = parseSse(await res.text());
    const types = events.map((e) => {
      const d = JSON.parse(e.data);
      expect(d.type).toBe(e.event);
      return d.type.replace(/^response\./, "");
    });
    expect(events.map((e) => JSON.parse(e.data).sequence_number)).toEqual(events.map((_, i) => i));
    expect(types).toEqual([
      "created",
      "in_progress",
      "output_item.added",
      "reasoning_summary_part.added",
      "reasoning_summary_text.delta",
      "reasoning_summary_text.delta",
      "reasoning_summary_text.done",
      "reasoning_summary_part.done",
      "output_item.done",
      "output_item.added",
      "content_part.added",
      "output_text.delta",
      "output_text.delta",
      "output_text.done",
      "content_part.done",
      "output_item.done",
      "output_item.added",
      "function_call_arguments.delta",
      "function_call_arguments.delta",
      "function_call_arguments.delta",
      "function_call_arguments.delta",
      "function_call_arguments.done",
      "output_item.done",
      "completed",
    ]);
    const done = JSON.parse(events.at(-1)?.data as string).response;
    expect(done).toMatchObject({
      status: "completed",
      service_tier: "default",
      usage: { input_tokens: 1200, input_tokens_details: { cached_tokens: 1024 }, output_tokens: 85, output_tokens_details: { reasoning_tokens: 30 }, total_tokens: 1285 },
    });
    expect(done.output.map((o: Any) => o.type)).toEqual(["reasoning", "message", "function_call"]);
    expect(done.output[2]).toMatchObject({ call_id: "call_mock_1", id: "fc_mock1", name: "read_file" });
  });

  it("Anthropic Messages: event/type pairs, thinking → text → tool_use blocks, message_delta usage, message_stop", async () => {
    const res = await post(mock, PATHS["anthropic-messages"] as string, "full", { model: "claude-sonnet-4-5" });
    expect(res.status).toBe(200);
    const events = parseSse(await res.text());
    const shape = events.map((e) => {
      const d = JSON.parse(e.data);
      expect(d.type).toBe(e.event);
      if (d.type === "content_block_start") return `start:${d.index}:${d.content_block.type}`;
      if (d.type === "content_block_delta") return `${d.index}:${d.delta.type}`;
      if (d.type === "content_block_stop") return `stop:${d.index}`;
      return d.type;
    });
    expect(shape).toEqual([
      "message_start",
      "ping",
      "start:0:thinking",
      "0:thinking_delta",
      "0:thinking_delta",
      "0:signature_delta",
      "stop:0",
      "start:1:text",
      "1:text_delta",
      "1:text_delta",
      "stop:1",
      "start:2:tool_use",
      "2:input_json_delta",
      "2:input_json_delta",
      "2:input_json_delta",
      "2:input_json_delta",
      "2:input_json_delta",
      "stop:2",
      "message_delta",
      "message_stop",
    ]);
    const start = JSON.parse(events[0]?.data as string);
    expect(start.message.usage).toMatchObject({ input_tokens: 176, cache_read_input_tokens: 1024, cache_creation_input_tokens: 0 });
    const delta = JSON.parse(events.at(-2)?.data as string);
    expect(delta).toMatchObject({ delta: { stop_reason: "tool_use" }, usage: { output_tokens: 85, output_tokens_details: { thinking_tokens: 30 } } });
  });

  it("Google: data-only CRLF frames, whole GenerateContentResponses, thought parts → text → functionCall → empty text with STOP and usage", async () => {
    const res = await post(mock, PATHS.google as string, "full", {});
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text.endsWith("}\r\n\r\n")).toBe(true);
    const events = parseSse(text);
    const shape = events.map((e) => {
      expect(e.event).toBeUndefined();
      const r = JSON.parse(e.data);
      expect(r).toMatchObject({ modelVersion: "gemini-2.5-flash", responseId: expect.stringMatching(/^mock-response-\d+$/) });
      const [c] = r.candidates;
      const p = c.content.parts[0];
      const kind = p.functionCall ? "call" : p.thought ? "thought" : p.text === "" ? "empty" : "text";
      return c.finishReason ? `${kind}:${c.finishReason}` : kind;
    });
    expect(shape).toEqual(["thought", "thought", "text", "text", "call", "empty:STOP"]);
    const call = JSON.parse(events[4]?.data as string).candidates[0].content.parts[0];
    expect(call.functionCall).toEqual({ name: "read_file", args: { path: "src/main.rs", limit: 20 } });
    expect(JSON.parse(events.at(-1)?.data as string).usageMetadata).toEqual({
      promptTokenCount: 1200,
      candidatesTokenCount: 55,
      totalTokenCount: 1285,
      cachedContentTokenCount: 1024,
      thoughtsTokenCount: 30,
    });
  });

  it("Mistral: data-only frames, empty first content, thinking arrays, text strings, keyed tool-call fragments, finish + usage, [DONE]", async () => {
    const res = await post(mock, PATHS.mistral as string, "full", { model: "magistral-medium-latest" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const text = await res.text();
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
    const events = parseSse(text);
    expect(events.every((e) => e.event === undefined)).toBe(true);
    const shape = events.map(({ data }) => {
      if (data === "[DONE]") return "DONE";
      const c = JSON.parse(data);
      expect(c).toMatchObject({ id: expect.stringMatching(/^cmpl-mock\d+$/), object: "chat.completion.chunk", model: "magistral-medium-latest" });
      const [ch] = c.choices;
      if (ch.finish_reason) return `finish:${ch.finish_reason}:${JSON.stringify(ch.delta.content)}`;
      if (ch.delta.role) return `role:${JSON.stringify(ch.delta.content)}`;
      if (ch.delta.tool_calls) return `tool:${ch.delta.tool_calls[0].id}:${ch.delta.tool_calls[0].index}`;
      return Array.isArray(ch.delta.content) ? ch.delta.content[0].type : "text";
    });
    expect(shape).toEqual([
      'role:""',
      "thinking",
      "thinking",
      "text",
      "text",
      "tool:D681PevKs:0",
      "tool:D681PevKs:0",
      "tool:D681PevKs:0",
      "tool:D681PevKs:0",
      'finish:tool_calls:""',
      "DONE",
    ]);
    expect(JSON.parse(events.at(-2)?.data as string).usage).toEqual({
      prompt_tokens: 1200,
      completion_tokens: 85,
      total_tokens: 1285,
      prompt_tokens_details: { cached_tokens: 1024 },
    });
    const rate = { input: 1, output: 1, cacheRead: 1, cacheWrite: 0 };
    expect(project("mistral", events, rate).chunks.slice(0, -2)).toEqual([
      { content: "" },
      ...MOCK_TURN.reasoning.map((reasoningContent) => ({ reasoningContent })),
      ...MOCK_TURN.text.map((content) => ({ content })),
      { content: "" },
    ]);
  });

  it.each(Object.keys(PATHS))("%s: text, length and stream:N bodies project to the expected chunks", async (key) => {
    const dialect = dialectForPath((PATHS[key] as string).split("?")[0] as string) as string;
    const rate = { input: 1, output: 1, cacheRead: 1, cacheWrite: 0 };
    // Google's last frame carries an empty text part with the finish reason (as recorded).
    const trailing = dialect === "google" ? [{ content: "" }] : [];
    const text = project(dialect, parseSse(await (await post(mock, PATHS[key] as string, "text")).text()), rate);
    // Mistral's first and last chunks carry an empty content string (forwarded as deltas).
    const empty = dialect === "mistral" ? [{ content: "" }] : [];
    expect(text.chunks.slice(0, -1)).toEqual([...empty, ...MOCK_TURN.text.map((content) => ({ content })), ...empty, ...trailing]);
    expect(text.chunks.at(-1).finishReason).toBe("stop");
    const length = project(dialect, parseSse(await (await post(mock, PATHS[key] as string, "length")).text()), rate);
    expect(length.chunks.at(-1).finishReason).toBe("length");
    const many = project(dialect, parseSse(await (await post(mock, PATHS[key] as string, "stream:500")).text()), rate);
    const real = many.chunks.filter((c: Any) => c.content !== "");
    expect(real).toHaveLength(501);
    expect(real[499]).toEqual({ content: "t499 " });
    expect(real[500]).toMatchObject({ finishReason: "stop", usage: { promptTokens: 1200, completionTokens: 85 } });
  });

  it("mockScript exposes the same frames the server sends", async () => {
    const frames = mockScript("anthropic-messages", "text", { seq: 1, model: "m" });
    const res = await post(mock, PATHS["anthropic-messages"] as string, "text", { model: "m" });
    const events = parseSse(await res.text());
    expect(events.map((e) => JSON.parse(e.data).type)).toEqual(frames.map((f: Any) => f.data.type));
  });
});

describe("mock provider: error scenarios", () => {
  let mock: Mock;
  beforeAll(async () => {
    mock = await startMockProvider({ ttlMs: 10_000 });
  });
  afterAll(() => mock.close());

  const cases: Array<[string, number, Record<string, string | null>, string, string]> = [
    ["http429", 429, { "retry-after-ms": "20", "x-should-retry": null }, "rate_limit_error", "Rate limit reached for requests"],
    ["http500", 500, { "retry-after-ms": "20", "x-should-retry": null }, "server_error", "Internal server error"],
    ["http503", 503, { "retry-after-ms": "20", "x-should-retry": null }, "overloaded_error", "Service unavailable"],
    ["noretry503", 503, { "retry-after-ms": null, "x-should-retry": "false" }, "overloaded_error", "Service unavailable"],
    ["http400", 400, { "retry-after-ms": null, "x-should-retry": null }, "invalid_request_error", "Invalid request: messages.0.content is malformed"],
    ["context", 400, { "retry-after-ms": null }, "invalid_request_error", "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens."],
  ];
  it.each(cases)("%s → %i with the right headers and an OpenAI-shaped error body", async (scenario, status, headers, type, message) => {
    const res = await post(mock, "/v1/chat/completions", scenario);
    expect(res.status).toBe(status);
    expect(res.headers.get("content-type")).toBe("application/json");
    for (const [k, v] of Object.entries(headers)) expect(res.headers.get(k)).toBe(v);
    const text = await res.text();
    // Key order is part of the observable error text (`429: {"message":…,"type":…,"param":null,"code":…}`).
    expect(text).toBe(JSON.stringify({ error: { message, type, param: null, code: type } }));
  });

  it("Google errors use Google's error envelope", async () => {
    const res = await post(mock, PATHS.google as string, "http429");
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after-ms")).toBe("20");
    expect(await res.json()).toEqual({ error: { code: 429, message: "Rate limit reached for requests", status: "RESOURCE_EXHAUSTED" } });
  });

  it("Anthropic errors use Anthropic's error envelope", async () => {
    const res = await post(mock, "/v1/messages", "http429");
    expect(res.status).toBe(429);
    expect(await res.json()).toEqual({ type: "error", error: { type: "rate_limit_error", message: "Rate limit reached for requests" }, request_id: "req_mock" });
  });

  it("x-mock-retry-after* / x-mock-should-retry request headers override the error headers", async () => {
    const res = await post(mock, "/v1/responses", "http503", undefined, {
      "x-mock-retry-after": "Wed, 21 Oct 2015 07:28:00 GMT",
      "x-mock-retry-after-ms": "none",
      "x-mock-should-retry": "true",
    });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("Wed, 21 Oct 2015 07:28:00 GMT");
    expect(res.headers.get("retry-after-ms")).toBeNull();
    expect(res.headers.get("x-should-retry")).toBe("true");
    await res.text();
  });

  it("fail-once-* fails the first request per (scenario, path) and mock instance, then streams `full`", async () => {
    const first = await post(mock, "/v1/chat/completions", "fail-once-500");
    expect(first.status).toBe(500);
    expect(first.headers.get("retry-after-ms")).toBe("20");
    await first.text();
    const second = await post(mock, "/v1/chat/completions", "fail-once-500");
    expect(second.status).toBe(200);
    expect((await second.text()).includes('"finish_reason":"tool_calls"')).toBe(true);
    // Another path has its own counter; so has another fail-once scenario.
    expect((await post(mock, "/v1/messages", "fail-once-500").then(async (r) => [r.status, await r.text()]))[0]).toBe(500);
    expect((await post(mock, "/v1/chat/completions", "fail-once-429").then(async (r) => [r.status, await r.text()]))[0]).toBe(429);
    expect((await post(mock, "/v1/chat/completions", "fail-once-503").then(async (r) => [r.status, await r.text()]))[0]).toBe(503);
    // A fresh mock starts over.
    const other = await startMockProvider({ ttlMs: 5_000 });
    expect((await post(other, "/v1/chat/completions", "fail-once-500").then(async (r) => [r.status, await r.text()]))[0]).toBe(500);
    await other.close();
    const statuses = mock.requests.filter((r: Any) => r.scenario.startsWith("fail-once")).map((r: Any) => r.status);
    expect(statuses).toEqual([500, 200, 500, 429, 503]);
  });

  it("unknown paths get 404 and unknown scenarios 400 (both recorded)", async () => {
    const a = await post(mock, "/v1/models", "full");
    expect(a.status).toBe(404);
    await a.text();
    const b = await post(mock, "/v1/chat/completions", "nonsense");
    expect(b.status).toBe(400);
    expect((await b.json()).error.message).toMatch(/unknown mock scenario token: nonsense/);
    expect(() => parseScenario("stall:x")).toThrow();
    expect(parseScenario("text+slow:5")).toMatchObject({ body: "text", slowMs: 5 });
  });
});

describe("mock provider: truncation and timing scenarios", () => {
  let mock: Mock;
  beforeAll(async () => {
    mock = await startMockProvider({ ttlMs: 10_000 });
  });
  afterAll(() => mock.close());

  it("eof ends a 200 SSE response with no event; eof-after-text cuts after the last text delta", async () => {
    const eof = await post(mock, "/v1/chat/completions", "eof");
    expect(eof.status).toBe(200);
    expect(eof.headers.get("content-type")).toBe("text/event-stream");
    expect(await eof.text()).toBe("");
    for (const path of ["/v1/chat/completions", "/v1/responses", "/v1/messages", "/mistral/v1/chat/completions"]) {
      const events = parseSse(await (await post(mock, path, "eof-after-text")).text());
      const last = JSON.parse(events.at(-1)?.data as string);
      const lastText = last.choices?.[0]?.delta?.content ?? last.delta?.text ?? last.delta;
      expect(lastText).toBe("the file now.");
    }
  });

  it("hang sends the headers, then nothing until the client aborts (the mock notices)", async () => {
    const res = await post(mock, "/v1/chat/completions", "hang");
    expect(res.status).toBe(200);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const outcome = await Promise.race([reader.read().then(() => "data"), new Promise((r) => setTimeout(() => r("silent"), 150))]);
    expect(outcome).toBe("silent");
    await reader.cancel();
    await new Promise((r) => setTimeout(r, 50));
    expect(mock.requests.at(-1)).toMatchObject({ scenario: "hang", clientClosedEarly: true });
  });

  it("hang-headers never sends a status line", async () => {
    const ac = new AbortController();
    const pending = fetch(`${mock.baseUrl}/v1/messages`, { method: "POST", headers: { "x-mock-scenario": "hang-headers" }, body: "{}", signal: ac.signal });
    const outcome = await Promise.race([pending.then(() => "response"), new Promise((r) => setTimeout(() => r("silent"), 100))]);
    expect(outcome).toBe("silent");
    ac.abort();
    await expect(pending).rejects.toThrow();
  });

  it("stall:<ms> delays the first event (headers at once); slow:<ms> delays every event", async () => {
    const t0 = Date.now();
    const res = await post(mock, "/v1/messages", "stall:150");
    expect(res.status).toBe(200);
    expect(Date.now() - t0).toBeLessThan(120);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(145);
    let text = Buffer.from(first.value ?? []).toString();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString();
    }
    expect(text.includes("message_stop")).toBe(true);

    const t1 = Date.now();
    const slow = await post(mock, "/v1/chat/completions", "text+slow:20");
    const r2 = (slow.body as ReadableStream<Uint8Array>).getReader();
    const arrivals: number[] = [];
    for (;;) {
      const { done } = await r2.read();
      if (done) break;
      arrivals.push(Date.now() - t1);
    }
    // role, content ×2, finish, usage, [DONE]: six frames, each written ≥ 20 ms after the previous one.
    expect(arrivals.length).toBeGreaterThanOrEqual(2);
    expect(arrivals.at(-1)).toBeGreaterThanOrEqual(6 * 20 - 5);
  });

  it("close() ends hanging responses and pending delays", async () => {
    const m = await startMockProvider({ ttlMs: 5_000 });
    const res = await post(m, "/v1/responses", "hang");
    const reading = res.text().then(
      () => "ended",
      () => "errored",
    );
    const stalled = post(m, "/v1/responses", "stall:5000").then((r) => r.text().then(() => "ended", () => "errored"));
    await new Promise((r) => setTimeout(r, 30));
    await m.close();
    expect(["ended", "errored"]).toContain(await reading);
    expect(["ended", "errored"]).toContain(await stalled);
  });

  it("closes by itself after ttlMs", async () => {
    const m = await startMockProvider({ ttlMs: 100 });
    const t0 = Date.now();
    await m.closed;
    expect(Date.now() - t0).toBeGreaterThanOrEqual(90);
    await expect(fetch(`${m.baseUrl}/v1/messages`, { method: "POST", body: "{}" })).rejects.toThrow();
  });
});

describe("mock provider: request recording", () => {
  let mock: Mock;
  beforeAll(async () => {
    mock = await startMockProvider({ ttlMs: 10_000 });
  });
  afterAll(() => mock.close());

  it("records method, path, query, lower-cased headers and the decoded JSON body", async () => {
    await (await post(mock, "/openai/v1/responses?api-version=v1", "text", { model: "gpt-5", input: [] }, { "X-Custom-Header": "Yes" })).text();
    const r = mock.requests.at(-1);
    expect(r).toMatchObject({
      method: "POST",
      path: "/openai/v1/responses",
      query: { "api-version": "v1" },
      bodyEncoding: "identity",
      body: { model: "gpt-5", input: [] },
      dialect: "openai-responses",
      scenario: "text",
      status: 200,
    });
    expect(r.headers["x-custom-header"]).toBe("Yes");
    expect(Object.keys(r.headers).every((k: string) => k === k.toLowerCase())).toBe(true);
    expect(typeof r.at).toBe("string");
  });

  it("decodes gzip bodies, and zstd bodies when node:zlib can (else records them raw, flagged)", async () => {
    const json = JSON.stringify({ model: "gpt-5.1-codex", store: false });
    await (
      await fetch(`${mock.baseUrl}/backend-api/codex/responses`, {
        method: "POST",
        headers: { "content-type": "application/json", "content-encoding": "gzip", "x-mock-scenario": "text" },
        body: zlib.gzipSync(json),
      })
    ).text();
    expect(mock.requests.at(-1)).toMatchObject({ bodyEncoding: "gzip", body: { model: "gpt-5.1-codex" }, dialect: "openai-codex-responses" });
    const z = zlib as Any;
    if (typeof z.zstdCompressSync === "function") {
      await (
        await fetch(`${mock.baseUrl}/backend-api/codex/responses`, {
          method: "POST",
          headers: { "content-type": "application/json", "content-encoding": "zstd", "x-mock-scenario": "text" },
          body: z.zstdCompressSync(Buffer.from(json)),
        })
      ).text();
      expect(mock.requests.at(-1)).toMatchObject({ bodyEncoding: "zstd", body: { model: "gpt-5.1-codex" } });
    } else {
      // Bytes that are not zstd either way: on this Node the mock cannot decode zstd and must say so.
      await (
        await fetch(`${mock.baseUrl}/backend-api/codex/responses`, {
          method: "POST",
          headers: { "content-type": "application/json", "content-encoding": "zstd", "x-mock-scenario": "text" },
          body: Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0, 0]),
        })
      ).text();
      expect(mock.requests.at(-1)).toMatchObject({ bodyEncoding: "zstd", body: null, bodyDecoded: false, rawBodyBase64: "KLUv/QAA" });
    }
  });

  it("records and refuses WebSocket upgrades", async () => {
    const { request } = await import("node:http");
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${mock.baseUrl}/backend-api/codex/responses`, {
        headers: { connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==" },
      });
      req.on("response", (res) => {
        res.resume();
        resolve(res.statusCode as number);
      });
      req.on("upgrade", () => reject(new Error("upgraded")));
      req.on("error", reject);
      req.end();
    });
    expect(status).toBe(426);
    expect(mock.requests.at(-1)).toMatchObject({ method: "GET", upgrade: "websocket", dialect: "openai-codex-responses", note: "websocket upgrade refused by mock" });
  });
});

// ---------------------------------------------------------------------------------------------------

const FIXTURES = chatFixtureNames();
const TIMING = new Set(["hang", "slow:300"]); // covered by the timing tests above, not replayed

describe("chat fixtures", () => {
  it("cover every ported case and never carry telemetry headers", () => {
    expect(FIXTURES.length).toBe(43);
    for (const name of FIXTURES) {
      const f = loadChatFixture(name);
      expect(f.name).toBe(name);
      expect(Object.keys(f)).toEqual(expect.arrayContaining(["case", "expectedRequests", "expectedChunks"]));
      for (const r of f.expectedRequests) {
        for (const h of Object.keys(r.headers)) expect(h).not.toMatch(/^(user-agent|x-stainless-|host$|content-length$)/);
        expect(() => parseScenario(r.scenario)).not.toThrow();
      }
      expect(JSON.stringify(withBase(f.case, "http://127.0.0.1:1"))).not.toContain("@BASE@");
    }
  });

  it("normalizeChunks accepts volatile fields within their rules and nothing else", () => {
    const f = loadChatFixture("bounded-recovery");
    const actual = structuredClone(f.expectedChunks);
    actual[0].providerRetry.nextRetryAt = Date.now() + 20;
    actual[1].providerRetry.recoveryElapsedMs = 30;
    actual[1].providerRetry.recoveryRemainingMs = 29_970;
    expect(normalizeChunks(actual, f)).toEqual(f.expectedChunks);
    actual[1].providerRetry.recoveryRemainingMs = 1;
    expect(normalizeChunks(actual, f)).not.toEqual(f.expectedChunks);
    const eof = loadChatFixture("scenario-eof");
    const jitter = structuredClone(eof.expectedChunks);
    jitter[0].providerRetry.delayMs = 377;
    jitter[0].providerRetry.nextRetryAt = Date.now();
    expect(normalizeChunks(jitter, eof)).toEqual(eof.expectedChunks);
    jitter[0].providerRetry.delayMs = 20;
    expect(normalizeChunks(jitter, eof)).not.toEqual(eof.expectedChunks);
    const err = Object.assign(new Error("Provider request deadline exceeded after 1000ms"), {
      name: "ProviderRequestDeadlineExceededError",
      code: "PROVIDER_REQUEST_DEADLINE_EXCEEDED",
      replayBoundaryCrossed: true,
    });
    expect(errorLine(err)).toEqual(loadChatFixture("scenario-deadline").expectedChunks.at(-1));
  });

  it("derived/error-messages.json agrees with the recorded Chat Completions errors", () => {
    const derived = JSON.parse(readFileSync(new URL("../fixtures/chat/derived/error-messages.json", import.meta.url), "utf8"));
    const byScenario = Object.fromEntries(
      derived.rows.filter((r: Any) => r.api === "openai-completions").map((r: Any) => [r.scenario, r.message]),
    );
    for (const name of ["scenario-http429", "scenario-context", "scenario-http400", "scenario-noretry503", "scenario-eof", "scenario-eof-after-text"]) {
      const f = loadChatFixture(name);
      expect(byScenario[f.scenario], name).toBe(f.expectedChunks.at(-1).error.message);
    }
  });

  const replayable = FIXTURES.filter((n) => {
    const f = loadChatFixture(n);
    return f.expectedRequests.length > 0 && !f.expectedRequests.some((r: Any) => TIMING.has(r.scenario));
  });

  it.each(replayable)("%s: replaying the recorded requests yields the recorded chunks and the same request records", async (name) => {
    const f = loadChatFixture(name);
    const mock = await startMockProvider({ ttlMs: 10_000 });
    try {
      const expectedRequests = withBase(f.expectedRequests, mock.baseUrl);
      const zstd = (zlib as Any).zstdCompressSync as ((b: Buffer) => Buffer) | undefined;
      const projected: Any[] = [];
      let lastError: string | undefined;
      for (const r of expectedRequests) {
        const headers: Record<string, string> = { ...r.headers };
        // stall:1400 is replayed as stall:30 (the stall itself is the client's business).
        if (headers["x-mock-scenario"]?.startsWith("stall:")) headers["x-mock-scenario"] = "stall:30";
        let body: Buffer = Buffer.from(JSON.stringify(r.body));
        if (r.bodyEncoding === "zstd") {
          if (zstd) body = zstd(body);
          else delete headers["content-encoding"];
        }
        const qs = new URLSearchParams(r.query).toString();
        const res = await fetch(`${mock.baseUrl}${r.path}${qs ? `?${qs}` : ""}`, { method: r.method, headers, body });
        const dialectOf = (api: string) =>
          ({ "azure-openai-responses": "openai-responses", "mistral-conversations": "mistral", "google-generative-ai": "google" })[api] ?? api;
        const model = f.models.find((m: Any) => dialectOf(m.api) === r.dialect);
        if (res.status !== 200) {
          const err = await res.json();
          // The Chat Completions error text (spec §5.11); Mistral's quotes the whole body.
          lastError = r.dialect === "mistral" ? `Mistral API error (${res.status}): ${JSON.stringify(err)}` : `${res.status}: ${JSON.stringify(err.error)}`;
          continue;
        }
        const out = project(r.dialect, parseSse(await res.text()), model.cost);
        projected.push(...out.chunks);
        lastError = out.error;
      }
      // The mock recorded what the client sent (modulo the stall substitution and, on Node < 22.15, zstd).
      const recorded = normalizeRequests(mock.requests).map((r: Any, i: number) => ({ ...r, scenario: expectedRequests[i].scenario }));
      const expectedRecorded = expectedRequests.map((r: Any) => {
        if (r.bodyEncoding !== "zstd" || zstd) return r;
        const { "content-encoding": _drop, ...headers } = r.headers;
        return { ...r, headers, bodyEncoding: "identity" };
      });
      for (const r of recorded) if (r.headers["x-mock-scenario"]?.startsWith("stall:")) r.headers["x-mock-scenario"] = r.scenario;
      expect(recorded).toEqual(expectedRecorded);

      const real = f.expectedChunks.filter((c: Any) => !c.providerRetry && !c.providerStall && !c.modelFallback);
      const last = real.at(-1);
      if (last?.error) {
        expect(projected).toEqual(real.slice(0, -1));
        expect(lastError).toBe(last.error.message);
      } else if (last?.response) {
        const r = last.response;
        const joined = (k: string) => projected.filter((c) => k in c).map((c) => c[k]).join("");
        expect(joined("content")).toBe(r.content);
        expect(joined("reasoningContent")).toBe(r.reasoningContent);
        expect(projected.filter((c) => c.toolCalls).flatMap((c) => c.toolCalls)).toEqual(r.toolCalls);
        expect(projected.at(-1)).toEqual({ finishReason: r.finishReason, usage: r.usage });
      } else {
        // Generated ids (Google) are checked by the fixture's rules.
        expect(normalizeChunks(projected, { ...f, expectedChunks: real })).toEqual(real);
      }
    } finally {
      await mock.close();
    }
  });
});

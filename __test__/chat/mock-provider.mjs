// Loopback mock LLM provider for the chat pillar's tests.
//
//   const mock = await startMockProvider({ ttlMs: 10_000 });
//   ... point a chat handle at mock.baseUrl (+ "/v1", "/openai/v1", "/backend-api", as the case says) ...
//   mock.requests  // every request received, in order
//   await mock.close();
//
// Listens on 127.0.0.1 (ephemeral port) and never opens a connection itself. It closes by itself after
// `ttlMs` (default 30 s) so a forgotten mock cannot keep a test process alive.
//
// The dialect is chosen by the request path (see dialectForPath; Mistral's native endpoint is
// served under /mistral/…/v1/chat/completions, Google's `…:streamGenerateContent` paths answer in
// its `alt=sse` shape), the scenario by the `x-mock-scenario`
// request header (default `full`). Scenario tokens (combine with "+", e.g. `text+slow:50`):
//   full | text | length | stream:<n>       body kind (default full)
//   http429 | http500 | http503 | http400 | context | noretry503    error status instead of a stream
//   fail-once-500 | fail-once-429 | fail-once-503    first request of (scenario, path) fails, later ones get `full`
//   eof                                       200 + SSE headers, then the body ends with no event at all
//   eof-after-text                            the `text` stream cut right after its last text delta
//   hang                                      200 + SSE headers, then nothing until the client goes away
//   hang-headers                              nothing at all (no status line) until the client goes away
//   stall:<ms>                                200 + SSE headers, <ms> of silence, then the stream
//   slow:<ms>                                 <ms> of silence before every SSE event
// Error responses carry `retry-after-ms: 20` (429/500/503) or `x-should-retry: false` (noretry503);
// request headers `x-mock-retry-after`, `x-mock-retry-after-ms`, `x-mock-should-retry` override those
// (value `none` removes the header).
import { createServer } from "node:http";
import zlib from "node:zlib";

/** Token usage every successful stream reports (UsageInfo: prompt 1200 = 176 + 1024 cached, 85 out, 30 reasoning). */
export const MOCK_USAGE = Object.freeze({
  promptTokens: 1200,
  cachedTokens: 1024,
  uncachedInputTokens: 176,
  outputTokens: 85,
  reasoningTokens: 30,
  totalTokens: 1285,
});

/** The scripted assistant turn (split exactly as the recorded conformance chunks are). */
export const MOCK_TURN = Object.freeze({
  reasoning: ["The user wants the file. ", "I should call read_file."],
  text: ["I'll read ", "the file now."],
  toolName: "read_file",
  // Argument fragments; joined: {"path":"src/main.rs","limit":20}
  toolArgs: ['{"path":', '"src/main.rs"', ',"limit":', "20}"],
  ids: {
    completionsCall: "call_mock_1",
    responsesCall: "call_mock_1",
    responsesItem: "fc_mock1",
    anthropicToolUse: "toolu_01Mock",
    googleSignature: "bW9jay10aG91Z2h0LXNpZ25hdHVyZQ==",
    mistralCall: "D681PevKs",
  },
});

const CREATED_S = 1764458886; // fixed "created" stamp: bodies are deterministic per request number

const ERRORS = {
  http429: { status: 429, message: "Rate limit reached for requests", type: "rate_limit_error", retryAfterMs: "20" },
  http500: { status: 500, message: "Internal server error", type: "server_error", retryAfterMs: "20" },
  http503: { status: 503, message: "Service unavailable", type: "overloaded_error", retryAfterMs: "20" },
  noretry503: { status: 503, message: "Service unavailable", type: "overloaded_error", shouldRetry: "false" },
  http400: { status: 400, message: "Invalid request: messages.0.content is malformed", type: "invalid_request_error" },
  context: {
    status: 400,
    message:
      "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
    type: "invalid_request_error",
  },
};
export const MOCK_ERRORS = ERRORS;

/** Path → dialect. `dialect` is what the request record carries (same names as the reference recordings). */
export function dialectForPath(pathname) {
  // Mistral's native endpoint is Chat Completions-shaped; the reference harness served it under /mistral.
  if (pathname.startsWith("/mistral/") && pathname.endsWith("/v1/chat/completions")) return "mistral";
  if (pathname.endsWith("/chat/completions")) return "openai-completions";
  if (pathname.endsWith("/codex/responses")) return "openai-codex-responses";
  if (pathname.endsWith("/responses")) return "openai-responses"; // incl. Azure's /openai/v1/responses
  if (pathname.endsWith("/v1/messages")) return "anthropic-messages";
  if (pathname.endsWith(":streamGenerateContent")) return "google"; // Gemini API and Vertex (…/models/<id>:streamGenerateContent?alt=sse)
  return null;
}

/** Parses an `x-mock-scenario` value into its parts. Unknown tokens throw. */
export function parseScenario(value) {
  const out = { raw: value, body: "full", error: null, failOnce: null, stallMs: 0, slowMs: 0, hang: null, eof: null, n: 0 };
  for (const token of String(value).split(/[+,]/).map((t) => t.trim()).filter(Boolean)) {
    let m;
    if (token === "full" || token === "text" || token === "length") out.body = token;
    else if ((m = /^stream:(\d+)$/.exec(token))) {
      out.body = "stream";
      out.n = Number(m[1]);
    } else if (token in ERRORS) out.error = token;
    else if ((m = /^fail-once-(429|500|503)$/.exec(token))) out.failOnce = `http${m[1]}`;
    else if (token === "eof") out.eof = "empty";
    else if (token === "eof-after-text") {
      out.eof = "after-text";
      out.body = "text";
    } else if (token === "hang" || token === "hang-headers") out.hang = token;
    else if ((m = /^stall:(\d+)$/.exec(token))) out.stallMs = Number(m[1]);
    else if ((m = /^slow:(\d+)$/.exec(token))) out.slowMs = Number(m[1]);
    else throw new Error(`unknown mock scenario token: ${token}`);
  }
  return out;
}

// ------------------------------------------------------------------------------------------------
// SSE scripts. A script is a list of frames { event?, data, tag? }; `data` is an object (JSON-encoded)
// or a raw string. Tags mark the text deltas (for eof-after-text).

function sseText(frame) {
  const data = typeof frame.data === "string" ? frame.data : JSON.stringify(frame.data);
  return `${frame.event ? `event: ${frame.event}\n` : ""}data: ${data}${frame.crlf ? "\r\n\r\n" : "\n\n"}`;
}

function textPieces(body, n) {
  if (body === "stream") return Array.from({ length: n }, (_, i) => `t${i} `);
  return [...MOCK_TURN.text];
}

function completionsScript(body, ctx) {
  const model = ctx.model ?? "mock-model";
  const base = { id: `chatcmpl-mock${ctx.seq}`, object: "chat.completion.chunk", created: CREATED_S, model, system_fingerprint: "fp_mock" };
  const chunk = (delta, finish = null) => ({
    data: { ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null },
  });
  const frames = [chunk({ role: "assistant", content: null, reasoning_content: "" })];
  if (body === "full") {
    for (const r of MOCK_TURN.reasoning) frames.push(chunk({ content: null, reasoning_content: r }));
  }
  for (const t of textPieces(body, ctx.n)) frames.push({ ...chunk({ content: t, reasoning_content: null }), tag: "text" });
  let finish = body === "length" ? "length" : "stop";
  if (body === "full") {
    const [first, ...rest] = MOCK_TURN.toolArgs;
    frames.push(
      chunk({
        tool_calls: [{ index: 0, id: MOCK_TURN.ids.completionsCall, type: "function", function: { name: MOCK_TURN.toolName, arguments: "" } }],
      }),
    );
    for (const piece of [first, ...rest]) frames.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
    finish = "tool_calls";
  }
  frames.push(chunk({}, finish));
  frames.push({
    data: {
      ...base,
      choices: [],
      usage: {
        prompt_tokens: MOCK_USAGE.promptTokens,
        completion_tokens: MOCK_USAGE.outputTokens,
        total_tokens: MOCK_USAGE.totalTokens,
        prompt_tokens_details: { cached_tokens: MOCK_USAGE.cachedTokens, audio_tokens: 0 },
        completion_tokens_details: {
          reasoning_tokens: MOCK_USAGE.reasoningTokens,
          audio_tokens: 0,
          accepted_prediction_tokens: 0,
          rejected_prediction_tokens: 0,
        },
      },
    },
  });
  frames.push({ data: "[DONE]" });
  return frames;
}

function responsesScript(body, ctx) {
  const model = ctx.model ?? "mock-model";
  const respId = `resp_mock${ctx.seq}`;
  let seq = 0;
  const frames = [];
  const ev = (type, fields, tag) => {
    frames.push({ event: type, data: { type, sequence_number: seq++, ...fields }, tag });
  };
  const response = (status, extra) => ({
    id: respId,
    object: "response",
    created_at: CREATED_S,
    status,
    background: false,
    error: null,
    incomplete_details: null,
    model,
    output: [],
    parallel_tool_calls: true,
    service_tier: "auto",
    store: false,
    usage: null,
    ...extra,
  });
  ev("response.created", { response: response("in_progress") });
  ev("response.in_progress", { response: response("in_progress") });
  const output = [];
  let index = 0;
  if (body === "full") {
    const rsId = "rs_mock1";
    const summary = MOCK_TURN.reasoning.join("");
    ev("response.output_item.added", { output_index: index, item: { id: rsId, type: "reasoning", summary: [] } });
    ev("response.reasoning_summary_part.added", {
      item_id: rsId,
      output_index: index,
      summary_index: 0,
      part: { type: "summary_text", text: "" },
    });
    for (const delta of MOCK_TURN.reasoning) {
      ev("response.reasoning_summary_text.delta", { item_id: rsId, output_index: index, summary_index: 0, delta, obfuscation: "mock" });
    }
    ev("response.reasoning_summary_text.done", { item_id: rsId, output_index: index, summary_index: 0, text: summary });
    ev("response.reasoning_summary_part.done", {
      item_id: rsId,
      output_index: index,
      summary_index: 0,
      part: { type: "summary_text", text: summary },
    });
    const item = { id: rsId, type: "reasoning", encrypted_content: "gAAAAB-mock-encrypted-reasoning", summary: [{ type: "summary_text", text: summary }] };
    ev("response.output_item.done", { output_index: index, item });
    output.push(item);
    index++;
  }
  const msgId = "msg_mock1";
  const pieces = textPieces(body, ctx.n);
  const text = pieces.join("");
  ev("response.output_item.added", {
    output_index: index,
    item: { id: msgId, type: "message", status: "in_progress", content: [], role: "assistant" },
  });
  ev("response.content_part.added", {
    item_id: msgId,
    output_index: index,
    content_index: 0,
    part: { type: "output_text", annotations: [], logprobs: [], text: "" },
  });
  for (const delta of pieces) {
    ev("response.output_text.delta", { item_id: msgId, output_index: index, content_index: 0, delta, logprobs: [], obfuscation: "mock" }, "text");
  }
  ev("response.output_text.done", { item_id: msgId, output_index: index, content_index: 0, text, logprobs: [] });
  const part = { type: "output_text", annotations: [], logprobs: [], text };
  ev("response.content_part.done", { item_id: msgId, output_index: index, content_index: 0, part });
  const message = { id: msgId, type: "message", status: body === "length" ? "incomplete" : "completed", content: [part], role: "assistant" };
  ev("response.output_item.done", { output_index: index, item: message });
  output.push(message);
  index++;
  if (body === "full") {
    const fcId = MOCK_TURN.ids.responsesItem;
    const args = MOCK_TURN.toolArgs.join("");
    const fc = { id: fcId, type: "function_call", status: "in_progress", arguments: "", call_id: MOCK_TURN.ids.responsesCall, name: MOCK_TURN.toolName };
    ev("response.output_item.added", { output_index: index, item: fc });
    for (const delta of MOCK_TURN.toolArgs) {
      ev("response.function_call_arguments.delta", { item_id: fcId, output_index: index, delta, obfuscation: "mock" });
    }
    ev("response.function_call_arguments.done", { item_id: fcId, output_index: index, arguments: args });
    const done = { ...fc, status: "completed", arguments: args };
    ev("response.output_item.done", { output_index: index, item: done });
    output.push(done);
  }
  const usage = {
    input_tokens: MOCK_USAGE.promptTokens,
    input_tokens_details: { cached_tokens: MOCK_USAGE.cachedTokens },
    output_tokens: MOCK_USAGE.outputTokens,
    output_tokens_details: { reasoning_tokens: MOCK_USAGE.reasoningTokens },
    total_tokens: MOCK_USAGE.totalTokens,
  };
  // service_tier "default": the tier actually served; pi-ai prices by it (not by the requested tier).
  if (body === "length") {
    ev("response.incomplete", {
      response: response("incomplete", { incomplete_details: { reason: "max_output_tokens" }, output, usage, service_tier: "default" }),
    });
  } else {
    ev("response.completed", { response: response("completed", { output, usage, service_tier: "default" }) });
  }
  return frames;
}

function anthropicScript(body, ctx) {
  const model = ctx.model ?? "claude-mock";
  const frames = [];
  const ev = (type, fields, tag) => frames.push({ event: type, data: { type, ...fields }, tag });
  ev("message_start", {
    message: {
      id: `msg_01Mock${String(ctx.seq).padStart(4, "0")}`,
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: MOCK_USAGE.uncachedInputTokens,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: MOCK_USAGE.cachedTokens,
        cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
        output_tokens: 1,
        service_tier: "standard",
      },
    },
  });
  ev("ping", {});
  let index = 0;
  if (body === "full") {
    ev("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } });
    for (const thinking of MOCK_TURN.reasoning) ev("content_block_delta", { index, delta: { type: "thinking_delta", thinking } });
    ev("content_block_delta", { index, delta: { type: "signature_delta", signature: "EqQBCkYIBhgCKkBmb2NrLXNpZ25hdHVyZQ==" } });
    ev("content_block_stop", { index });
    index++;
  }
  ev("content_block_start", { index, content_block: { type: "text", text: "" } });
  for (const text of textPieces(body, ctx.n)) ev("content_block_delta", { index, delta: { type: "text_delta", text } }, "text");
  ev("content_block_stop", { index });
  index++;
  let stopReason = body === "length" ? "max_tokens" : "end_turn";
  if (body === "full") {
    ev("content_block_start", {
      index,
      content_block: { type: "tool_use", id: MOCK_TURN.ids.anthropicToolUse, name: MOCK_TURN.toolName, input: {} },
    });
    ev("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: "" } });
    for (const partial_json of MOCK_TURN.toolArgs) ev("content_block_delta", { index, delta: { type: "input_json_delta", partial_json } });
    ev("content_block_stop", { index });
    stopReason = "tool_use";
  }
  ev("message_delta", {
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: {
      input_tokens: MOCK_USAGE.uncachedInputTokens,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: MOCK_USAGE.cachedTokens,
      output_tokens: MOCK_USAGE.outputTokens,
      output_tokens_details: { thinking_tokens: MOCK_USAGE.reasoningTokens },
    },
  });
  ev("message_stop", {});
  return frames;
}

// Google (`alt=sse`): every frame is a whole GenerateContentResponse. Thought parts, text parts, one
// complete functionCall (no id: clients generate one), then an empty text part with the finish
// reason and the final usage (which replaces the running counts of the earlier frames).
function googleScript(body, ctx) {
  const frames = [];
  const response = (parts, extra = {}, usage = { promptTokenCount: MOCK_USAGE.promptTokens, totalTokenCount: MOCK_USAGE.promptTokens }) => ({
    candidates: [{ content: { parts, role: "model" }, index: 0, ...extra }],
    usageMetadata: usage,
    modelVersion: ctx.model ?? "gemini-mock",
    responseId: `mock-response-${ctx.seq}`,
  });
  if (body === "full") {
    for (const text of MOCK_TURN.reasoning) frames.push({ data: response([{ text, thought: true }]) });
  }
  for (const text of textPieces(body, ctx.n)) frames.push({ data: response([{ text }]), tag: "text" });
  if (body === "full") {
    const args = JSON.parse(MOCK_TURN.toolArgs.join(""));
    frames.push({ data: response([{ functionCall: { name: MOCK_TURN.toolName, args }, thoughtSignature: MOCK_TURN.ids.googleSignature }]) });
  }
  frames.push({
    data: response([{ text: "" }], { finishReason: body === "length" ? "MAX_TOKENS" : "STOP" }, {
      promptTokenCount: MOCK_USAGE.promptTokens,
      candidatesTokenCount: MOCK_USAGE.outputTokens - MOCK_USAGE.reasoningTokens,
      totalTokenCount: MOCK_USAGE.totalTokens,
      cachedContentTokenCount: MOCK_USAGE.cachedTokens,
      thoughtsTokenCount: MOCK_USAGE.reasoningTokens,
    }),
  });
  // Google separates its events with CRLF pairs.
  return frames.map((f) => ({ ...f, crlf: true }));
}

// Mistral's native stream (spec §5.7): data-only frames; thinking arrives as content arrays
// ({type:"thinking", thinking:[{type:"text",text}]}), text as plain strings; the first (role) and the
// last (finish + usage) chunks carry an empty string content, which clients forward as deltas
// (spec §5.9). Tool-call fragments repeat the call's id and index (the key a client groups them by).
function mistralScript(body, ctx) {
  const model = ctx.model ?? "mistral-mock";
  const base = { id: `cmpl-mock${ctx.seq}`, object: "chat.completion.chunk", created: CREATED_S, model };
  const chunk = (delta, finish = null, extra = {}) => ({ data: { ...base, choices: [{ index: 0, delta, finish_reason: finish }], ...extra } });
  const frames = [chunk({ role: "assistant", content: "" })];
  if (body === "full") {
    for (const text of MOCK_TURN.reasoning) frames.push(chunk({ content: [{ type: "thinking", thinking: [{ type: "text", text }] }] }));
  }
  for (const t of textPieces(body, ctx.n)) frames.push({ ...chunk({ content: t }), tag: "text" });
  let finish = body === "length" ? "length" : "stop";
  if (body === "full") {
    for (const piece of MOCK_TURN.toolArgs) {
      frames.push(chunk({ tool_calls: [{ id: MOCK_TURN.ids.mistralCall, type: "function", index: 0, function: { name: MOCK_TURN.toolName, arguments: piece } }] }));
    }
    finish = "tool_calls";
  }
  frames.push(
    chunk({ content: "" }, finish, {
      usage: {
        prompt_tokens: MOCK_USAGE.promptTokens,
        completion_tokens: MOCK_USAGE.outputTokens,
        total_tokens: MOCK_USAGE.totalTokens,
        prompt_tokens_details: { cached_tokens: MOCK_USAGE.cachedTokens },
      },
    }),
  );
  frames.push({ data: "[DONE]" });
  return frames;
}

const SCRIPTS = {
  google: googleScript,
  "openai-completions": completionsScript,
  "openai-responses": responsesScript,
  "openai-codex-responses": responsesScript,
  "anthropic-messages": anthropicScript,
  mistral: mistralScript,
};

/** The SSE frames the mock sends for a dialect and body kind (exported for tests and fixtures). */
export function mockScript(dialect, body = "full", ctx = {}) {
  return SCRIPTS[dialect](body, { seq: 1, n: 0, ...ctx });
}

function errorBody(dialect, name) {
  const e = ERRORS[name];
  if (dialect === "anthropic-messages") {
    return { type: "error", error: { type: e.type, message: e.message }, request_id: "req_mock" };
  }
  if (dialect === "google") {
    const status = { 400: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE" }[e.status];
    return { error: { code: e.status, message: e.message, status } };
  }
  // OpenAI family; key order matters: clients echo the object (`429: {"message":…}`).
  return { error: { message: e.message, type: e.type, param: null, code: e.type } };
}

// ------------------------------------------------------------------------------------------------

function decodeBody(buffer, encoding) {
  const enc = (encoding ?? "identity").toLowerCase();
  if (buffer.length === 0) return { bodyEncoding: enc, text: "" };
  try {
    if (enc === "identity") return { bodyEncoding: enc, text: buffer.toString("utf8") };
    if (enc === "gzip" || enc === "x-gzip") return { bodyEncoding: enc, text: zlib.gunzipSync(buffer).toString("utf8") };
    if (enc === "deflate") return { bodyEncoding: enc, text: zlib.inflateSync(buffer).toString("utf8") };
    if (enc === "br") return { bodyEncoding: enc, text: zlib.brotliDecompressSync(buffer).toString("utf8") };
    if (enc === "zstd") {
      if (typeof zlib.zstdDecompressSync !== "function") return { bodyEncoding: enc, undecoded: "zstd unsupported by this Node" };
      return { bodyEncoding: enc, text: zlib.zstdDecompressSync(buffer).toString("utf8") };
    }
    return { bodyEncoding: enc, undecoded: `unknown content-encoding ${enc}` };
  } catch (error) {
    return { bodyEncoding: enc, undecoded: `decode failed: ${error.message}` };
  }
}

function recordRequest(req, url, buffer, seq) {
  const query = {};
  for (const [k, v] of url.searchParams) query[k] = v;
  const headers = {};
  for (const [k, v] of Object.entries(req.headers)) headers[k.toLowerCase()] = v;
  const record = { seq, at: new Date().toISOString(), method: req.method, path: url.pathname, query, headers };
  if (buffer === null) return record;
  const decoded = decodeBody(buffer, headers["content-encoding"]);
  record.bodyEncoding = decoded.bodyEncoding;
  record.bodyBytes = buffer.length;
  if (decoded.undecoded !== undefined) {
    record.body = null;
    record.bodyDecoded = false;
    record.bodyNote = decoded.undecoded;
    record.rawBodyBase64 = buffer.toString("base64");
  } else if (decoded.text === "") {
    record.body = null;
  } else {
    try {
      record.body = JSON.parse(decoded.text);
    } catch {
      record.body = null;
      record.bodyText = decoded.text;
    }
  }
  return record;
}

/**
 * Starts the mock. Options: `ttlMs` (auto-close, default 30 000), `host` (default 127.0.0.1).
 * Returns `{ baseUrl, port, requests, close(), closed, openConnections() }`; `closed` resolves once the
 * server is closed (by `close()` or by the TTL). A request record gets `clientClosedEarly: true` when the
 * client went away before its response was complete.
 */
export async function startMockProvider(options = {}) {
  const ttlMs = options.ttlMs ?? 30_000;
  const requests = [];
  const failOnceSeen = new Set();
  const sockets = new Set();
  const timers = new Map(); // pending delays → their resolvers
  let seq = 0;
  let closing = null;

  // Resolves true after `ms`, or false at once when the mock closes meanwhile.
  const later = (ms) =>
    new Promise((resolve) => {
      if (closing) return resolve(false);
      const t = setTimeout(() => {
        timers.delete(t);
        resolve(true);
      }, ms);
      timers.set(t, resolve);
    });

  async function respond(req, res, record) {
    const dialect = dialectForPath(record.path);
    record.dialect = dialect;
    const scenarioHeader = req.headers["x-mock-scenario"];
    const raw = Array.isArray(scenarioHeader) ? scenarioHeader[0] : (scenarioHeader ?? "full");
    record.scenario = raw;
    if (req.method !== "POST" || !dialect) {
      record.status = dialect ? 405 : 404;
      return sendJson(res, record.status, { error: { message: `mock: no ${req.method} ${record.path}`, type: "not_found", param: null, code: null } }, {});
    }
    let scenario;
    try {
      scenario = parseScenario(raw);
    } catch (error) {
      record.status = 400;
      return sendJson(res, 400, { error: { message: error.message, type: "mock_error", param: null, code: null } }, {});
    }
    let errorName = scenario.error;
    if (scenario.failOnce) {
      const key = `${raw}\u0000${record.path}`;
      if (!failOnceSeen.has(key)) {
        failOnceSeen.add(key);
        errorName = scenario.failOnce;
      }
    }
    if (scenario.hang === "hang-headers") {
      record.status = null;
      return; // never answer; the socket is destroyed by the client or by close()
    }
    if (errorName) {
      const e = ERRORS[errorName];
      const headers = {};
      if (e.retryAfterMs) headers["retry-after-ms"] = e.retryAfterMs;
      if (e.shouldRetry) headers["x-should-retry"] = e.shouldRetry;
      for (const [from, to] of [
        ["x-mock-retry-after", "retry-after"],
        ["x-mock-retry-after-ms", "retry-after-ms"],
        ["x-mock-should-retry", "x-should-retry"],
      ]) {
        const v = req.headers[from];
        if (v === undefined) continue;
        if (v === "none") delete headers[to];
        else headers[to] = v;
      }
      record.status = e.status;
      return sendJson(res, e.status, errorBody(dialect, errorName), headers);
    }

    record.status = 200;
    res.writeHead(200, {
      "content-type": dialect === "openai-completions" || dialect === "mistral" ? "text/event-stream" : "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      "x-request-id": `req_mock_${record.seq}`,
    });
    res.flushHeaders();
    if (scenario.hang === "hang") return; // headers only, then silence
    if (scenario.eof === "empty") return void res.end();
    const model =
      record.body && typeof record.body.model === "string" ? record.body.model : /\/models\/([^/]+):streamGenerateContent$/.exec(record.path)?.[1];
    let frames = SCRIPTS[dialect](scenario.body, { seq: record.seq, n: scenario.n, model });
    if (scenario.eof === "after-text") {
      const last = frames.findLastIndex((f) => f.tag === "text");
      frames = frames.slice(0, last + 1);
    }
    if (scenario.stallMs > 0 && !(await later(scenario.stallMs))) return;
    if (scenario.slowMs > 0) {
      for (const frame of frames) {
        if (!(await later(scenario.slowMs)) || res.destroyed) return;
        res.write(sseText(frame));
      }
      return void res.end();
    }
    if (res.destroyed) return;
    res.end(frames.map(sseText).join(""));
  }

  function sendJson(res, status, body, headers) {
    const text = JSON.stringify(body);
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
    res.end(text);
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const record = recordRequest(req, url, Buffer.concat(chunks), ++seq);
      requests.push(record);
      // A client that goes away before the response is complete (cancel, idle timeout, deadline).
      res.on("close", () => {
        if (!res.writableFinished) record.clientClosedEarly = true;
      });
      respond(req, res, record).catch((error) => {
        if (!res.headersSent) sendJson(res, 500, { error: { message: `mock failure: ${error.message}` } }, {});
        else res.destroy();
      });
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  // WebSocket upgrades (pi-ai's Codex transport tries one first) are recorded and refused.
  server.on("upgrade", (req, socket) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const record = recordRequest(req, url, null, ++seq);
    record.upgrade = String(req.headers.upgrade ?? "");
    record.note = "websocket upgrade refused by mock";
    record.dialect = dialectForPath(url.pathname);
    record.status = 426;
    requests.push(record);
    socket.end("HTTP/1.1 426 Upgrade Required\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
  });

  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address();

  let resolveClosed;
  const closed = new Promise((r) => {
    resolveClosed = r;
  });
  const ttlTimer = setTimeout(() => void close(), ttlMs);
  ttlTimer.unref();

  function close() {
    if (closing) return closing;
    clearTimeout(ttlTimer);
    for (const [t, resolve] of timers) {
      clearTimeout(t);
      resolve(false);
    }
    timers.clear();
    closing = new Promise((resolve) => {
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections?.();
    }).then(() => resolveClosed());
    return closing;
  }

  return { baseUrl: `http://127.0.0.1:${port}`, port, requests, close, closed, openConnections: () => sockets.size };
}

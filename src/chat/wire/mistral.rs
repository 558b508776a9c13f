//! The `mistral-conversations` wire (Mistral's native chat endpoint) as pi-ai 0.84.2 speaks it
//! with plain `fetch` (no SDK): request building (spec §4.8), the SSE stream parser (§5.7, §5.10)
//! and the error text of non-2xx responses (§5.11).
//!
//! Request: `POST <baseUrl>/v1/chat/completions` (the base URL's path kept, its query dropped).
//! Headers are a fetch `Headers` list: `accept`, `authorization`, `content-type`, then the model's
//! and the caller's headers (replacing same-named ones case-insensitively in place; a JSON null
//! removes), then `x-affinity` for prompt caching. The body is pi-ai's camelCase payload turned
//! into Mistral's snake_case wire names, which moves each renamed key to the end (so the key order
//! is pi-ai's).
//!
//! Response: [`MistralStreamParser`]. Events are split at any blank line (any CR/LF combination)
//! and their `data:` lines joined; `data: [DONE]` ends the stream at once (later bytes are not
//! read). Text and thinking deltas are reported as they come (an empty text delta too: it opens a
//! text block and is forwarded); tool calls, keyed by `<id>:<index>`, end only when the stream
//! does. The outcome is settled at `[DONE]` or at the end of the body.
//!
//! The whole request is bounded by `timeout`, 60 s when it is unset: the transport applies
//! [`DEFAULT_REQUEST_BOUND_MS`] (see `wire::default_request_bound`); the bound fails the pending read
//! (so a stall warning recovers first, as in the reference) with [`REQUEST_BOUND_MESSAGE`].
//!
//! Reference quirks kept on purpose (spec §8), since the recorded runs and Blade's retry rules
//! depend on them: the 60 s bound without `timeout` (5); earlier reasoning replayed as thinking
//! content (6); tool calls reported only when the stream ends (as 7 for Chat Completions); empty
//! text deltas forwarded and counting as output (8); `reasoning_effort: "high"` for any level.

use std::cell::RefCell;
use std::collections::HashMap;

use serde_json::{json, Map, Value};

use super::strict::{make_strict_json_schema, resolve_json_schema_strict};
use super::transform::{
  js_json_parse_kept, js_number, js_ordered, js_stringify, parse_streaming_json, sanitize_surrogates, short_hash,
  transform_messages, Keep,
};
use crate::chat::catalog::Model;
use crate::chat::sse::SseEvent;
use crate::chat::types::{
  AssistantBlock, Context, CtxMessage, HttpRequest, Retention, StopReason, StreamEvent, StreamParser, ToolDef, Usage,
  UserBlock, UserContent, WireAdapter, WireOptions,
};
use crate::js::jsnum::number_to_string;
use crate::js::text::{js_trim, js_trim_start, utf16_len, utf16_prefix};

pub const API: &str = "mistral-conversations";
/// Length of the tool-call ids Mistral accepts (alphanumeric).
pub const TOOL_CALL_ID_LENGTH: usize = 9;
/// pi-ai cuts an error body to this many UTF-16 units.
const MAX_ERROR_BODY_CHARS: usize = 4000;
/// pi-ai's bound on the whole request (headers and body) when no `timeout` is configured.
pub const DEFAULT_REQUEST_BOUND_MS: u64 = 60_000;
/// The text the reference reports when that bound fires (`AbortSignal.timeout`'s reason).
pub const REQUEST_BOUND_MESSAGE: &str = "The operation was aborted due to timeout";
const USER_IMAGE_OMITTED: &str = "(image omitted: model does not support images)";
const TOOL_IMAGE_OMITTED_SUFFIX: &str = "\n[tool image omitted: model does not support images]";

/// The adapter object handed to the transport.
#[derive(Clone, Copy, Debug, Default)]
pub struct MistralAdapter;

impl WireAdapter for MistralAdapter {
  fn build_request(&self, model: &Model, context: &Context, options: &WireOptions) -> Result<HttpRequest, String> {
    build_request(model, context, options, &MistralParams::from_blade(options))
  }

  fn parser(&self, _model: &Model, _options: &WireOptions) -> Box<dyn StreamParser + Send> {
    Box::new(MistralStreamParser::default())
  }
}

// ---------------------------------------------------------------------------------------------
// Options

/// The Mistral-specific request options pi-ai's `stream` reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MistralParams {
  /// `reasoning_effort`.
  pub reasoning_effort: Option<String>,
  /// `prompt_mode` (`"reasoning"`).
  pub prompt_mode: Option<String>,
}

impl MistralParams {
  /// What Blade passes (spec §3.1): `reasoningEffort: "high"` whenever thinking is on, for any
  /// Mistral model and whatever the configured level; never a prompt mode (pi-ai sets
  /// `promptMode` only in `streamSimple`, which Blade does not call).
  pub fn from_blade(options: &WireOptions) -> MistralParams {
    MistralParams {
      reasoning_effort: options
        .thinking
        .as_deref()
        .filter(|l| !l.is_empty())
        .map(|_| "high".to_string()),
      prompt_mode: None,
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Tool-call ids

/// pi-ai's id for attempt `attempt`: the id's ASCII letters and digits when they are exactly nine
/// (first attempt only), else the first nine characters of `shortHash` of them (of the id itself
/// when it has none), salted with `:<attempt>` after the first attempt.
pub fn derive_tool_call_id(id: &str, attempt: u32) -> String {
  let normalized: String = id.chars().filter(char::is_ascii_alphanumeric).collect();
  if attempt == 0 && normalized.len() == TOOL_CALL_ID_LENGTH {
    return normalized;
  }
  let seed_base = if normalized.is_empty() { id } else { normalized.as_str() };
  let seed = if attempt == 0 {
    seed_base.to_string()
  } else {
    format!("{seed_base}:{attempt}")
  };
  short_hash(&seed)
    .chars()
    .filter(char::is_ascii_alphanumeric)
    .take(TOOL_CALL_ID_LENGTH)
    .collect()
}

/// One request's id mapping: an id keeps the id it got first; a derived id another id already
/// owns is derived again with the next attempt number.
#[derive(Debug, Default)]
pub struct ToolCallIdNormalizer {
  ids: HashMap<String, String>,
  owners: HashMap<String, String>,
}

impl ToolCallIdNormalizer {
  pub fn normalize(&mut self, id: &str) -> String {
    if let Some(existing) = self.ids.get(id).filter(|e| !e.is_empty()) {
      return existing.clone();
    }
    let mut attempt = 0;
    loop {
      let candidate = derive_tool_call_id(id, attempt);
      // pi-ai tests the owner's truthiness: an empty original id never owns a candidate.
      let free = match self.owners.get(&candidate) {
        None => true,
        Some(owner) => owner.is_empty() || owner == id,
      };
      if free {
        self.ids.insert(id.to_string(), candidate.clone());
        self.owners.insert(candidate.clone(), id.to_string());
        return candidate;
      }
      attempt += 1;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Request

/// Builds the whole request. Failures are pi-ai's error texts (delivered as an error event).
pub fn build_request(
  model: &Model,
  context: &Context,
  options: &WireOptions,
  params: &MistralParams,
) -> Result<HttpRequest, String> {
  // pi-ai wants the key itself; a caller `authorization` header does not stand in for it.
  let api_key = options
    .api_key
    .as_deref()
    .filter(|k| !k.is_empty())
    .ok_or_else(|| format!("No API key for provider: {}", model.provider))?;
  let body = build_body(model, context, options, params)?;
  let url = endpoint_url(&model.base_url)?;
  Ok(HttpRequest {
    url,
    headers: build_headers(model, options, api_key),
    body,
    zstd: false,
  })
}

/// `new URL("v1/chat/completions", base)` after the base path got exactly one trailing slash:
/// the path is kept, query and fragment are dropped, the URL is normalised the WHATWG way.
pub fn endpoint_url(base_url: &str) -> Result<String, String> {
  let invalid = || "Invalid URL".to_string();
  let mut base = reqwest::Url::parse(base_url).map_err(|_| invalid())?;
  let path = format!("{}/", base.path().trim_end_matches('/'));
  base.set_path(&path);
  base
    .join("v1/chat/completions")
    .map(String::from)
    .map_err(|_| invalid())
}

/// Whether the request carries a prompt-cache key and affinity header: caching on and a session.
fn uses_prompt_caching(options: &WireOptions) -> bool {
  options.retention.unwrap_or(Retention::Short) != Retention::None
    && options.session_id.as_deref().is_some_and(|s| !s.is_empty())
}

/// A header value as a fetch `Headers` list stores it: the JS string of the value with leading
/// and trailing HTTP whitespace removed.
fn header_text(v: &Value) -> String {
  let text = js_to_string(v);
  text.trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n')).to_string()
}

/// The headers in the order fetch sends them (insertion order of a `Headers` list, names lower
/// case, a replaced header keeping its slot; `accept: */*` last when the caller removed
/// `accept`), minus the transport's own (`accept-language`, `sec-fetch-mode`, `user-agent`,
/// `accept-encoding`).
fn build_headers(model: &Model, options: &WireOptions, api_key: &str) -> Vec<(String, String)> {
  let mut list: Vec<(String, String)> = vec![
    ("accept".into(), "text/event-stream".into()),
    ("authorization".into(), format!("Bearer {api_key}")),
    ("content-type".into(), "application/json".into()),
  ];
  let apply = |list: &mut Vec<(String, String)>, source: &Map<String, Value>| {
    for (name, value) in source {
      let lower = name.to_ascii_lowercase();
      if value.is_null() {
        list.retain(|(k, _)| *k != lower);
        continue;
      }
      let text = header_text(value);
      match list.iter_mut().find(|(k, _)| *k == lower) {
        Some(slot) => slot.1 = text,
        None => list.push((lower, text)),
      }
    }
  };
  if let Some(h) = &model.headers {
    apply(&mut list, h);
  }
  apply(&mut list, &options.headers);
  // A caller (or model) `x-affinity`, even a null one, wins over the session id.
  let explicit =
    |h: Option<&Map<String, Value>>| h.is_some_and(|h| h.keys().any(|k| k.eq_ignore_ascii_case("x-affinity")));
  if uses_prompt_caching(options) && !explicit(model.headers.as_ref()) && !explicit(Some(&options.headers)) {
    let sid = options.session_id.clone().unwrap_or_default();
    let sid = header_text(&Value::String(sid));
    match list.iter_mut().find(|(k, _)| k == "x-affinity") {
      Some(slot) => slot.1 = sid,
      None => list.push(("x-affinity".into(), sid)),
    }
  }
  // fetch adds `accept: */*` when no accept header is left.
  if !list.iter().any(|(k, _)| k == "accept") {
    list.push(("accept".into(), "*/*".into()));
  }
  list
}

/// The body in pi-ai's key order: `model, stream, messages, tools?, temperature?`, then the
/// renamed options in the order pi-ai renames them: `max_tokens, tool_choice, reasoning_effort,
/// prompt_mode, prompt_cache_key`.
pub fn build_body(
  model: &Model,
  context: &Context,
  options: &WireOptions,
  params: &MistralParams,
) -> Result<Value, String> {
  let normalizer = RefCell::new(ToolCallIdNormalizer::default());
  let messages = transform_messages(&context.messages, model, &|id| normalizer.borrow_mut().normalize(id));
  let mut wire_messages = Vec::with_capacity(messages.len() + 1);
  if let Some(system) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
    wire_messages.push(json!({"role": "system", "content": sanitize_surrogates(system)}));
  }
  convert_messages(&messages, model.supports_images(), &mut wire_messages);

  let mut body = Map::new();
  body.insert("model".into(), json!(model.id));
  body.insert("stream".into(), json!(true));
  body.insert("messages".into(), Value::Array(wire_messages));
  if let Some(tools) = context.tools.as_deref().filter(|t| !t.is_empty()) {
    body.insert("tools".into(), Value::Array(convert_tools(tools)?));
  }
  if let Some(t) = options.temperature {
    body.insert("temperature".into(), js_number(t));
  }
  if let Some(max) = options.max_tokens {
    body.insert("max_tokens".into(), json!(max));
  }
  if let Some(name) = &options.required_tool {
    body.insert(
      "tool_choice".into(),
      json!({"type": "function", "function": {"name": name}}),
    );
  }
  if let Some(effort) = params.reasoning_effort.as_deref().filter(|e| !e.is_empty()) {
    body.insert("reasoning_effort".into(), json!(effort));
  }
  if let Some(mode) = params.prompt_mode.as_deref().filter(|m| !m.is_empty()) {
    body.insert("prompt_mode".into(), json!(mode));
  }
  if uses_prompt_caching(options) {
    body.insert("prompt_cache_key".into(), json!(options.session_id));
  }
  Ok(Value::Object(body))
}

fn convert_tools(tools: &[ToolDef]) -> Result<Vec<Value>, String> {
  tools
    .iter()
    .map(|tool| {
      // Mistral supports strict tools: `constrainedSampling: {type: "json_schema"}` sends the
      // strict subset when the schema allows it.
      let strict = resolve_json_schema_strict(tool, true)?;
      let parameters = if strict == Some(true) {
        make_strict_json_schema(&tool.parameters).map_err(|e| e.0)?
      } else {
        tool.parameters.clone()
      };
      Ok(json!({"type": "function", "function": {
        "name": tool.name,
        "description": tool.description,
        "parameters": parameters,
        "strict": strict.unwrap_or(false),
      }}))
    })
    .collect()
}

fn image_url(mime_type: &str, data: &str) -> Value {
  json!({"type": "image_url", "image_url": format!("data:{mime_type};base64,{data}")})
}

fn convert_messages(messages: &[CtxMessage], supports_images: bool, out: &mut Vec<Value>) {
  for message in messages {
    match message {
      // A string stays a string, even an empty one.
      CtxMessage::User(UserContent::Text(text)) => {
        out.push(json!({"role": "user", "content": sanitize_surrogates(text)}));
      }
      CtxMessage::User(UserContent::Blocks(blocks)) => {
        let had_images = blocks.iter().any(|b| matches!(b, UserBlock::Image { .. }));
        let content: Vec<Value> = blocks
          .iter()
          .filter_map(|b| match b {
            UserBlock::Text(t) => Some(json!({"type": "text", "text": sanitize_surrogates(t)})),
            UserBlock::Image { mime_type, data } if supports_images => Some(image_url(mime_type, data)),
            UserBlock::Image { .. } => None,
          })
          .collect();
        if !content.is_empty() {
          out.push(json!({"role": "user", "content": content}));
        } else if had_images && !supports_images {
          out.push(json!({"role": "user", "content": USER_IMAGE_OMITTED}));
        }
      }
      CtxMessage::Assistant { blocks, .. } => {
        let mut content = Vec::new();
        let mut calls = Vec::new();
        for block in blocks {
          match block {
            AssistantBlock::Text { text, .. } => {
              if !js_trim(text).is_empty() {
                content.push(json!({"type": "text", "text": sanitize_surrogates(text)}));
              }
            }
            // Unsigned thinking of the same model (every Blade turn) is replayed as thinking.
            AssistantBlock::Thinking { text, .. } => {
              if !js_trim(text).is_empty() {
                content
                  .push(json!({"type": "thinking", "thinking": [{"type": "text", "text": sanitize_surrogates(text)}]}));
              }
            }
            AssistantBlock::ToolCall { id, name, arguments } => calls.push(json!({
              "id": id,
              "type": "function",
              "function": {"name": name, "arguments": js_stringify(&Value::Object(arguments.clone()))},
              "index": 0,
            })),
          }
        }
        if content.is_empty() && calls.is_empty() {
          continue;
        }
        let mut m = Map::new();
        m.insert("role".into(), json!("assistant"));
        m.insert("prefix".into(), json!(false));
        if !content.is_empty() {
          m.insert("content".into(), Value::Array(content));
        }
        if !calls.is_empty() {
          m.insert("tool_calls".into(), Value::Array(calls));
        }
        out.push(Value::Object(m));
      }
      CtxMessage::ToolResult {
        tool_call_id,
        tool_name,
        content,
        is_error,
      } => {
        let text = content
          .iter()
          .filter_map(|b| match b {
            UserBlock::Text(t) => Some(sanitize_surrogates(t)),
            UserBlock::Image { .. } => None,
          })
          .collect::<Vec<_>>()
          .join("\n");
        let has_images = content.iter().any(|b| matches!(b, UserBlock::Image { .. }));
        let mut parts =
          vec![json!({"type": "text", "text": tool_result_text(&text, has_images, supports_images, *is_error)})];
        if supports_images {
          for b in content {
            if let UserBlock::Image { mime_type, data } = b {
              parts.push(image_url(mime_type, data));
            }
          }
        }
        out.push(json!({"role": "tool", "name": tool_name, "content": parts, "tool_call_id": tool_call_id}));
      }
    }
  }
}

/// A tool result's text: trimmed, `[tool error] ` in front of an error result, a placeholder when
/// there is no text.
pub fn tool_result_text(text: &str, has_images: bool, supports_images: bool, is_error: bool) -> String {
  let trimmed = js_trim(text);
  let prefix = if is_error { "[tool error] " } else { "" };
  if !trimmed.is_empty() {
    let suffix = if has_images && !supports_images {
      TOOL_IMAGE_OMITTED_SUFFIX
    } else {
      ""
    };
    return format!("{prefix}{trimmed}{suffix}");
  }
  let rest = match (has_images, supports_images) {
    (true, true) => "(see attached image)",
    (true, false) => "(image omitted: model does not support images)",
    (false, _) => "(no tool output)",
  };
  format!("{prefix}{rest}")
}

// ---------------------------------------------------------------------------------------------
// Errors

/// `Mistral API error (<status>): <body>`: the body trimmed and cut to 4,000 UTF-16 units, or the
/// status text when the body is blank.
pub fn http_error_message(status: u16, body: &str) -> String {
  let text = js_trim(body);
  if text.is_empty() {
    let status_text = reqwest::StatusCode::from_u16(status)
      .ok()
      .and_then(|s| s.canonical_reason())
      .map(String::from)
      .unwrap_or_else(|| format!("Request failed with status {status}"));
    return format!("Mistral API error ({status}): {status_text}");
  }
  let len = utf16_len(text);
  if len <= MAX_ERROR_BODY_CHARS {
    return format!("Mistral API error ({status}): {text}");
  }
  format!(
    "Mistral API error ({status}): {}... [truncated {} chars]",
    utf16_prefix(text, MAX_ERROR_BODY_CHARS),
    len - MAX_ERROR_BODY_CHARS
  )
}

// ---------------------------------------------------------------------------------------------
// Stream parser

/// JS `String(v)` for the values a stream may carry where pi-ai builds strings from them.
fn js_to_string(v: &Value) -> String {
  match v {
    Value::String(s) => s.clone(),
    Value::Number(n) => number_to_string(n.as_f64().unwrap_or(0.0)),
    Value::Bool(b) => b.to_string(),
    Value::Null => "null".into(),
    Value::Array(items) => items
      .iter()
      .map(|i| if i.is_null() { String::new() } else { js_to_string(i) })
      .collect::<Vec<_>>()
      .join(","),
    Value::Object(_) => "[object Object]".into(),
  }
}

fn truthy(v: &Value) -> bool {
  match v {
    Value::Null => false,
    Value::Bool(b) => *b,
    Value::Number(n) => n.as_f64().is_some_and(|x| x != 0.0 && !x.is_nan()),
    Value::String(s) => !s.is_empty(),
    _ => true,
  }
}

/// `value[key]` as JS reads it from a parsed value (`undefined` for primitives).
fn member<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
  value.as_object().and_then(|o| o.get(key))
}

/// V8's text for reading a property of `null` / `undefined`.
fn read_error(value: Option<&Value>, key: &str) -> String {
  let what = if value.is_some() { "null" } else { "undefined" };
  format!("Cannot read properties of {what} (reading '{key}')")
}

#[derive(Debug)]
enum Block {
  Text,
  Thinking,
  Tool { id: String, name: String, partial: String },
}

#[derive(Clone, Debug, PartialEq)]
enum Stop {
  Pending,
  Reason(StopReason),
  Error,
}

/// Parser for one Mistral response stream (spec §5.7).
#[derive(Debug)]
pub struct MistralStreamParser {
  finished: bool,
  blocks: Vec<Block>,
  /// The open text or thinking block.
  current: Option<usize>,
  /// Tool-call blocks by `<id>:<index>`, in the order they started.
  tool_keys: Vec<(String, usize)>,
  usage: Usage,
  stop: Stop,
  error_message: Option<String>,
}

impl Default for MistralStreamParser {
  fn default() -> Self {
    MistralStreamParser {
      finished: false,
      blocks: Vec::new(),
      current: None,
      tool_keys: Vec::new(),
      usage: Usage::default(),
      stop: Stop::Pending,
      error_message: None,
    }
  }
}

/// The members of a chunk the parser reads (the rest of each event is checked, not built).
static CHUNK_FIELDS: Keep = Keep::Keys(&[
  ("usage", Keep::All),
  (
    "choices",
    Keep::Keys(&[
      ("finish_reason", Keep::All),
      (
        "delta",
        Keep::Keys(&[("content", Keep::All), ("tool_calls", Keep::All)]),
      ),
    ]),
  ),
]);

/// The data of one event the way pi-ai reads it: its `data:` lines, each trimmed at the start,
/// joined with LF, the whole trimmed.
fn event_data(data: &str) -> String {
  let joined = data.split('\n').map(js_trim_start).collect::<Vec<_>>().join("\n");
  js_trim(&joined).to_string()
}

impl MistralStreamParser {
  pub fn new() -> Self {
    Self::default()
  }

  /// Usage as reported so far.
  pub fn usage(&self) -> &Usage {
    &self.usage
  }

  fn fail(&mut self, message: String, out: &mut Vec<StreamEvent>) {
    self.finished = true;
    out.push(StreamEvent::Error { message });
  }

  /// Close the open text or thinking block.
  fn close_current(&mut self, out: &mut Vec<StreamEvent>) {
    if let Some(i) = self.current.take() {
      out.push(match self.blocks[i] {
        Block::Thinking => StreamEvent::ThinkingEnd,
        _ => StreamEvent::TextEnd,
      });
    }
  }

  fn text_delta(&mut self, text: &str, out: &mut Vec<StreamEvent>) {
    if !matches!(self.current.map(|i| &self.blocks[i]), Some(Block::Text)) {
      self.close_current(out);
      self.blocks.push(Block::Text);
      self.current = Some(self.blocks.len() - 1);
      out.push(StreamEvent::TextStart);
    }
    out.push(StreamEvent::TextDelta(sanitize_surrogates(text)));
  }

  fn thinking_delta(&mut self, text: String, out: &mut Vec<StreamEvent>) {
    if !matches!(self.current.map(|i| &self.blocks[i]), Some(Block::Thinking)) {
      self.close_current(out);
      self.blocks.push(Block::Thinking);
      self.current = Some(self.blocks.len() - 1);
      out.push(StreamEvent::ThinkingStart);
    }
    out.push(StreamEvent::ThinkingDelta(text));
  }

  /// The usage of a chunk replaces the earlier one (§5.10): cached prompt tokens are cache reads
  /// (never more than the prompt), the rest of the prompt is input; no reasoning count.
  fn take_usage(&mut self, raw: &Value) {
    let number = |key: &str| {
      member(raw, key)
        .and_then(Value::as_f64)
        .filter(|n| *n != 0.0)
        .unwrap_or(0.0)
    };
    let prompt = number("prompt_tokens");
    let cached = [
      ("promptTokensDetails", "cachedTokens"),
      ("prompt_tokens_details", "cached_tokens"),
      ("promptTokenDetails", "cachedTokens"),
      ("prompt_token_details", "cached_tokens"),
    ]
    .iter()
    .map(|(outer, inner)| member(raw, outer).and_then(|d| member(d, inner)))
    .chain([member(raw, "numCachedTokens"), member(raw, "num_cached_tokens")])
    .find_map(|v| v.filter(|v| !v.is_null()))
    .and_then(Value::as_f64)
    .unwrap_or(0.0);
    let cache_read = prompt.min(cached.max(0.0));
    let input = (prompt - cache_read).max(0.0);
    let output = number("completion_tokens");
    let reported = number("total_tokens");
    let total = if reported == 0.0 {
      input + output + cache_read
    } else {
      reported
    };
    self.usage = Usage {
      input,
      output,
      cache_read,
      cache_write: 0.0,
      cache_write_1h: 0.0,
      total,
      reasoning: None,
      service_tier: None,
    };
  }

  fn chunk(&mut self, chunk: &Map<String, Value>, out: &mut Vec<StreamEvent>) -> Result<(), String> {
    if let Some(usage) = chunk.get("usage").filter(|u| truthy(u)) {
      self.take_usage(usage);
    }
    let Some(choice) = chunk
      .get("choices")
      .and_then(Value::as_array)
      .and_then(|c| c.first())
      .filter(|c| truthy(c))
    else {
      return Ok(());
    };
    if let Some(reason) = member(choice, "finish_reason").filter(|r| truthy(r)) {
      let (stop, message) = map_finish_reason(reason);
      self.stop = stop;
      if message.is_some() {
        self.error_message = message;
      }
    }
    let delta = match member(choice, "delta") {
      Some(d) if !d.is_null() => d,
      other => return Err(read_error(other, "content")),
    };
    match member(delta, "content") {
      None | Some(Value::Null) => {}
      Some(Value::String(text)) => self.text_delta(text, out),
      Some(Value::Array(items)) => {
        for item in items {
          self.content_item(item, out)?;
        }
      }
      Some(_) => return Err("contentItems is not iterable".into()),
    }
    match member(delta, "tool_calls").filter(|c| truthy(c)) {
      None => {}
      Some(Value::Array(calls)) => {
        for call in calls {
          self.tool_call(call, out)?;
        }
      }
      // A string is iterated character by character: its first one has no `function`.
      Some(Value::String(_)) => {
        self.close_current(out);
        return Err(read_error(None, "name"));
      }
      Some(_) => return Err("toolCalls is not iterable".into()),
    }
    Ok(())
  }

  fn content_item(&mut self, item: &Value, out: &mut Vec<StreamEvent>) -> Result<(), String> {
    match item {
      Value::String(text) => self.text_delta(text, out),
      Value::Null => return Err(read_error(Some(item), "type")),
      Value::Object(o) => match o.get("type").and_then(Value::as_str) {
        Some("thinking") => {
          let text = match o.get("thinking") {
            None | Some(Value::Null) => String::new(),
            Some(Value::Array(parts)) => {
              let mut text = String::new();
              for part in parts {
                if part.is_null() {
                  return Err(read_error(Some(part), "text"));
                }
                // Only non-empty strings add text (other values have no usable `length`).
                if let Some(Value::String(t)) = member(part, "text") {
                  text.push_str(t);
                }
              }
              text
            }
            Some(_) => return Err("(item.thinking ?? []).map is not a function".into()),
          };
          let text = sanitize_surrogates(&text);
          if !text.is_empty() {
            self.thinking_delta(text, out);
          }
        }
        Some("text") => match o.get("text") {
          None | Some(Value::Null) => self.text_delta("", out),
          Some(Value::String(t)) => self.text_delta(t, out),
          Some(_) => return Err("text.replace is not a function".into()),
        },
        _ => {}
      },
      _ => {}
    }
    Ok(())
  }

  fn tool_call(&mut self, call: &Value, out: &mut Vec<StreamEvent>) -> Result<(), String> {
    self.close_current(out);
    if call.is_null() {
      return Err(read_error(Some(call), "id"));
    }
    let index = member(call, "index");
    let id = member(call, "id")
      .filter(|id| truthy(id) && id.as_str() != Some("null"))
      .map(js_to_string)
      .unwrap_or_else(|| {
        let i = index
          .filter(|i| !i.is_null())
          .map(js_to_string)
          .unwrap_or_else(|| "0".into());
        derive_tool_call_id(&format!("toolcall:{i}"), 0)
      });
    let key_index = index
      .filter(|i| truthy(i))
      .map(js_to_string)
      .unwrap_or_else(|| "0".into());
    let key = format!("{id}:{key_index}");
    let function = member(call, "function").filter(|f| !f.is_null());
    let existing = self.tool_keys.iter().find(|(k, _)| *k == key).map(|(_, i)| *i);
    let slot = match existing {
      Some(slot) => slot,
      None => {
        let Some(function) = function else {
          return Err(read_error(member(call, "function"), "name"));
        };
        let name = member(function, "name").map(js_to_string).unwrap_or_default();
        self.blocks.push(Block::Tool {
          id,
          name,
          partial: String::new(),
        });
        let slot = self.blocks.len() - 1;
        self.tool_keys.push((key, slot));
        out.push(StreamEvent::ToolCallStart);
        slot
      }
    };
    let Some(function) = function else {
      return Err(read_error(member(call, "function"), "arguments"));
    };
    let delta = match member(function, "arguments") {
      Some(Value::String(s)) => s.clone(),
      Some(v) if truthy(v) => js_stringify(v),
      _ => "{}".to_string(),
    };
    if let Block::Tool { partial, .. } = &mut self.blocks[slot] {
      partial.push_str(&delta);
    }
    out.push(StreamEvent::ToolCallDelta);
    Ok(())
  }

  /// The stream is over (`[DONE]` or the end of the body): close the open block, end the tool
  /// calls in the order they started, then the outcome.
  fn finish(&mut self, out: &mut Vec<StreamEvent>) {
    self.finished = true;
    self.close_current(out);
    for (_, slot) in &self.tool_keys {
      if let Block::Tool { id, name, partial } = &self.blocks[*slot] {
        let arguments = match js_ordered(Value::Object(parse_streaming_json(partial))) {
          Value::Object(m) => m,
          _ => Map::new(),
        };
        out.push(StreamEvent::ToolCallEnd {
          id: id.clone(),
          name: name.clone(),
          arguments,
        });
      }
    }
    out.push(match &self.stop {
      Stop::Pending => StreamEvent::Error {
        message: "Mistral stream ended without a finish reason".into(),
      },
      Stop::Error => StreamEvent::Error {
        message: self
          .error_message
          .clone()
          .filter(|m| !m.is_empty())
          .unwrap_or_else(|| "An unknown error occurred".into()),
      },
      Stop::Reason(reason) => StreamEvent::Done {
        reason: *reason,
        usage: self.usage.clone(),
      },
    });
  }
}

/// finish_reason → stop reason, or an error with `Provider stopped with: <x>`.
fn map_finish_reason(reason: &Value) -> (Stop, Option<String>) {
  match reason.as_str() {
    Some("stop") => (Stop::Reason(StopReason::Stop), None),
    Some("length" | "model_length") => (Stop::Reason(StopReason::Length), None),
    Some("tool_calls") => (Stop::Reason(StopReason::ToolUse), None),
    _ => (
      Stop::Error,
      Some(format!("Provider stopped with: {}", js_to_string(reason))),
    ),
  }
}

impl StreamParser for MistralStreamParser {
  fn on_event(&mut self, event: &SseEvent, out: &mut Vec<StreamEvent>) {
    if self.finished {
      return;
    }
    let data = event_data(&event.data);
    if data.is_empty() {
      return;
    }
    if data == "[DONE]" {
      return self.finish(out);
    }
    let parsed = match js_json_parse_kept(&data, &CHUNK_FIELDS) {
      Ok(v) => v,
      Err(e) => return self.fail(e.0, out),
    };
    let chunk = match parsed {
      Value::Object(o) if o.get("choices").is_some_and(Value::is_array) => o,
      _ => return self.fail("Invalid Mistral streaming event".into(), out),
    };
    if let Err(message) = self.chunk(&chunk, out) {
      self.fail(message, out);
    }
  }

  fn on_end(&mut self, out: &mut Vec<StreamEvent>) {
    if !self.finished {
      self.finish(out);
    }
  }

  /// pi-ai parses what is left in its buffer when the body ends.
  fn flushes_unterminated_event(&self) -> bool {
    true
  }
}

#[cfg(test)]
mod tests {
  use std::collections::HashMap;
  use std::path::PathBuf;

  use serde_json::{json, Map, Value};

  use super::*;
  use crate::chat::catalog::{Catalog, Cost};
  use crate::chat::context::{build_context, check_required_tool, thinking_forced_off};
  use crate::chat::history::filter_orphan_tool_messages;
  use crate::chat::request::wire_options;
  use crate::chat::sse::SseDecoder;
  use crate::chat::wire::transform::js_json_parse;

  const BASE: &str = "http://127.0.0.1:9";

  fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("__test__/fixtures/chat")
  }

  /// A fixture read with JS semantics (the derived rows carry lone surrogates).
  fn load(name: &str) -> Value {
    js_json_parse(&std::fs::read_to_string(fixtures_dir().join(name)).unwrap()).unwrap()
  }

  fn s(v: &Value) -> String {
    v.as_str().unwrap_or("").to_string()
  }

  // -------------------------------------------------------------------------------------------
  // The recorded reference runs (Blade over pi-ai): request URL, headers and body.

  /// Blade's adapter steps (§2.1–§2.8, §3) for a fixture case, through the crate's own helpers.
  fn case_request(case: &Value) -> HttpRequest {
    let m = &case["model"];
    let mut model = Catalog::embedded()
      .get(&s(&m["provider"]), &s(&m["id"]))
      .unwrap()
      .clone();
    model.base_url = s(&m["baseUrl"]).replace("@BASE@", BASE);
    let config = &case["config"];
    if let Some(n) = config["maxOutputTokens"].as_u64() {
      model.max_tokens = n;
    }
    let request = &case["requestOptions"];
    let messages = filter_orphan_tool_messages(case["messages"].as_array().unwrap());
    let tools = case["tools"].as_array().cloned().unwrap_or_default();
    let required = request["toolChoice"]["toolName"].as_str();
    check_required_tool(&tools, required).unwrap();
    let context = build_context(&messages, &model, &tools, required, &HashMap::new(), &mut |_| {}).unwrap();
    let options = wire_options(config, &model, request, thinking_forced_off(&messages, required)).unwrap();
    MistralAdapter.build_request(&model, &context, &options).unwrap()
  }

  fn header_list(v: &Value) -> Vec<(String, String)> {
    match v {
      Value::Object(o) => o.iter().map(|(k, v)| (k.clone(), s(v))).collect(),
      Value::Array(pairs) => pairs.iter().map(|p| (s(&p[0]), s(&p[1]))).collect(),
      _ => vec![],
    }
  }

  #[test]
  fn every_mistral_fixture_request_matches() {
    let mut checked = Vec::new();
    for name in ["mistral-conversations", "no-thinking-mis", "required-tool-mis"] {
      let fixture = load(&format!("{name}.json"));
      let request = case_request(&fixture["case"]);
      let want = &fixture["expectedRequests"][0];
      assert_eq!(fixture["expectedRequests"].as_array().unwrap().len(), 1);
      assert_eq!(
        js_stringify(&request.body),
        js_stringify(&want["body"]),
        "{name}: body (key order included)"
      );
      assert_eq!(request.headers, header_list(&want["headers"]), "{name}: headers");
      assert_eq!(request.url, format!("{BASE}{}", s(&want["path"])), "{name}: url");
      assert!(!request.zstd);
      checked.push(name);
    }
    assert_eq!(checked.len(), 3);
  }

  // -------------------------------------------------------------------------------------------
  // pi-ai's own requests for contexts Blade does not build itself (derived/mistral-wire.json):
  // foreign-model history (fallback attempts), error results, images, every option.

  fn user_blocks(content: &Value) -> Vec<UserBlock> {
    content
      .as_array()
      .unwrap()
      .iter()
      .map(|b| match b["type"].as_str() {
        Some("image") => UserBlock::Image {
          mime_type: s(&b["mimeType"]),
          data: s(&b["data"]),
        },
        _ => UserBlock::Text(s(&b["text"])),
      })
      .collect()
  }

  /// A pi-ai context as the crate's [`Context`].
  fn context_of(v: &Value) -> Context {
    let messages = v["messages"]
      .as_array()
      .unwrap()
      .iter()
      .map(|m| match m["role"].as_str().unwrap() {
        "user" => CtxMessage::User(match &m["content"] {
          Value::String(t) => UserContent::Text(t.clone()),
          blocks => UserContent::Blocks(user_blocks(blocks)),
        }),
        "assistant" => CtxMessage::Assistant {
          blocks: m["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| match b["type"].as_str().unwrap() {
              "thinking" => AssistantBlock::Thinking {
                text: s(&b["thinking"]),
                signature: None,
              },
              "text" => AssistantBlock::Text {
                text: s(&b["text"]),
                signature: None,
              },
              _ => AssistantBlock::ToolCall {
                id: s(&b["id"]),
                name: s(&b["name"]),
                arguments: b["arguments"].as_object().cloned().unwrap_or_default(),
              },
            })
            .collect(),
          api: s(&m["api"]),
          provider: s(&m["provider"]),
          model: s(&m["model"]),
          stop_reason: s(&m["stopReason"]),
        },
        _ => CtxMessage::ToolResult {
          tool_call_id: s(&m["toolCallId"]),
          tool_name: s(&m["toolName"]),
          content: user_blocks(&m["content"]),
          is_error: m["isError"] == Value::Bool(true),
        },
      })
      .collect();
    let tools = v["tools"].as_array().map(|tools| {
      tools
        .iter()
        .map(|t| ToolDef {
          name: s(&t["name"]),
          description: s(&t["description"]),
          parameters: t["parameters"].clone(),
          constrained_sampling: t.get("constrainedSampling").cloned(),
        })
        .collect()
    });
    Context {
      system_prompt: v["systemPrompt"].as_str().filter(|p| !p.is_empty()).map(String::from),
      messages,
      tools,
    }
  }

  fn wire_model(overrides: &Value, base_path: &str) -> Model {
    let mut model = Model {
      id: "mistral-medium-latest".into(),
      name: "M".into(),
      api: API.into(),
      provider: "mistral".into(),
      base_url: format!("{BASE}{base_path}"),
      reasoning: true,
      input: vec!["text".into(), "image".into()],
      cost: Cost::default(),
      context_window: 128_000,
      max_tokens: 1000,
      thinking_level_map: None,
      headers: None,
      compat: None,
      extra: Map::new(),
    };
    if let Some(id) = overrides["id"].as_str() {
      model.id = id.into();
    }
    if let Some(input) = overrides["input"].as_array() {
      model.input = input.iter().map(s).collect();
    }
    model.headers = overrides["headers"].as_object().cloned();
    model
  }

  /// pi-ai's stream options as [`WireOptions`] plus [`MistralParams`].
  fn options_of(o: &Value) -> (WireOptions, MistralParams) {
    let options = WireOptions {
      api_key: Some(o["apiKey"].as_str().unwrap_or("k").to_string()),
      temperature: o["temperature"].as_f64(),
      max_tokens: o["maxTokens"].as_u64(),
      headers: o["headers"].as_object().cloned().unwrap_or_default(),
      session_id: o["sessionId"].as_str().map(String::from),
      retention: match o["cacheRetention"].as_str() {
        Some("none") => Some(Retention::None),
        Some("long") => Some(Retention::Long),
        Some(_) => Some(Retention::Short),
        None => None,
      },
      required_tool: o["toolChoice"]["function"]["name"].as_str().map(String::from),
      ..WireOptions::default()
    };
    let params = MistralParams {
      reasoning_effort: o["reasoningEffort"].as_str().map(String::from),
      prompt_mode: o["promptMode"].as_str().map(String::from),
    };
    (options, params)
  }

  #[test]
  fn requests_match_pi_ai_for_foreign_history_images_and_options() {
    let f = load("derived/mistral-wire.json");
    let rows = f["requests"].as_array().unwrap();
    assert_eq!(rows.len(), 8);
    for row in rows {
      let name = s(&row["name"]);
      let model = wire_model(&row["model"], row["basePath"].as_str().unwrap_or(""));
      let context = context_of(&row["context"]);
      let (options, params) = options_of(&row["options"]);
      let result = build_request(&model, &context, &options, &params);
      if let Some(error) = row["error"].as_str() {
        assert_eq!(result.unwrap_err(), error, "{name}");
        continue;
      }
      let request = result.unwrap();
      assert_eq!(js_stringify(&request.body), js_stringify(&row["body"]), "{name}: body");
      assert_eq!(request.headers, header_list(&row["headers"]), "{name}: headers");
      assert_eq!(request.url, format!("{BASE}{}", s(&row["path"])), "{name}: url");
    }
  }

  #[test]
  fn tool_call_ids_are_nine_alphanumerics_with_collisions_rederived() {
    assert_eq!(derive_tool_call_id("abcDEF123", 0), "abcDEF123");
    assert_eq!(derive_tool_call_id("call_prev_1", 0), "callprev1");
    assert_eq!(derive_tool_call_id("toolcall:2", 0), "toolcall2");
    // The values pi-ai derived for the same ids (derived/mistral-wire.json).
    assert_eq!(derive_tool_call_id("abc-defghi", 1), "mlj703uel");
    assert_eq!(derive_tool_call_id("call_abc|fc_123456789", 0), "qyf2yq1lq");
    assert_eq!(derive_tool_call_id("!!!", 0), "skuitn1o3");
    for id in ["x", "call_1|fc_2", "toolu_01ABCDEFGHIJKLMNOPQRSTUV", "é", ""] {
      let d = derive_tool_call_id(id, 0);
      assert!(
        d.len() <= TOOL_CALL_ID_LENGTH && d.chars().all(|c| c.is_ascii_alphanumeric()),
        "{id} -> {d}"
      );
    }
    let mut n = ToolCallIdNormalizer::default();
    assert_eq!(n.normalize("abcdefghi"), "abcdefghi");
    // Same nine alphanumerics, other id: taken, so the next attempt's hash.
    assert_eq!(n.normalize("abc-defghi"), "mlj703uel");
    assert_eq!(n.normalize("abc-defghi"), "mlj703uel");
    assert_eq!(n.normalize("abcdefghi"), "abcdefghi");
    // An id that derives to a candidate another id owns moves on until a free one.
    let mut n = ToolCallIdNormalizer::default();
    let first = n.normalize("a.b.c.d.e.f.g.h.i");
    let second = n.normalize("abcdefghi");
    assert_eq!(first, "abcdefghi");
    assert_ne!(second, first);
    assert_eq!(second, derive_tool_call_id("abcdefghi", 1));
  }

  #[test]
  fn blade_options_reasoning_effort_is_always_high_and_prompt_mode_never_set() {
    for level in ["minimal", "low", "medium", "high", "xhigh", "max"] {
      let o = WireOptions {
        thinking: Some(level.into()),
        ..WireOptions::default()
      };
      assert_eq!(
        MistralParams::from_blade(&o),
        MistralParams {
          reasoning_effort: Some("high".into()),
          prompt_mode: None
        }
      );
    }
    assert_eq!(
      MistralParams::from_blade(&WireOptions::default()),
      MistralParams::default()
    );
    let empty = WireOptions {
      thinking: Some(String::new()),
      ..WireOptions::default()
    };
    assert_eq!(MistralParams::from_blade(&empty), MistralParams::default());
  }

  #[test]
  fn urls_headers_and_keys() {
    assert_eq!(
      endpoint_url("https://api.mistral.ai").unwrap(),
      "https://api.mistral.ai/v1/chat/completions"
    );
    assert_eq!(
      endpoint_url("http://GW:80/a/b//?x=1#f").unwrap(),
      "http://gw/a/b/v1/chat/completions"
    );
    assert_eq!(endpoint_url("").unwrap_err(), "Invalid URL");
    assert_eq!(endpoint_url("api.mistral.ai").unwrap_err(), "Invalid URL");
    let model = wire_model(&Value::Null, "");
    let context = Context::default();
    let mut options = WireOptions {
      api_key: Some("sk-1".into()),
      headers: json!({"AUTHORIZATION": null, "Accept": null, "x-b": true, "x-a": ["p", 1]})
        .as_object()
        .cloned()
        .unwrap(),
      ..WireOptions::default()
    };
    let r = build_request(&model, &context, &options, &MistralParams::default()).unwrap();
    assert_eq!(
      r.headers,
      [
        ("content-type", "application/json"),
        ("x-b", "true"),
        ("x-a", "p,1"),
        ("accept", "*/*")
      ]
      .map(|(k, v)| (k.to_string(), v.to_string()))
    );
    // A caller authorization header does not stand in for the key.
    options.api_key = None;
    options.headers = json!({"authorization": "Bearer x"}).as_object().cloned().unwrap();
    assert_eq!(
      build_request(&model, &context, &options, &MistralParams::default()).unwrap_err(),
      "No API key for provider: mistral"
    );
    // The key never shows in the request's debug text.
    options.api_key = Some("sk-secret-mistral".into());
    let r = build_request(&model, &context, &options, &MistralParams::default()).unwrap();
    assert!(!format!("{r:?}").contains("sk-secret") && !format!("{options:?}").contains("sk-secret"));
  }

  #[test]
  fn tool_results_text_and_error_prefix() {
    assert_eq!(tool_result_text(" out \n", false, true, false), "out");
    assert_eq!(tool_result_text("out", false, true, true), "[tool error] out");
    assert_eq!(
      tool_result_text("out", true, false, true),
      "[tool error] out\n[tool image omitted: model does not support images]"
    );
    assert_eq!(tool_result_text("", true, true, false), "(see attached image)");
    assert_eq!(
      tool_result_text("", true, true, true),
      "[tool error] (see attached image)"
    );
    assert_eq!(
      tool_result_text(" ", true, false, true),
      "[tool error] (image omitted: model does not support images)"
    );
    assert_eq!(tool_result_text("", false, false, false), "(no tool output)");
    assert_eq!(
      tool_result_text("", false, false, true),
      "[tool error] (no tool output)"
    );
  }

  #[test]
  fn blade_history_keeps_ids_and_replays_thinking_as_thinking() {
    // Blade stamps history with the current model: ids pass through, unsigned thinking is
    // thinking content (spec §8 quirk 6).
    let model = wire_model(&Value::Null, "");
    let context = Context {
      messages: vec![
        CtxMessage::Assistant {
          blocks: vec![
            AssistantBlock::Thinking {
              text: "why".into(),
              signature: None,
            },
            AssistantBlock::Text {
              text: " ".into(),
              signature: None,
            },
            AssistantBlock::ToolCall {
              id: "call_prev_1".into(),
              name: "ls".into(),
              arguments: Map::new(),
            },
          ],
          api: API.into(),
          provider: "mistral".into(),
          model: model.id.clone(),
          stop_reason: "toolUse".into(),
        },
        CtxMessage::ToolResult {
          tool_call_id: "call_prev_1".into(),
          tool_name: "ls".into(),
          content: vec![UserBlock::Text("a".into())],
          is_error: false,
        },
      ],
      ..Context::default()
    };
    let body = build_body(&model, &context, &WireOptions::default(), &MistralParams::default()).unwrap();
    assert_eq!(
      js_stringify(&body["messages"]),
      r#"[{"role":"assistant","prefix":false,"content":[{"type":"thinking","thinking":[{"type":"text","text":"why"}]}],"tool_calls":[{"id":"call_prev_1","type":"function","function":{"name":"ls","arguments":"{}"},"index":0}]},{"role":"tool","name":"ls","content":[{"type":"text","text":"a"}],"tool_call_id":"call_prev_1"}]"#
    );
    // No options: no temperature, max_tokens, tools or cache fields.
    assert_eq!(
      body.as_object().unwrap().keys().collect::<Vec<_>>(),
      ["model", "stream", "messages"]
    );
  }

  // -------------------------------------------------------------------------------------------
  // Streams

  /// Feeds the body in `slice`-byte pieces through the SSE decoder and the parser, as the
  /// transport does for this wire (an unterminated last event is still parsed).
  fn run_sliced(bytes: &[u8], slice: usize) -> Vec<StreamEvent> {
    let mut parser = MistralAdapter.parser(&wire_model(&Value::Null, ""), &WireOptions::default());
    assert!(parser.flushes_unterminated_event());
    let mut decoder = SseDecoder::default();
    let mut out = Vec::new();
    let mut events = Vec::new();
    for piece in bytes.chunks(slice.max(1)) {
      decoder.feed(piece, &mut events).unwrap();
      for e in events.drain(..) {
        parser.on_event(&e, &mut out);
      }
    }
    decoder.finish_flushing(&mut events);
    for e in events.drain(..) {
      parser.on_event(&e, &mut out);
    }
    parser.on_end(&mut out);
    // Exactly one terminal event, last.
    assert_eq!(out.iter().filter(|e| e.is_terminal()).count(), 1, "{out:?}");
    assert!(out.last().unwrap().is_terminal());
    out
  }

  /// A semantic event in the shape derived/mistral-wire.json records pi-ai's.
  fn recorded(e: &StreamEvent) -> Value {
    match e {
      StreamEvent::Start => json!({"type": "start"}),
      StreamEvent::TextStart => json!({"type": "text_start"}),
      StreamEvent::TextDelta(d) => json!({"type": "text_delta", "delta": d}),
      StreamEvent::TextEnd => json!({"type": "text_end"}),
      StreamEvent::ThinkingStart => json!({"type": "thinking_start"}),
      StreamEvent::ThinkingDelta(d) => json!({"type": "thinking_delta", "delta": d}),
      StreamEvent::ThinkingEnd => json!({"type": "thinking_end"}),
      StreamEvent::ToolCallStart => json!({"type": "toolcall_start"}),
      StreamEvent::ToolCallDelta => json!({"type": "toolcall_delta"}),
      StreamEvent::ToolCallEnd { id, name, arguments } => {
        json!({"type": "toolcall_end", "toolCall": {"id": id, "name": name, "arguments": arguments}})
      }
      StreamEvent::Done { reason, usage } => json!({"type": "done", "reason": reason.as_str(), "usage": {
        "input": js_number(usage.input), "output": js_number(usage.output), "cacheRead": js_number(usage.cache_read),
        "cacheWrite": js_number(usage.cache_write), "totalTokens": js_number(usage.total)}}),
      StreamEvent::Error { message } => json!({"type": "error", "message": message}),
    }
  }

  #[test]
  fn streams_match_pi_ai_event_for_event() {
    let f = load("derived/mistral-wire.json");
    let rows = f["streams"].as_array().unwrap();
    assert!(rows.len() >= 40);
    for row in rows {
      let name = s(&row["name"]);
      let want: Vec<Value> = row["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] != "start")
        .map(|e| {
          let mut e = e.clone();
          // Tool-argument deltas are payload-free here.
          if e["type"] == "toolcall_delta" {
            e.as_object_mut().unwrap().remove("delta");
          }
          e
        })
        .collect();
      let body = s(&row["body"]);
      for slice in [1, 2, 3, 7, 64, body.len()] {
        let got: Vec<Value> = run_sliced(body.as_bytes(), slice).iter().map(recorded).collect();
        assert_eq!(
          js_stringify(&Value::Array(got)),
          js_stringify(&Value::Array(want.clone())),
          "{name} (slices of {slice})"
        );
      }
    }
  }

  /// The loopback mock's `full` Mistral stream (mock-provider.mjs `mistralScript`).
  fn mock_full() -> String {
    let chunk = |delta: Value, finish: Value, usage: Option<Value>| {
      let mut o = json!({"id": "cmpl-mock1", "object": "chat.completion.chunk", "created": 1764458886,
        "model": "magistral-medium-latest", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
      if let Some(u) = usage {
        o["usage"] = u;
      }
      format!("data: {}\n\n", js_stringify(&o))
    };
    let mut body = chunk(json!({"role": "assistant", "content": ""}), Value::Null, None);
    for text in ["The user wants the file. ", "I should call read_file."] {
      body += &chunk(
        json!({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": text}]}]}),
        Value::Null,
        None,
      );
    }
    for text in ["I'll read ", "the file now."] {
      body += &chunk(json!({ "content": text }), Value::Null, None);
    }
    for piece in ["{\"path\":", "\"src/main.rs\"", ",\"limit\":", "20}"] {
      body += &chunk(
        json!({"tool_calls": [{"id": "D681PevKs", "type": "function", "index": 0, "function": {"name": "read_file", "arguments": piece}}]}),
        Value::Null,
        None,
      );
    }
    body += &chunk(
      json!({"content": ""}),
      json!("tool_calls"),
      Some(
        json!({"prompt_tokens": 1200, "completion_tokens": 85, "total_tokens": 1285, "prompt_tokens_details": {"cached_tokens": 1024}}),
      ),
    );
    body + "data: [DONE]\n\n"
  }

  #[test]
  fn the_mock_full_stream_gives_the_recorded_turn() {
    let events = run_sliced(mock_full().as_bytes(), 5);
    let mut args = Map::new();
    args.insert("path".into(), json!("src/main.rs"));
    args.insert("limit".into(), json!(20));
    let mut want = vec![
      StreamEvent::TextStart,
      StreamEvent::TextDelta(String::new()),
      StreamEvent::TextEnd,
      StreamEvent::ThinkingStart,
      StreamEvent::ThinkingDelta("The user wants the file. ".into()),
      StreamEvent::ThinkingDelta("I should call read_file.".into()),
      StreamEvent::ThinkingEnd,
      StreamEvent::TextStart,
      StreamEvent::TextDelta("I'll read ".into()),
      StreamEvent::TextDelta("the file now.".into()),
      StreamEvent::TextEnd,
      StreamEvent::ToolCallStart,
    ];
    want.extend(std::iter::repeat_n(StreamEvent::ToolCallDelta, 4));
    want.extend([
      StreamEvent::TextStart,
      StreamEvent::TextDelta(String::new()),
      StreamEvent::TextEnd,
      StreamEvent::ToolCallEnd {
        id: "D681PevKs".into(),
        name: "read_file".into(),
        arguments: args,
      },
      StreamEvent::Done {
        reason: StopReason::ToolUse,
        usage: Usage {
          input: 176.0,
          output: 85.0,
          cache_read: 1024.0,
          cache_write: 0.0,
          cache_write_1h: 0.0,
          total: 1285.0,
          reasoning: None,
          service_tier: None,
        },
      },
    ]);
    assert_eq!(events, want);
  }

  #[test]
  fn done_ends_the_stream_before_the_body_does() {
    // The terminal event comes with `[DONE]`, not at the end of the body (pi-ai stops reading).
    let mut parser = MistralStreamParser::new();
    let mut out = Vec::new();
    let event = |data: &str| SseEvent {
      data: data.into(),
      ..SseEvent::default()
    };
    parser.on_event(
      &event(r#"{"choices":[{"delta":{"content":"a"},"finish_reason":"stop"}]}"#),
      &mut out,
    );
    assert!(!out.iter().any(StreamEvent::is_terminal));
    parser.on_event(&event("  [DONE]  "), &mut out);
    assert!(matches!(
      out.last(),
      Some(StreamEvent::Done {
        reason: StopReason::Stop,
        ..
      })
    ));
    let n = out.len();
    parser.on_event(&event("{bad"), &mut out);
    parser.on_end(&mut out);
    assert_eq!(out.len(), n);
    assert_eq!(parser.usage(), &Usage::default());
  }

  // -------------------------------------------------------------------------------------------
  // HTTP errors

  #[test]
  fn http_error_texts() {
    let rows = load("derived/error-messages.json");
    let bodies = [
      ("http429", 429, "Rate limit reached for requests", "rate_limit_error"),
      ("http500", 500, "Internal server error", "server_error"),
      ("http503", 503, "Service unavailable", "overloaded_error"),
      ("noretry503", 503, "Service unavailable", "overloaded_error"),
      (
        "http400",
        400,
        "Invalid request: messages.0.content is malformed",
        "invalid_request_error",
      ),
      (
        "context",
        400,
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
        "invalid_request_error",
      ),
    ];
    let mut n = 0;
    for row in rows["rows"].as_array().unwrap().iter().filter(|r| r["api"] == API) {
      let Some((_, status, message, kind)) = bodies.iter().find(|b| b.0 == row["scenario"]) else {
        continue;
      };
      let body = js_stringify(&json!({"error": {"message": message, "type": kind, "param": null, "code": kind}}));
      assert_eq!(http_error_message(*status, &body), s(&row["message"]));
      n += 1;
    }
    assert_eq!(n, 6);
    assert_eq!(
      http_error_message(401, "\u{feff} {\"message\":\"Unauthorized\"}\n"),
      "Mistral API error (401): {\"message\":\"Unauthorized\"}"
    );
    assert_eq!(http_error_message(502, " \n"), "Mistral API error (502): Bad Gateway");
    assert_eq!(
      http_error_message(599, ""),
      "Mistral API error (599): Request failed with status 599"
    );
    let long = format!("{}😀tail", "x".repeat(3999));
    let text = http_error_message(500, &long);
    // 4000 UTF-16 units: the cut splits the emoji's surrogate pair, as JS `slice` does.
    assert_eq!(
      text,
      format!(
        "Mistral API error (500): {}{}... [truncated 5 chars]",
        "x".repeat(3999),
        crate::js::text::lone_surrogate(0xD83D)
      )
    );
  }

  // -------------------------------------------------------------------------------------------
  // Through the service, against a loopback socket, on a paused clock (the request bound is 60 s).

  mod service {
    use std::io::{Read, Write};
    use std::sync::Arc;
    use std::time::Duration;

    use serde_json::{json, Value};
    use tokio_util::sync::CancellationToken;

    use crate::chat::service::{run_chat, ChatRequest, Outbox};

    const KEY: &str = "sk-mistral-secret-0123";

    /// What the server does after reading the request.
    enum Reply {
      Nothing,
      Head,
      HeadAndText,
      Status(&'static str, String),
    }

    /// Serves one request in a blocking task (which holds the paused clock still while it runs)
    /// and hands the socket back, so it stays open for the rest of the test.
    fn serve(reply: Reply) -> (String, tokio::task::JoinHandle<std::net::TcpStream>) {
      let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
      let base = format!("http://{}", listener.local_addr().unwrap());
      let task = tokio::task::spawn_blocking(move || {
        let (mut socket, _) = listener.accept().unwrap();
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        // Headers, then the content-length body.
        loop {
          let n = socket.read(&mut buf).unwrap();
          seen.extend_from_slice(&buf[..n]);
          let text = String::from_utf8_lossy(&seen).to_string();
          if let Some(end) = text.find("\r\n\r\n") {
            let len = text[..end]
              .lines()
              .find_map(|l| {
                l.to_ascii_lowercase()
                  .strip_prefix("content-length:")
                  .map(|v| v.trim().parse::<usize>().unwrap())
              })
              .unwrap_or(0);
            if seen.len() >= end + 4 + len {
              break;
            }
          }
        }
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
        let event = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n";
        match reply {
          Reply::Nothing => {}
          Reply::Head => socket.write_all(head.as_bytes()).unwrap(),
          Reply::HeadAndText => {
            socket.write_all(head.as_bytes()).unwrap();
            socket.write_all(format!("{:x}\r\n{event}\r\n", event.len()).as_bytes()).unwrap();
          }
          Reply::Status(status, body) => socket
            .write_all(
              format!("HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len())
                .as_bytes(),
            )
            .unwrap(),
        }
        socket.flush().unwrap();
        socket
      });
      (base, task)
    }

    /// Runs one `streamChat` to its end: the chunks and the error, with the (paused) time it took.
    async fn stream(base: &str, extra: Value) -> (Vec<Value>, Option<Value>, Duration) {
      let mut config = json!({"provider": "mistral", "model": "mistral-medium-latest", "apiKey": KEY, "baseUrl": base,
        "maxRetries": 0, "maxOutputTokens": 100});
      for (k, v) in extra.as_object().unwrap() {
        config[k] = v.clone();
      }
      let req = ChatRequest {
        record: None,
        config,
        models: Arc::new(vec![]),
        messages: vec![json!({"role": "user", "content": "hi"})],
        tools: vec![],
        options: json!({}),
      };
      let client = reqwest::Client::builder().build().unwrap();
      let outbox = Outbox::default();
      let started = tokio::time::Instant::now();
      let collect = async {
        let mut chunks = Vec::new();
        loop {
          let taken = outbox.take().await;
          if taken.count > 0 {
            let batch: Value = serde_json::from_str(&format!("[{}]", taken.json)).unwrap();
            chunks.extend(batch.as_array().unwrap().iter().cloned());
          }
          if taken.done {
            return (chunks, taken.error.map(|e| e.to_json()));
          }
        }
      };
      let ((), (chunks, error)) = tokio::join!(run_chat(client, req, &outbox, CancellationToken::new()), collect);
      (chunks, error, started.elapsed())
    }

    fn kinds(chunks: &[Value]) -> Vec<String> {
      chunks
        .iter()
        .map(|c| match (c.get("providerStall"), c.get("providerRetry")) {
          (Some(s), _) => format!("stall:{}", s["phase"].as_str().unwrap()),
          (_, Some(r)) => format!(
            "retry:{}:{}:{}",
            r["phase"].as_str().unwrap(),
            r["reason"],
            r["statusCode"]
          ),
          _ => c.to_string(),
        })
        .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn a_silent_body_ends_at_60_s_like_the_reference() {
      let (base, server) = serve(Reply::Head);
      let (chunks, error, elapsed) = stream(&base, json!({})).await;
      let _socket = server.await.unwrap();
      // Recorded from the reference (`hang`, no timeout): the stall warning at 30 s recovers on
      // the same read when the bound fails it; a retryable timeout with the response's status.
      assert_eq!(
        kinds(&chunks),
        ["stall:detected", "stall:recovered", "retry:exhausted:\"timeout\":200"]
      );
      let error = error.unwrap();
      assert_eq!(error["name"], "Error");
      assert_eq!(error["message"], "The operation was aborted due to timeout");
      assert_eq!(error["replayBoundaryCrossed"], false);
      assert!(
        elapsed >= Duration::from_secs(60) && elapsed < Duration::from_secs(61),
        "{elapsed:?}"
      );
    }

    #[tokio::test(start_paused = true)]
    async fn missing_headers_end_at_60_s_without_a_status() {
      let (base, server) = serve(Reply::Nothing);
      let (chunks, error, elapsed) = stream(&base, json!({})).await;
      let _socket = server.await.unwrap();
      assert_eq!(
        kinds(&chunks),
        ["stall:detected", "stall:recovered", "retry:exhausted:\"timeout\":null"]
      );
      assert_eq!(error.unwrap()["message"], "The operation was aborted due to timeout");
      assert!(
        elapsed >= Duration::from_secs(60) && elapsed < Duration::from_secs(61),
        "{elapsed:?}"
      );
    }

    #[tokio::test(start_paused = true)]
    async fn the_bound_covers_the_body_after_output() {
      let (base, server) = serve(Reply::HeadAndText);
      let (chunks, error, elapsed) = stream(&base, json!({})).await;
      let _socket = server.await.unwrap();
      assert_eq!(chunks[0], json!({"content": "hi"}));
      let error = error.unwrap();
      assert_eq!(error["message"], "The operation was aborted due to timeout");
      assert_eq!(error["replayBoundaryCrossed"], true);
      assert!(!kinds(&chunks).iter().any(|k| k.starts_with("retry:")));
      assert!(
        elapsed >= Duration::from_secs(60) && elapsed < Duration::from_secs(61),
        "{elapsed:?}"
      );
    }

    #[tokio::test(start_paused = true)]
    async fn a_configured_timeout_replaces_the_bound() {
      let (base, server) = serve(Reply::Head);
      let (_, error, elapsed) = stream(&base, json!({"timeout": 90_000})).await;
      let _socket = server.await.unwrap();
      let error = error.unwrap();
      assert_eq!(error["name"], "ProviderRequestDeadlineExceededError");
      assert_eq!(error["message"], "Provider request deadline exceeded after 90000ms");
      assert!(
        elapsed >= Duration::from_secs(90) && elapsed < Duration::from_secs(91),
        "{elapsed:?}"
      );
    }

    #[tokio::test]
    async fn http_errors_and_refused_connections_never_show_the_key() {
      let body = format!("{{\"message\":\"Unauthorized: key {KEY} is invalid\"}}");
      let (base, server) = serve(Reply::Status("401 Unauthorized", body));
      let (_, error, _) = stream(&base, json!({})).await;
      drop(server.await.unwrap());
      let message = error.unwrap()["message"].as_str().unwrap().to_string();
      assert!(
        message.starts_with("Mistral API error (401): {\"message\":\"Unauthorized: key "),
        "{message}"
      );
      assert!(!message.contains(KEY), "{message}");

      let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
      let base = format!("http://{}", closed.local_addr().unwrap());
      drop(closed);
      let (chunks, error, _) = stream(&base, json!({})).await;
      assert_eq!(kinds(&chunks), ["retry:exhausted:\"transport\":null"]);
      assert_eq!(error.unwrap()["message"], "fetch failed");
    }
  }
}

//! The `anthropic-messages` wire (spec §4.5, §5.5, §5.11): request building and SSE parsing the way
//! pi-ai 0.84.2 (over `@anthropic-ai/sdk` 0.91.1) does it for API-key and GitHub Copilot auth.
//!
//! Request: `POST <baseUrl>/v1/messages`. Headers are assembled in the SDK's order: its own defaults,
//! then the auth header, then pi-ai's "default headers" object (its defaults, session affinity,
//! model headers, caller headers), then `content-type`. Every later source replaces a same-named
//! header case-insensitively and moves it to the end; a JSON-null value removes it. The body keeps
//! pi-ai's key order.
//!
//! Response: [`AnthropicStreamParser`] turns SSE events into semantic events. Like pi-ai it settles
//! the outcome only when the body ends (`on_end`); failures inside the stream (an `error` event, an
//! unparsable event, an unknown stop reason) end it at once.
//!
//! Text sent to the provider goes through `sanitize_surrogates` where pi-ai applies it (lone UTF-16
//! surrogates, held as the crate's stand-ins, are dropped). JS-faithful JSON (parse, stringify,
//! tolerant tool-argument parsing) comes from the shared `transform` module.

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use super::strict::{make_strict_json_schema, resolve_json_schema_strict};
use super::transform::{
  js_json_parse, js_number, js_stringify, parse_streaming_json, repair_json_text, sanitize_surrogates,
  transform_messages,
};
use crate::chat::catalog::Model;
use crate::chat::sse::SseEvent;
use crate::chat::types::{
  AssistantBlock, Context, CtxMessage, HttpRequest, Retention, StopReason, StreamEvent, StreamParser, ToolDef, Usage,
  UserBlock, UserContent, WireAdapter, WireOptions,
};
use crate::repair::jsnum::number_to_string;
use crate::repair::text::js_trim;

pub const API: &str = "anthropic-messages";
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
pub const FINE_GRAINED_TOOL_STREAMING_BETA: &str = "fine-grained-tool-streaming-2025-05-14";
pub const INTERLEAVED_THINKING_BETA: &str = "interleaved-thinking-2025-05-14";
const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
const ONLY_IMAGES_PLACEHOLDER: &str = "(see attached image)";

/// The adapter object handed to the transport.
#[derive(Clone, Copy, Debug, Default)]
pub struct AnthropicAdapter;

impl WireAdapter for AnthropicAdapter {
  fn build_request(&self, model: &Model, context: &Context, options: &WireOptions) -> Result<HttpRequest, String> {
    build_request(model, context, options)
  }

  fn parser(&self, _model: &Model, _options: &WireOptions) -> Box<dyn StreamParser + Send> {
    Box::new(AnthropicStreamParser::default())
  }
}

// ---------------------------------------------------------------------------------------------
// Model switches

/// `model.compat[key] ?? default`, read with JS truthiness.
fn compat_flag(model: &Model, key: &str, default: bool) -> bool {
  match model.compat(key) {
    None | Some(Value::Null) => default,
    Some(v) => js_truthy(v),
  }
}

/// `model.compat.forceAdaptiveThinking === true`.
fn force_adaptive(model: &Model) -> bool {
  model.compat("forceAdaptiveThinking") == Some(&Value::Bool(true))
}

// ---------------------------------------------------------------------------------------------
// Request

/// pi-ai's tool-call id rule for this API: every UTF-16 code unit outside `[A-Za-z0-9_-]` becomes
/// `_`, then the first 64 are kept. The shared transform applies it to turns of other models only.
pub fn normalize_tool_call_id(id: &str) -> String {
  let mut out = String::with_capacity(id.len().min(64));
  for c in id.chars() {
    if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
      out.push(c);
    } else {
      for _ in 0..c.len_utf16() {
        out.push('_');
      }
    }
    if out.len() >= 64 {
      break;
    }
  }
  out.truncate(64);
  out
}

/// Build the whole HTTP request. Failures are pi-ai's error texts (delivered as an error event).
pub fn build_request(model: &Model, context: &Context, options: &WireOptions) -> Result<HttpRequest, String> {
  assert_request_auth(&model.provider, options.api_key.as_deref(), &options.headers)?;
  let headers = build_headers(model, context, options)?;
  let body = build_body(model, context, options)?;
  let base = if model.base_url.is_empty() {
    DEFAULT_BASE_URL
  } else {
    model.base_url.as_str()
  };
  // The SDK joins base and path without doubling a slash.
  let url = match base.strip_suffix('/') {
    Some(trimmed) => format!("{trimmed}/v1/messages"),
    None => format!("{base}/v1/messages"),
  };
  Ok(HttpRequest {
    url,
    headers,
    body,
    zstd: false,
  })
}

/// pi-ai refuses to send a request without an API key unless a caller header carries the auth.
fn assert_request_auth(provider: &str, api_key: Option<&str>, headers: &Map<String, Value>) -> Result<(), String> {
  if api_key.is_some_and(|k| !k.is_empty()) {
    return Ok(());
  }
  let has = |name: &str| {
    headers
      .iter()
      .any(|(k, v)| k.eq_ignore_ascii_case(name) && !v.is_null() && !js_trim(&header_value(v)).is_empty())
  };
  if has("authorization") || has("x-api-key") || has("cf-aig-authorization") {
    return Ok(());
  }
  Err(format!("No API key for provider: {provider}"))
}

/// A header list with the SDK's `buildHeaders` semantics.
#[derive(Default)]
struct HeaderSet {
  values: Vec<(String, String)>,
  nulls: HashSet<String>,
}

impl HeaderSet {
  /// One entry of a plain-object source: drop the same name (any case), then add or null it.
  fn set(&mut self, name: &str, value: Option<String>) {
    let lower = name.to_ascii_lowercase();
    self.values.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    match value {
      Some(v) => {
        self
          .values
          .push((name.to_string(), trim_http_whitespace(&v).to_string()));
        self.nulls.remove(&lower);
      }
      None => {
        self.nulls.insert(lower);
      }
    }
  }

  fn get(&self, name: &str) -> Option<&str> {
    self
      .values
      .iter()
      .find(|(n, _)| n.eq_ignore_ascii_case(name))
      .map(|(_, v)| v.as_str())
  }
}

/// `Object.assign` over header objects: keys are case-sensitive, a repeated key keeps its slot.
fn assign(target: &mut Vec<(String, Value)>, name: &str, value: Value) {
  match target.iter_mut().find(|(n, _)| n == name) {
    Some(slot) => slot.1 = value,
    None => target.push((name.to_string(), value)),
  }
}

/// The headers as sent, SDK telemetry (`user-agent`, `x-stainless-*`) left out.
fn build_headers(model: &Model, context: &Context, options: &WireOptions) -> Result<Vec<(String, String)>, String> {
  let copilot = model.provider == "github-copilot";
  let has_tools = context.tools.as_ref().is_some_and(|t| !t.is_empty());
  let mut betas = Vec::new();
  if has_tools && !compat_flag(model, "supportsEagerToolInputStreaming", true) {
    betas.push(FINE_GRAINED_TOOL_STREAMING_BETA);
  }
  if !force_adaptive(model) {
    betas.push(INTERLEAVED_THINKING_BETA);
  }

  // pi-ai's `defaultHeaders` object.
  let mut defaults: Vec<(String, Value)> = vec![
    ("accept".into(), json!("application/json")),
    ("anthropic-dangerous-direct-browser-access".into(), json!("true")),
  ];
  if !betas.is_empty() {
    defaults.push(("anthropic-beta".into(), Value::String(betas.join(","))));
  }
  let retention = options.retention.unwrap_or(Retention::Short);
  let session = options.session_id.as_deref().filter(|_| retention != Retention::None);
  if let Some(sid) = session.filter(|s| !s.is_empty() && !copilot) {
    if compat_flag(model, "sendSessionAffinityHeaders", false) {
      assign(&mut defaults, "x-session-affinity", Value::String(sid.to_string()));
    }
  }
  for (k, v) in model.headers.iter().flatten() {
    assign(&mut defaults, k, v.clone());
  }
  if copilot {
    // Copilot wants to know whether a person or the agent loop sent this turn.
    let initiator = match context.messages.last() {
      Some(CtxMessage::User(_)) | None => "user",
      Some(_) => "agent",
    };
    assign(&mut defaults, "X-Initiator", json!(initiator));
    assign(&mut defaults, "Openai-Intent", json!("conversation-edits"));
    if has_image_input(&context.messages) {
      assign(&mut defaults, "Copilot-Vision-Request", json!("true"));
    }
  }
  for (k, v) in &options.headers {
    assign(&mut defaults, k, v.clone());
  }
  if model.provider == "kimi-coding" {
    defaults.retain(|(k, _)| !k.eq_ignore_ascii_case("user-agent"));
    defaults.push(("User-Agent".into(), Value::String(pi_user_agent())));
  }

  let mut set = HeaderSet::default();
  set.set("accept", Some("application/json".into()));
  set.set("anthropic-dangerous-direct-browser-access", Some("true".into()));
  set.set("anthropic-version", Some(ANTHROPIC_VERSION.into()));
  if let Some(key) = &options.api_key {
    if copilot {
      set.set("authorization", Some(format!("Bearer {key}")));
    } else {
      set.set("x-api-key", Some(key.clone()));
    }
  }
  for (k, v) in &defaults {
    set.set(k, if v.is_null() { None } else { Some(header_value(v)) });
  }
  set.set("content-type", Some("application/json".into()));

  // The SDK's own auth check.
  let present = |n: &str| set.get(n).is_some_and(|v| !v.is_empty());
  if !(present("x-api-key")
    || present("authorization")
    || set.nulls.contains("x-api-key")
    || set.nulls.contains("authorization"))
  {
    return Err(
      "Could not resolve authentication method. Expected either apiKey or authToken to be set. Or for one of the \
       \"X-Api-Key\" or \"Authorization\" headers to be explicitly omitted"
        .into(),
    );
  }
  Ok(set.values)
}

fn has_image_input(messages: &[CtxMessage]) -> bool {
  let image = |b: &UserBlock| matches!(b, UserBlock::Image { .. });
  messages.iter().any(|m| match m {
    CtxMessage::User(UserContent::Blocks(blocks)) => blocks.iter().any(image),
    CtxMessage::ToolResult { content, .. } => content.iter().any(image),
    _ => false,
  })
}

/// pi-ai's `pi (<platform> <release>; <arch>)` user agent, sent to Kimi's coding endpoint.
pub fn pi_user_agent() -> String {
  let platform = match std::env::consts::OS {
    "windows" => "win32",
    "macos" => "darwin",
    other => other,
  };
  let arch = match std::env::consts::ARCH {
    "x86_64" => "x64",
    "aarch64" => "arm64",
    "x86" => "ia32",
    other => other,
  };
  let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
  format!("pi ({platform} {}; {arch})", release.trim())
}

/// The request body in pi-ai's key order.
fn build_body(model: &Model, context: &Context, options: &WireOptions) -> Result<Value, String> {
  let retention = options.retention.unwrap_or(Retention::Short);
  let cache_control = (retention != Retention::None).then(|| {
    let mut cc = Map::new();
    cc.insert("type".into(), json!("ephemeral"));
    if retention == Retention::Long && compat_flag(model, "supportsLongCacheRetention", true) {
      cc.insert("ttl".into(), json!("1h"));
    }
    Value::Object(cc)
  });
  let messages = transform_messages(&context.messages, model, &normalize_tool_call_id);
  let thinking_enabled = options.thinking.is_some();

  let mut body = Map::new();
  body.insert("model".into(), json!(model.id));
  body.insert(
    "messages".into(),
    Value::Array(convert_messages(
      &messages,
      cache_control.as_ref(),
      compat_flag(model, "allowEmptySignature", false),
    )),
  );
  body.insert(
    "max_tokens".into(),
    json!(options.max_tokens.unwrap_or(model.max_tokens)),
  );
  body.insert("stream".into(), json!(true));
  if let Some(system) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
    let mut block = Map::new();
    block.insert("type".into(), json!("text"));
    block.insert("text".into(), json!(sanitize_surrogates(system)));
    if let Some(cc) = &cache_control {
      block.insert("cache_control".into(), cc.clone());
    }
    body.insert("system".into(), json!([block]));
  }
  if let Some(t) = options.temperature {
    if !thinking_enabled && compat_flag(model, "supportsTemperature", true) {
      body.insert("temperature".into(), js_number(t));
    }
  }
  let tools = dedupe_tools(context.tools.as_deref().unwrap_or(&[]));
  if !tools.is_empty() {
    let tool_cache = cache_control
      .as_ref()
      .filter(|_| compat_flag(model, "supportsCacheControlOnTools", true));
    body.insert(
      "tools".into(),
      Value::Array(convert_tools(
        &tools,
        compat_flag(model, "supportsEagerToolInputStreaming", true),
        compat_flag(model, "supportsStrictTools", false),
        tool_cache,
      )?),
    );
  }
  if model.reasoning {
    match &options.thinking {
      Some(level) => {
        if force_adaptive(model) {
          body.insert("thinking".into(), json!({"type": "adaptive", "display": "summarized"}));
          let effort = match model.thinking_map(level) {
            Some(Value::String(mapped)) => mapped.clone(),
            _ => level.clone(),
          };
          if !effort.is_empty() {
            body.insert("output_config".into(), json!({ "effort": effort }));
          }
        } else {
          // Blade never passes a thinking budget, so pi-ai's 1024-token floor is always used.
          body.insert(
            "thinking".into(),
            json!({"type": "enabled", "budget_tokens": 1024, "display": "summarized"}),
          );
        }
      }
      None => {
        if model.thinking_map("off") != Some(&Value::Null) {
          body.insert("thinking".into(), json!({"type": "disabled"}));
        }
      }
    }
  }
  if let Some(name) = &options.required_tool {
    body.insert("tool_choice".into(), json!({"type": "tool", "name": name}));
  }
  // Blade's fast-mode payload patch.
  if options.service_tier.as_deref() == Some("fast") {
    body.insert("speed".into(), json!("fast"));
  }
  Ok(Value::Object(body))
}

/// pi-ai keys tools by name: a repeated name keeps the first slot and takes the last definition.
fn dedupe_tools(tools: &[ToolDef]) -> Vec<&ToolDef> {
  let mut out: Vec<&ToolDef> = Vec::with_capacity(tools.len());
  for t in tools {
    match out.iter_mut().find(|o| o.name == t.name) {
      Some(slot) => *slot = t,
      None => out.push(t),
    }
  }
  out
}

fn text_block(text: &str) -> Value {
  json!({"type": "text", "text": text})
}

fn image_block(mime_type: &str, data: &str) -> Value {
  json!({"type": "image", "source": {"type": "base64", "media_type": mime_type, "data": data}})
}

/// Tool-result content: one string when it is all text, else blocks (an image-only result gets a
/// placeholder text first).
fn tool_result_content(content: &[UserBlock]) -> Value {
  if !content.iter().any(|b| matches!(b, UserBlock::Image { .. })) {
    let texts: Vec<&str> = content
      .iter()
      .map(|b| match b {
        UserBlock::Text(t) => t.as_str(),
        UserBlock::Image { .. } => "",
      })
      .collect();
    return Value::String(sanitize_surrogates(&texts.join("\n")));
  }
  let mut blocks: Vec<Value> = content
    .iter()
    .map(|b| match b {
      UserBlock::Text(t) => text_block(&sanitize_surrogates(t)),
      UserBlock::Image { mime_type, data } => image_block(mime_type, data),
    })
    .collect();
  if !content.iter().any(|b| matches!(b, UserBlock::Text(_))) {
    blocks.insert(0, text_block(ONLY_IMAGES_PLACEHOLDER));
  }
  Value::Array(blocks)
}

fn convert_messages(messages: &[CtxMessage], cache_control: Option<&Value>, allow_empty_signature: bool) -> Vec<Value> {
  let mut out: Vec<Value> = Vec::with_capacity(messages.len());
  let mut i = 0;
  while i < messages.len() {
    match &messages[i] {
      CtxMessage::User(UserContent::Text(text)) => {
        if !js_trim(text).is_empty() {
          out.push(json!({"role": "user", "content": sanitize_surrogates(text)}));
        }
      }
      CtxMessage::User(UserContent::Blocks(blocks)) => {
        let content: Vec<Value> = blocks
          .iter()
          .filter_map(|b| match b {
            UserBlock::Text(t) if js_trim(t).is_empty() => None,
            UserBlock::Text(t) => Some(text_block(&sanitize_surrogates(t))),
            UserBlock::Image { mime_type, data } => Some(image_block(mime_type, data)),
          })
          .collect();
        if !content.is_empty() {
          out.push(json!({"role": "user", "content": content}));
        }
      }
      CtxMessage::Assistant { blocks, .. } => {
        let mut content = Vec::with_capacity(blocks.len());
        for block in blocks {
          match block {
            AssistantBlock::Text { text, .. } => {
              if !js_trim(text).is_empty() {
                content.push(text_block(&sanitize_surrogates(text)));
              }
            }
            AssistantBlock::Thinking { text, signature } => {
              let signature = signature.as_deref().filter(|s| !js_trim(s).is_empty());
              match signature {
                Some(sig) => {
                  content.push(json!({"type": "thinking", "thinking": sanitize_surrogates(text), "signature": sig}))
                }
                None if js_trim(text).is_empty() => {}
                // Unsigned thinking (every Blade turn) cannot be replayed as thinking.
                None if allow_empty_signature => {
                  content.push(json!({"type": "thinking", "thinking": sanitize_surrogates(text), "signature": ""}))
                }
                None => content.push(text_block(&sanitize_surrogates(text))),
              }
            }
            AssistantBlock::ToolCall { id, name, arguments } => {
              content.push(json!({"type": "tool_use", "id": id, "name": name, "input": arguments}));
            }
          }
        }
        if !content.is_empty() {
          out.push(json!({"role": "assistant", "content": content}));
        }
      }
      CtxMessage::ToolResult { .. } => {
        // A run of tool results becomes one user message.
        let mut results = Vec::new();
        while let Some(CtxMessage::ToolResult {
          tool_call_id,
          content,
          is_error,
          ..
        }) = messages.get(i)
        {
          results.push(json!({
            "type": "tool_result",
            "tool_use_id": tool_call_id,
            "content": tool_result_content(content),
            "is_error": is_error,
          }));
          i += 1;
        }
        out.push(json!({"role": "user", "content": results}));
        continue;
      }
    }
    i += 1;
  }
  if let (Some(cc), Some(last)) = (cache_control, out.last_mut()) {
    if last["role"] == "user" {
      match &mut last["content"] {
        Value::Array(blocks) => {
          if let Some(Value::Object(block)) = blocks.last_mut() {
            if matches!(
              block.get("type").and_then(Value::as_str),
              Some("text" | "image" | "tool_result")
            ) {
              block.insert("cache_control".into(), cc.clone());
            }
          }
        }
        Value::String(text) => {
          let text = std::mem::take(text);
          last["content"] = json!([{"type": "text", "text": text, "cache_control": cc}]);
        }
        _ => {}
      }
    }
  }
  out
}

fn convert_tools(
  tools: &[&ToolDef],
  eager_streaming: bool,
  strict_supported: bool,
  cache_control: Option<&Value>,
) -> Result<Vec<Value>, String> {
  let mut out = Vec::with_capacity(tools.len());
  for (i, tool) in tools.iter().enumerate() {
    let strict = resolve_json_schema_strict(tool, strict_supported)?.unwrap_or(false);
    let parameters = if strict {
      make_strict_json_schema(&tool.parameters).map_err(|e| e.0)?
    } else {
      tool.parameters.clone()
    };
    let field = |key: &str| parameters.get(key).filter(|v| !v.is_null()).cloned();
    let properties = field("properties").unwrap_or_else(|| json!({}));
    let required = field("required").unwrap_or_else(|| json!([]));
    let input_schema = match (&parameters, strict) {
      (Value::Object(strict_schema), true) => {
        let mut schema = strict_schema.clone();
        schema.insert("type".into(), json!("object"));
        schema.insert("properties".into(), properties);
        schema.insert("required".into(), required);
        Value::Object(schema)
      }
      _ => json!({"type": "object", "properties": properties, "required": required}),
    };
    let mut def = Map::new();
    def.insert("name".into(), json!(tool.name));
    def.insert("description".into(), json!(tool.description));
    if eager_streaming {
      def.insert("eager_input_streaming".into(), json!(true));
    }
    if strict {
      def.insert("strict".into(), json!(true));
    }
    def.insert("input_schema".into(), input_schema);
    if let Some(cc) = cache_control.filter(|_| i + 1 == tools.len()) {
      def.insert("cache_control".into(), cc.clone());
    }
    out.push(Value::Object(def));
  }
  Ok(out)
}

/// Anthropic's SSE event names pi-ai reads; every other name (`ping`, unknown) is skipped.
const MESSAGE_EVENTS: [&str; 6] = [
  "message_start",
  "message_delta",
  "message_stop",
  "content_block_start",
  "content_block_delta",
  "content_block_stop",
];

#[derive(Debug)]
enum BlockKind {
  Text,
  Thinking,
  Tool {
    id: String,
    name: String,
    partial_json: String,
  },
}

#[derive(Debug)]
struct Block {
  kind: BlockKind,
  /// The `index` the API gave the block; cleared (JS `undefined`) once the block stopped.
  index: Option<Value>,
}

/// The outcome `message_delta` recorded so far.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
  Pending,
  Done(StopReason),
  Failed(Option<String>),
}

/// Parser for one response stream (spec §5.5).
#[derive(Debug)]
pub struct AnthropicStreamParser {
  started: bool,
  finished: bool,
  saw_message_start: bool,
  saw_message_stop: bool,
  outcome: Outcome,
  blocks: Vec<Block>,
  usage: Usage,
  response_id: Option<String>,
}

impl Default for AnthropicStreamParser {
  fn default() -> Self {
    AnthropicStreamParser {
      started: false,
      finished: false,
      saw_message_start: false,
      saw_message_stop: false,
      outcome: Outcome::Pending,
      blocks: Vec::new(),
      usage: Usage::default(),
      response_id: None,
    }
  }
}

impl AnthropicStreamParser {
  pub fn new() -> Self {
    Self::default()
  }

  /// The `message.id` of `message_start`, once seen.
  pub fn response_id(&self) -> Option<&str> {
    self.response_id.as_deref()
  }

  /// Usage as accumulated so far.
  pub fn usage(&self) -> &Usage {
    &self.usage
  }

  fn fail(&mut self, message: String, out: &mut Vec<StreamEvent>) {
    self.finished = true;
    out.push(StreamEvent::Error { message });
  }

  fn find_block(&self, index: Option<&Value>) -> Option<usize> {
    self
      .blocks
      .iter()
      .position(|b| js_strict_equal(b.index.as_ref(), index))
  }

  fn recompute_total(&mut self) {
    let u = &mut self.usage;
    u.total = u.input + u.output + u.cache_read + u.cache_write;
  }

  fn handle(&mut self, event: &Value, out: &mut Vec<StreamEvent>) -> Result<(), String> {
    let root = Some(event);
    match event.get("type").and_then(Value::as_str) {
      Some("message_start") => {
        self.saw_message_start = true;
        let message = prop(root, "message")?;
        self.response_id = prop(message, "id")?.map(js_to_string);
        let usage = prop(message, "usage")?;
        let count = |key: &str| -> Result<f64, String> { Ok(prop(usage, key)?.map(js_number_or_zero).unwrap_or(0.0)) };
        self.usage.input = count("input_tokens")?;
        self.usage.output = count("output_tokens")?;
        self.usage.cache_read = count("cache_read_input_tokens")?;
        self.usage.cache_write = count("cache_creation_input_tokens")?;
        let creation = prop(usage, "cache_creation")?.filter(|v| !v.is_null());
        self.usage.cache_write_1h = match creation {
          Some(c) => prop(Some(c), "ephemeral_1h_input_tokens")?
            .map(js_number_or_zero)
            .unwrap_or(0.0),
          None => 0.0,
        };
        self.recompute_total();
      }
      Some("message_stop") => self.saw_message_stop = true,
      Some("content_block_start") => {
        let block = prop(root, "content_block")?;
        let index = event.get("index").cloned();
        match prop(block, "type")?.and_then(Value::as_str) {
          Some("text") => {
            self.blocks.push(Block {
              kind: BlockKind::Text,
              index,
            });
            out.push(StreamEvent::TextStart);
          }
          Some("thinking") | Some("redacted_thinking") => {
            // pi-ai gives redacted thinking the text `[Reasoning redacted]` and the opaque payload
            // as signature; neither reaches the caller (no delta is emitted for either).
            self.blocks.push(Block {
              kind: BlockKind::Thinking,
              index,
            });
            out.push(StreamEvent::ThinkingStart);
          }
          Some("tool_use") => {
            self.blocks.push(Block {
              kind: BlockKind::Tool {
                id: prop(block, "id")?.map(js_to_string).unwrap_or_default(),
                name: prop(block, "name")?.map(js_to_string).unwrap_or_default(),
                partial_json: String::new(),
              },
              index,
            });
            out.push(StreamEvent::ToolCallStart);
          }
          _ => {}
        }
      }
      Some("content_block_delta") => {
        let delta = prop(root, "delta")?;
        let kind = prop(delta, "type")?.and_then(Value::as_str).unwrap_or("");
        let Some(i) = self.find_block(event.get("index")) else {
          return Ok(());
        };
        let text =
          |key: &str| -> Result<String, String> { Ok(prop(delta, key)?.map(js_to_string).unwrap_or_default()) };
        match (kind, &mut self.blocks[i].kind) {
          ("text_delta", BlockKind::Text) => out.push(StreamEvent::TextDelta(text("text")?)),
          ("thinking_delta", BlockKind::Thinking) => out.push(StreamEvent::ThinkingDelta(text("thinking")?)),
          ("input_json_delta", BlockKind::Tool { partial_json, .. }) => {
            partial_json.push_str(&text("partial_json")?);
            out.push(StreamEvent::ToolCallDelta);
          }
          // Signatures only matter for replay, which Blade does not do.
          _ => {}
        }
      }
      Some("content_block_stop") => {
        let Some(i) = self.find_block(event.get("index")) else {
          return Ok(());
        };
        let block = &mut self.blocks[i];
        block.index = None;
        match &mut block.kind {
          BlockKind::Text => out.push(StreamEvent::TextEnd),
          BlockKind::Thinking => out.push(StreamEvent::ThinkingEnd),
          BlockKind::Tool { id, name, partial_json } => {
            // A non-object result (pi-ai would keep e.g. an array) reads as `{}`.
            let arguments = parse_streaming_json(partial_json);
            out.push(StreamEvent::ToolCallEnd {
              id: id.clone(),
              name: name.clone(),
              arguments,
            });
          }
        }
      }
      Some("message_delta") => {
        let delta = prop(root, "delta")?;
        if let Some(reason) = prop(delta, "stop_reason")?.filter(|v| js_truthy(v)) {
          let details = prop(delta, "stop_details")?.filter(|v| !v.is_null());
          self.outcome = map_stop_reason(reason, details)?;
        }
        if let Some(usage) = event.get("usage").filter(|v| js_truthy(v)) {
          let set = |target: &mut f64, key: &str| {
            if let Some(v) = usage.get(key).filter(|v| !v.is_null()) {
              *target = js_number_or_zero(v);
            }
          };
          set(&mut self.usage.input, "input_tokens");
          set(&mut self.usage.output, "output_tokens");
          set(&mut self.usage.cache_read, "cache_read_input_tokens");
          set(&mut self.usage.cache_write, "cache_creation_input_tokens");
          let thinking = usage
            .get("output_tokens_details")
            .filter(|d| !d.is_null())
            .and_then(|d| d.get("thinking_tokens"))
            .filter(|v| !v.is_null());
          if let Some(t) = thinking {
            self.usage.reasoning = Some(js_number_or_zero(t));
          }
        }
        self.recompute_total();
      }
      _ => {}
    }
    Ok(())
  }
}

/// Stop reason → outcome; an unknown reason fails the stream at once.
fn map_stop_reason(reason: &Value, details: Option<&Value>) -> Result<Outcome, String> {
  Ok(match reason.as_str() {
    Some("end_turn" | "pause_turn" | "stop_sequence") => Outcome::Done(StopReason::Stop),
    Some("max_tokens") => Outcome::Done(StopReason::Length),
    Some("tool_use") => Outcome::Done(StopReason::ToolUse),
    Some("refusal") => {
      let explanation = details.and_then(|d| d.get("explanation")).filter(|v| js_truthy(v));
      Outcome::Failed(Some(
        explanation
          .map(js_to_string)
          .unwrap_or_else(|| "The model refused to complete the request".into()),
      ))
    }
    Some("sensitive") => Outcome::Failed(Some("Provider stopped with: sensitive".into())),
    _ => return Err(format!("Unhandled stop reason: {}", js_to_string(reason))),
  })
}

impl StreamParser for AnthropicStreamParser {
  fn flushes_unterminated_event(&self) -> bool {
    true
  }

  fn on_event(&mut self, event: &SseEvent, out: &mut Vec<StreamEvent>) {
    if self.finished {
      return;
    }
    if !self.started {
      self.started = true;
      out.push(StreamEvent::Start);
    }
    if event.event == "error" {
      self.fail(event.data.clone(), out);
      return;
    }
    if !MESSAGE_EVENTS.contains(&event.event.as_str()) {
      return;
    }
    let parsed = match parse_json_with_repair(&event.data) {
      Ok(v) => v,
      Err(e) => {
        let mut raw = vec![format!("event: {}", event.event)];
        raw.extend(event.data.split('\n').map(|l| format!("data: {l}")));
        let message = format!(
          "Could not parse Anthropic SSE event {}: {e}; data={}; raw={}",
          event.event,
          event.data,
          raw.join("\\n")
        );
        self.fail(message, out);
        return;
      }
    };
    if let Err(message) = self.handle(&parsed, out) {
      self.fail(message, out);
    }
  }

  fn on_end(&mut self, out: &mut Vec<StreamEvent>) {
    if self.finished {
      return;
    }
    if !self.started {
      self.started = true;
      out.push(StreamEvent::Start);
    }
    if self.saw_message_start && !self.saw_message_stop {
      return self.fail("Anthropic stream ended before message_stop".into(), out);
    }
    match self.outcome.clone() {
      Outcome::Pending => self.fail("Anthropic stream ended without a stop reason".into(), out),
      Outcome::Failed(message) => {
        let message = message.filter(|m| !m.is_empty());
        self.fail(message.unwrap_or_else(|| "An unknown error occurred".into()), out)
      }
      Outcome::Done(reason) => {
        self.finished = true;
        out.push(StreamEvent::Done {
          reason,
          usage: self.usage.clone(),
        });
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// HTTP errors

/// The error text for a non-2xx response, as the Anthropic SDK builds it: `<status> <message>`,
/// where the message is the body's top-level `message` (a string as is, anything else as JSON),
/// else the whole JSON body re-serialised, else the raw text; `<status> status code (no body)` when
/// the body is empty.
pub fn http_error_message(status: u16, body: &str) -> String {
  let msg = match js_json_parse(body).ok().filter(js_truthy) {
    Some(error) => match error.get("message").filter(|m| js_truthy(m)) {
      Some(Value::String(m)) => m.clone(),
      Some(m) => js_stringify(m),
      None => js_stringify(&error),
    },
    None => body.to_string(),
  };
  match (status != 0, !msg.is_empty()) {
    (true, true) => format!("{status} {msg}"),
    (true, false) => format!("{status} status code (no body)"),
    (false, true) => msg,
    (false, false) => "(no status code or body)".into(),
  }
}

// ---------------------------------------------------------------------------------------------
// JSON the JavaScript way

/// JS property access on a parsed value: reading from `undefined`/`null` is pi-ai's TypeError.
fn prop<'a>(value: Option<&'a Value>, key: &str) -> Result<Option<&'a Value>, String> {
  match value {
    None => Err(format!("Cannot read properties of undefined (reading '{key}')")),
    Some(Value::Null) => Err(format!("Cannot read properties of null (reading '{key}')")),
    Some(Value::Object(o)) => Ok(o.get(key)),
    Some(_) => Ok(None),
  }
}

/// JS `===` between two optional (possibly `undefined`) values; objects never compare equal.
fn js_strict_equal(a: Option<&Value>, b: Option<&Value>) -> bool {
  match (a, b) {
    (None, None) => true,
    (Some(Value::Number(x)), Some(Value::Number(y))) => x.as_f64() == y.as_f64(),
    (Some(Value::String(x)), Some(Value::String(y))) => x == y,
    (Some(Value::Bool(x)), Some(Value::Bool(y))) => x == y,
    (Some(Value::Null), Some(Value::Null)) => true,
    _ => false,
  }
}

fn js_truthy(v: &Value) -> bool {
  match v {
    Value::Null => false,
    Value::Bool(b) => *b,
    Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
    Value::String(s) => !s.is_empty(),
    _ => true,
  }
}

/// `x || 0` for a token count.
fn js_number_or_zero(v: &Value) -> f64 {
  v.as_f64().unwrap_or(0.0)
}

/// JS `String(x)` for primitives (objects print like JS would for plain ones).
fn js_to_string(v: &Value) -> String {
  match v {
    Value::String(s) => s.clone(),
    Value::Number(n) => number_to_string(n.as_f64().unwrap_or(0.0)),
    Value::Bool(b) => b.to_string(),
    Value::Null => "null".into(),
    Value::Array(a) => a
      .iter()
      .map(|x| if x.is_null() { String::new() } else { js_to_string(x) })
      .collect::<Vec<_>>()
      .join(","),
    Value::Object(_) => "[object Object]".into(),
  }
}

/// A header value from a JSON value (JS `String(x)`, arrays joined like `Headers.append` does).
fn header_value(v: &Value) -> String {
  match v {
    Value::Array(a) => a.iter().map(js_to_string).collect::<Vec<_>>().join(", "),
    other => js_to_string(other),
  }
}

fn trim_http_whitespace(s: &str) -> &str {
  s.trim_matches([' ', '\t', '\r', '\n'])
}

/// pi-ai's `parseJsonWithRepair`: `JSON.parse`, retried once on the repaired text.
fn parse_json_with_repair(json: &str) -> Result<Value, String> {
  js_json_parse(json).or_else(|first| {
    let repaired = repair_json_text(json);
    if repaired != json {
      js_json_parse(&repaired).map_err(|e| e.0)
    } else {
      Err(first.0)
    }
  })
}

#[cfg(test)]
mod tests {
  use std::collections::HashMap;

  use super::*;
  use crate::chat::catalog::{cost_usd, Catalog, Resolver};
  use crate::chat::context::{build_context, check_images, check_required_tool, thinking_forced_off};
  use crate::chat::history::filter_orphan_tool_messages;
  use crate::chat::request::{resolve_model, wire_options};
  use crate::chat::sse::SseDecoder;

  const BASE: &str = "http://127.0.0.1:4010";

  fn fixture(name: &str) -> Value {
    let text = match name {
      "anthropic-messages" => include_str!("../../../__test__/fixtures/chat/anthropic-messages.json"),
      "anthropic-messages-adaptive-fast" => {
        include_str!("../../../__test__/fixtures/chat/anthropic-messages-adaptive-fast.json")
      }
      "image-ant" => include_str!("../../../__test__/fixtures/chat/image-ant.json"),
      "cache-short-ant" => include_str!("../../../__test__/fixtures/chat/cache-short-ant.json"),
      "chat-mode-ant" => include_str!("../../../__test__/fixtures/chat/chat-mode-ant.json"),
      "no-thinking-ant" => include_str!("../../../__test__/fixtures/chat/no-thinking-ant.json"),
      "required-tool-ant" => include_str!("../../../__test__/fixtures/chat/required-tool-ant.json"),
      other => panic!("no fixture {other}"),
    };
    serde_json::from_str(text).unwrap()
  }

  const FIXTURES: [&str; 7] = [
    "anthropic-messages",
    "anthropic-messages-adaptive-fast",
    "image-ant",
    "cache-short-ant",
    "chat-mode-ant",
    "no-thinking-ant",
    "required-tool-ant",
  ];

  /// Model, context and options for a fixture case, built the way the chat core does (§2, §3).
  fn prepare(case: &Value) -> (Model, Context, WireOptions) {
    let mut config = case["config"].clone();
    config["provider"] = case["model"]["provider"].clone();
    config["model"] = case["model"]["id"].clone();
    config["baseUrl"] = json!(BASE);
    let resolver = Resolver {
      custom: &[],
      catalog: Catalog::embedded(),
    };
    let model = resolve_model(&resolver, &config).unwrap();
    let messages = filter_orphan_tool_messages(case["messages"].as_array().unwrap());
    let tools = case["tools"].as_array().cloned().unwrap_or_default();
    let request_options = case.get("requestOptions").cloned().unwrap_or(json!({}));
    let required = request_options["toolChoice"]["toolName"].as_str();
    check_required_tool(&tools, required).unwrap();
    check_images(&messages, &model).unwrap();
    let off = thinking_forced_off(&messages, required);
    let context = build_context(&messages, &model, &tools, required, &HashMap::new(), &mut |_| {}).unwrap();
    let options = wire_options(&config, &model, &request_options, off).unwrap();
    (model, context, options)
  }

  fn header_pairs(headers: &[(String, String)]) -> Vec<(String, String)> {
    headers
      .iter()
      .map(|(k, v)| (k.to_ascii_lowercase(), v.clone()))
      .collect()
  }

  #[test]
  fn fixture_requests_match_exactly() {
    for name in FIXTURES {
      let fx = fixture(name);
      let (model, context, options) = prepare(&fx["case"]);
      let req = AnthropicAdapter.build_request(&model, &context, &options).unwrap();
      let expected = &fx["expectedRequests"][0];
      assert_eq!(
        req.url,
        format!("{BASE}{}", expected["path"].as_str().unwrap()),
        "{name}"
      );
      // Serialised comparison: key order counts.
      assert_eq!(
        serde_json::to_string(&req.body).unwrap(),
        serde_json::to_string(&expected["body"]).unwrap(),
        "{name}"
      );
      let want: Vec<(String, String)> = expected["headers"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
        .collect();
      assert_eq!(header_pairs(&req.headers), want, "{name}");
      assert!(!req.zstd);
    }
  }

  // --- the loopback mock's Anthropic streams (`__test__/chat/mock-provider.mjs`, anthropicScript)

  fn mock_stream(body: &str, cut_after_text: bool) -> String {
    let mut frames: Vec<(Value, bool)> = Vec::new();
    let mut ev = |data: Value, text: bool| frames.push((data, text));
    ev(
      json!({"type": "message_start", "message": {"id": "msg_01Mock0001", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5", "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 176, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 1024,
          "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
          "output_tokens": 1, "service_tier": "standard"}}}),
      false,
    );
    ev(json!({"type": "ping"}), false);
    let mut index = 0;
    if body == "full" {
      ev(
        json!({"type": "content_block_start", "index": index,
          "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        false,
      );
      for t in ["The user wants the file. ", "I should call read_file."] {
        ev(
          json!({"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": t}}),
          false,
        );
      }
      ev(
        json!({"type": "content_block_delta", "index": index,
          "delta": {"type": "signature_delta", "signature": "EqQBCkYIBhgCKkBmb2NrLXNpZ25hdHVyZQ=="}}),
        false,
      );
      ev(json!({"type": "content_block_stop", "index": index}), false);
      index += 1;
    }
    ev(
      json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
      false,
    );
    for t in ["I'll read ", "the file now."] {
      ev(
        json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": t}}),
        true,
      );
    }
    ev(json!({"type": "content_block_stop", "index": index}), false);
    index += 1;
    let mut stop = if body == "length" { "max_tokens" } else { "end_turn" };
    if body == "full" {
      ev(
        json!({"type": "content_block_start", "index": index,
          "content_block": {"type": "tool_use", "id": "toolu_01Mock", "name": "read_file", "input": {}}}),
        false,
      );
      for p in ["", "{\"path\":", "\"src/main.rs\"", ",\"limit\":", "20}"] {
        ev(
          json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": p}}),
          false,
        );
      }
      ev(json!({"type": "content_block_stop", "index": index}), false);
      stop = "tool_use";
    }
    ev(
      json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
        "usage": {"input_tokens": 176, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 1024,
          "output_tokens": 85, "output_tokens_details": {"thinking_tokens": 30}}}),
      false,
    );
    ev(json!({"type": "message_stop"}), false);
    if cut_after_text {
      let last = frames.iter().rposition(|(_, t)| *t).unwrap();
      frames.truncate(last + 1);
    }
    frames
      .iter()
      .map(|(d, _)| {
        format!(
          "event: {}\ndata: {}\n\n",
          d["type"].as_str().unwrap(),
          serde_json::to_string(d).unwrap()
        )
      })
      .collect()
  }

  /// Decode a body (fed in small pieces) and parse it.
  fn run(body: &str) -> Vec<StreamEvent> {
    let mut decoder = SseDecoder::default();
    let mut parser = AnthropicAdapter.parser(
      &Catalog::embedded()
        .get("anthropic", "claude-sonnet-4-5")
        .unwrap()
        .clone(),
      &WireOptions::default(),
    );
    let mut out = Vec::new();
    for piece in body.as_bytes().chunks(7) {
      let mut events = Vec::new();
      decoder.feed(piece, &mut events).unwrap();
      for e in &events {
        parser.on_event(e, &mut out);
      }
    }
    let mut events = Vec::new();
    decoder.finish_flushing(&mut events);
    for e in &events {
      parser.on_event(e, &mut out);
    }
    parser.on_end(&mut out);
    out
  }

  /// Blade's projection (§5.2), enough to compare with the recorded chunks.
  fn project(events: &[StreamEvent], model: &Model) -> Result<Vec<Value>, (Vec<Value>, String)> {
    let mut chunks = Vec::new();
    let mut calls = 0;
    for e in events {
      match e {
        StreamEvent::TextDelta(d) => chunks.push(json!({ "content": d })),
        StreamEvent::ThinkingDelta(d) => chunks.push(json!({ "reasoningContent": d })),
        StreamEvent::ToolCallEnd { id, name, arguments } => {
          chunks.push(json!({"toolCalls": [{"index": calls, "id": id, "type": "function",
            "function": {"name": name, "arguments": serde_json::to_string(arguments).unwrap()}}]}));
          calls += 1;
        }
        StreamEvent::Done { reason, usage } => {
          let cost = cost_usd(
            &model.cost,
            usage.input,
            usage.output,
            usage.cache_read,
            usage.cache_write,
            usage.cache_write_1h,
          );
          let mut u = Map::new();
          u.insert(
            "promptTokens".into(),
            js_number(usage.input + usage.cache_read + usage.cache_write),
          );
          u.insert("completionTokens".into(), js_number(usage.output));
          u.insert("totalTokens".into(), js_number(usage.total));
          u.insert("costUsd".into(), js_number(cost.total));
          if let Some(r) = usage.reasoning {
            u.insert("reasoningTokens".into(), js_number(r));
          }
          if usage.cache_write > 0.0 {
            u.insert("cacheCreationInputTokens".into(), js_number(usage.cache_write));
          }
          if usage.cache_read > 0.0 {
            u.insert("cacheReadInputTokens".into(), js_number(usage.cache_read));
          }
          chunks.push(json!({"finishReason": reason.as_str(), "usage": u}));
        }
        StreamEvent::Error { message } => return Err((chunks, message.clone())),
        _ => {}
      }
    }
    Ok(chunks)
  }

  /// Compare chunk lists, `costUsd` up to float noise.
  fn assert_chunks(got: &[Value], want: &[Value], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: {got:?}");
    for (g, w) in got.iter().zip(want) {
      let (mut g, mut w) = (g.clone(), w.clone());
      if let (Some(gc), Some(wc)) = (
        g.pointer("/usage/costUsd").cloned(),
        w.pointer("/usage/costUsd").cloned(),
      ) {
        assert!(
          (gc.as_f64().unwrap() - wc.as_f64().unwrap()).abs() < 1e-12,
          "{what}: cost {gc} vs {wc}"
        );
        g["usage"]["costUsd"] = json!(0);
        w["usage"]["costUsd"] = json!(0);
      }
      assert_eq!(
        serde_json::to_string(&g).unwrap(),
        serde_json::to_string(&w).unwrap(),
        "{what}"
      );
    }
  }

  #[test]
  fn fixture_streams_project_to_the_recorded_chunks() {
    for name in FIXTURES {
      let fx = fixture(name);
      let (model, _, _) = prepare(&fx["case"]);
      let scenario = fx["case"]["config"]["customHeaders"]["x-mock-scenario"]
        .as_str()
        .unwrap();
      let chunks = project(&run(&mock_stream(scenario, false)), &model).unwrap();
      let want = fx["expectedChunks"].as_array().unwrap();
      if fx["case"]["mode"] == "chat" {
        // Non-streaming `chat`: the aggregated response.
        let r = &want[0]["response"];
        let text: String = chunks.iter().filter_map(|c| c["content"].as_str()).collect();
        let reasoning: String = chunks.iter().filter_map(|c| c["reasoningContent"].as_str()).collect();
        assert_eq!(r["content"], json!(text));
        assert_eq!(r["reasoningContent"], json!(reasoning));
        let last = chunks.last().unwrap();
        assert_eq!(r["finishReason"], last["finishReason"]);
        assert_chunks(
          &[json!({"usage": last["usage"]})],
          &[json!({"usage": r["usage"]})],
          name,
        );
        let calls: Vec<Value> = chunks.iter().filter_map(|c| c["toolCalls"].get(0).cloned()).collect();
        assert_eq!(r["toolCalls"], json!(calls));
      } else {
        assert_chunks(&chunks, want, name);
      }
    }
  }

  #[test]
  fn full_stream_events_and_usage() {
    let events = run(&mock_stream("full", false));
    use StreamEvent::*;
    let kinds: Vec<&str> = events
      .iter()
      .map(|e| match e {
        Start => "start",
        ThinkingStart => "thinking_start",
        ThinkingDelta(_) => "thinking_delta",
        ThinkingEnd => "thinking_end",
        TextStart => "text_start",
        TextDelta(_) => "text_delta",
        TextEnd => "text_end",
        ToolCallStart => "toolcall_start",
        ToolCallDelta => "toolcall_delta",
        ToolCallEnd { .. } => "toolcall_end",
        Done { .. } => "done",
        Error { .. } => "error",
      })
      .collect();
    assert_eq!(
      kinds.join(" "),
      "start thinking_start thinking_delta thinking_delta thinking_end text_start text_delta text_delta text_end \
       toolcall_start toolcall_delta toolcall_delta toolcall_delta toolcall_delta toolcall_delta toolcall_end done"
    );
    let Some(Done { reason, usage }) = events.last() else {
      panic!()
    };
    assert_eq!(*reason, StopReason::ToolUse);
    assert_eq!(
      *usage,
      Usage {
        input: 176.0,
        output: 85.0,
        cache_read: 1024.0,
        cache_write: 0.0,
        cache_write_1h: 0.0,
        total: 1285.0,
        reasoning: Some(30.0),
        service_tier: None,
      }
    );
  }

  #[test]
  fn text_length_and_truncated_streams() {
    let model = Catalog::embedded()
      .get("anthropic", "claude-sonnet-4-5")
      .unwrap()
      .clone();
    let text = project(&run(&mock_stream("text", false)), &model).unwrap();
    assert_eq!(text[0], json!({"content": "I'll read "}));
    assert_eq!(text[2]["finishReason"], "stop");
    let length = project(&run(&mock_stream("length", false)), &model).unwrap();
    assert_eq!(length[2]["finishReason"], "length");
    assert_eq!(length[2]["usage"]["reasoningTokens"], 30);
    // `eof`: a 200 with an empty body.
    assert_eq!(
      run(""),
      vec![
        StreamEvent::Start,
        StreamEvent::Error {
          message: "Anthropic stream ended without a stop reason".into()
        }
      ]
    );
    let (chunks, message) = project(&run(&mock_stream("text", true)), &model).unwrap_err();
    assert_eq!(
      chunks,
      vec![json!({"content": "I'll read "}), json!({"content": "the file now."})]
    );
    assert_eq!(message, "Anthropic stream ended before message_stop");
  }

  fn sse(events: &[(&str, Value)]) -> String {
    events
      .iter()
      .map(|(e, d)| format!("event: {e}\ndata: {}\n\n", serde_json::to_string(d).unwrap()))
      .collect()
  }

  fn start() -> (&'static str, Value) {
    (
      "message_start",
      json!({"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 10, "output_tokens": 1,
        "cache_read_input_tokens": null, "cache_creation_input_tokens": 7,
        "cache_creation": {"ephemeral_1h_input_tokens": 5}}}}),
    )
  }

  fn stop_with(reason: Value, extra: Value) -> Vec<(&'static str, Value)> {
    let mut delta = json!({"stop_reason": reason});
    if let Value::Object(o) = extra {
      delta.as_object_mut().unwrap().extend(o);
    }
    vec![
      start(),
      (
        "message_delta",
        json!({"type": "message_delta", "delta": delta, "usage": {"output_tokens": 3}}),
      ),
      ("message_stop", json!({"type": "message_stop"})),
    ]
  }

  fn last_error(events: &[StreamEvent]) -> String {
    match events.last() {
      Some(StreamEvent::Error { message }) => message.clone(),
      other => panic!("not an error: {other:?}"),
    }
  }

  #[test]
  fn stop_reasons() {
    let done = |r: &str| match run(&sse(&stop_with(json!(r), json!({})))).last() {
      Some(StreamEvent::Done { reason, .. }) => *reason,
      other => panic!("{other:?}"),
    };
    assert_eq!(done("end_turn"), StopReason::Stop);
    assert_eq!(done("pause_turn"), StopReason::Stop);
    assert_eq!(done("stop_sequence"), StopReason::Stop);
    assert_eq!(done("max_tokens"), StopReason::Length);
    assert_eq!(done("tool_use"), StopReason::ToolUse);
    let err = |r: Value, extra: Value| last_error(&run(&sse(&stop_with(r, extra))));
    assert_eq!(
      err(json!("refusal"), json!({})),
      "The model refused to complete the request"
    );
    assert_eq!(
      err(json!("refusal"), json!({"stop_details": {"explanation": "Nope."}})),
      "Nope."
    );
    assert_eq!(err(json!("sensitive"), json!({})), "Provider stopped with: sensitive");
    assert_eq!(err(json!("weird"), json!({})), "Unhandled stop reason: weird");
    // An unknown reason ends the stream at once: nothing after it is read.
    let events = run(&sse(&stop_with(json!("weird"), json!({}))));
    assert_eq!(events.iter().filter(|e| e.is_terminal()).count(), 1);
  }

  #[test]
  fn usage_overrides_only_when_reported() {
    let events = run(&sse(&[
      start(),
      (
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
          "usage": {"input_tokens": null, "output_tokens": 4, "cache_read_input_tokens": 2}}),
      ),
      ("message_stop", json!({"type": "message_stop"})),
    ]));
    let Some(StreamEvent::Done { usage, .. }) = events.last() else {
      panic!()
    };
    assert_eq!(
      (
        usage.input,
        usage.output,
        usage.cache_read,
        usage.cache_write,
        usage.cache_write_1h
      ),
      (10.0, 4.0, 2.0, 7.0, 5.0)
    );
    assert_eq!(usage.total, 23.0);
    assert_eq!(usage.reasoning, None);
  }

  #[test]
  fn error_events_parse_failures_and_type_errors() {
    let body = sse(&[start()])
      + "event: ping\ndata: {}\n\nevent: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    assert_eq!(
      last_error(&run(&body)),
      "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"
    );
    let bad = sse(&[start()]) + "event: content_block_delta\ndata: {oops\n\n";
    let message = last_error(&run(&bad));
    assert!(
      message.starts_with("Could not parse Anthropic SSE event content_block_delta: ")
        && message.ends_with("; data={oops; raw=event: content_block_delta\\ndata: {oops"),
      "{message}"
    );
    // Raw control characters inside strings are repaired, not fatal.
    let repaired = sse(&[start(), ("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text"}}))])
      + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\tb\"}}\n\n";
    assert!(run(&repaired).contains(&StreamEvent::TextDelta("a\tb".into())));
    let no_message = sse(&[("message_start", json!({"type": "message_start"}))]);
    assert_eq!(
      last_error(&run(&no_message)),
      "Cannot read properties of undefined (reading 'id')"
    );
    // Events are dispatched by the JSON `type`; unknown SSE names are skipped.
    let skipped = sse(&[("ping", json!({"type": "message_start"})), ("whatever", json!({}))]);
    assert_eq!(
      last_error(&run(&skipped)),
      "Anthropic stream ended without a stop reason"
    );
  }

  #[test]
  fn blocks_redacted_thinking_and_partial_tool_input() {
    let body = sse(&[
      start(),
      (
        "content_block_start",
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "redacted_thinking", "data": "xyz"}}),
      ),
      ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
      (
        "content_block_start",
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "t1", "name": "grep", "input": {}}}),
      ),
      (
        "content_block_delta",
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"b\":1,\"2\":[tr"}}),
      ),
      ("content_block_stop", json!({"type": "content_block_stop", "index": 1})),
      (
        "content_block_delta",
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "late"}}),
      ),
      (
        "content_block_start",
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "t2", "name": "ls"}}),
      ),
      (
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 2.0}),
      ),
      (
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
      ),
      ("message_stop", json!({"type": "message_stop"})),
    ]);
    let events = run(&body);
    assert_eq!(events[1], StreamEvent::ThinkingStart);
    assert_eq!(events[2], StreamEvent::ThinkingEnd);
    let calls: Vec<_> = events
      .iter()
      .filter_map(|e| match e {
        StreamEvent::ToolCallEnd { id, name, arguments } => {
          Some((id.as_str(), name.as_str(), serde_json::to_string(arguments).unwrap()))
        }
        _ => None,
      })
      .collect();
    // Partial JSON is completed like `partial-json` does; index keys come first, as in JS.
    assert_eq!(
      calls,
      vec![
        ("t1", "grep", "{\"2\":[true],\"b\":1}".into()),
        ("t2", "ls", "{}".into())
      ]
    );
    assert!(!events.contains(&StreamEvent::TextDelta("late".into())));
  }

  // --- requests beyond the fixtures

  fn sonnet() -> Model {
    let mut m = Catalog::embedded()
      .get("anthropic", "claude-sonnet-4-5")
      .unwrap()
      .clone();
    m.base_url = BASE.into();
    m
  }

  fn opts() -> WireOptions {
    WireOptions {
      api_key: Some("k".into()),
      temperature: Some(0.0),
      retention: Some(Retention::None),
      ..WireOptions::default()
    }
  }

  fn tool(name: &str) -> ToolDef {
    ToolDef {
      name: name.into(),
      description: format!("{name} tool"),
      parameters: json!({"type": "object", "properties": {"p": {"type": "string"}, "q": {"type": "number"}}, "required": ["p"]}),
      constrained_sampling: None,
    }
  }

  fn assistant(model: &Model, blocks: Vec<AssistantBlock>) -> CtxMessage {
    CtxMessage::Assistant {
      blocks,
      api: model.api.clone(),
      provider: model.provider.clone(),
      model: model.id.clone(),
      stop_reason: "toolUse".into(),
    }
  }

  #[test]
  fn headers_override_remove_and_auth() {
    let model = sonnet();
    let ctx = Context {
      tools: Some(vec![tool("a")]),
      ..Context::default()
    };
    let mut o = opts();
    o.headers.insert("Anthropic-Beta".into(), json!("fast-mode-2026-02-01"));
    o.headers.insert("Accept".into(), Value::Null);
    o.headers.insert("X-Custom".into(), json!(" v "));
    let req = build_request(&model, &ctx, &o).unwrap();
    let names: Vec<_> = req.headers.iter().map(|(k, v)| format!("{k}={v}")).collect();
    assert_eq!(
      names,
      [
        "anthropic-version=2023-06-01",
        "x-api-key=k",
        "anthropic-dangerous-direct-browser-access=true",
        "Anthropic-Beta=fast-mode-2026-02-01",
        "X-Custom=v",
        "content-type=application/json"
      ]
    );
    // Without eager streaming support the fine-grained beta joins the list (before interleaved).
    let mut no_eager = sonnet();
    no_eager.compat = Some(
      json!({"supportsEagerToolInputStreaming": false})
        .as_object()
        .unwrap()
        .clone(),
    );
    let req = build_request(&no_eager, &ctx, &opts()).unwrap();
    assert!(req.headers.contains(&(
      "anthropic-beta".into(),
      "fine-grained-tool-streaming-2025-05-14,interleaved-thinking-2025-05-14".into()
    )));
    assert!(req.body["tools"][0].get("eager_input_streaming").is_none());
    // Model headers sit between pi-ai's defaults and the caller's.
    let mut with_headers = sonnet();
    with_headers.headers = Some(json!({"x-model": "1", "x-both": "model"}).as_object().unwrap().clone());
    let mut o = opts();
    o.headers.insert("X-BOTH".into(), json!("caller"));
    let req = build_request(&with_headers, &Context::default(), &o).unwrap();
    let tail: Vec<_> = req.headers[4..].iter().map(|(k, v)| format!("{k}={v}")).collect();
    assert_eq!(
      tail,
      [
        "anthropic-beta=interleaved-thinking-2025-05-14",
        "x-model=1",
        "X-BOTH=caller",
        "content-type=application/json"
      ]
    );
    // Auth.
    let mut none = opts();
    none.api_key = None;
    assert_eq!(
      build_request(&model, &ctx, &none).unwrap_err(),
      "No API key for provider: anthropic"
    );
    none.headers.insert("authorization".into(), json!("Bearer t"));
    let req = build_request(&model, &ctx, &none).unwrap();
    assert!(req.headers.iter().all(|(k, _)| k != "x-api-key"));
    let mut empty = opts();
    empty.api_key = Some(String::new());
    empty.headers.insert("cf-aig-authorization".into(), json!("x"));
    assert!(build_request(&model, &ctx, &empty)
      .unwrap_err()
      .starts_with("Could not resolve authentication method."));
  }

  #[test]
  fn copilot_and_session_affinity_headers() {
    let mut copilot = sonnet();
    copilot.provider = "github-copilot".into();
    let ctx = Context {
      messages: vec![
        CtxMessage::User(UserContent::Blocks(vec![UserBlock::Image {
          mime_type: "image/png".into(),
          data: "AA".into(),
        }])),
        assistant(
          &copilot,
          vec![AssistantBlock::Text {
            text: "x".into(),
            signature: None,
          }],
        ),
      ],
      ..Context::default()
    };
    let req = build_request(&copilot, &ctx, &opts()).unwrap();
    let h: Vec<_> = header_pairs(&req.headers)
      .into_iter()
      .map(|(k, v)| format!("{k}={v}"))
      .collect();
    assert!(h.contains(&"authorization=Bearer k".to_string()) && !h.iter().any(|x| x.starts_with("x-api-key")));
    assert!(h.contains(&"x-initiator=agent".into()) && h.contains(&"copilot-vision-request=true".into()));
    let mut affinity = sonnet();
    affinity.compat = Some(json!({"sendSessionAffinityHeaders": true}).as_object().unwrap().clone());
    let mut o = opts();
    o.session_id = Some("s1".into());
    assert!(!build_request(&affinity, &Context::default(), &o)
      .unwrap()
      .headers
      .iter()
      .any(|(k, _)| k == "x-session-affinity"));
    o.retention = Some(Retention::Short);
    assert!(build_request(&affinity, &Context::default(), &o)
      .unwrap()
      .headers
      .contains(&("x-session-affinity".into(), "s1".into())));
  }

  #[test]
  fn messages_tool_results_images_and_cache() {
    let model = sonnet();
    let long_id = format!("call|{}", "x".repeat(80));
    let other = CtxMessage::Assistant {
      blocks: vec![
        AssistantBlock::Thinking {
          text: "signed".into(),
          signature: Some("sig".into()),
        },
        AssistantBlock::Thinking {
          text: "  ".into(),
          signature: None,
        },
        AssistantBlock::Text {
          text: " ".into(),
          signature: None,
        },
        AssistantBlock::ToolCall {
          id: long_id.clone(),
          name: "a".into(),
          arguments: Map::new(),
        },
        AssistantBlock::ToolCall {
          id: "c2".into(),
          name: "a".into(),
          arguments: Map::new(),
        },
      ],
      api: "openai-responses".into(),
      provider: "openai".into(),
      model: "gpt-5".into(),
      stop_reason: "toolUse".into(),
    };
    let ctx = Context {
      system_prompt: Some("sys".into()),
      messages: vec![
        CtxMessage::User(UserContent::Text("  ".into())),
        CtxMessage::User(UserContent::Blocks(vec![UserBlock::Text(" ".into())])),
        other,
        CtxMessage::ToolResult {
          tool_call_id: long_id.clone(),
          tool_name: "a".into(),
          content: vec![UserBlock::Text("one".into()), UserBlock::Text("two".into())],
          is_error: false,
        },
        CtxMessage::ToolResult {
          tool_call_id: "c2".into(),
          tool_name: "a".into(),
          content: vec![UserBlock::Image {
            mime_type: "image/png".into(),
            data: "AA".into(),
          }],
          is_error: true,
        },
        assistant(
          &model,
          vec![AssistantBlock::Thinking {
            text: "mine".into(),
            signature: Some("s".into()),
          }],
        ),
        CtxMessage::User(UserContent::Text("go".into())),
      ],
      tools: Some(vec![tool("a"), tool("b")]),
    };
    let mut o = opts();
    o.retention = Some(Retention::Long);
    let body = build_request(&model, &ctx, &o).unwrap().body;
    let short_id = format!("call_{}", "x".repeat(59));
    assert_eq!(
      body["messages"],
      json!([
        {"role": "assistant", "content": [
          {"type": "text", "text": "signed"},
          {"type": "tool_use", "id": short_id, "name": "a", "input": {}},
          {"type": "tool_use", "id": "c2", "name": "a", "input": {}}]},
        {"role": "user", "content": [
          {"type": "tool_result", "tool_use_id": short_id, "content": "one\ntwo", "is_error": false},
          {"type": "tool_result", "tool_use_id": "c2", "content": [
            {"type": "text", "text": "(see attached image)"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}}], "is_error": true}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "mine", "signature": "s"}]},
        {"role": "user", "content": [{"type": "text", "text": "go", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]}
      ])
    );
    assert_eq!(
      body["system"][0]["cache_control"],
      json!({"type": "ephemeral", "ttl": "1h"})
    );
    assert!(body["tools"][0].get("cache_control").is_none());
    assert_eq!(
      body["tools"][1]["cache_control"],
      json!({"type": "ephemeral", "ttl": "1h"})
    );
    // A trailing tool-result message carries the cache mark on its last block.
    let ctx = Context {
      messages: vec![CtxMessage::ToolResult {
        tool_call_id: "c".into(),
        tool_name: "a".into(),
        content: vec![UserBlock::Text("r".into())],
        is_error: false,
      }],
      ..Context::default()
    };
    o.retention = Some(Retention::Short);
    let body = build_request(&model, &ctx, &o).unwrap().body;
    assert_eq!(
      body["messages"][0]["content"][0]["cache_control"],
      json!({"type": "ephemeral"})
    );
  }

  #[test]
  fn thinking_temperature_and_tool_choice() {
    let ctx = Context::default();
    let adaptive = |id: &str, level: &str| {
      let mut m = Catalog::embedded().get("anthropic", id).unwrap().clone();
      m.base_url = BASE.into();
      let mut o = opts();
      o.thinking = Some(level.into());
      build_request(&m, &ctx, &o).unwrap().body
    };
    let body = adaptive("claude-opus-4-7", "max");
    assert_eq!(body["output_config"], json!({"effort": "max"}));
    assert!(body.get("temperature").is_none());
    let keys: Vec<_> = body.as_object().unwrap().keys().cloned().collect();
    assert_eq!(
      keys,
      ["model", "messages", "max_tokens", "stream", "thinking", "output_config"]
    );
    // Opus 4.7 takes no temperature even with thinking off.
    let mut opus = Catalog::embedded().get("anthropic", "claude-opus-4-7").unwrap().clone();
    opus.base_url = BASE.into();
    let body = build_request(&opus, &ctx, &opts()).unwrap().body;
    assert!(body.get("temperature").is_none());
    assert_eq!(body["thinking"], json!({"type": "disabled"}));
    // `thinkingLevelMap.off === null`: nothing is sent when thinking is off.
    let fable = Catalog::embedded().get("anthropic", "claude-fable-5").unwrap().clone();
    let body = build_request(&fable, &ctx, &opts()).unwrap().body;
    assert!(body.get("thinking").is_none());
    assert_eq!(body["temperature"], json!(0));
    // Non-reasoning models: no thinking field, and thinking still suppresses temperature.
    let mut plain = sonnet();
    plain.reasoning = false;
    let mut o = opts();
    o.thinking = Some("high".into());
    o.required_tool = Some("a".into());
    o.max_tokens = Some(77);
    o.service_tier = Some("fast".into());
    let body = build_request(&plain, &ctx, &o).unwrap().body;
    assert_eq!(
      serde_json::to_string(&body).unwrap(),
      "{\"model\":\"claude-sonnet-4-5\",\"messages\":[],\"max_tokens\":77,\"stream\":true,\
       \"tool_choice\":{\"type\":\"tool\",\"name\":\"a\"},\"speed\":\"fast\"}"
    );
  }

  #[test]
  fn strict_tools() {
    let model = sonnet();
    let mut t = tool("s");
    t.constrained_sampling = Some(json!({"type": "json_schema", "strict": "prefer"}));
    let ctx = Context {
      tools: Some(vec![t.clone()]),
      ..Context::default()
    };
    let body = build_request(&model, &ctx, &opts()).unwrap().body;
    assert_eq!(
      serde_json::to_string(&body["tools"][0]).unwrap(),
      "{\"name\":\"s\",\"description\":\"s tool\",\"eager_input_streaming\":true,\"strict\":true,\"input_schema\":\
       {\"type\":\"object\",\"properties\":{\"p\":{\"type\":\"string\"},\"q\":{\"anyOf\":[{\"type\":\"number\"},\
       {\"type\":\"null\"}]}},\"required\":[\"p\",\"q\"],\"additionalProperties\":false}}"
    );
    // Unsupported schema: `prefer` falls back, `require` fails.
    t.parameters = json!({"type": "object", "properties": {"x": {"oneOf": []}}});
    let ctx = Context {
      tools: Some(vec![t.clone()]),
      ..Context::default()
    };
    assert!(build_request(&model, &ctx, &opts()).unwrap().body["tools"][0]
      .get("strict")
      .is_none());
    t.constrained_sampling = Some(json!({"type": "json_schema", "strict": "require"}));
    let ctx = Context {
      tools: Some(vec![t]),
      ..Context::default()
    };
    assert_eq!(
      build_request(&model, &ctx, &opts()).unwrap_err(),
      "Tool \"s\" requires JSON-schema constrained sampling, but oneOf schemas are unsupported."
    );
    let mut no_strict = sonnet();
    no_strict.compat = None;
    assert_eq!(
      build_request(&no_strict, &ctx, &opts()).unwrap_err(),
      "Tool \"s\" requires JSON-schema constrained sampling, but strict tools are unsupported."
    );
  }

  #[test]
  fn tool_call_ids_are_sanitised() {
    assert_eq!(normalize_tool_call_id("call_1|fc/2"), "call_1_fc_2");
    assert_eq!(normalize_tool_call_id("a😀b"), "a__b");
    assert_eq!(normalize_tool_call_id(&"y".repeat(70)).len(), 64);
  }

  #[test]
  fn http_error_messages() {
    let rows: Value = serde_json::from_str(include_str!(
      "../../../__test__/fixtures/chat/derived/error-messages.json"
    ))
    .unwrap();
    let errors = [
      ("http429", 429, "rate_limit_error", "Rate limit reached for requests"),
      ("http500", 500, "server_error", "Internal server error"),
      ("http503", 503, "overloaded_error", "Service unavailable"),
      ("noretry503", 503, "overloaded_error", "Service unavailable"),
      (
        "http400",
        400,
        "invalid_request_error",
        "Invalid request: messages.0.content is malformed",
      ),
      (
        "context",
        400,
        "invalid_request_error",
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
      ),
    ];
    let mut checked = 0;
    for row in rows["rows"].as_array().unwrap().iter().filter(|r| r["api"] == API) {
      let Some((_, status, kind, message)) = errors.iter().find(|e| e.0 == row["scenario"]) else {
        continue;
      };
      let body = json!({"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_mock"});
      assert_eq!(
        http_error_message(*status, &body.to_string()),
        row["message"].as_str().unwrap()
      );
      checked += 1;
    }
    assert_eq!(checked, 6);
    assert_eq!(http_error_message(401, "{\"message\":\"bad key\"}"), "401 bad key");
    assert_eq!(http_error_message(402, "{\"message\":{\"a\":1.50}}"), "402 {\"a\":1.5}");
    assert_eq!(
      http_error_message(502, "<html>Bad gateway</html>"),
      "502 <html>Bad gateway</html>"
    );
    assert_eq!(http_error_message(504, ""), "504 status code (no body)");
    assert_eq!(http_error_message(500, "null"), "500 null");
    assert_eq!(
      http_error_message(500, "{\"b\":1e21,\"1\":0.000001}"),
      "500 {\"1\":0.000001,\"b\":1e+21}"
    );
  }
}

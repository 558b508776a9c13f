//! The `openai-completions` wire (OpenAI Chat Completions and the many servers that copy it),
//! as pi-ai 0.84.2 speaks it: request building (spec §4.1), the SSE stream parser (§5.3, §5.10)
//! and the error text of non-2xx responses (§5.11).
//!
//! Server differences are resolved the way pi-ai does it: a compat record detected from the
//! provider id and base URL, overridden field by field by the catalog model's `compat`.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use super::strict::{make_strict_json_schema, resolve_json_schema_strict};
use super::transform::{
  js_json_parse, js_json_parse_kept, js_number, js_ordered, js_stringify, parse_streaming_json, resolve_max_tokens,
  sanitize_surrogates, short_hash, transform_messages, Keep,
};
use crate::chat::catalog::Model;
use crate::chat::sse::SseEvent;
use crate::chat::types::{
  AssistantBlock, Context, CtxMessage, HttpRequest, Retention, StopReason, StreamEvent, StreamParser, ToolDef, Usage,
  UserBlock, UserContent, WireAdapter, WireOptions,
};
use crate::repair::jsnum::number_to_string;
use crate::repair::text::{js_trim, utf16_len, utf16_prefix};

/// The Chat Completions adapter.
pub struct OpenAiCompletions;

impl WireAdapter for OpenAiCompletions {
  fn build_request(&self, model: &Model, context: &Context, options: &WireOptions) -> Result<HttpRequest, String> {
    build_request(model, context, options)
  }

  fn parser(&self, model: &Model, _options: &WireOptions) -> Box<dyn StreamParser + Send> {
    Box::new(CompletionsParser::new(&detect_compat(model), HashMap::new()))
  }
}

// ---------------------------------------------------------------------------------------------
// Compat

/// The server differences pi-ai tracks for Chat Completions endpoints.
#[derive(Clone, Debug, PartialEq)]
pub struct Compat {
  pub supports_store: bool,
  pub supports_developer_role: bool,
  pub supports_reasoning_effort: bool,
  pub supports_usage_in_streaming: bool,
  pub supports_finish_reason: bool,
  /// `max_tokens` or `max_completion_tokens`.
  pub use_max_tokens: bool,
  pub requires_tool_result_name: bool,
  pub requires_assistant_after_tool_result: bool,
  pub requires_thinking_as_text: bool,
  pub requires_reasoning_content_on_assistant_messages: bool,
  /// `openai`, `deepseek`, `zai`, `openrouter`, `together`, `qwen`, `qwen-chat-template`,
  /// `chat-template`, `baseten`, `ant-ling`, `string-thinking` (anything else acts as `openai`).
  pub thinking_format: String,
  pub chat_template_kwargs: Map<String, Value>,
  pub chat_template_args: Map<String, Value>,
  pub zai_tool_stream: bool,
  pub supports_thinking_token_budget: bool,
  pub supports_strict_mode: bool,
  pub supports_openai_grammar_tools: bool,
  /// Anthropic-style `cache_control` markers (OpenRouter's Claude models).
  pub anthropic_cache_control: bool,
  pub send_session_affinity_headers: bool,
  /// `openrouter`, `openai`, or another value (then only the generic affinity headers).
  pub session_affinity_format: String,
  pub supports_long_cache_retention: bool,
}

/// `map.get(key)` by a linear scan: stream chunks are small objects, where comparing a few keys
/// costs less than hashing one.
#[inline]
fn field<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
  if map.len() <= 8 {
    map.iter().find_map(|(k, v)| (k == key).then_some(v))
  } else {
    map.get(key)
  }
}

/// `value.get(key)` for an object (`None` otherwise), as [`field`].
#[inline]
fn value_field<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
  value.as_object().and_then(|m| field(m, key))
}

/// JavaScript truthiness of a JSON value.
fn truthy(v: &Value) -> bool {
  match v {
    Value::Null => false,
    Value::Bool(b) => *b,
    Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
    Value::String(s) => !s.is_empty(),
    Value::Array(_) | Value::Object(_) => true,
  }
}

/// `String(v)` for the values a server may put where a string belongs.
fn js_to_string(v: &Value) -> String {
  match v {
    Value::Null => "null".into(),
    Value::Bool(b) => b.to_string(),
    Value::Number(n) => number_to_string(n.as_f64().unwrap_or(0.0)),
    Value::String(s) => s.clone(),
    Value::Array(items) => items
      .iter()
      .map(|i| if i.is_null() { String::new() } else { js_to_string(i) })
      .collect::<Vec<_>>()
      .join(","),
    Value::Object(_) => "[object Object]".into(),
  }
}

/// The compat record for a model: detected from provider id and base URL, then overridden by
/// each non-null field of the model's `compat`.
pub fn detect_compat(model: &Model) -> Compat {
  let provider = model.provider.as_str();
  let url = model.base_url.as_str();
  let is_zai =
    provider == "zai" || provider == "zai-coding-cn" || url.contains("api.z.ai") || url.contains("open.bigmodel.cn");
  let is_together = provider == "together" || url.contains("api.together.ai") || url.contains("api.together.xyz");
  let is_moonshot = provider == "moonshotai" || provider == "moonshotai-cn" || url.contains("api.moonshot.");
  let is_openrouter = provider == "openrouter" || url.contains("openrouter.ai");
  let is_cf_workers = provider == "cloudflare-workers-ai" || url.contains("api.cloudflare.com");
  let is_cf_gateway = provider == "cloudflare-ai-gateway" || url.contains("gateway.ai.cloudflare.com");
  let is_nvidia = provider == "nvidia" || url.contains("integrate.api.nvidia.com");
  let is_ant_ling = provider == "ant-ling" || url.contains("api.ant-ling.com");
  let is_deepseek = provider == "deepseek" || url.to_lowercase().contains("deepseek.com");
  let is_grok = provider == "xai" || url.contains("api.x.ai");
  let is_non_standard = is_nvidia
    || provider == "cerebras"
    || url.contains("cerebras.ai")
    || is_grok
    || is_together
    || url.contains("chutes.ai")
    || is_deepseek
    || is_zai
    || is_moonshot
    || provider == "opencode"
    || url.contains("opencode.ai")
    || is_cf_workers
    || is_cf_gateway
    || is_ant_ling;
  let use_max_tokens = url.contains("chutes.ai")
    || is_deepseek
    || is_moonshot
    || is_cf_gateway
    || is_together
    || is_nvidia
    || is_ant_ling
    || is_zai;
  let openrouter_developer_model =
    is_openrouter && (model.id.starts_with("anthropic/") || model.id.starts_with("openai/"));
  let thinking_format = if is_deepseek {
    "deepseek"
  } else if is_zai {
    "zai"
  } else if is_together {
    "together"
  } else if is_ant_ling {
    "ant-ling"
  } else if is_openrouter {
    "openrouter"
  } else {
    "openai"
  };
  let detected = Compat {
    supports_store: !is_non_standard,
    supports_developer_role: openrouter_developer_model || (!is_non_standard && !is_openrouter),
    supports_reasoning_effort: !is_grok
      && !is_zai
      && !is_moonshot
      && !is_together
      && !is_cf_gateway
      && !is_nvidia
      && !is_ant_ling,
    supports_usage_in_streaming: true,
    supports_finish_reason: true,
    use_max_tokens,
    requires_tool_result_name: false,
    requires_assistant_after_tool_result: false,
    requires_thinking_as_text: false,
    requires_reasoning_content_on_assistant_messages: is_deepseek,
    thinking_format: thinking_format.into(),
    chat_template_kwargs: Map::new(),
    chat_template_args: Map::new(),
    zai_tool_stream: false,
    supports_thinking_token_budget: false,
    supports_strict_mode: !is_moonshot && !is_together && !is_cf_gateway && !is_nvidia,
    supports_openai_grammar_tools: false,
    anthropic_cache_control: provider == "openrouter" && model.id.starts_with("anthropic/"),
    send_session_affinity_headers: false,
    session_affinity_format: if is_openrouter { "openrouter" } else { "openai" }.into(),
    supports_long_cache_retention: !(is_together || is_cf_workers || is_cf_gateway || is_nvidia || is_ant_ling),
  };
  let Some(overrides) = model.compat.as_ref() else {
    return detected;
  };
  let pick = |key: &str| overrides.get(key).filter(|v| !v.is_null());
  let flag = |key: &str, default: bool| pick(key).map_or(default, truthy);
  let not_false = |key: &str, default: bool| pick(key).map_or(default, |v| *v != Value::Bool(false));
  let text = |key: &str, default: &str| match pick(key) {
    Some(Value::String(s)) => s.clone(),
    Some(_) => String::new(),
    None => default.to_string(),
  };
  let object = |key: &str| match pick(key) {
    Some(Value::Object(m)) => m.clone(),
    _ => Map::new(),
  };
  Compat {
    supports_store: flag("supportsStore", detected.supports_store),
    supports_developer_role: flag("supportsDeveloperRole", detected.supports_developer_role),
    supports_reasoning_effort: flag("supportsReasoningEffort", detected.supports_reasoning_effort),
    supports_usage_in_streaming: not_false("supportsUsageInStreaming", detected.supports_usage_in_streaming),
    supports_finish_reason: flag("supportsFinishReason", detected.supports_finish_reason),
    use_max_tokens: match pick("maxTokensField") {
      Some(v) => *v == Value::String("max_tokens".into()),
      None => detected.use_max_tokens,
    },
    requires_tool_result_name: flag("requiresToolResultName", false),
    requires_assistant_after_tool_result: flag("requiresAssistantAfterToolResult", false),
    requires_thinking_as_text: flag("requiresThinkingAsText", false),
    requires_reasoning_content_on_assistant_messages: flag(
      "requiresReasoningContentOnAssistantMessages",
      detected.requires_reasoning_content_on_assistant_messages,
    ),
    thinking_format: text("thinkingFormat", &detected.thinking_format),
    chat_template_kwargs: object("chatTemplateKwargs"),
    chat_template_args: object("chatTemplateArgs"),
    zai_tool_stream: flag("zaiToolStream", false),
    supports_thinking_token_budget: flag("supportsThinkingTokenBudget", false),
    supports_strict_mode: not_false("supportsStrictMode", detected.supports_strict_mode),
    supports_openai_grammar_tools: flag("supportsOpenAIGrammarTools", false),
    anthropic_cache_control: match pick("cacheControlFormat") {
      Some(v) => *v == Value::String("anthropic".into()),
      None => detected.anthropic_cache_control,
    },
    send_session_affinity_headers: flag("sendSessionAffinityHeaders", false),
    session_affinity_format: text("sessionAffinityFormat", &detected.session_affinity_format),
    supports_long_cache_retention: flag("supportsLongCacheRetention", detected.supports_long_cache_retention),
  }
}

// ---------------------------------------------------------------------------------------------
// Request

/// `No API key for provider: <provider>` unless a key or a non-blank `authorization` (or
/// `cf-aig-authorization`) caller header is there; a missing key is then sent as `unused`.
fn client_api_key(provider: &str, options: &WireOptions) -> Result<String, String> {
  if let Some(key) = options.api_key.as_deref().filter(|k| !k.is_empty()) {
    return Ok(key.to_string());
  }
  let has = |name: &str| {
    options.headers.iter().any(|(k, v)| {
      k.eq_ignore_ascii_case(name)
        && match v {
          Value::Null => false,
          Value::String(s) => !js_trim(s).is_empty(),
          _ => true,
        }
    })
  };
  if has("authorization") || has("cf-aig-authorization") {
    return Ok("unused".into());
  }
  Err(format!("No API key for provider: {provider}"))
}

/// The thinking level as Blade hands it to pi-ai's `stream` (`options.reasoningEffort`): the
/// configured level itself, never clamped to the model's supported levels (that is
/// `streamSimple`'s step, which Blade does not take), `None` for off.
fn reasoning_effort(_model: &Model, options: &WireOptions) -> Option<String> {
  options.thinking.as_deref().filter(|l| *l != "off").map(str::to_string)
}

/// Builds the whole request: URL, headers and body.
pub fn build_request(model: &Model, context: &Context, options: &WireOptions) -> Result<HttpRequest, String> {
  let api_key = client_api_key(&model.provider, options)?;
  let compat = detect_compat(model);
  let retention = options.retention.unwrap_or(Retention::Short);
  let cache_session_id = if retention == Retention::None {
    None
  } else {
    options.session_id.as_deref()
  };
  let body = build_body(model, context, options, &compat)?;
  let base = if model.base_url.is_empty() {
    "https://api.openai.com/v1"
  } else {
    model.base_url.as_str()
  };
  let url = if base.ends_with('/') {
    format!("{base}chat/completions")
  } else {
    format!("{base}/chat/completions")
  };
  let url = encode_path(&url);
  Ok(HttpRequest {
    url,
    headers: build_headers(model, context, options, &compat, &api_key, cache_session_id),
    body,
    zstd: false,
  })
}

/// What WHATWG URL parsing does to the path (the SDK builds the URL with `new URL`): space, `"`,
/// `<`, `>`, `` ` ``, `{`, `}` and non-ASCII characters after the authority are percent-encoded.
fn encode_path(url: &str) -> String {
  let path_start = url
    .find("://")
    .and_then(|i| url[i + 3..].find('/').map(|j| i + 3 + j))
    .unwrap_or(url.len());
  let (head, path) = url.split_at(path_start);
  let mut out = String::with_capacity(url.len());
  out.push_str(head);
  let mut in_fragment = false;
  for c in path.chars() {
    in_fragment |= c == '#';
    let encode = !c.is_ascii() || matches!(c, ' ' | '"' | '<' | '>' | '`') || (!in_fragment && matches!(c, '{' | '}'));
    if encode {
      let mut buf = [0u8; 4];
      for b in c.encode_utf8(&mut buf).bytes() {
        out.push_str(&format!("%{b:02X}"));
      }
    } else {
      out.push(c);
    }
  }
  out
}

/// The request headers in the order the OpenAI SDK (via undici) sends them, minus its telemetry
/// (`user-agent`, `x-stainless-*`): `accept`, `authorization`, the default headers (model
/// headers, Copilot's dynamic headers, session-affinity headers, then caller headers, each
/// replacing same-named earlier ones case-insensitively and keeping its spelling; a JSON null
/// removes), `content-type` (the SDK always sets it for a JSON body), and `accept: */*` when
/// the caller removed `accept` (fetch's default).
fn build_headers(
  model: &Model,
  context: &Context,
  options: &WireOptions,
  compat: &Compat,
  api_key: &str,
  session_id: Option<&str>,
) -> Vec<(String, String)> {
  // The default-headers object, with JS object semantics (exact-case keys, overwrite in place).
  let mut defaults: Vec<(String, Value)> = Vec::new();
  let mut set = |name: &str, value: Value| match defaults.iter_mut().find(|(k, _)| k == name) {
    Some(slot) => slot.1 = value,
    None => defaults.push((name.to_string(), value)),
  };
  for (k, v) in model.headers.iter().flatten() {
    set(k, v.clone());
  }
  if model.provider == "github-copilot" {
    let initiator = match context.messages.last() {
      Some(CtxMessage::User(_)) | None => "user",
      Some(_) => "agent",
    };
    set("X-Initiator", Value::String(initiator.into()));
    set("Openai-Intent", Value::String("conversation-edits".into()));
    let has_images = context.messages.iter().any(|m| match m {
      CtxMessage::User(UserContent::Blocks(b)) | CtxMessage::ToolResult { content: b, .. } => {
        b.iter().any(|x| matches!(x, UserBlock::Image { .. }))
      }
      _ => false,
    });
    if has_images {
      set("Copilot-Vision-Request", Value::String("true".into()));
    }
  }
  if let Some(sid) = session_id.filter(|s| !s.is_empty()) {
    if compat.send_session_affinity_headers {
      if compat.session_affinity_format == "openrouter" {
        set("x-session-id", Value::String(sid.into()));
      } else {
        if compat.session_affinity_format == "openai" {
          set("session_id", Value::String(sid.into()));
        }
        set("x-client-request-id", Value::String(sid.into()));
        set("x-session-affinity", Value::String(sid.into()));
      }
    }
  }
  for (k, v) in &options.headers {
    set(k, v.clone());
  }

  let mut list = HeaderList::default();
  list.apply(&[("accept".to_string(), Value::String("application/json".into()))]);
  list.apply(&[("authorization".to_string(), Value::String(format!("Bearer {api_key}")))]);
  list.apply(&defaults);
  list.apply(&[("content-type".to_string(), Value::String("application/json".into()))]);
  // fetch itself adds `accept: */*` when no accept header is left.
  if !list.0.iter().any(|(k, _)| k.eq_ignore_ascii_case("accept")) {
    list.0.push(("accept".into(), "*/*".into()));
  }
  list.0
}

/// A fetch `Headers` list: names matched case-insensitively (spelled as last set), insertion order,
/// repeated values joined by `, `.
#[derive(Default)]
struct HeaderList(Vec<(String, String)>);

impl HeaderList {
  /// One header source as the SDK's `buildHeaders` merges it: every entry replaces what earlier
  /// sources set for that name; null removes it; an array value appends each element.
  fn apply(&mut self, source: &[(String, Value)]) {
    for (name, value) in source {
      self.0.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
      let values: Vec<&Value> = match value {
        Value::Array(items) => items.iter().collect(),
        v => vec![v],
      };
      for v in values {
        if v.is_null() {
          self.0.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
          continue;
        }
        let text = js_to_string(v);
        let text = text.trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n')).to_string();
        match self.0.iter_mut().find(|(k, _)| k.eq_ignore_ascii_case(name)) {
          Some(slot) => {
            slot.1.push_str(", ");
            slot.1.push_str(&text);
          }
          None => self.0.push((name.clone(), text)),
        }
      }
    }
  }
}

/// Every UTF-16 unit outside `[A-Za-z0-9_-]` becomes `_`.
fn sanitize_id_part(part: &str) -> String {
  part
    .chars()
    .flat_map(|c| {
      let keep = c.is_ascii_alphanumeric() || c == '_' || c == '-';
      let n = if keep {
        1
      } else {
        crate::repair::text::utf16_len(&c.to_string())
      };
      std::iter::repeat_n(if keep { c } else { '_' }, n)
    })
    .collect()
}

/// Tool-call ids replayed to Chat Completions: Responses-style `call|item` ids become
/// `call_item` (sanitised; hash-shortened past 40 characters); for provider `openai` other ids are
/// cut to 40 UTF-16 units.
pub fn normalize_tool_call_id(model: &Model, id: &str) -> String {
  if let Some(sep) = id.find('|') {
    let call_id = sanitize_id_part(&id[..sep]);
    let item_id = sanitize_id_part(&id[sep + 1..]);
    let combined = if item_id.is_empty() {
      call_id.clone()
    } else {
      format!("{call_id}_{item_id}")
    };
    if combined.len() <= 40 {
      return combined;
    }
    let hash: String = short_hash(id).chars().take(8).collect();
    let keep = 40usize.saturating_sub(hash.len() + 1).max(1);
    let prefix: String = call_id.chars().take(keep).collect();
    return format!("{prefix}_{hash}");
  }
  if model.provider == "openai" && utf16_len(id) > 40 {
    return utf16_prefix(id, 40);
  }
  id.to_string()
}

/// The JSON body, keys in pi-ai's order.
pub fn build_body(model: &Model, context: &Context, options: &WireOptions, compat: &Compat) -> Result<Value, String> {
  let tools: &[ToolDef] = context.tools.as_deref().unwrap_or(&[]);
  let grammar = grammar_input_properties(tools, compat)?;
  let retention = options.retention.unwrap_or(Retention::Short);
  let effort = reasoning_effort(model, options);
  let mut messages = convert_messages(model, context, compat, &grammar)?;

  let mut params = Map::new();
  params.insert("model".into(), Value::String(model.id.clone()));
  params.insert("messages".into(), Value::Null); // filled in below, position kept
  params.insert("stream".into(), Value::Bool(true));
  let long = retention == Retention::Long && compat.supports_long_cache_retention;
  if (model.base_url.contains("api.openai.com") && retention != Retention::None) || long {
    if let Some(sid) = &options.session_id {
      // Clamped to 64 code points.
      params.insert("prompt_cache_key".into(), Value::String(sid.chars().take(64).collect()));
    }
  }
  if long {
    params.insert("prompt_cache_retention".into(), Value::String("24h".into()));
  }
  if compat.supports_usage_in_streaming {
    params.insert("stream_options".into(), json!({ "include_usage": true }));
  }
  if compat.supports_store {
    params.insert("store".into(), Value::Bool(false));
  }
  let max_tokens = resolve_max_tokens(model, context, options.max_tokens);
  if max_tokens > 0 {
    let field = if compat.use_max_tokens {
      "max_tokens"
    } else {
      "max_completion_tokens"
    };
    params.insert(field.into(), Value::from(max_tokens));
  }
  if let Some(t) = options.temperature {
    params.insert("temperature".into(), js_number(t));
  }
  let mut tool_list: Option<Vec<Value>> = None;
  if !tools.is_empty() {
    tool_list = Some(convert_tools(tools, compat)?);
  } else if has_tool_history(&context.messages) {
    tool_list = Some(Vec::new());
  }
  if compat.anthropic_cache_control && retention != Retention::None {
    let mut control = Map::new();
    control.insert("type".into(), Value::String("ephemeral".into()));
    if long {
      control.insert("ttl".into(), Value::String("1h".into()));
    }
    apply_anthropic_cache_control(&mut messages, tool_list.as_mut(), &Value::Object(control));
  }
  params["messages"] = Value::Array(messages);
  if let Some(list) = tool_list {
    let non_empty = !list.is_empty();
    params.insert("tools".into(), Value::Array(list));
    if non_empty && compat.zai_tool_stream {
      params.insert("tool_stream".into(), Value::Bool(true));
    }
  }
  if let Some(name) = &options.required_tool {
    params.insert(
      "tool_choice".into(),
      json!({ "type": "function", "function": { "name": name } }),
    );
  }
  apply_thinking(&mut params, model, compat, effort.as_deref());
  if compat.supports_thinking_token_budget && model.reasoning {
    if let Some(e) = effort.as_deref() {
      let level = if e == "xhigh" || e == "max" { "high" } else { e };
      let budget = match level {
        "minimal" => Some(1024i64),
        "low" => Some(2048),
        "medium" => Some(8192),
        "high" => Some(16384),
        _ => None,
      };
      let ceiling = params
        .get("max_tokens")
        .or_else(|| params.get("max_completion_tokens"))
        .and_then(Value::as_i64)
        .unwrap_or(model.max_tokens as i64);
      if let Some(b) = budget {
        let b = b.min((ceiling - 1024).max(0));
        if b > 0 {
          params.insert("thinking_token_budget".into(), Value::from(b));
        }
      }
    }
  }
  if let Some(routing) = model.compat("openRouterRouting").filter(|v| truthy(v)) {
    params.insert("provider".into(), routing.clone());
  }
  if let Some(routing) = model.compat("vercelGatewayRouting").filter(|v| truthy(v)) {
    let only = routing.get("only").filter(|v| truthy(v));
    let order = routing.get("order").filter(|v| truthy(v));
    if only.is_some() || order.is_some() {
      let mut gateway = Map::new();
      if let Some(v) = only {
        gateway.insert("only".into(), v.clone());
      }
      if let Some(v) = order {
        gateway.insert("order".into(), v.clone());
      }
      params.insert("providerOptions".into(), json!({ "gateway": gateway }));
    }
  }
  if let Some(Value::Object(sampling)) = model.extra.get("samplingParams") {
    for (k, v) in sampling {
      params.insert(k.clone(), v.clone());
    }
  }
  // Blade's payload patches: service tier first, then verbosity.
  if let Some(tier) = &options.service_tier {
    params.insert("service_tier".into(), Value::String(tier.clone()));
  }
  if let Some(v) = &options.verbosity {
    params.insert("verbosity".into(), Value::String(v.clone()));
  }
  Ok(Value::Object(params))
}

/// The thinking fields for the compat's thinking format (nothing for non-reasoning models).
fn apply_thinking(params: &mut Map<String, Value>, model: &Model, compat: &Compat, effort: Option<&str>) {
  if !model.reasoning {
    return;
  }
  // `thinkingLevelMap[key]`: None = absent, Some(Null) = explicitly unsupported.
  let mapped = |key: &str| model.thinking_map(key).cloned();
  // `map?.[key] ?? fallback`
  let mapped_or = |key: &str, fallback: &str| match mapped(key) {
    Some(v) if !v.is_null() => v,
    _ => Value::String(fallback.into()),
  };
  let off_not_null = !matches!(mapped("off"), Some(Value::Null));
  let sre = compat.supports_reasoning_effort;
  match compat.thinking_format.as_str() {
    "zai" => {
      params.insert(
        "thinking".into(),
        if effort.is_some() {
          json!({ "type": "enabled", "clear_thinking": false })
        } else {
          json!({ "type": "disabled" })
        },
      );
      if let (Some(e), true) = (effort, sre) {
        let v = mapped(e).unwrap_or_else(|| Value::String(e.into()));
        if v.is_string() {
          params.insert("reasoning_effort".into(), v);
        }
      }
    }
    "qwen" => {
      params.insert("enable_thinking".into(), Value::Bool(effort.is_some()));
      if let (Some(e), true) = (effort, sre) {
        let v = mapped_or(e, e);
        if v.is_string() {
          params.insert("reasoning_effort".into(), v);
        }
      }
    }
    "qwen-chat-template" => {
      params.insert(
        "chat_template_kwargs".into(),
        json!({ "enable_thinking": effort.is_some(), "preserve_thinking": true }),
      );
    }
    "chat-template" => {
      if let Some(values) = chat_template_values(model, effort, &compat.chat_template_kwargs) {
        params.insert("chat_template_kwargs".into(), values);
      }
    }
    "baseten" => {
      if let Some(values) = chat_template_values(model, effort, &compat.chat_template_args) {
        params.insert("chat_template_args".into(), values);
      }
      if sre {
        let m = mapped(effort.unwrap_or("off"));
        let v = match (m, effort) {
          (None, Some(e)) => Some(Value::String(e.into())),
          (None, None) => None,
          (Some(v), _) => Some(v),
        };
        if let Some(v) = v.filter(Value::is_string) {
          params.insert("reasoning_effort".into(), v);
        }
      }
    }
    "deepseek" => {
      if effort.is_some() {
        params.insert("thinking".into(), json!({ "type": "enabled" }));
      } else if off_not_null {
        params.insert("thinking".into(), json!({ "type": "disabled" }));
      }
      if let (Some(e), true) = (effort, sre) {
        params.insert("reasoning_effort".into(), mapped_or(e, e));
      }
    }
    "openrouter" => {
      if let Some(e) = effort {
        params.insert("reasoning".into(), json!({ "effort": mapped_or(e, e) }));
      } else if off_not_null {
        params.insert("reasoning".into(), json!({ "effort": mapped_or("off", "none") }));
      }
    }
    "ant-ling" if effort.is_some() => {
      if let Some(v) = effort.and_then(mapped).filter(Value::is_string) {
        params.insert("reasoning".into(), json!({ "effort": v }));
      }
    }
    "together" => {
      params.insert("reasoning".into(), json!({ "enabled": effort.is_some() }));
      if let (Some(e), true) = (effort, sre) {
        params.insert("reasoning_effort".into(), mapped_or(e, e));
      }
    }
    "string-thinking" => {
      if let Some(e) = effort {
        params.insert("thinking".into(), mapped_or(e, e));
      } else if off_not_null {
        params.insert("thinking".into(), mapped_or("off", "none"));
      }
    }
    // `openai` and anything unknown (also `ant-ling` with thinking off).
    _ => match effort {
      Some(e) if sre => {
        params.insert("reasoning_effort".into(), mapped_or(e, e));
      }
      None if sre => {
        if let Some(v) = mapped("off").filter(Value::is_string) {
          params.insert("reasoning_effort".into(), v);
        }
      }
      _ => {}
    },
  }
}

/// `chat_template_kwargs` / `chat_template_args` from the compat template: literal values as
/// they are, `{$var: "thinking.enabled"}` as the on/off flag, other objects as the mapped level
/// (`omitWhenOff` drops the key when thinking is off). `None` when nothing resolves.
fn chat_template_values(model: &Model, effort: Option<&str>, template: &Map<String, Value>) -> Option<Value> {
  let mut out = Map::new();
  for (key, value) in template {
    let resolved = match value {
      Value::Object(spec) => {
        if effort.is_none() && spec.get("omitWhenOff").is_some_and(truthy) {
          None
        } else if spec.get("$var") == Some(&Value::String("thinking.enabled".into())) {
          Some(Value::Bool(effort.is_some()))
        } else {
          match model.thinking_map(effort.unwrap_or("off")) {
            None => effort.map(|e| Value::String(e.into())),
            Some(Value::String(s)) => Some(Value::String(s.clone())),
            Some(_) => None,
          }
        }
      }
      Value::Array(_) => match model.thinking_map(effort.unwrap_or("off")) {
        None => effort.map(|e| Value::String(e.into())),
        Some(Value::String(s)) => Some(Value::String(s.clone())),
        Some(_) => None,
      },
      other => Some(other.clone()),
    };
    if let Some(v) = resolved {
      out.insert(key.clone(), v);
    }
  }
  if out.is_empty() {
    None
  } else {
    Some(Value::Object(out))
  }
}

fn has_tool_history(messages: &[CtxMessage]) -> bool {
  messages.iter().any(|m| match m {
    CtxMessage::ToolResult { .. } => true,
    CtxMessage::Assistant { blocks, .. } => blocks.iter().any(|b| matches!(b, AssistantBlock::ToolCall { .. })),
    CtxMessage::User(_) => false,
  })
}

/// Tools with grammar constrained sampling (only on endpoints that take OpenAI custom tools):
/// name → the one string property carrying the grammar input.
fn grammar_input_properties(tools: &[ToolDef], compat: &Compat) -> Result<HashMap<String, String>, String> {
  let mut out = HashMap::new();
  for tool in tools {
    if let Some(g) = resolve_grammar(tool, compat.supports_openai_grammar_tools)? {
      out.insert(tool.name.clone(), g.input_property);
    }
  }
  Ok(out)
}

struct Grammar {
  syntax: &'static str,
  definition: String,
  input_property: String,
}

fn resolve_grammar(tool: &ToolDef, supported: bool) -> Result<Option<Grammar>, String> {
  let Some(config) = tool.constrained_sampling.as_ref() else {
    return Ok(None);
  };
  if config.get("type") != Some(&Value::String("grammar".into())) || !supported {
    return Ok(None);
  }
  let fail = |why: &str| format!("Tool \"{}\" cannot use grammar constrained sampling: {why}.", tool.name);
  let variant = |key: &str| {
    config
      .get("variants")
      .and_then(|v| v.get(key))
      .and_then(Value::as_str)
      .filter(|s| !js_trim(s).is_empty())
  };
  let (syntax, definition) = match (variant("openai_lark"), variant("openai_regex")) {
    (Some(lark), _) => ("lark", lark),
    (None, Some(regex)) => ("regex", regex),
    (None, None) => return Err(fail("no supported grammar variant was provided")),
  };
  let schema = &tool.parameters;
  if schema.get("type") != Some(&Value::String("object".into())) {
    return Err(fail("grammar constrained sampling requires an object parameter schema"));
  }
  let property = match schema.get("required").and_then(Value::as_array).map(Vec::as_slice) {
    Some([Value::String(p)]) => p.clone(),
    _ => {
      return Err(fail(
        "grammar constrained sampling requires exactly one required string property",
      ))
    }
  };
  let prop_schema = schema.get("properties").and_then(|p| p.get(&property));
  if !prop_schema.is_some_and(truthy) {
    return Err(fail(&format!(
      "grammar constrained sampling requires a properties entry for {property}"
    )));
  }
  if prop_schema.and_then(|p| p.get("type")) != Some(&Value::String("string".into())) {
    return Err(fail(&format!(
      "grammar constrained sampling property {property} must have type string"
    )));
  }
  Ok(Some(Grammar {
    syntax,
    definition: definition.to_string(),
    input_property: property,
  }))
}

/// The `tools` array: custom grammar tools, else functions (`strict` unless the endpoint rejects
/// the field; a strictified schema when JSON-schema constrained sampling applies).
fn convert_tools(tools: &[ToolDef], compat: &Compat) -> Result<Vec<Value>, String> {
  let mut out = Vec::with_capacity(tools.len());
  for tool in tools {
    if let Some(g) = resolve_grammar(tool, compat.supports_openai_grammar_tools)? {
      out.push(json!({
        "type": "custom",
        "custom": {
          "name": tool.name,
          "description": tool.description,
          "format": { "type": "grammar", "grammar": { "syntax": g.syntax, "definition": g.definition } },
        },
      }));
      continue;
    }
    let strict = resolve_json_schema_strict(tool, compat.supports_strict_mode)?;
    let parameters = if strict == Some(true) {
      make_strict_json_schema(&tool.parameters).map_err(|e| e.to_string())?
    } else {
      tool.parameters.clone()
    };
    let mut function = Map::new();
    function.insert("name".into(), Value::String(tool.name.clone()));
    function.insert("description".into(), Value::String(tool.description.clone()));
    function.insert("parameters".into(), parameters);
    if compat.supports_strict_mode {
      function.insert("strict".into(), Value::Bool(strict.unwrap_or(false)));
    }
    out.push(json!({ "type": "function", "function": function }));
  }
  Ok(out)
}

/// The `messages` array (§4.1), after the cross-model transform.
fn convert_messages(
  model: &Model,
  context: &Context,
  compat: &Compat,
  grammar: &HashMap<String, String>,
) -> Result<Vec<Value>, String> {
  let mut params: Vec<Value> = Vec::new();
  let normalize = |id: &str| normalize_tool_call_id(model, id);
  let messages = transform_messages(&context.messages, model, &normalize);
  if let Some(system) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
    let role = if model.reasoning && compat.supports_developer_role {
      "developer"
    } else {
      "system"
    };
    params.push(json!({ "role": role, "content": sanitize_surrogates(system) }));
  }
  let bridge = || json!({ "role": "assistant", "content": "I have processed the tool results." });
  let mut last_role: Option<&str> = None;
  let mut i = 0;
  while i < messages.len() {
    let message = &messages[i];
    if compat.requires_assistant_after_tool_result
      && last_role == Some("toolResult")
      && matches!(message, CtxMessage::User(_))
    {
      params.push(bridge());
    }
    match message {
      CtxMessage::User(UserContent::Text(text)) => {
        params.push(json!({ "role": "user", "content": sanitize_surrogates(text) }));
        last_role = Some("user");
      }
      CtxMessage::User(UserContent::Blocks(blocks)) => {
        if blocks.is_empty() {
          i += 1;
          continue;
        }
        let content: Vec<Value> = blocks
          .iter()
          .map(|b| match b {
            UserBlock::Text(t) => json!({ "type": "text", "text": sanitize_surrogates(t) }),
            UserBlock::Image { mime_type, data } => {
              json!({ "type": "image_url", "image_url": { "url": format!("data:{mime_type};base64,{data}") } })
            }
          })
          .collect();
        params.push(json!({ "role": "user", "content": content }));
        last_role = Some("user");
      }
      CtxMessage::Assistant { blocks, .. } => {
        if let Some(m) = convert_assistant(model, compat, grammar, blocks)? {
          params.push(m);
          last_role = Some("assistant");
        }
      }
      CtxMessage::ToolResult { .. } => {
        let mut images: Vec<Value> = Vec::new();
        let mut j = i;
        while let Some(CtxMessage::ToolResult {
          tool_call_id,
          tool_name,
          content,
          ..
        }) = messages.get(j)
        {
          let text = content
            .iter()
            .filter_map(|b| match b {
              UserBlock::Text(t) => Some(t.as_str()),
              _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
          let has_images = content.iter().any(|b| matches!(b, UserBlock::Image { .. }));
          let text = if !text.is_empty() {
            text
          } else if has_images {
            "(see attached image)".into()
          } else {
            "(no tool output)".into()
          };
          let mut m = Map::new();
          m.insert("role".into(), Value::String("tool".into()));
          m.insert("content".into(), Value::String(sanitize_surrogates(&text)));
          m.insert("tool_call_id".into(), Value::String(tool_call_id.clone()));
          if compat.requires_tool_result_name && !tool_name.is_empty() {
            m.insert("name".into(), Value::String(tool_name.clone()));
          }
          params.push(Value::Object(m));
          if has_images && model.supports_images() {
            for b in content {
              if let UserBlock::Image { mime_type, data } = b {
                images.push(
                  json!({ "type": "image_url", "image_url": { "url": format!("data:{mime_type};base64,{data}") } }),
                );
              }
            }
          }
          j += 1;
        }
        i = j;
        if images.is_empty() {
          last_role = Some("toolResult");
        } else {
          if compat.requires_assistant_after_tool_result {
            params.push(bridge());
          }
          let mut content = vec![json!({ "type": "text", "text": "Attached image(s) from tool result:" })];
          content.extend(images);
          params.push(json!({ "role": "user", "content": content }));
          last_role = Some("user");
        }
        continue;
      }
    }
    i += 1;
  }
  Ok(params)
}

/// One historical assistant turn; `None` when it has neither content nor tool calls.
fn convert_assistant(
  model: &Model,
  compat: &Compat,
  grammar: &HashMap<String, String>,
  blocks: &[AssistantBlock],
) -> Result<Option<Value>, String> {
  let mut m = Map::new();
  m.insert("role".into(), Value::String("assistant".into()));
  m.insert(
    "content".into(),
    if compat.requires_assistant_after_tool_result {
      Value::String(String::new())
    } else {
      Value::Null
    },
  );
  let text_parts: Vec<String> = blocks
    .iter()
    .filter_map(|b| match b {
      AssistantBlock::Text { text, .. } if !js_trim(text).is_empty() => Some(sanitize_surrogates(text)),
      _ => None,
    })
    .collect();
  let text = text_parts.concat();
  let thinking: Vec<(&str, Option<&str>)> = blocks
    .iter()
    .filter_map(|b| match b {
      AssistantBlock::Thinking { text, signature } if !js_trim(text).is_empty() => {
        Some((text.as_str(), signature.as_deref()))
      }
      _ => None,
    })
    .collect();
  if !thinking.is_empty() && compat.requires_thinking_as_text {
    let joined = thinking
      .iter()
      .map(|(t, _)| sanitize_surrogates(t))
      .collect::<Vec<_>>()
      .join("\n\n");
    let mut content = vec![json!({ "type": "text", "text": joined })];
    content.extend(text_parts.iter().map(|t| json!({ "type": "text", "text": t })));
    m.insert("content".into(), Value::Array(content));
  } else {
    if !text.is_empty() {
      m.insert("content".into(), Value::String(text));
    }
    // A replayable reasoning field: the first thinking block's signature names it.
    if let Some((_, signature)) = thinking.first() {
      let mut field = signature.unwrap_or("").to_string();
      if model.provider == "opencode-go" && field == "reasoning" {
        field = "reasoning_content".into();
      }
      if !field.is_empty() {
        let joined = thinking.iter().map(|(t, _)| *t).collect::<Vec<_>>().join("\n");
        m.insert(field, Value::String(joined));
      }
    }
  }
  let calls: Vec<(&str, &str, &Map<String, Value>)> = blocks
    .iter()
    .filter_map(|b| match b {
      AssistantBlock::ToolCall { id, name, arguments } => Some((id.as_str(), name.as_str(), arguments)),
      _ => None,
    })
    .collect();
  let has_calls = !calls.is_empty();
  if has_calls {
    let mut list = Vec::with_capacity(calls.len());
    for (id, name, arguments) in calls {
      if let Some(property) = grammar.get(name) {
        let Some(Value::String(input)) = arguments.get(property) else {
          return Err(format!(
            "Grammar tool call \"{name}\" requires argument \"{property}\" to be a string."
          ));
        };
        list
          .push(json!({ "id": id, "type": "custom", "custom": { "name": name, "input": sanitize_surrogates(input) } }));
      } else {
        list.push(json!({
          "id": id,
          "type": "function",
          "function": { "name": name, "arguments": js_stringify(&Value::Object(arguments.clone())) },
        }));
      }
    }
    m.insert("tool_calls".into(), Value::Array(list));
  }
  if compat.requires_reasoning_content_on_assistant_messages && model.reasoning && !m.contains_key("reasoning_content")
  {
    m.insert("reasoning_content".into(), Value::String(String::new()));
  }
  let has_content = match m.get("content") {
    Some(Value::String(s)) => !s.is_empty(),
    Some(Value::Array(a)) => !a.is_empty(),
    _ => false,
  };
  if !has_content && !has_calls {
    return Ok(None);
  }
  Ok(Some(Value::Object(m)))
}

/// OpenRouter's Claude models: `cache_control` on the system prompt, the last tool and the last
/// conversation message that carries text.
fn apply_anthropic_cache_control(messages: &mut [Value], tools: Option<&mut Vec<Value>>, control: &Value) {
  if let Some(m) = messages
    .iter_mut()
    .find(|m| matches!(m.get("role").and_then(Value::as_str), Some("system" | "developer")))
  {
    add_cache_control(m, control);
  }
  if let Some(last) = tools.and_then(|t| t.last_mut()).and_then(Value::as_object_mut) {
    last.insert("cache_control".into(), control.clone());
  }
  for m in messages.iter_mut().rev() {
    if matches!(
      m.get("role").and_then(Value::as_str),
      Some("user" | "assistant" | "tool")
    ) && add_cache_control(m, control)
    {
      return;
    }
  }
}

fn add_cache_control(message: &mut Value, control: &Value) -> bool {
  let Some(content) = message.get_mut("content") else {
    return false;
  };
  match content {
    Value::String(s) => {
      if s.is_empty() {
        return false;
      }
      let text = std::mem::take(s);
      *content = json!([{ "type": "text", "text": text, "cache_control": control }]);
      true
    }
    Value::Array(parts) => {
      for part in parts.iter_mut().rev() {
        if part.get("type").and_then(Value::as_str) == Some("text") {
          if let Some(o) = part.as_object_mut() {
            o.insert("cache_control".into(), control.clone());
            return true;
          }
        }
      }
      false
    }
    _ => false,
  }
}

// ---------------------------------------------------------------------------------------------
// Errors

/// The error text of a non-2xx response (§5.11): the OpenAI SDK's `APIError` message, replaced by
/// `<status>: <error object JSON>` when the message does not already carry the body (JSON
/// truncated past 4000 UTF-16 units); OpenRouter's `error.metadata.raw` appended on a new line.
pub fn http_error_message(status: u16, body: &str) -> String {
  let text = body.strip_prefix('\u{feff}').unwrap_or(body);
  let parsed = js_json_parse(text).ok().filter(truthy);
  let error = parsed.as_ref().and_then(|p| p.as_object()).and_then(|o| o.get("error"));
  let fallback = if parsed.is_some() { None } else { Some(text) };
  let msg = sdk_message_text(error, fallback);
  let message = match msg {
    Some(m) if !m.is_empty() => format!("{status} {m}"),
    _ => format!("{status} status code (no body)"),
  };
  compose_provider_error(Some(status), message, error)
}

/// The error text when a stream chunk carries `{"error": …}` (the SDK throws it without status).
pub fn stream_error_message(error: &Value) -> String {
  let message = sdk_message_text(Some(error), None)
    .filter(|m| !m.is_empty())
    .unwrap_or_else(|| "(no status code or body)".into());
  compose_provider_error(None, message, Some(error))
}

/// `APIError.makeMessage`'s text part: `error.message`, else the error JSON, else the raw body.
fn sdk_message_text(error: Option<&Value>, fallback: Option<&str>) -> Option<String> {
  match error {
    Some(e) => match e.get("message").filter(|m| truthy(m)) {
      Some(Value::String(s)) => Some(s.clone()),
      Some(m) => Some(js_stringify(m)),
      None if truthy(e) => Some(js_stringify(e)),
      None => fallback.map(String::from),
    },
    None => fallback.map(String::from),
  }
}

/// pi-ai's `formatProviderError(normalizeProviderError(e))` plus the `metadata.raw` suffix.
fn compose_provider_error(status: Option<u16>, message: String, error: Option<&Value>) -> String {
  let body = error
    .and_then(Value::as_object)
    .filter(|o| !o.is_empty())
    .map(|o| js_stringify(&Value::Object(o.clone())))
    .map(|s| js_trim(&s).to_string())
    .filter(|s| !s.is_empty())
    .map(|s| {
      let len = utf16_len(&s);
      if len > 4000 {
        format!("{}... [truncated {} chars]", utf16_prefix(&s, 4000), len - 4000)
      } else {
        s
      }
    });
  let mut out = match (status, body) {
    (Some(status), Some(body)) if !message.contains(&body) => format!("{status}: {body}"),
    _ => message,
  };
  if let Some(raw) = error
    .and_then(|e| e.get("metadata"))
    .and_then(|m| m.get("raw"))
    .filter(|r| truthy(r))
  {
    let raw = js_to_string(raw);
    if !out.contains(&raw) {
      out.push('\n');
      out.push_str(&raw);
    }
  }
  out
}

// ---------------------------------------------------------------------------------------------
// Stream parser

#[derive(Debug)]
enum ToolArgs {
  /// Concatenated `function.arguments` fragments.
  Json(String),
  /// A grammar (custom) tool's raw input, reported as `{<property>: input}`.
  Custom { property: String, input: String },
}

#[derive(Debug)]
enum Block {
  Text,
  Thinking,
  Tool {
    id: String,
    name: String,
    args: ToolArgs,
    stream_index: Option<u64>,
  },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
  Pending,
  Reason(StopReason),
  Error,
}

/// Parses one Chat Completions SSE stream into pi-ai's events. Deltas are reported as they come;
/// every block end (tool-call ends included) and the terminal event follow only when the body
/// has ended, after `data: [DONE]` (later events are ignored) or without it.
pub struct CompletionsParser {
  supports_finish_reason: bool,
  grammar: HashMap<String, String>,
  started: bool,
  terminated: bool,
  done_marker: bool,
  blocks: Vec<Block>,
  text: Option<usize>,
  thinking: Option<usize>,
  by_index: HashMap<u64, usize>,
  by_id: HashMap<String, usize>,
  usage: Usage,
  stop: Stop,
  error_message: Option<String>,
  has_finish_reason: bool,
}

impl CompletionsParser {
  /// `grammar` maps grammar-tool names to their input property (custom tool calls of other
  /// names report their input as `input`).
  pub fn new(compat: &Compat, grammar: HashMap<String, String>) -> CompletionsParser {
    CompletionsParser {
      supports_finish_reason: compat.supports_finish_reason,
      grammar,
      started: false,
      terminated: false,
      done_marker: false,
      blocks: Vec::new(),
      text: None,
      thinking: None,
      by_index: HashMap::new(),
      by_id: HashMap::new(),
      usage: Usage::default(),
      stop: Stop::Pending,
      error_message: None,
      has_finish_reason: false,
    }
  }

  fn start(&mut self, out: &mut Vec<StreamEvent>) {
    if !self.started {
      self.started = true;
      out.push(StreamEvent::Start);
    }
  }

  fn fail(&mut self, message: String, out: &mut Vec<StreamEvent>) {
    self.terminated = true;
    out.push(StreamEvent::Error { message });
  }

  fn chunk(&mut self, chunk: &Map<String, Value>, out: &mut Vec<StreamEvent>) {
    if let Some(usage) = field(chunk, "usage").filter(|u| truthy(u)) {
      self.usage = parse_usage(usage);
    }
    let Some(choice) = field(chunk, "choices")
      .and_then(Value::as_array)
      .and_then(|c| c.first())
    else {
      return;
    };
    let Some(choice) = choice.as_object() else {
      return;
    };
    if !field(chunk, "usage").is_some_and(truthy) {
      if let Some(usage) = field(choice, "usage").filter(|u| truthy(u)) {
        self.usage = parse_usage(usage);
      }
    }
    if let Some(reason) = field(choice, "finish_reason").filter(|r| truthy(r)) {
      let (stop, error) = map_finish_reason(reason);
      self.stop = stop;
      if error.is_some() {
        self.error_message = error;
      }
      self.has_finish_reason = true;
    }
    let Some(delta) = field(choice, "delta").filter(|d| truthy(d)) else {
      return;
    };
    if let Some(Value::String(content)) = value_field(delta, "content") {
      if !content.is_empty() {
        if self.text.is_none() {
          self.blocks.push(Block::Text);
          self.text = Some(self.blocks.len() - 1);
          out.push(StreamEvent::TextStart);
        }
        out.push(StreamEvent::TextDelta(content.clone()));
      }
    }
    let reasoning = ["reasoning_content", "reasoning", "reasoning_text"]
      .iter()
      .find_map(|f| value_field(delta, f).and_then(Value::as_str).filter(|s| !s.is_empty()));
    if let Some(r) = reasoning {
      if self.thinking.is_none() {
        self.blocks.push(Block::Thinking);
        self.thinking = Some(self.blocks.len() - 1);
        out.push(StreamEvent::ThinkingStart);
      }
      out.push(StreamEvent::ThinkingDelta(r.to_string()));
    }
    if let Some(Value::Array(calls)) = value_field(delta, "tool_calls") {
      for call in calls.iter().filter_map(Value::as_object) {
        self.tool_call_fragment(call, out);
      }
    }
  }

  fn tool_call_fragment(&mut self, call: &Map<String, Value>, out: &mut Vec<StreamEvent>) {
    let stream_index = field(call, "index").and_then(Value::as_f64).map(f64::to_bits);
    let function = field(call, "function").filter(|f| !f.is_null());
    let custom = field(call, "custom").filter(|c| !c.is_null());
    let has_function = truthy_opt(function);
    let id = field(call, "id").and_then(Value::as_str).filter(|s| !s.is_empty());
    let name = function
      .and_then(|f| value_field(f, "name"))
      .filter(|n| !n.is_null())
      .or_else(|| custom.and_then(|c| value_field(c, "name")).filter(|n| !n.is_null()))
      .map(js_to_string)
      .unwrap_or_default();
    let is_custom = truthy_opt(custom) && !has_function;

    let mut slot = stream_index.and_then(|i| self.by_index.get(&i).copied());
    if slot.is_none() {
      slot = id.and_then(|id| self.by_id.get(id).copied());
    }
    let slot = match slot {
      Some(s) => s,
      None => {
        let args = if is_custom {
          ToolArgs::Custom {
            property: self.grammar.get(&name).cloned().unwrap_or_else(|| "input".into()),
            input: String::new(),
          }
        } else {
          ToolArgs::Json(String::new())
        };
        self.blocks.push(Block::Tool {
          id: id.unwrap_or("").to_string(),
          name: name.clone(),
          args,
          stream_index,
        });
        let s = self.blocks.len() - 1;
        if let Some(i) = stream_index {
          self.by_index.insert(i, s);
        }
        if let Some(id) = id {
          self.by_id.insert(id.to_string(), s);
        }
        out.push(StreamEvent::ToolCallStart);
        s
      }
    };
    let Block::Tool {
      id: block_id,
      name: block_name,
      args,
      stream_index: block_index,
    } = &mut self.blocks[slot]
    else {
      return;
    };
    if let (Some(i), None) = (stream_index, *block_index) {
      *block_index = Some(i);
      self.by_index.insert(i, slot);
    }
    if let Some(id) = id {
      self.by_id.insert(id.to_string(), slot);
      if block_id.is_empty() {
        *block_id = id.to_string();
      }
    }
    if block_name.is_empty() && !name.is_empty() {
      *block_name = name;
    }
    if is_custom && !matches!(args, ToolArgs::Custom { .. }) {
      *args = ToolArgs::Custom {
        property: self
          .grammar
          .get(block_name.as_str())
          .cloned()
          .unwrap_or_else(|| "input".into()),
        input: String::new(),
      };
    }
    let fragment = function.and_then(|f| value_field(f, "arguments")).filter(|a| truthy(a));
    if let Some(fragment) = fragment {
      if let ToolArgs::Json(buffer) = args {
        buffer.push_str(&js_to_string(fragment));
      }
    } else if let Some(input) = custom.and_then(|c| value_field(c, "input")).filter(|i| truthy(i)) {
      if let ToolArgs::Custom { input: buffer, .. } = args {
        buffer.push_str(&js_to_string(input));
      }
    }
    out.push(StreamEvent::ToolCallDelta);
  }
}

fn truthy_opt(v: Option<&Value>) -> bool {
  v.is_some_and(truthy)
}

/// finish_reason → stop reason, or an error with `Provider finish_reason: <x>`.
fn map_finish_reason(reason: &Value) -> (Stop, Option<String>) {
  match reason.as_str() {
    Some("stop" | "end") => (Stop::Reason(StopReason::Stop), None),
    Some("length") => (Stop::Reason(StopReason::Length), None),
    Some("function_call" | "tool_calls") => (Stop::Reason(StopReason::ToolUse), None),
    _ => (
      Stop::Error,
      Some(format!("Provider finish_reason: {}", js_to_string(reason))),
    ),
  }
}

/// Usage of a completions chunk (§5.10): cached tokens are reads, `cache_write_tokens` writes,
/// the rest of the prompt is input; `completion_tokens` already includes reasoning.
pub fn parse_usage(raw: &Value) -> Usage {
  let num = |v: Option<&Value>| v.and_then(Value::as_f64);
  let or_zero = |v: Option<&Value>| num(v).filter(|n| *n != 0.0 && !n.is_nan()).unwrap_or(0.0);
  let details = raw.get("prompt_tokens_details").filter(|d| !d.is_null());
  let prompt = or_zero(raw.get("prompt_tokens"));
  let cache_read = match details.and_then(|d| d.get("cached_tokens")).filter(|v| !v.is_null()) {
    Some(v) => num(Some(v)).unwrap_or(0.0),
    None => match raw.get("prompt_cache_hit_tokens").filter(|v| !v.is_null()) {
      Some(v) => num(Some(v)).unwrap_or(0.0),
      None => 0.0,
    },
  };
  let cache_write = or_zero(details.and_then(|d| d.get("cache_write_tokens")));
  let input = (prompt - cache_read - cache_write).max(0.0);
  let output = or_zero(raw.get("completion_tokens"));
  let reasoning = or_zero(
    raw
      .get("completion_tokens_details")
      .filter(|d| !d.is_null())
      .and_then(|d| d.get("reasoning_tokens")),
  );
  Usage {
    input,
    output,
    cache_read,
    cache_write,
    cache_write_1h: 0.0,
    total: input + output + cache_read + cache_write,
    reasoning: Some(reasoning),
    service_tier: None,
  }
}

/// The members of a chunk the parser reads (the rest of each event is checked, not built).
static CHUNK_FIELDS: Keep = Keep::Keys(&[
  ("usage", Keep::All),
  ("error", Keep::All),
  (
    "choices",
    Keep::Keys(&[
      ("usage", Keep::All),
      ("finish_reason", Keep::All),
      (
        "delta",
        Keep::Keys(&[
          ("content", Keep::All),
          ("reasoning_content", Keep::All),
          ("reasoning", Keep::All),
          ("reasoning_text", Keep::All),
          ("tool_calls", Keep::All),
        ]),
      ),
    ]),
  ),
]);

impl StreamParser for CompletionsParser {
  fn on_event(&mut self, event: &SseEvent, out: &mut Vec<StreamEvent>) {
    if self.terminated {
      return;
    }
    self.start(out);
    if self.done_marker {
      return;
    }
    if event.data.starts_with("[DONE]") {
      self.done_marker = true;
      return;
    }
    let parsed = match js_json_parse_kept(&event.data, &CHUNK_FIELDS) {
      Ok(v) => v,
      Err(e) => return self.fail(e.0, out),
    };
    if event.event.starts_with("thread.") {
      return;
    }
    let Value::Object(chunk) = parsed else {
      return;
    };
    if let Some(error) = field(&chunk, "error").filter(|e| truthy(e)) {
      let message = stream_error_message(error);
      return self.fail(message, out);
    }
    self.chunk(&chunk, out);
  }

  fn on_end(&mut self, out: &mut Vec<StreamEvent>) {
    if self.terminated {
      return;
    }
    self.start(out);
    self.terminated = true;
    for block in &mut self.blocks {
      match block {
        Block::Text => out.push(StreamEvent::TextEnd),
        Block::Thinking => out.push(StreamEvent::ThinkingEnd),
        Block::Tool { id, name, args, .. } => {
          if matches!(args, ToolArgs::Custom { .. }) {
            // Closing the custom input's JSON rendering is one more (payload-free) delta.
            out.push(StreamEvent::ToolCallDelta);
          }
          let arguments = match args {
            ToolArgs::Json(buffer) => parse_streaming_json(buffer),
            ToolArgs::Custom { property, input } => {
              let mut m = Map::new();
              m.insert(property.clone(), Value::String(input.clone()));
              m
            }
          };
          out.push(StreamEvent::ToolCallEnd {
            id: id.clone(),
            name: name.clone(),
            arguments: match js_ordered(Value::Object(arguments)) {
              Value::Object(m) => m,
              _ => Map::new(),
            },
          });
        }
      }
    }
    if !self.has_finish_reason && !self.supports_finish_reason {
      let has_calls = self.blocks.iter().any(|b| matches!(b, Block::Tool { .. }));
      self.stop = Stop::Reason(if has_calls {
        StopReason::ToolUse
      } else {
        StopReason::Stop
      });
    }
    let reason = match self.stop {
      Stop::Error => {
        let message = self
          .error_message
          .take()
          .filter(|m| !m.is_empty())
          .unwrap_or_else(|| "Provider returned an error stop reason".into());
        out.push(StreamEvent::Error { message });
        return;
      }
      Stop::Pending => None,
      Stop::Reason(r) => Some(r),
    };
    match reason {
      Some(reason) if self.has_finish_reason || !self.supports_finish_reason => out.push(StreamEvent::Done {
        reason,
        usage: self.usage.clone(),
      }),
      _ => out.push(StreamEvent::Error {
        message: "Stream ended without finish_reason".into(),
      }),
    }
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
  use crate::chat::sse::SseDecoder;
  use crate::chat::wire::transform::js_stringify;

  const BASE: &str = "http://127.0.0.1:9";

  fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("__test__/fixtures/chat")
  }

  fn load(name: &str) -> Value {
    let text = std::fs::read_to_string(fixtures_dir().join(name)).unwrap();
    serde_json::from_str(&text).unwrap()
  }

  fn plain_model(id: &str, provider: &str, base_url: &str) -> Model {
    Model {
      id: id.into(),
      name: id.into(),
      api: "openai-completions".into(),
      provider: provider.into(),
      base_url: base_url.into(),
      reasoning: false,
      input: vec!["text".into()],
      cost: Cost::default(),
      context_window: 128_000,
      max_tokens: 32_768,
      thinking_level_map: None,
      headers: None,
      compat: None,
      extra: Map::new(),
    }
  }

  /// The model a fixture case describes (§2.0): catalog entry or an ad-hoc definition, with the
  /// case's api/base URL and the configured output cap.
  fn case_model(case: &Value) -> Model {
    let m = &case["model"];
    let s = |k: &str| m[k].as_str().unwrap_or("").to_string();
    let base = s("baseUrl").replace("@BASE@", BASE);
    let mut model = if m["catalog"] == Value::Bool(false) {
      let mut model = plain_model(&s("id"), &s("provider"), &base);
      model.reasoning = m["reasoning"].as_bool().unwrap_or(false);
      if let Some(input) = m["input"].as_array() {
        model.input = input.iter().map(|v| v.as_str().unwrap().to_string()).collect();
      }
      model
    } else {
      Catalog::embedded().get(&s("provider"), &s("id")).unwrap().clone()
    };
    model.api = s("api");
    model.base_url = base;
    if let Some(n) = case["config"]["maxOutputTokens"].as_u64() {
      model.max_tokens = n;
    }
    model
  }

  /// Blade's adapter steps (§2.1–§2.8, §3) for a fixture case.
  fn case_inputs(case: &Value, model: &Model) -> (Context, WireOptions) {
    let config = &case["config"];
    let request = &case["requestOptions"];
    let messages = filter_orphan_tool_messages(case["messages"].as_array().unwrap());
    let tools = case["tools"].as_array().cloned().unwrap_or_default();
    let required = request["toolChoice"]["toolName"].as_str();
    check_required_tool(&tools, required).unwrap();
    let context = build_context(&messages, model, &tools, required, &HashMap::new(), &mut |_| {}).unwrap();
    let thinking = if thinking_forced_off(&messages, required) || config["reasoningEnabled"] != Value::Bool(true) {
      None
    } else {
      Some(
        config["reasoningEffort"]
          .as_str()
          .or(config["reasoningLevel"].as_str())
          .unwrap_or("high")
          .to_string(),
      )
    };
    let session = request["providerSessionId"].as_str().map(String::from);
    let retention = if config["enablePromptCaching"] == Value::Bool(true) {
      if session.is_some() && model.api == "openai-completions" && !model.base_url.contains("api.openai.com") {
        Retention::Long
      } else {
        Retention::Short
      }
    } else {
      Retention::None
    };
    let options = WireOptions {
      api_key: config["apiKey"].as_str().map(String::from),
      temperature: Some(
        request["temperature"]
          .as_f64()
          .or(config["temperature"].as_f64())
          .unwrap_or(0.0),
      ),
      max_tokens: request["maxOutputTokens"]
        .as_u64()
        .or(config["maxOutputTokens"].as_u64()),
      timeout_ms: config["timeout"].as_u64(),
      headers: config["customHeaders"].as_object().cloned().unwrap_or_default(),
      session_id: session,
      retention: Some(retention),
      thinking,
      required_tool: required.map(String::from),
      service_tier: config["serviceTier"].as_str().map(String::from),
      verbosity: config["responseVerbosity"].as_str().map(String::from),
      api_version: config["apiVersion"].as_str().map(String::from),
    };
    (context, options)
  }

  #[test]
  fn every_completions_fixture_request_matches() {
    let mut checked = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(fixtures_dir())
      .unwrap()
      .map(|e| e.unwrap().path())
      .filter(|p| p.extension().is_some_and(|x| x == "json"))
      .collect();
    entries.sort();
    for path in entries {
      let fixture: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
      let case = &fixture["case"];
      if case["model"]["api"] != "openai-completions" {
        continue;
      }
      let expected = fixture["expectedRequests"].as_array().unwrap();
      if expected.is_empty() {
        continue;
      }
      let model = case_model(case);
      let (context, options) = case_inputs(case, &model);
      let request = OpenAiCompletions.build_request(&model, &context, &options).unwrap();
      let name = path.file_name().unwrap().to_string_lossy().to_string();
      for want in expected.iter().filter(|r| r["dialect"] == "openai-completions") {
        assert_eq!(
          js_stringify(&request.body),
          js_stringify(&want["body"]),
          "{name}: body (key order included)"
        );
        assert_eq!(request.body, want["body"], "{name}: body values");
        let want_headers: Vec<(String, String)> = want["headers"]
          .as_object()
          .unwrap()
          .iter()
          .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
          .collect();
        assert_eq!(request.headers, want_headers, "{name}: headers");
        let path = want["path"].as_str().unwrap();
        assert_eq!(request.url, format!("{BASE}{path}"), "{name}: url");
        assert!(!request.zstd);
      }
      checked.push(name);
    }
    assert!(checked.len() >= 17, "{checked:?}");
    for must in [
      "openai-completions.json",
      "openai-completions-openai.json",
      "required-tool-cc.json",
      "no-thinking-cc.json",
      "verbosity-cc.json",
      "scenario-http429.json",
      "scenario-eof.json",
    ] {
      assert!(checked.iter().any(|c| c == must), "{must} not checked");
    }
  }

  // -------------------------------------------------------------------------------------------
  // Streams: the loopback mock's exact bytes (mock-provider.mjs `completionsScript`).

  const CALL: &str = "call_mock_1";

  fn mock_frames(body: &str, cut_after_text: bool) -> String {
    let base = json!({ "id": "chatcmpl-mock1", "object": "chat.completion.chunk", "created": 1764458886, "model": "gpt-5",
      "system_fingerprint": "fp_mock" });
    let chunk = |delta: Value, finish: Value| {
      let mut o = base.as_object().unwrap().clone();
      o.insert(
        "choices".into(),
        json!([{ "index": 0, "delta": delta, "logprobs": null, "finish_reason": finish }]),
      );
      o.insert("usage".into(), Value::Null);
      Value::Object(o)
    };
    let mut frames = vec![chunk(
      json!({ "role": "assistant", "content": null, "reasoning_content": "" }),
      Value::Null,
    )];
    if body == "full" {
      for r in ["The user wants the file. ", "I should call read_file."] {
        frames.push(chunk(json!({ "content": null, "reasoning_content": r }), Value::Null));
      }
    }
    for t in ["I'll read ", "the file now."] {
      frames.push(chunk(json!({ "content": t, "reasoning_content": null }), Value::Null));
    }
    let mut text = String::new();
    let encode = |frames: &[Value]| {
      frames
        .iter()
        .map(|f| format!("data: {}\n\n", js_stringify(f)))
        .collect::<String>()
    };
    if cut_after_text {
      return encode(&frames);
    }
    let mut finish = if body == "length" { "length" } else { "stop" };
    if body == "full" {
      frames.push(chunk(
        json!({ "tool_calls": [{ "index": 0, "id": CALL, "type": "function", "function": { "name": "read_file", "arguments": "" } }] }),
        Value::Null,
      ));
      for piece in ["{\"path\":", "\"src/main.rs\"", ",\"limit\":", "20}"] {
        frames.push(chunk(
          json!({ "tool_calls": [{ "index": 0, "function": { "arguments": piece } }] }),
          Value::Null,
        ));
      }
      finish = "tool_calls";
    }
    frames.push(chunk(json!({}), Value::String(finish.into())));
    let mut last = base.as_object().unwrap().clone();
    last.insert("choices".into(), json!([]));
    last.insert(
      "usage".into(),
      json!({ "prompt_tokens": 1200, "completion_tokens": 85, "total_tokens": 1285,
        "prompt_tokens_details": { "cached_tokens": 1024, "audio_tokens": 0 },
        "completion_tokens_details": { "reasoning_tokens": 30, "audio_tokens": 0, "accepted_prediction_tokens": 0,
          "rejected_prediction_tokens": 0 } }),
    );
    frames.push(Value::Object(last));
    text.push_str(&encode(&frames));
    text.push_str("data: [DONE]\n\n");
    text
  }

  /// Feeds the bytes in small slices through the SSE decoder and the parser, the way the
  /// transport must for this wire.
  fn run(model: &Model, bytes: &[u8]) -> Vec<StreamEvent> {
    let mut parser = OpenAiCompletions.parser(model, &WireOptions::default());
    let mut decoder = SseDecoder::default();
    let mut out = Vec::new();
    let mut events = Vec::new();
    for piece in bytes.chunks(7) {
      decoder.feed(piece, &mut events).unwrap();
      for e in events.drain(..) {
        parser.on_event(&e, &mut out);
      }
    }
    // The OpenAI SDK never dispatches an event left unterminated at the end of the body.
    decoder.finish();
    parser.on_end(&mut out);
    out
  }

  fn gpt5() -> Model {
    plain_model("gpt-5", "openai", BASE)
  }

  fn mock_usage() -> Usage {
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
  }

  #[test]
  fn full_stream_events_in_reference_order() {
    let events = run(&gpt5(), mock_frames("full", false).as_bytes());
    let mut args = Map::new();
    args.insert("path".into(), json!("src/main.rs"));
    args.insert("limit".into(), json!(20));
    let mut want = vec![
      StreamEvent::Start,
      StreamEvent::ThinkingStart,
      StreamEvent::ThinkingDelta("The user wants the file. ".into()),
      StreamEvent::ThinkingDelta("I should call read_file.".into()),
      StreamEvent::TextStart,
      StreamEvent::TextDelta("I'll read ".into()),
      StreamEvent::TextDelta("the file now.".into()),
      StreamEvent::ToolCallStart,
    ];
    want.extend(std::iter::repeat_n(StreamEvent::ToolCallDelta, 5));
    want.extend([
      StreamEvent::ThinkingEnd,
      StreamEvent::TextEnd,
      StreamEvent::ToolCallEnd {
        id: CALL.into(),
        name: "read_file".into(),
        arguments: args.clone(),
      },
      StreamEvent::Done {
        reason: StopReason::ToolUse,
        usage: mock_usage(),
      },
    ]);
    assert_eq!(events, want);
    // The projection's `arguments` string (expectedChunks).
    assert_eq!(
      js_stringify(&Value::Object(args)),
      r#"{"path":"src/main.rs","limit":20}"#
    );
  }

  #[test]
  fn text_and_length_streams() {
    for (body, reason) in [("text", StopReason::Stop), ("length", StopReason::Length)] {
      let events = run(&gpt5(), mock_frames(body, false).as_bytes());
      assert_eq!(
        events,
        vec![
          StreamEvent::Start,
          StreamEvent::TextStart,
          StreamEvent::TextDelta("I'll read ".into()),
          StreamEvent::TextDelta("the file now.".into()),
          StreamEvent::TextEnd,
          StreamEvent::Done {
            reason,
            usage: mock_usage()
          },
        ],
        "{body}"
      );
    }
  }

  #[test]
  fn truncated_streams_fail_without_finish_reason() {
    let ended = |events: &[StreamEvent]| events.last().cloned();
    let err = Some(StreamEvent::Error {
      message: "Stream ended without finish_reason".into(),
    });
    let events = run(&gpt5(), b"");
    assert_eq!(events, vec![StreamEvent::Start, err.clone().unwrap()]);
    let events = run(&gpt5(), mock_frames("text", true).as_bytes());
    assert_eq!(
      events,
      vec![
        StreamEvent::Start,
        StreamEvent::TextStart,
        StreamEvent::TextDelta("I'll read ".into()),
        StreamEvent::TextDelta("the file now.".into()),
        StreamEvent::TextEnd,
        err.clone().unwrap(),
      ]
    );
    // Endpoints that never send a finish reason (compat) end as stop / toolUse instead.
    let mut model = gpt5();
    model.compat = Some(json!({ "supportsFinishReason": false }).as_object().unwrap().clone());
    let events = run(&model, mock_frames("text", true).as_bytes());
    assert!(matches!(
      ended(&events),
      Some(StreamEvent::Done {
        reason: StopReason::Stop,
        ..
      })
    ));
    assert_eq!(ended(&run(&gpt5(), b"data: [DONE]\n\n")), err);
  }

  fn parse_lines(model: &Model, lines: &[&str]) -> Vec<StreamEvent> {
    let text: String = lines.iter().map(|l| format!("data: {l}\n\n")).collect();
    run(model, text.as_bytes())
  }

  #[test]
  fn finish_reasons_and_stream_errors() {
    let with = |finish: &str| {
      parse_lines(
        &gpt5(),
        &[&format!(
          r#"{{"choices":[{{"delta":{{"content":"x"}},"finish_reason":{finish}}}]}}"#
        )],
      )
      .last()
      .cloned()
      .unwrap()
    };
    assert!(matches!(
      with("\"end\""),
      StreamEvent::Done {
        reason: StopReason::Stop,
        ..
      }
    ));
    assert!(matches!(
      with("\"function_call\""),
      StreamEvent::Done {
        reason: StopReason::ToolUse,
        ..
      }
    ));
    assert_eq!(
      with("\"content_filter\""),
      StreamEvent::Error {
        message: "Provider finish_reason: content_filter".into()
      }
    );
    assert_eq!(
      with("\"weird\""),
      StreamEvent::Error {
        message: "Provider finish_reason: weird".into()
      }
    );
    // An error chunk ends the stream at once (no block ends); OpenRouter's raw metadata is appended.
    let events = parse_lines(
      &gpt5(),
      &[
        r#"{"choices":[{"delta":{"content":"x"}}]}"#,
        r#"{"error":{"message":"Upstream overloaded","code":502,"metadata":{"raw":"backend said no"}}}"#,
        r#"{"choices":[{"delta":{"content":"y"},"finish_reason":"stop"}]}"#,
      ],
    );
    assert_eq!(
      events,
      vec![
        StreamEvent::Start,
        StreamEvent::TextStart,
        StreamEvent::TextDelta("x".into()),
        StreamEvent::Error {
          message: "Upstream overloaded\nbackend said no".into()
        },
      ]
    );
    let events = parse_lines(&gpt5(), &["{not json"]);
    assert_eq!(
      events,
      vec![
        StreamEvent::Start,
        StreamEvent::Error {
          message: "Expected property name or '}' in JSON at position 1 (line 1 column 2)".into()
        }
      ]
    );
    // A named event without data reaches the parser with data "" (the SDK's JSON.parse fails).
    let events = run(
      &gpt5(),
      b"data: {\"choices\":[{\"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\"}]}\n\nevent: ping\n\n",
    );
    assert_eq!(
      events.last(),
      Some(&StreamEvent::Error {
        message: "Unexpected end of JSON input".into()
      })
    );
    // Events after [DONE] are ignored; the terminal event waits for the end of the body.
    let events = parse_lines(
      &gpt5(),
      &[
        r#"{"choices":[{"delta":{"content":"a"},"finish_reason":"stop"}]}"#,
        "[DONE]",
        r#"{"choices":[{"delta":{"content":"b"}}]}"#,
      ],
    );
    assert_eq!(
      events.iter().filter(|e| matches!(e, StreamEvent::TextDelta(_))).count(),
      1
    );
  }

  #[test]
  fn reasoning_fields_tool_fragments_and_usage_variants() {
    let events = parse_lines(
      &gpt5(),
      &[
        r#"{"choices":[{"delta":{"reasoning":"r1","reasoning_text":"dup"}}]}"#,
        r#"{"choices":[{"delta":{"content":"t","reasoning_text":"r2"}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{\"x\":"}},{"index":1,"id":"b","function":{"name":"g"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"arguments":"1"}},{"index":1,"function":{"arguments":"{\"y\":\"z"}}]}}]}"#,
        r#"{"choices":[{"finish_reason":"tool_calls","usage":{"prompt_tokens":100,"completion_tokens":7,"prompt_cache_hit_tokens":40,"prompt_tokens_details":{"cache_write_tokens":10}}}]}"#,
      ],
    );
    let names: Vec<String> = events
      .iter()
      .map(|e| format!("{e:?}").split(['(', ' ', '{']).next().unwrap().to_string())
      .collect();
    assert_eq!(
      names,
      [
        "Start",
        "ThinkingStart",
        "ThinkingDelta",
        "TextStart",
        "TextDelta",
        "ThinkingDelta",
        "ToolCallStart",
        "ToolCallDelta",
        "ToolCallStart",
        "ToolCallDelta",
        "ToolCallDelta",
        "ToolCallDelta",
        "ThinkingEnd",
        "TextEnd",
        "ToolCallEnd",
        "ToolCallEnd",
        "Done"
      ]
    );
    assert_eq!(events[2], StreamEvent::ThinkingDelta("r1".into()));
    let ends: Vec<&StreamEvent> = events
      .iter()
      .filter(|e| matches!(e, StreamEvent::ToolCallEnd { .. }))
      .collect();
    assert_eq!(
      *ends[0],
      StreamEvent::ToolCallEnd {
        id: "a".into(),
        name: "f".into(),
        arguments: json!({ "x": 1 }).as_object().unwrap().clone()
      }
    );
    assert_eq!(
      *ends[1],
      StreamEvent::ToolCallEnd {
        id: "b".into(),
        name: "g".into(),
        arguments: json!({ "y": "z" }).as_object().unwrap().clone()
      }
    );
    let StreamEvent::Done { usage, .. } = events.last().unwrap() else {
      panic!()
    };
    assert_eq!(
      (
        usage.input,
        usage.cache_read,
        usage.cache_write,
        usage.output,
        usage.total,
        usage.reasoning
      ),
      (50.0, 40.0, 10.0, 7.0, 107.0, Some(0.0))
    );
  }

  // -------------------------------------------------------------------------------------------
  // Errors of non-2xx responses (derived/error-messages.json and the SDK's fallbacks).

  #[test]
  fn http_error_texts() {
    let rows = load("derived/error-messages.json");
    let mut n = 0;
    for row in rows["rows"].as_array().unwrap() {
      if row["api"] != "openai-completions"
        || !row["scenario"].as_str().unwrap().starts_with("http")
          && row["scenario"] != "context"
          && row["scenario"] != "noretry503"
      {
        continue;
      }
      let msg = row["message"].as_str().unwrap();
      let (status, rest) = msg.split_once(": ").unwrap();
      let body = format!(r#"{{"error":{rest}}}"#);
      assert_eq!(http_error_message(status.parse().unwrap(), &body), msg);
      n += 1;
    }
    assert_eq!(n, 6);
    assert_eq!(http_error_message(502, "Bad Gateway"), "502 Bad Gateway");
    assert_eq!(http_error_message(503, ""), "503 status code (no body)");
    assert_eq!(
      http_error_message(500, r#"{"detail":"x"}"#),
      "500 status code (no body)"
    );
    assert_eq!(http_error_message(400, r#"{"error":"bad"}"#), r#"400 "bad""#);
    assert_eq!(
      http_error_message(400, r#"{"error":{"code":1.0}}"#),
      r#"400 {"code":1}"#
    );
    assert_eq!(http_error_message(400, "null"), "400 null");
    let long = "x".repeat(5000);
    let got = http_error_message(413, &format!(r#"{{"error":{{"message":"too big","pad":"{long}"}}}}"#));
    assert!(got.starts_with("413: {\"message\":\"too big\",\"pad\":\"xxx"));
    assert!(got.ends_with("x... [truncated 1030 chars]"));
  }

  // -------------------------------------------------------------------------------------------
  // Request details beyond the fixtures.

  fn simple_context(messages: Vec<CtxMessage>) -> Context {
    Context {
      system_prompt: Some("sys".into()),
      messages,
      tools: None,
    }
  }

  fn keyed(model: &Model, context: &Context, options: &WireOptions) -> Value {
    OpenAiCompletions.build_request(model, context, options).unwrap().body
  }

  fn opts() -> WireOptions {
    WireOptions {
      api_key: Some("k".into()),
      temperature: Some(0.0),
      retention: Some(Retention::Short),
      ..WireOptions::default()
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
  fn api_key_rule_and_header_overrides() {
    let model = gpt5();
    let ctx = simple_context(vec![CtxMessage::User(UserContent::Text("hi".into()))]);
    let mut o = opts();
    o.api_key = None;
    assert_eq!(
      OpenAiCompletions.build_request(&model, &ctx, &o).unwrap_err(),
      "No API key for provider: openai"
    );
    o.headers.insert("Authorization".into(), json!("Bearer mine"));
    o.headers.insert("Accept".into(), json!("text/event-stream"));
    o.headers.insert("Content-Type".into(), json!("text/plain"));
    o.headers.insert("x-null".into(), Value::Null);
    let r = OpenAiCompletions.build_request(&model, &ctx, &o).unwrap();
    let pairs: Vec<(&str, &str)> = r.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(
      pairs,
      [
        ("Authorization", "Bearer mine"),
        ("Accept", "text/event-stream"),
        ("content-type", "application/json")
      ]
    );
    o.headers.insert("authorization".into(), Value::Null);
    o.headers.remove("Authorization");
    assert!(OpenAiCompletions.build_request(&model, &ctx, &o).is_err());
    // Model headers come first among the defaults; caller headers replace them case-insensitively.
    let mut m = plain_model("x", "nvidia", BASE);
    m.headers = Some(
      json!({ "NVCF-POLL-SECONDS": "3600", "X-Keep": "1" })
        .as_object()
        .unwrap()
        .clone(),
    );
    let mut o = opts();
    o.headers.insert("nvcf-poll-seconds".into(), json!(5));
    let r = OpenAiCompletions.build_request(&m, &ctx, &o).unwrap();
    let names: Vec<&str> = r.headers.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
      names,
      ["accept", "authorization", "X-Keep", "nvcf-poll-seconds", "content-type"]
    );
    assert_eq!(r.headers[3].1, "5");
    // Removing `accept` leaves fetch's default at the end.
    let mut o = opts();
    o.headers.insert("ACCEPT".into(), Value::Null);
    let r = OpenAiCompletions.build_request(&m, &ctx, &o).unwrap();
    assert_eq!(r.headers.last().unwrap(), &("accept".to_string(), "*/*".to_string()));
  }

  #[test]
  fn deepseek_style_endpoints() {
    let mut m = plain_model("deepseek-chat", "deepseek", "https://api.deepseek.com");
    m.reasoning = true;
    let ctx = Context {
      system_prompt: Some("sys".into()),
      messages: vec![
        CtxMessage::User(UserContent::Text("hi".into())),
        assistant(
          &m,
          vec![
            AssistantBlock::Thinking {
              text: "hmm".into(),
              signature: None,
            },
            AssistantBlock::ToolCall {
              id: "c1".into(),
              name: "t".into(),
              arguments: Map::new(),
            },
          ],
        ),
        CtxMessage::ToolResult {
          tool_call_id: "c1".into(),
          tool_name: "t".into(),
          content: vec![UserBlock::Text("ok".into())],
          is_error: false,
        },
      ],
      tools: None,
    };
    let mut o = opts();
    o.thinking = Some("high".into());
    let body = keyed(&m, &ctx, &o);
    assert_eq!(
      js_stringify(&body),
      concat!(
        r#"{"model":"deepseek-chat","messages":[{"role":"system","content":"sys"},{"role":"user","content":"hi"},"#,
        r#"{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"t","arguments":"{}"}}],"reasoning_content":""},"#,
        r#"{"role":"tool","content":"ok","tool_call_id":"c1"}],"stream":true,"stream_options":{"include_usage":true},"#,
        r#""max_tokens":32768,"temperature":0,"tools":[],"thinking":{"type":"enabled"},"reasoning_effort":"high"}"#
      )
    );
    o.thinking = None;
    let body = keyed(&m, &ctx, &o);
    assert_eq!(body["thinking"], json!({ "type": "disabled" }));
    assert!(body.get("reasoning_effort").is_none());
  }

  /// Blade hands the configured level to pi-ai's `stream` unclamped; a level the model's
  /// `thinkingLevelMap` marks unsupported (null) is sent as it is (`map[level] ?? level`), a mapped
  /// one as its mapping (issue 8: `medium` on deepseek-v4-pro went out as `high`).
  #[test]
  fn deepseek_levels_are_sent_as_blade_passes_them() {
    let mut m = plain_model("deepseek-v4-pro", "deepseek", "https://api.deepseek.com");
    m.reasoning = true;
    m.thinking_level_map = Some(
      json!({"minimal": null, "low": null, "medium": null, "high": "high", "max": "max"})
        .as_object()
        .unwrap()
        .clone(),
    );
    let ctx = simple_context(vec![CtxMessage::User(UserContent::Text("hi".into()))]);
    for (level, sent) in [
      ("minimal", "minimal"),
      ("low", "low"),
      ("medium", "medium"),
      ("high", "high"),
      ("xhigh", "xhigh"),
      ("max", "max"),
    ] {
      let mut o = opts();
      o.thinking = Some(level.into());
      let body = keyed(&m, &ctx, &o);
      assert_eq!(body["thinking"], json!({ "type": "enabled" }), "{level}");
      assert_eq!(body["reasoning_effort"], json!(sent), "{level}");
    }
  }

  #[test]
  fn zai_openrouter_and_openai_off_formats() {
    let ctx = simple_context(vec![CtxMessage::User(UserContent::Text("hi".into()))]);
    let mut zai = plain_model("glm", "zai", "https://api.z.ai/api/paas/v4");
    zai.reasoning = true;
    let mut o = opts();
    o.thinking = Some("medium".into());
    let body = keyed(&zai, &ctx, &o);
    assert_eq!(body["thinking"], json!({ "type": "enabled", "clear_thinking": false }));
    assert!(body.get("reasoning_effort").is_none());
    assert!(body.get("max_tokens").is_some() && body.get("store").is_none());
    let mut or = plain_model("anthropic/claude-x", "openrouter", "https://openrouter.ai/api/v1");
    or.reasoning = true;
    let body = keyed(&or, &ctx, &o);
    assert_eq!(body["reasoning"], json!({ "effort": "medium" }));
    assert_eq!(body["messages"][0]["role"], "developer");
    // Claude on OpenRouter gets Anthropic cache markers.
    assert_eq!(
      body["messages"][0]["content"],
      json!([{ "type": "text", "text": "sys", "cache_control": { "type": "ephemeral" } }])
    );
    assert_eq!(
      body["messages"][1]["content"],
      json!([{ "type": "text", "text": "hi", "cache_control": { "type": "ephemeral" } }])
    );
    o.thinking = None;
    assert_eq!(keyed(&or, &ctx, &o)["reasoning"], json!({ "effort": "none" }));
    let mut off = gpt5();
    off.reasoning = true;
    off.thinking_level_map = Some(json!({ "off": "minimal" }).as_object().unwrap().clone());
    assert_eq!(keyed(&off, &ctx, &o)["reasoning_effort"], "minimal");
  }

  #[test]
  fn message_serialisation_rules() {
    let mut m = gpt5();
    m.input = vec!["text".into(), "image".into()];
    let img = UserBlock::Image {
      mime_type: "image/png".into(),
      data: "AAA".into(),
    };
    let long_id = format!("call_{}|fc_{}", "a".repeat(30), "b+/".repeat(20));
    let other = CtxMessage::Assistant {
      blocks: vec![
        AssistantBlock::Text {
          text: "  ".into(),
          signature: None,
        },
        AssistantBlock::Text {
          text: "A".into(),
          signature: None,
        },
        AssistantBlock::Text {
          text: "B".into(),
          signature: None,
        },
        AssistantBlock::ToolCall {
          id: long_id.clone(),
          name: "t".into(),
          arguments: json!({ "n": 1.0, "2": "x" }).as_object().unwrap().clone(),
        },
      ],
      api: "openai-responses".into(),
      provider: "openai".into(),
      model: "gpt-5".into(),
      stop_reason: "toolUse".into(),
    };
    let ctx = Context {
      system_prompt: None,
      messages: vec![
        CtxMessage::User(UserContent::Blocks(vec![UserBlock::Text("look".into()), img.clone()])),
        other,
        CtxMessage::ToolResult {
          tool_call_id: long_id.clone(),
          tool_name: "t".into(),
          content: vec![img.clone()],
          is_error: false,
        },
        CtxMessage::User(UserContent::Blocks(vec![])),
        assistant(
          &m,
          vec![AssistantBlock::Text {
            text: " ".into(),
            signature: None,
          }],
        ),
      ],
      tools: None,
    };
    let body = keyed(&m, &ctx, &opts());
    let new_id = format!(
      "call_{}_{}",
      "a".repeat(26),
      short_hash(&long_id).chars().take(8).collect::<String>()
    );
    assert_eq!(new_id.len(), 40);
    assert_eq!(
      body["messages"],
      json!([
        { "role": "user", "content": [{ "type": "text", "text": "look" },
          { "type": "image_url", "image_url": { "url": "data:image/png;base64,AAA" } }] },
        { "role": "assistant", "content": "AB", "tool_calls": [{ "id": new_id, "type": "function",
          "function": { "name": "t", "arguments": "{\"2\":\"x\",\"n\":1}" } }] },
        { "role": "tool", "content": "(see attached image)", "tool_call_id": new_id },
        { "role": "user", "content": [{ "type": "text", "text": "Attached image(s) from tool result:" },
          { "type": "image_url", "image_url": { "url": "data:image/png;base64,AAA" } }] },
      ])
    );
    assert_eq!(body["tools"], json!([]));
    assert!(body.get("reasoning_effort").is_none());
  }

  #[test]
  fn tool_call_ids_and_short_hash() {
    // Values from pi-ai's own shortHash.
    for (id, hash) in [
      ("call_abc|fc_123", "jp01dsxufnom"),
      ("call+/=|item+/=", "j4xvthq3myui"),
      ("call🦀|itém", "1g9lh6411plz3n"),
      ("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "m5qwh21sb26kx"),
    ] {
      assert_eq!(short_hash(id), hash);
    }
    let m = gpt5();
    assert_eq!(normalize_tool_call_id(&m, "call_abc|fc_123"), "call_abc_fc_123");
    assert_eq!(normalize_tool_call_id(&m, "call+/=|item+/="), "call____item___");
    assert_eq!(normalize_tool_call_id(&m, "a|"), "a");
    assert_eq!(normalize_tool_call_id(&m, "call🦀|itém"), "call___it_m");
    assert_eq!(normalize_tool_call_id(&m, &"x".repeat(50)), "x".repeat(40));
    let other = plain_model("x", "groq", BASE);
    assert_eq!(normalize_tool_call_id(&other, &"x".repeat(50)), "x".repeat(50));
  }

  #[test]
  fn strict_tools_and_constrained_sampling() {
    let tool = |cs: Value, params: Value| ToolDef {
      name: "t".into(),
      description: "d".into(),
      parameters: params,
      constrained_sampling: Some(cs),
    };
    let params = json!({ "type": "object", "properties": { "a": { "type": "string" }, "b": { "type": "integer" } },
      "required": ["a"] });
    let ctx = Context {
      system_prompt: None,
      messages: vec![CtxMessage::User(UserContent::Text("hi".into()))],
      tools: Some(vec![tool(
        json!({ "type": "json_schema", "strict": "prefer" }),
        params.clone(),
      )]),
    };
    let body = keyed(&gpt5(), &ctx, &opts());
    assert_eq!(
      body["tools"][0]["function"],
      json!({ "name": "t", "description": "d", "parameters": { "type": "object", "properties": {
        "a": { "type": "string" }, "b": { "anyOf": [{ "type": "integer" }, { "type": "null" }] } },
        "required": ["a", "b"], "additionalProperties": false }, "strict": true })
    );
    let bad = json!({ "type": "object", "properties": { "a": { "$ref": "#/x" } } });
    let ctx2 = Context {
      tools: Some(vec![tool(
        json!({ "type": "json_schema", "strict": "prefer" }),
        bad.clone(),
      )]),
      ..ctx.clone()
    };
    assert_eq!(keyed(&gpt5(), &ctx2, &opts())["tools"][0]["function"]["strict"], false);
    let ctx3 = Context {
      tools: Some(vec![tool(json!({ "type": "json_schema", "strict": "require" }), bad)]),
      ..ctx.clone()
    };
    assert_eq!(
      OpenAiCompletions.build_request(&gpt5(), &ctx3, &opts()).unwrap_err(),
      "Tool \"t\" requires JSON-schema constrained sampling, but $ref schemas are unsupported."
    );
    // Endpoints without strict mode get no `strict` field.
    let moon = plain_model("kimi", "moonshotai", "https://api.moonshot.ai/v1");
    assert!(keyed(&moon, &ctx, &opts())["tools"][0]["function"]
      .get("strict")
      .is_none());
  }

  #[test]
  fn prompt_cache_fields_and_affinity_headers() {
    let ctx = simple_context(vec![CtxMessage::User(UserContent::Text("hi".into()))]);
    let mut o = opts();
    o.session_id = Some("s".repeat(70));
    let official = plain_model("gpt-5", "openai", "https://api.openai.com/v1");
    let body = keyed(&official, &ctx, &o);
    assert_eq!(body["prompt_cache_key"], "s".repeat(64));
    assert!(body.get("prompt_cache_retention").is_none());
    o.retention = Some(Retention::None);
    assert!(keyed(&official, &ctx, &o).get("prompt_cache_key").is_none());
    o.retention = Some(Retention::Long);
    let mut m = plain_model("x", "custom", BASE);
    m.compat = Some(
      json!({ "sendSessionAffinityHeaders": true })
        .as_object()
        .unwrap()
        .clone(),
    );
    let r = OpenAiCompletions.build_request(&m, &ctx, &o).unwrap();
    assert_eq!(r.body["prompt_cache_retention"], "24h");
    let names: Vec<&str> = r.headers.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
      names,
      [
        "accept",
        "authorization",
        "session_id",
        "x-client-request-id",
        "x-session-affinity",
        "content-type"
      ]
    );
    let mut together = plain_model("x", "together", "https://api.together.xyz/v1");
    together.compat = None;
    let body = keyed(&together, &ctx, &o);
    assert!(body.get("prompt_cache_key").is_none() && body.get("prompt_cache_retention").is_none());
  }

  #[test]
  fn max_tokens_are_capped_by_the_context_window() {
    let mut m = gpt5();
    m.context_window = 10_000;
    let ctx = simple_context(vec![CtxMessage::User(UserContent::Text("x".repeat(8000)))]);
    let mut o = opts();
    o.max_tokens = Some(9000);
    // 10000 − (2000 + 1) − 4096
    assert_eq!(keyed(&m, &ctx, &o)["max_completion_tokens"], 3903);
  }
}

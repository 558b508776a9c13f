//! The OpenAI Responses family: `openai-responses` (OpenAI SDK semantics), `azure-openai-responses`
//! (AzureOpenAI SDK semantics) and `openai-codex-responses` (the ChatGPT backend over SSE with a
//! zstd body). Request building and response parsing follow pi-ai 0.84.2 (spec §3.2–§3.6,
//! §4.2–§4.4, §5.4, §5.10, §5.11); where JavaScript semantics leak into the wire (key order,
//! `JSON.stringify` numbers, `String()` coercion, UTF-16 lengths) they are reproduced here.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::anthropic::pi_user_agent;
use super::strict::{make_strict_json_schema, resolve_json_schema_strict};
use super::transform::{
  js_json_parse, js_number, js_stringify, parse_streaming_json, sanitize_surrogates, short_hash,
  transform_messages_with_source, ToolCallSource,
};
use crate::chat::catalog::Model;
use crate::chat::sse::SseEvent;
use crate::chat::types::{
  AssistantBlock, Context, CtxMessage, HttpRequest, Retention, StopReason, StreamEvent, StreamParser, ToolDef, Usage,
  UserBlock, UserContent, WireAdapter, WireOptions,
};
use crate::repair::jsnum::number_to_string;
use crate::repair::text::{js_trim, utf16_len, utf16_prefix};

// ------------------------------------------------------------------------------------------------
// The three adapters

/// Which member of the family a request or stream belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResponsesApi {
  OpenAi,
  Azure,
  Codex,
}

impl ResponsesApi {
  pub fn from_api(api: &str) -> Option<ResponsesApi> {
    match api {
      "openai-responses" => Some(ResponsesApi::OpenAi),
      "azure-openai-responses" => Some(ResponsesApi::Azure),
      "openai-codex-responses" => Some(ResponsesApi::Codex),
      _ => None,
    }
  }

  pub fn as_str(self) -> &'static str {
    match self {
      ResponsesApi::OpenAi => "openai-responses",
      ResponsesApi::Azure => "azure-openai-responses",
      ResponsesApi::Codex => "openai-codex-responses",
    }
  }

  /// Providers whose `call|item` tool-call ids are kept as pairs when replayed from another model.
  fn tool_call_providers(self) -> &'static [&'static str] {
    match self {
      ResponsesApi::Azure => &["openai", "openai-codex", "opencode", "azure-openai-responses"],
      _ => &["openai", "openai-codex", "opencode"],
    }
  }
}

/// A wire adapter for one member of the family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResponsesAdapter(pub ResponsesApi);

pub const OPENAI_RESPONSES: ResponsesAdapter = ResponsesAdapter(ResponsesApi::OpenAi);
pub const AZURE_OPENAI_RESPONSES: ResponsesAdapter = ResponsesAdapter(ResponsesApi::Azure);
pub const OPENAI_CODEX_RESPONSES: ResponsesAdapter = ResponsesAdapter(ResponsesApi::Codex);

impl WireAdapter for ResponsesAdapter {
  fn build_request(&self, model: &Model, context: &Context, options: &WireOptions) -> Result<HttpRequest, String> {
    match self.0 {
      ResponsesApi::OpenAi => build_openai(model, context, options),
      ResponsesApi::Azure => build_azure(model, context, options),
      ResponsesApi::Codex => build_codex(model, context, options),
    }
  }

  /// A parser without knowledge of the request's grammar tools: a `custom_tool_call` then carries
  /// its input under `input`. Use [`ResponsesAdapter::parser_for`] when the context is at hand.
  fn parser(&self, _model: &Model, options: &WireOptions) -> Box<dyn StreamParser + Send> {
    Box::new(ResponsesParser::new(self.0, options, HashMap::new()))
  }
}

impl ResponsesAdapter {
  /// The parser pi-ai uses: grammar (custom) tools of the context report their input under the
  /// property their schema requires.
  pub fn parser_for(&self, model: &Model, context: &Context, options: &WireOptions) -> Box<dyn StreamParser + Send> {
    let grammar =
      grammar_input_properties(context.tools.as_deref().unwrap_or(&[]), supports_grammar(model)).unwrap_or_default();
    Box::new(ResponsesParser::new(self.0, options, grammar))
  }
}

// ------------------------------------------------------------------------------------------------
// JavaScript value semantics

/// JS truthiness of a JSON value (`None` is `undefined`).
fn truthy(v: Option<&Value>) -> bool {
  match v {
    None | Some(Value::Null) | Some(Value::Bool(false)) => false,
    Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
    Some(Value::String(s)) => !s.is_empty(),
    Some(_) => true,
  }
}

/// JS `String(v)` (`None` is `undefined`).
fn js_string(v: Option<&Value>) -> String {
  match v {
    None => "undefined".into(),
    Some(Value::Null) => "null".into(),
    Some(Value::Bool(b)) => b.to_string(),
    Some(Value::Number(n)) => number_to_string(n.as_f64().unwrap_or(0.0)),
    Some(Value::String(s)) => s.clone(),
    Some(Value::Array(a)) => a
      .iter()
      .map(|x| match x {
        Value::Null => String::new(),
        other => js_string(Some(other)),
      })
      .collect::<Vec<_>>()
      .join(","),
    Some(Value::Object(_)) => "[object Object]".into(),
  }
}

/// JS `Math.round`.
fn js_round(x: f64) -> f64 {
  (x + 0.5).floor()
}

/// JS `encodeURIComponent`.
fn encode_uri_component(s: &str) -> String {
  let mut out = String::with_capacity(s.len());
  for b in s.bytes() {
    if b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b) {
      out.push(b as char);
    } else {
      out.push_str(&format!("%{b:02X}"));
    }
  }
  out
}

/// The prompt-cache key: the session id clamped to 64 code points.
fn clamp_prompt_cache_key(key: &str) -> String {
  key.chars().take(64).collect()
}

// ------------------------------------------------------------------------------------------------
// Constrained sampling (strict JSON-schema tools and OpenAI grammar tools)

/// A grammar tool: syntax (`lark` / `regex`), definition and the string property carrying the input.
struct GrammarTool {
  syntax: &'static str,
  definition: String,
  input_property: String,
}

fn infer_grammar_input_property(tool: &ToolDef) -> Result<String, String> {
  let schema = &tool.parameters;
  if schema.get("type").and_then(Value::as_str) != Some("object") {
    return Err("grammar constrained sampling requires an object parameter schema".into());
  }
  let property = match schema.get("required") {
    Some(Value::Array(r)) if r.len() == 1 && r[0].is_string() => r[0].as_str().unwrap_or("").to_string(),
    _ => return Err("grammar constrained sampling requires exactly one required string property".into()),
  };
  let entry = schema.get("properties").and_then(|p| p.get(&property));
  if !truthy(entry) {
    return Err(format!(
      "grammar constrained sampling requires a properties entry for {property}"
    ));
  }
  if entry.and_then(|e| e.get("type")).and_then(Value::as_str) != Some("string") {
    return Err(format!(
      "grammar constrained sampling property {property} must have type string"
    ));
  }
  Ok(property)
}

fn resolve_grammar(tool: &ToolDef, supports_grammar: bool) -> Result<Option<GrammarTool>, String> {
  let Some(config) = tool.constrained_sampling.as_ref() else {
    return Ok(None);
  };
  if config.get("type").and_then(Value::as_str) != Some("grammar") || !supports_grammar {
    return Ok(None);
  }
  let variant = |key: &str| {
    config
      .get("variants")
      .and_then(|v| v.get(key))
      .and_then(Value::as_str)
      .filter(|d| !js_trim(d).is_empty())
  };
  let (syntax, definition) = match (variant("openai_lark"), variant("openai_regex")) {
    (Some(lark), _) => ("lark", lark),
    (None, Some(regex)) => ("regex", regex),
    (None, None) => {
      return Err(format!(
        "Tool \"{}\" cannot use grammar constrained sampling: no supported grammar variant was provided.",
        tool.name
      ))
    }
  };
  let input_property = infer_grammar_input_property(tool)
    .map_err(|e| format!("Tool \"{}\" cannot use grammar constrained sampling: {e}.", tool.name))?;
  Ok(Some(GrammarTool {
    syntax,
    definition: definition.to_string(),
    input_property,
  }))
}

/// Tool name → the property a grammar tool's input travels in.
fn grammar_input_properties(tools: &[ToolDef], supports_grammar: bool) -> Result<HashMap<String, String>, String> {
  let mut out = HashMap::new();
  for tool in tools {
    if let Some(g) = resolve_grammar(tool, supports_grammar)? {
      out.insert(tool.name.clone(), g.input_property);
    }
  }
  Ok(out)
}

fn supports_grammar(model: &Model) -> bool {
  model.compat("supportsOpenAIGrammarTools").and_then(Value::as_bool) == Some(true)
}

/// The JSON-object text a grammar tool's raw input streams as (`{"<prop>":"…"}` in pieces).
#[derive(Clone, Debug, Default)]
struct GrammarJsonBuffer {
  input: String,
  started: bool,
  closed: bool,
}

fn append_grammar_json_delta(
  buffer: &mut GrammarJsonBuffer,
  property: &str,
  next: &str,
  close: bool,
) -> Result<Option<String>, String> {
  if buffer.closed {
    if close && next == buffer.input {
      return Ok(None);
    }
    return Err(format!(
      "grammar tool input for property \"{property}\" changed after it was closed"
    ));
  }
  let Some(input_delta) = next.strip_prefix(buffer.input.as_str()) else {
    return Err(format!(
      "grammar tool input for property \"{property}\" changed non-monotonically"
    ));
  };
  if !close && input_delta.is_empty() {
    return Ok(None);
  }
  let mut delta = String::new();
  if !buffer.started {
    delta.push('{');
    delta.push_str(&serde_json::to_string(property).unwrap_or_default());
    delta.push_str(":\"");
    buffer.started = true;
  }
  let quoted = serde_json::to_string(input_delta).unwrap_or_default();
  delta.push_str(&quoted[1..quoted.len() - 1]);
  buffer.input = next.to_string();
  if close {
    delta.push_str("\"}");
    buffer.closed = true;
  }
  Ok(Some(delta))
}

// ------------------------------------------------------------------------------------------------
// Input items

/// One id part: `[A-Za-z0-9_-]` (other UTF-16 units become `_`), at most 64 units, no trailing `_`.
fn normalize_id_part(part: &str) -> String {
  let mut s = String::with_capacity(part.len());
  for c in part.chars() {
    if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
      s.push(c);
    } else {
      for _ in 0..c.len_utf16() {
        s.push('_');
      }
    }
  }
  s.truncate(64);
  s.trim_end_matches('_').to_string()
}

/// JS `id.split("|")`'s first two parts.
fn split_id(id: &str) -> (&str, Option<&str>) {
  let mut parts = id.split('|');
  let first = parts.next().unwrap_or("");
  (first, parts.next())
}

/// pi-ai's tool-call id normalisation for a call replayed from another model (`source` is the
/// turn the call came from; a call from another provider or api gets a hashed item id).
fn normalize_tool_call_id(id: &str, model: &Model, allowed: &[&str], source: &ToolCallSource) -> String {
  if !allowed.contains(&model.provider.as_str()) || !id.contains('|') {
    return normalize_id_part(id);
  }
  let (call_id, item_id) = split_id(id);
  let item_id = item_id.unwrap_or("");
  let foreign = source.provider != model.provider || source.api != model.api;
  let mut item = if foreign {
    let hashed = format!("fc_{}", short_hash(item_id));
    utf16_prefix(&hashed, 64)
  } else {
    normalize_id_part(item_id)
  };
  if !item.starts_with("fc_") {
    item = normalize_id_part(&format!("fc_{item}"));
  }
  format!("{}|{}", normalize_id_part(call_id), item)
}

fn obj(pairs: Vec<(&str, Value)>) -> Value {
  let mut m = Map::new();
  for (k, v) in pairs {
    m.insert(k.to_string(), v);
  }
  Value::Object(m)
}

/// A text block signature: `{"v":1,"id":…,"phase"?}` or a legacy plain id.
fn parse_text_signature(signature: Option<&str>) -> Option<(String, Option<String>)> {
  let sig = signature.filter(|s| !s.is_empty())?;
  if sig.starts_with('{') {
    if let Ok(parsed) = js_json_parse(sig) {
      if parsed.get("v").and_then(Value::as_f64) == Some(1.0) {
        if let Some(id) = parsed.get("id").and_then(Value::as_str) {
          let phase = parsed
            .get("phase")
            .and_then(Value::as_str)
            .filter(|p| *p == "commentary" || *p == "final_answer")
            .map(String::from);
          return Some((id.to_string(), phase));
        }
      }
    }
  }
  Some((sig.to_string(), None))
}

fn image_url(mime_type: &str, data: &str) -> String {
  format!("data:{mime_type};base64,{data}")
}

fn tool_result_output(model: &Model, content: &[UserBlock]) -> Value {
  let text = content
    .iter()
    .filter_map(|b| match b {
      UserBlock::Text(t) => Some(t.as_str()),
      _ => None,
    })
    .collect::<Vec<_>>()
    .join("\n");
  let images: Vec<(&str, &str)> = content
    .iter()
    .filter_map(|b| match b {
      UserBlock::Image { mime_type, data } => Some((mime_type.as_str(), data.as_str())),
      _ => None,
    })
    .collect();
  if images.is_empty() || !model.supports_images() {
    return Value::String(if !text.is_empty() {
      sanitize_surrogates(&text)
    } else if !images.is_empty() {
      "(see attached image)".into()
    } else {
      "(no tool output)".into()
    });
  }
  let mut out = Vec::new();
  if !text.is_empty() {
    out.push(obj(vec![
      ("type", "input_text".into()),
      ("text", sanitize_surrogates(&text).into()),
    ]));
  }
  for (mime, data) in images {
    out.push(obj(vec![
      ("type", "input_image".into()),
      ("detail", "auto".into()),
      ("image_url", image_url(mime, data).into()),
    ]));
  }
  Value::Array(out)
}

/// The Responses `input` items for the context (pi-ai's `convertResponsesMessages`).
fn convert_input(
  api: ResponsesApi,
  model: &Model,
  context: &Context,
  include_system_prompt: bool,
  grammar: &HashMap<String, String>,
) -> Result<Vec<Value>, String> {
  let allowed = api.tool_call_providers();
  let normalize = |id: &str, source: &ToolCallSource| normalize_tool_call_id(id, model, allowed, source);
  let messages = transform_messages_with_source(&context.messages, model, &normalize);

  let mut items = Vec::new();
  if include_system_prompt {
    if let Some(system) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
      let developer = model.reasoning && model.compat("supportsDeveloperRole") != Some(&Value::Bool(false));
      items.push(obj(vec![
        ("role", if developer { "developer" } else { "system" }.into()),
        ("content", sanitize_surrogates(system).into()),
      ]));
    }
  }
  let mut msg_index = 0usize;
  for message in &messages {
    match message {
      CtxMessage::User(UserContent::Text(text)) => {
        items.push(obj(vec![
          ("role", "user".into()),
          (
            "content",
            Value::Array(vec![obj(vec![
              ("type", "input_text".into()),
              ("text", sanitize_surrogates(text).into()),
            ])]),
          ),
        ]));
      }
      CtxMessage::User(UserContent::Blocks(blocks)) => {
        if blocks.is_empty() {
          continue;
        }
        let content = blocks
          .iter()
          .map(|b| match b {
            UserBlock::Text(t) => obj(vec![
              ("type", "input_text".into()),
              ("text", sanitize_surrogates(t).into()),
            ]),
            UserBlock::Image { mime_type, data } => obj(vec![
              ("type", "input_image".into()),
              ("detail", "auto".into()),
              ("image_url", image_url(mime_type, data).into()),
            ]),
          })
          .collect();
        items.push(obj(vec![("role", "user".into()), ("content", Value::Array(content))]));
      }
      CtxMessage::Assistant {
        blocks,
        api: source_api,
        provider,
        model: source_model,
        ..
      } => {
        let same_provider_api = *provider == model.provider && *source_api == model.api;
        let different_model = same_provider_api && *source_model != model.id;
        let mut output = Vec::new();
        let mut text_index = 0usize;
        for block in blocks {
          match block {
            AssistantBlock::Thinking { signature, .. } => {
              if let Some(sig) = signature.as_deref().filter(|s| !s.is_empty()) {
                let item = js_json_parse(sig).map_err(|e| e.0)?;
                output.push(item);
              }
            }
            AssistantBlock::Text { text, signature } => {
              let parsed = parse_text_signature(signature.as_deref());
              let fallback = if text_index == 0 {
                format!("msg_pi_{msg_index}")
              } else {
                format!("msg_pi_{msg_index}_{text_index}")
              };
              text_index += 1;
              let (id, phase) = match parsed {
                Some((id, phase)) if !id.is_empty() => {
                  if utf16_len(&id) > 64 {
                    (format!("msg_{}", short_hash(&id)), phase)
                  } else {
                    (id, phase)
                  }
                }
                Some((_, phase)) => (fallback, phase),
                None => (fallback, None),
              };
              let mut item = Map::new();
              item.insert("type".into(), "message".into());
              item.insert("role".into(), "assistant".into());
              item.insert(
                "content".into(),
                Value::Array(vec![obj(vec![
                  ("type", "output_text".into()),
                  ("text", sanitize_surrogates(text).into()),
                  ("annotations", Value::Array(Vec::new())),
                ])]),
              );
              item.insert("status".into(), "completed".into());
              item.insert("id".into(), id.into());
              if let Some(phase) = phase {
                item.insert("phase".into(), phase.into());
              }
              output.push(Value::Object(item));
            }
            AssistantBlock::ToolCall { id, name, arguments } => {
              let (call_id, item_id) = split_id(id);
              let custom_property = grammar.get(name);
              let item_id = item_id.filter(|item| {
                let drop = (different_model && item.starts_with("fc_"))
                  || (custom_property.is_none() && !item.starts_with("fc_"));
                !drop
              });
              let mut item = Map::new();
              if let Some(property) = custom_property {
                let input = match arguments.get(property) {
                  Some(Value::String(s)) => s.clone(),
                  _ => {
                    return Err(format!(
                      "Grammar tool call \"{name}\" requires argument \"{property}\" to be a string."
                    ))
                  }
                };
                item.insert("type".into(), "custom_tool_call".into());
                if let Some(item_id) = item_id {
                  item.insert("id".into(), item_id.into());
                }
                item.insert("call_id".into(), call_id.into());
                item.insert("name".into(), name.as_str().into());
                item.insert("input".into(), sanitize_surrogates(&input).into());
              } else {
                item.insert("type".into(), "function_call".into());
                if let Some(item_id) = item_id {
                  item.insert("id".into(), item_id.into());
                }
                item.insert("call_id".into(), call_id.into());
                item.insert("name".into(), name.as_str().into());
                item.insert(
                  "arguments".into(),
                  js_stringify(&Value::Object(arguments.clone())).into(),
                );
              }
              output.push(Value::Object(item));
            }
          }
        }
        if output.is_empty() {
          continue;
        }
        items.extend(output);
      }
      CtxMessage::ToolResult {
        tool_call_id,
        tool_name,
        content,
        ..
      } => {
        let (call_id, _) = split_id(tool_call_id);
        let kind = if grammar.contains_key(tool_name) {
          "custom_tool_call_output"
        } else {
          "function_call_output"
        };
        items.push(obj(vec![
          ("type", kind.into()),
          ("call_id", call_id.into()),
          ("output", tool_result_output(model, content)),
        ]));
      }
    }
    msg_index += 1;
  }
  Ok(items)
}

/// The `tools` array (pi-ai's `convertResponsesTools`). `default_strict` is what a function tool
/// without constrained sampling carries (`false`, or `null` for Codex).
fn convert_tools(
  tools: &[ToolDef],
  default_strict: Value,
  supports_strict: bool,
  supports_grammar: bool,
) -> Result<Vec<Value>, String> {
  let mut out = Vec::with_capacity(tools.len());
  for tool in tools {
    if let Some(g) = resolve_grammar(tool, supports_grammar)? {
      out.push(obj(vec![
        ("type", "custom".into()),
        ("name", tool.name.as_str().into()),
        ("description", tool.description.as_str().into()),
        (
          "format",
          obj(vec![
            ("type", "grammar".into()),
            ("syntax", g.syntax.into()),
            ("definition", g.definition.into()),
          ]),
        ),
      ]));
      continue;
    }
    let strict = match resolve_json_schema_strict(tool, supports_strict)? {
      Some(true) => Value::Bool(true),
      _ => default_strict.clone(),
    };
    let parameters = if strict == Value::Bool(true) {
      make_strict_json_schema(&tool.parameters).map_err(|e| e.0)?
    } else {
      tool.parameters.clone()
    };
    let mut item = Map::new();
    item.insert("type".into(), "function".into());
    item.insert("name".into(), tool.name.as_str().into());
    item.insert("description".into(), tool.description.as_str().into());
    item.insert("parameters".into(), parameters);
    if supports_strict {
      item.insert("strict".into(), strict);
    }
    out.push(Value::Object(item));
  }
  Ok(out)
}

/// Tools with duplicate names collapse to one (first position, last definition), as pi-ai's
/// deferred-tool split does for the OpenAI and Codex adapters.
fn unique_tools(tools: &[ToolDef]) -> Vec<ToolDef> {
  let mut out: Vec<ToolDef> = Vec::with_capacity(tools.len());
  for tool in tools {
    match out.iter_mut().find(|t| t.name == tool.name) {
      Some(existing) => *existing = tool.clone(),
      None => out.push(tool.clone()),
    }
  }
  out
}

/// `reasoning.effort` for a level: `thinkingLevelMap[level] ?? level`.
fn mapped_effort(model: &Model, level: &str) -> Value {
  match model.thinking_map(level) {
    Some(v) if !v.is_null() => v.clone(),
    _ => Value::from(level),
  }
}

/// Blade's verbosity payload patch: `text = {...text, verbosity}`.
fn apply_verbosity(body: &mut Map<String, Value>, verbosity: Option<&str>) {
  let Some(v) = verbosity else { return };
  let mut text = match body.get("text") {
    Some(Value::Object(t)) => t.clone(),
    _ => Map::new(),
  };
  text.insert("verbosity".into(), v.into());
  body.insert("text".into(), Value::Object(text));
}

fn required_tool_choice(options: &WireOptions) -> Option<Value> {
  options
    .required_tool
    .as_deref()
    .map(|name| obj(vec![("type", "function".into()), ("name", name.into())]))
}

// ------------------------------------------------------------------------------------------------
// Headers

/// Caller headers as (name, value); `None` removes the header.
fn caller_headers(options: &WireOptions) -> Vec<(String, Option<String>)> {
  options
    .headers
    .iter()
    .map(|(k, v)| {
      (
        k.clone(),
        match v {
          Value::Null => None,
          other => Some(js_string(Some(other))),
        },
      )
    })
    .collect()
}

fn model_headers(model: &Model) -> Vec<(String, Option<String>)> {
  model
    .headers
    .iter()
    .flatten()
    .map(|(k, v)| {
      (
        k.clone(),
        match v {
          Value::Null => None,
          other => Some(js_string(Some(other))),
        },
      )
    })
    .collect()
}

/// `Object.assign` over header records: an exact key keeps its position and takes the new value.
fn assign(target: &mut Vec<(String, Option<String>)>, source: Vec<(String, Option<String>)>) {
  for (k, v) in source {
    match target.iter_mut().find(|(name, _)| *name == k) {
      Some(slot) => slot.1 = v,
      None => target.push((k, v)),
    }
  }
}

/// The OpenAI SDK's header merge: each layer replaces same-named (case-insensitive) headers of
/// the earlier layers and appends at the end; a null value removes; a name repeated within one
/// layer is combined with `, `.
fn sdk_headers(layers: Vec<Vec<(String, Option<String>)>>) -> Vec<(String, String)> {
  let mut out: Vec<(String, String)> = Vec::new();
  for layer in layers {
    let mut seen: HashSet<String> = HashSet::new();
    for (name, value) in layer {
      let lower = name.to_ascii_lowercase();
      if seen.insert(lower.clone()) {
        out.retain(|(n, _)| n.to_ascii_lowercase() != lower);
      }
      match value {
        None => out.retain(|(n, _)| n.to_ascii_lowercase() != lower),
        Some(v) => match out.iter_mut().find(|(n, _)| n.to_ascii_lowercase() == lower) {
          Some(existing) => {
            existing.1.push_str(", ");
            existing.1.push_str(&v);
          }
          None => out.push((name, v)),
        },
      }
    }
  }
  out
}

/// A fetch `Headers` object: `set` replaces in place (case-insensitive), `delete` removes.
struct FetchHeaders(Vec<(String, String)>);

impl FetchHeaders {
  fn set(&mut self, name: &str, value: &str) {
    match self.0.iter_mut().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
      Some(slot) => *slot = (name.to_string(), value.to_string()),
      None => self.0.push((name.to_string(), value.to_string())),
    }
  }
  fn append(&mut self, name: &str, value: &str) {
    match self.0.iter_mut().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
      Some(slot) => {
        slot.1.push_str(", ");
        slot.1.push_str(value);
      }
      None => self.0.push((name.to_string(), value.to_string())),
    }
  }
  fn delete(&mut self, name: &str) {
    self.0.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
  }
}

/// pi-ai's `hasHeader`: a caller header with a non-blank value.
fn has_caller_header(options: &WireOptions, name: &str) -> bool {
  options.headers.iter().any(|(k, v)| {
    k.eq_ignore_ascii_case(name)
      && match v {
        Value::Null => false,
        other => !js_trim(&js_string(Some(other))).is_empty(),
      }
  })
}

/// fetch's `Headers` only take byte strings: a value with a character above U+00FF fails the request.
fn check_byte_strings(headers: &[(String, String)]) -> Result<(), String> {
  for (_, value) in headers {
    for (index, unit) in value.encode_utf16().enumerate() {
      if unit > 255 {
        return Err(format!(
          "Cannot convert argument to a ByteString because the character at index {index} has a value of {unit} \
           which is greater than 255."
        ));
      }
    }
  }
  Ok(())
}

// ------------------------------------------------------------------------------------------------
// openai-responses

fn compat_bool(model: &Model, key: &str, default: bool) -> bool {
  model.compat(key).and_then(Value::as_bool).unwrap_or(default)
}

fn build_openai(model: &Model, context: &Context, options: &WireOptions) -> Result<HttpRequest, String> {
  let api_key = match options.api_key.as_deref().filter(|k| !k.is_empty()) {
    Some(k) => k.to_string(),
    None if has_caller_header(options, "authorization") || has_caller_header(options, "cf-aig-authorization") => {
      "unused".to_string()
    }
    None => return Err(format!("No API key for provider: {}", model.provider)),
  };
  let retention = options.retention.unwrap_or(Retention::Short);
  let cache_session = match retention {
    Retention::None => None,
    _ => options.session_id.as_deref(),
  };
  let supports_strict = compat_bool(model, "supportsStrictMode", false);
  let grammar_tools = supports_grammar(model);
  let long_cache = compat_bool(model, "supportsLongCacheRetention", true);
  let explicit_cache_mode = compat_bool(model, "supportsExplicitPromptCacheMode", false);
  let tools = unique_tools(context.tools.as_deref().unwrap_or(&[]));
  let grammar = grammar_input_properties(&tools, grammar_tools)?;

  // Headers: SDK defaults, auth, then the client's default headers, then the JSON body header.
  let affinity = match model.compat("sessionAffinityFormat").and_then(Value::as_str) {
    Some(f) => f.to_string(),
    None if model.provider == "openrouter" || model.base_url.contains("openrouter.ai") => "openrouter".into(),
    None => "openai".into(),
  };
  let mut defaults = model_headers(model);
  if model.provider == "github-copilot" {
    let mut dynamic = vec![
      (
        "X-Initiator".to_string(),
        Some(copilot_initiator(&context.messages).to_string()),
      ),
      ("Openai-Intent".to_string(), Some("conversation-edits".to_string())),
    ];
    if copilot_has_images(&context.messages) {
      dynamic.push(("Copilot-Vision-Request".into(), Some("true".into())));
    }
    assign(&mut defaults, dynamic);
  }
  if let Some(sid) = cache_session.filter(|s| !s.is_empty()) {
    if affinity == "openrouter" {
      assign(&mut defaults, vec![("x-session-id".into(), Some(sid.into()))]);
    } else {
      if affinity == "openai" {
        assign(&mut defaults, vec![("session_id".into(), Some(sid.into()))]);
      }
      assign(&mut defaults, vec![("x-client-request-id".into(), Some(sid.into()))]);
    }
  }
  assign(&mut defaults, caller_headers(options));
  let headers = sdk_headers(vec![
    vec![("accept".into(), Some("application/json".into()))],
    vec![("authorization".into(), Some(format!("Bearer {api_key}")))],
    defaults,
    vec![("content-type".into(), Some("application/json".into()))],
  ]);

  let input = convert_input(ResponsesApi::OpenAi, model, context, true, &grammar)?;
  let mut body = Map::new();
  body.insert("model".into(), model.id.as_str().into());
  body.insert("input".into(), Value::Array(input));
  body.insert("stream".into(), Value::Bool(true));
  if retention != Retention::None {
    if let Some(sid) = options.session_id.as_deref() {
      body.insert("prompt_cache_key".into(), clamp_prompt_cache_key(sid).into());
    }
  }
  if retention == Retention::Long && long_cache {
    body.insert("prompt_cache_retention".into(), "24h".into());
  }
  if retention == Retention::None && explicit_cache_mode {
    body.insert("prompt_cache_options".into(), obj(vec![("mode", "explicit".into())]));
  }
  body.insert("store".into(), Value::Bool(false));
  if let Some(max) = options.max_tokens.filter(|m| *m > 0) {
    body.insert("max_output_tokens".into(), Value::from(max.max(16)));
  }
  if let Some(t) = options.temperature {
    body.insert("temperature".into(), js_number(t));
  }
  if let Some(tier) = options.service_tier.as_deref() {
    body.insert("service_tier".into(), tier.into());
  }
  if !tools.is_empty() {
    let converted = convert_tools(&tools, Value::Bool(false), supports_strict, grammar_tools)?;
    body.insert("tools".into(), Value::Array(converted));
  }
  if let Some(choice) = required_tool_choice(options) {
    body.insert("tool_choice".into(), choice);
  }
  if model.reasoning {
    if let Some(level) = options.thinking.as_deref().filter(|l| !l.is_empty()) {
      body.insert(
        "reasoning".into(),
        obj(vec![
          ("effort", mapped_effort(model, level)),
          ("summary", "auto".into()),
        ]),
      );
      body.insert(
        "include".into(),
        Value::Array(vec!["reasoning.encrypted_content".into()]),
      );
    } else if model.provider != "github-copilot" && model.thinking_map("off") != Some(&Value::Null) {
      let effort = model.thinking_map("off").cloned().unwrap_or_else(|| "none".into());
      body.insert("reasoning".into(), obj(vec![("effort", effort)]));
    }
    if model.provider == "xai" {
      body.insert(
        "include".into(),
        Value::Array(vec!["reasoning.encrypted_content".into()]),
      );
    }
  }
  apply_verbosity(&mut body, options.verbosity.as_deref());

  let base = if model.base_url.is_empty() {
    "https://api.openai.com/v1"
  } else {
    model.base_url.as_str()
  };
  check_byte_strings(&headers)?;
  Ok(HttpRequest {
    url: join_url(base, "/responses"),
    headers,
    body: Value::Object(body),
    zstd: false,
  })
}

/// The SDK's `baseURL + path` (one slash between them).
fn join_url(base: &str, path: &str) -> String {
  if base.ends_with('/') {
    format!("{base}{}", &path[1..])
  } else {
    format!("{base}{path}")
  }
}

fn copilot_initiator(messages: &[CtxMessage]) -> &'static str {
  match messages.last() {
    Some(CtxMessage::User(_)) | None => "user",
    Some(_) => "agent",
  }
}

fn copilot_has_images(messages: &[CtxMessage]) -> bool {
  messages.iter().any(|m| match m {
    CtxMessage::User(UserContent::Blocks(b)) => b.iter().any(|x| matches!(x, UserBlock::Image { .. })),
    CtxMessage::ToolResult { content, .. } => content.iter().any(|x| matches!(x, UserBlock::Image { .. })),
    _ => false,
  })
}

// ------------------------------------------------------------------------------------------------
// azure-openai-responses

/// Azure's base URL: Azure hosts with an empty, `/openai` or `/openai/v1/responses` path are moved
/// to `/openai/v1` (query dropped); trailing slashes removed.
fn normalize_azure_base_url(base_url: &str) -> Result<String, String> {
  let invalid = || format!("Invalid Azure OpenAI base URL: {base_url}");
  let trimmed = js_trim(base_url).trim_end_matches('/');
  let (scheme, rest) = trimmed.split_once("://").ok_or_else(invalid)?;
  if scheme.is_empty() || !scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) {
    return Err(invalid());
  }
  let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
  let (authority, tail) = rest.split_at(authority_end);
  let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
  let host = match host_port.strip_prefix('[') {
    Some(v6) => v6.split(']').next().unwrap_or(""),
    None => host_port.split(':').next().unwrap_or(""),
  };
  if host.is_empty() {
    return Err(invalid());
  }
  let host = host.to_ascii_lowercase();
  let (path_and_query, fragment) = match tail.split_once('#') {
    Some((a, f)) => (a, Some(f)),
    None => (tail, None),
  };
  let (path, query) = match path_and_query.split_once('?') {
    Some((p, q)) => (p, Some(q)),
    None => (path_and_query, None),
  };
  let azure_host = host.ends_with(".openai.azure.com")
    || host.ends_with(".cognitiveservices.azure.com")
    || host.ends_with(".ai.azure.com");
  let normalized_path = path.trim_end_matches('/');
  let scheme = scheme.to_ascii_lowercase();
  let mut out = format!("{scheme}://{authority}");
  if azure_host && matches!(normalized_path, "" | "/openai" | "/openai/v1/responses") {
    out.push_str("/openai/v1");
  } else {
    out.push_str(if path.is_empty() { "/" } else { path });
    if let Some(q) = query {
      out.push('?');
      out.push_str(q);
    }
  }
  if let Some(f) = fragment {
    out.push('#');
    out.push_str(f);
  }
  Ok(out.trim_end_matches('/').to_string())
}

fn build_azure(model: &Model, context: &Context, options: &WireOptions) -> Result<HttpRequest, String> {
  let api_key = options
    .api_key
    .as_deref()
    .filter(|k| !k.is_empty())
    .ok_or_else(|| format!("No API key for provider: {}", model.provider))?;
  let api_version = options.api_version.as_deref().filter(|v| !v.is_empty()).unwrap_or("v1");
  let base = js_trim(&model.base_url);
  if base.is_empty() {
    return Err(
      concat!(
        "Azure OpenAI base URL is required. Set AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME, ",
        "or pass azureBaseUrl, azureResourceName, or model.baseUrl."
      )
      .into(),
    );
  }
  let base = normalize_azure_base_url(base)?;
  let grammar_tools = supports_grammar(model);
  let tools = context.tools.as_deref().unwrap_or(&[]);
  let grammar = grammar_input_properties(tools, grammar_tools)?;

  let mut defaults = model_headers(model);
  assign(&mut defaults, caller_headers(options));
  let headers = sdk_headers(vec![
    vec![("accept".into(), Some("application/json".into()))],
    vec![("api-key".into(), Some(api_key.to_string()))],
    defaults,
    vec![("content-type".into(), Some("application/json".into()))],
  ]);

  let input = convert_input(ResponsesApi::Azure, model, context, true, &grammar)?;
  let mut body = Map::new();
  // The deployment name is the model id (Blade's `azureDeploymentName`).
  body.insert("model".into(), model.id.as_str().into());
  body.insert("input".into(), Value::Array(input));
  body.insert("stream".into(), Value::Bool(true));
  if let Some(sid) = options.session_id.as_deref() {
    body.insert("prompt_cache_key".into(), clamp_prompt_cache_key(sid).into());
  }
  body.insert("store".into(), Value::Bool(false));
  if let Some(max) = options.max_tokens.filter(|m| *m > 0) {
    body.insert("max_output_tokens".into(), Value::from(max.max(16)));
  }
  if let Some(t) = options.temperature {
    body.insert("temperature".into(), js_number(t));
  }
  if !tools.is_empty() {
    let strict = compat_bool(model, "supportsStrictMode", true);
    let converted = convert_tools(tools, Value::Bool(false), strict, grammar_tools)?;
    body.insert("tools".into(), Value::Array(converted));
  }
  if model.reasoning {
    if let Some(level) = options.thinking.as_deref().filter(|l| !l.is_empty()) {
      body.insert(
        "reasoning".into(),
        obj(vec![
          ("effort", mapped_effort(model, level)),
          ("summary", "auto".into()),
        ]),
      );
      body.insert(
        "include".into(),
        Value::Array(vec!["reasoning.encrypted_content".into()]),
      );
    } else if model.thinking_map("off") != Some(&Value::Null) {
      let effort = model.thinking_map("off").cloned().unwrap_or_else(|| "none".into());
      body.insert("reasoning".into(), obj(vec![("effort", effort)]));
    }
  }
  apply_verbosity(&mut body, options.verbosity.as_deref());

  check_byte_strings(&headers)?;
  Ok(HttpRequest {
    url: format!(
      "{}?api-version={}",
      join_url(&base, "/responses"),
      encode_uri_component(api_version)
    ),
    headers,
    body: Value::Object(body),
    zstd: false,
  })
}

// ------------------------------------------------------------------------------------------------
// openai-codex-responses

const DEFAULT_CODEX_BASE_URL: &str = "https://chatgpt.com/backend-api";
const JWT_CLAIM_PATH: &str = "https://api.openai.com/auth";

/// `<base>/codex/responses`, reusing a base that already ends in `/codex` or `/codex/responses`.
pub fn codex_url(base_url: &str) -> String {
  let raw = if js_trim(base_url).is_empty() {
    DEFAULT_CODEX_BASE_URL
  } else {
    base_url
  };
  let normalized = raw.trim_end_matches('/');
  if normalized.ends_with("/codex/responses") {
    normalized.to_string()
  } else if normalized.ends_with("/codex") {
    format!("{normalized}/responses")
  } else {
    format!("{normalized}/codex/responses")
  }
}

/// The browser's `atob` (forgiving base64) as bytes.
fn atob(input: &str) -> Option<Vec<u8>> {
  let mut s: Vec<u8> = input
    .bytes()
    .filter(|b| !matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' '))
    .collect();
  if s.len().is_multiple_of(4) {
    if s.ends_with(b"==") {
      s.truncate(s.len() - 2);
    } else if s.ends_with(b"=") {
      s.truncate(s.len() - 1);
    }
  }
  if s.len() % 4 == 1 {
    return None;
  }
  let mut out = Vec::with_capacity(s.len() * 3 / 4);
  let mut acc = 0u32;
  let mut bits = 0u32;
  for b in s {
    let v = match b {
      b'A'..=b'Z' => b - b'A',
      b'a'..=b'z' => b - b'a' + 26,
      b'0'..=b'9' => b - b'0' + 52,
      b'+' => 62,
      b'/' => 63,
      _ => return None,
    } as u32;
    acc = (acc << 6) | v;
    bits += 6;
    if bits >= 8 {
      bits -= 8;
      out.push((acc >> bits) as u8);
      acc &= (1 << bits) - 1;
    }
  }
  Some(out)
}

/// The ChatGPT account id inside the OAuth JWT (`https://api.openai.com/auth` claim).
pub fn codex_account_id(token: &str) -> Result<String, String> {
  let fail = || "Failed to extract accountId from token".to_string();
  let parts: Vec<&str> = token.split('.').collect();
  if parts.len() != 3 {
    return Err(fail());
  }
  let bytes = atob(parts[1]).ok_or_else(fail)?;
  // `atob` yields a binary string: one character per byte.
  let text: String = bytes.iter().map(|&b| b as char).collect();
  let payload = js_json_parse(&text).map_err(|_| fail())?;
  let id = payload.get(JWT_CLAIM_PATH).and_then(|c| c.get("chatgpt_account_id"));
  if !truthy(id) {
    return Err(fail());
  }
  Ok(js_string(id))
}

fn build_codex(model: &Model, context: &Context, options: &WireOptions) -> Result<HttpRequest, String> {
  let token = options
    .api_key
    .as_deref()
    .filter(|k| !k.is_empty())
    .ok_or_else(|| format!("No API key for provider: {}", model.provider))?;
  let account_id = codex_account_id(token)?;
  let grammar_tools = supports_grammar(model);
  let supports_strict = compat_bool(model, "supportsStrictMode", true);
  let tools = unique_tools(context.tools.as_deref().unwrap_or(&[]));
  let grammar = grammar_input_properties(&tools, grammar_tools)?;
  let session = match options.retention {
    Some(Retention::None) => None,
    _ => options.session_id.as_deref().map(clamp_prompt_cache_key),
  };

  let input = convert_input(ResponsesApi::Codex, model, context, false, &grammar)?;
  let mut body = Map::new();
  body.insert("model".into(), model.id.as_str().into());
  body.insert("store".into(), Value::Bool(false));
  body.insert("stream".into(), Value::Bool(true));
  let instructions = context
    .system_prompt
    .as_deref()
    .filter(|s| !s.is_empty())
    .unwrap_or("You are a helpful assistant.");
  body.insert("instructions".into(), instructions.into());
  body.insert("input".into(), Value::Array(input));
  body.insert("text".into(), obj(vec![("verbosity", "low".into())]));
  body.insert(
    "include".into(),
    Value::Array(vec!["reasoning.encrypted_content".into()]),
  );
  if let Some(sid) = &session {
    body.insert("prompt_cache_key".into(), sid.as_str().into());
  }
  body.insert(
    "tool_choice".into(),
    required_tool_choice(options).unwrap_or_else(|| "auto".into()),
  );
  body.insert("parallel_tool_calls".into(), Value::Bool(true));
  if let Some(t) = options.temperature {
    body.insert("temperature".into(), js_number(t));
  }
  if let Some(tier) = options.service_tier.as_deref() {
    body.insert("service_tier".into(), tier.into());
  }
  if !tools.is_empty() {
    let converted = convert_tools(&tools, Value::Null, supports_strict, grammar_tools)?;
    body.insert("tools".into(), Value::Array(converted));
  }
  if let Some(level) = options.thinking.as_deref() {
    let effort = if level == "none" {
      model.thinking_map("off").cloned().unwrap_or_else(|| "none".into())
    } else {
      mapped_effort(model, level)
    };
    if !effort.is_null() {
      body.insert(
        "reasoning".into(),
        obj(vec![("effort", effort), ("summary", "auto".into())]),
      );
    }
  }
  apply_verbosity(&mut body, options.verbosity.as_deref());

  // Headers: model defaults, caller headers (null deletes), then the Codex identity headers.
  let mut headers = FetchHeaders(Vec::new());
  for (k, v) in model_headers(model) {
    headers.append(&k, v.as_deref().unwrap_or("null"));
  }
  for (k, v) in caller_headers(options) {
    match v {
      None => headers.delete(&k),
      Some(v) => headers.set(&k, &v),
    }
  }
  headers.set("authorization", &format!("Bearer {token}"));
  headers.set("chatgpt-account-id", &account_id);
  headers.set("originator", "pi");
  headers.set("user-agent", &pi_user_agent());
  headers.set("openai-beta", "responses=experimental");
  headers.set("accept", "text/event-stream");
  headers.set("content-type", "application/json");
  if let Some(sid) = session.as_deref().filter(|s| !s.is_empty()) {
    headers.set("session-id", sid);
    headers.set("x-client-request-id", sid);
  }
  headers.set("content-encoding", "zstd");
  check_byte_strings(&headers.0)?;

  Ok(HttpRequest {
    url: codex_url(&model.base_url),
    headers: headers.0,
    body: Value::Object(body),
    zstd: true,
  })
}

// ------------------------------------------------------------------------------------------------
// Response stream

/// The text of an `APIError` the OpenAI SDK raises for an event carrying `error`.
fn sdk_event_error(error: &Value) -> String {
  match error.get("message") {
    Some(m) if truthy(Some(m)) => match m {
      Value::String(s) => s.clone(),
      other => js_stringify(other),
    },
    _ => js_stringify(error),
  }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
  Stop(StopReason),
  Error,
}

/// Streaming state of one tool call.
#[derive(Debug)]
struct ToolSlot {
  id: String,
  name: String,
  /// Argument text of a function call (`None` for a custom tool call).
  partial_json: Option<String>,
  /// A custom (grammar) tool call: its input property, current input and JSON rendering.
  custom: Option<(String, String, GrammarJsonBuffer)>,
}

#[derive(Debug)]
enum Slot {
  Thinking,
  Text,
  Tool(ToolSlot),
}

/// Parser of one Responses event stream (pi-ai's `processResponsesStream`, with the OpenAI SDK's
/// SSE handling for `openai-responses`/`azure-openai-responses` and the Codex event mapping for
/// `openai-codex-responses`).
pub struct ResponsesParser {
  api: ResponsesApi,
  requested_tier: Option<String>,
  grammar: HashMap<String, String>,
  slots: HashMap<String, Slot>,
  has_tool_call: bool,
  outcome: Option<Outcome>,
  error_message: Option<String>,
  usage: Usage,
  saw_terminal: bool,
  finished: bool,
  /// The OpenAI SDK saw `data: [DONE]` and ignores the rest of the body.
  sdk_done: bool,
}

const CODEX_STATUSES: [&str; 6] = [
  "completed",
  "incomplete",
  "failed",
  "cancelled",
  "queued",
  "in_progress",
];

impl ResponsesParser {
  pub fn new(api: ResponsesApi, options: &WireOptions, grammar: HashMap<String, String>) -> Self {
    ResponsesParser {
      api,
      requested_tier: options.service_tier.clone(),
      grammar,
      slots: HashMap::new(),
      has_tool_call: false,
      outcome: None,
      error_message: None,
      usage: Usage::default(),
      saw_terminal: false,
      finished: false,
      sdk_done: false,
    }
  }

  fn handle(&mut self, event: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), String> {
    let data: Value = if self.api == ResponsesApi::Codex {
      // Codex reads `data:` lines itself: each trimmed, joined, trimmed again.
      let text = event.data.split('\n').map(js_trim).collect::<Vec<_>>().join("\n");
      let text = js_trim(&text);
      if text.is_empty() || text == "[DONE]" {
        return Ok(());
      }
      let data: Value = js_json_parse(text).map_err(|e| format!("Invalid Codex SSE JSON: {}", e.0))?;
      let Some(kind) = data.get("type").and_then(Value::as_str) else {
        return Ok(());
      };
      match kind {
        "error" => {
          let nested = data.get("error").filter(|e| e.is_object());
          let pick = |key: &str| {
            data
              .get(key)
              .and_then(Value::as_str)
              .or_else(|| nested.and_then(|n| n.get(key)).and_then(Value::as_str))
              .filter(|s| !s.is_empty())
              .map(String::from)
          };
          let text = pick("message")
            .or_else(|| pick("code"))
            .unwrap_or_else(|| js_stringify(&data));
          return Err(format!("Codex error: {text}"));
        }
        "response.failed" => {
          let message = data
            .get("response")
            .and_then(|r| r.get("error"))
            .and_then(|e| e.get("message"));
          return Err(if truthy(message) {
            js_string(message)
          } else {
            "Codex response failed".into()
          });
        }
        "response.done" | "response.completed" | "response.incomplete" => {
          let response = data.get("response").map(|r| match r {
            Value::Object(o) => {
              let mut o = o.clone();
              let status = o
                .get("status")
                .and_then(Value::as_str)
                .filter(|s| CODEX_STATUSES.contains(s))
                .map(Value::from);
              match status {
                Some(s) => o.insert("status".into(), s),
                None => o.remove("status"),
              };
              Value::Object(o)
            }
            other => other.clone(),
          });
          self.finalize(response.as_ref())?;
          self.finish(out);
          return Ok(());
        }
        _ => data,
      }
    } else {
      if self.sdk_done {
        return Ok(());
      }
      if event.data.starts_with("[DONE]") {
        self.sdk_done = true;
        return Ok(());
      }
      let data = js_json_parse(&event.data).map_err(|e| e.0)?;
      if event.event.starts_with("thread.") {
        return Ok(());
      }
      if let Some(error) = data.get("error").filter(|e| truthy(Some(e))) {
        return Err(sdk_event_error(error));
      }
      data
    };
    self.dispatch(&data, out)
  }

  /// Shared handling of one Responses event.
  fn dispatch(&mut self, data: &Value, out: &mut Vec<StreamEvent>) -> Result<(), String> {
    let key = data.get("output_index").map(|v| v.to_string()).unwrap_or_default();
    let kind = data.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
      "response.output_item.added" => {
        if let Some(item) = data.get("item").filter(|i| !i.is_null()) {
          self.create_slot(&key, item, out);
        } else {
          return Err(type_error(data.get("item"), "type"));
        }
      }
      "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
        if matches!(self.slots.get(&key), Some(Slot::Thinking)) {
          if let Some(delta) = data.get("delta") {
            out.push(StreamEvent::ThinkingDelta(js_string(Some(delta))));
          }
        }
      }
      "response.reasoning_summary_part.done" => {
        if matches!(self.slots.get(&key), Some(Slot::Thinking)) {
          out.push(StreamEvent::ThinkingDelta("\n\n".into()));
        }
      }
      "response.output_text.delta" | "response.refusal.delta" => {
        if matches!(self.slots.get(&key), Some(Slot::Text)) {
          if let Some(delta) = data.get("delta") {
            out.push(StreamEvent::TextDelta(js_string(Some(delta))));
          }
        }
      }
      "response.function_call_arguments.delta" => {
        if let Some(Slot::Tool(tool)) = self.slots.get_mut(&key) {
          if let Some(partial) = tool.partial_json.as_mut() {
            partial.push_str(&js_string(data.get("delta")));
            if data.get("delta").is_some() {
              out.push(StreamEvent::ToolCallDelta);
            }
          }
        }
      }
      "response.function_call_arguments.done" => {
        if let Some(Slot::Tool(tool)) = self.slots.get_mut(&key) {
          if let Some(partial) = tool.partial_json.as_mut() {
            let next = match data.get("arguments") {
              None | Some(Value::Null) => return Err(type_error(data.get("arguments"), "startsWith")),
              Some(v) => js_string(Some(v)),
            };
            if next.len() > partial.len() && next.starts_with(partial.as_str()) {
              out.push(StreamEvent::ToolCallDelta);
            }
            *partial = next;
          }
        }
      }
      "response.custom_tool_call_input.delta" | "response.custom_tool_call_input.done" => {
        if let Some(Slot::Tool(tool)) = self.slots.get_mut(&key) {
          if let Some((property, input, buffer)) = tool.custom.as_mut() {
            let close = kind.ends_with(".done");
            let next = if close {
              js_string(data.get("input"))
            } else {
              format!("{input}{}", js_string(data.get("delta")))
            };
            if append_grammar_json_delta(buffer, property, &next, close)?.is_some() {
              out.push(StreamEvent::ToolCallDelta);
            }
            *input = next;
          }
        }
      }
      "response.output_item.done" => {
        let item = match data.get("item") {
          Some(i) if !i.is_null() => i,
          other => return Err(type_error(other, "type")),
        };
        self.apply_message_phase(item);
        if !self.slots.contains_key(&key) {
          self.create_slot(&key, item, out);
        }
        let item_type = item.get("type").and_then(Value::as_str).unwrap_or("");
        match (item_type, self.slots.get_mut(&key)) {
          ("reasoning", Some(Slot::Thinking)) => {
            out.push(StreamEvent::ThinkingEnd);
            self.slots.remove(&key);
          }
          ("message", Some(Slot::Text)) => {
            out.push(StreamEvent::TextEnd);
            self.slots.remove(&key);
          }
          ("function_call", Some(Slot::Tool(tool))) if tool.partial_json.is_some() => {
            let args = item.get("arguments");
            let text = if truthy(args) {
              js_string(args)
            } else {
              match tool.partial_json.as_deref() {
                Some(p) if !p.is_empty() => p.to_string(),
                _ => "{}".to_string(),
              }
            };
            out.push(StreamEvent::ToolCallEnd {
              id: tool.id.clone(),
              name: tool.name.clone(),
              arguments: parse_streaming_json(&text),
            });
            self.slots.remove(&key);
          }
          ("custom_tool_call", Some(Slot::Tool(tool))) if tool.custom.is_some() => {
            if let Some((property, input, buffer)) = tool.custom.as_mut() {
              let next = match item.get("input") {
                None | Some(Value::Null) => input.clone(),
                Some(v) => js_string(Some(v)),
              };
              if append_grammar_json_delta(buffer, property, &next, true)?.is_some() {
                out.push(StreamEvent::ToolCallDelta);
              }
              let mut arguments = Map::new();
              arguments.insert(property.clone(), Value::String(next));
              out.push(StreamEvent::ToolCallEnd {
                id: tool.id.clone(),
                name: tool.name.clone(),
                arguments,
              });
            }
            self.slots.remove(&key);
          }
          _ => {}
        }
      }
      "response.completed" | "response.incomplete" => self.finalize(data.get("response"))?,
      "error" => {
        return Err(format!(
          "Error Code {}: {}",
          js_string(data.get("code")),
          js_string(data.get("message"))
        ))
      }
      "response.failed" => {
        self.saw_terminal = true;
        let response = data.get("response");
        let error = response.and_then(|r| r.get("error"));
        let reason = response
          .and_then(|r| r.get("incomplete_details"))
          .and_then(|d| d.get("reason"));
        return Err(if truthy(error) {
          let code = error.and_then(|e| e.get("code"));
          let message = error.and_then(|e| e.get("message"));
          format!(
            "{}: {}",
            if truthy(code) {
              js_string(code)
            } else {
              "unknown".into()
            },
            if truthy(message) {
              js_string(message)
            } else {
              "no message".into()
            }
          )
        } else if truthy(reason) {
          format!("incomplete: {}", js_string(reason))
        } else {
          "Unknown error (no error details in response)".into()
        });
      }
      _ => {}
    }
    Ok(())
  }

  /// A message item in its final-answer phase marks the turn as stopped.
  fn apply_message_phase(&mut self, item: &Value) {
    if item.get("type").and_then(Value::as_str) == Some("message")
      && item.get("phase").and_then(Value::as_str) == Some("final_answer")
    {
      self.outcome = Some(Outcome::Stop(StopReason::Stop));
    }
  }

  fn create_slot(&mut self, key: &str, item: &Value, out: &mut Vec<StreamEvent>) {
    match item.get("type").and_then(Value::as_str) {
      Some("reasoning") => {
        self.slots.insert(key.to_string(), Slot::Thinking);
        out.push(StreamEvent::ThinkingStart);
      }
      Some("message") => {
        self.apply_message_phase(item);
        self.slots.insert(key.to_string(), Slot::Text);
        out.push(StreamEvent::TextStart);
      }
      Some(kind @ ("function_call" | "custom_tool_call")) => {
        let name = item.get("name").and_then(Value::as_str).unwrap_or("").to_string();
        let id = format!("{}|{}", js_string(item.get("call_id")), js_string(item.get("id")));
        let slot = if kind == "function_call" {
          let args = item.get("arguments");
          ToolSlot {
            id,
            name,
            partial_json: Some(if truthy(args) { js_string(args) } else { String::new() }),
            custom: None,
          }
        } else {
          let property = self.grammar.get(&name).cloned().unwrap_or_else(|| "input".into());
          let input = item.get("input");
          let input = if truthy(input) { js_string(input) } else { String::new() };
          ToolSlot {
            id,
            name,
            partial_json: None,
            custom: Some((property, input, GrammarJsonBuffer::default())),
          }
        };
        self.has_tool_call = true;
        self.slots.insert(key.to_string(), Slot::Tool(slot));
        out.push(StreamEvent::ToolCallStart);
      }
      _ => {}
    }
  }

  /// A terminal response object: usage, service tier and the stop reason.
  fn finalize(&mut self, response: Option<&Value>) -> Result<(), String> {
    self.saw_terminal = true;
    let response = match response {
      None | Some(Value::Null) => return Err(type_error(response, "output")),
      Some(r) => r,
    };
    if let Some(usage) = response.get("usage").filter(|u| truthy(Some(u))) {
      let n = |v: Option<&Value>| {
        v.and_then(Value::as_f64)
          .filter(|f| *f != 0.0 && !f.is_nan())
          .unwrap_or(0.0)
      };
      let details = usage.get("input_tokens_details");
      let cached = n(details.and_then(|d| d.get("cached_tokens")));
      let cache_write = n(details.and_then(|d| d.get("cache_write_tokens")));
      self.usage = Usage {
        input: (n(usage.get("input_tokens")) - cached - cache_write).max(0.0),
        output: n(usage.get("output_tokens")),
        cache_read: cached,
        cache_write,
        cache_write_1h: 0.0,
        total: n(usage.get("total_tokens")),
        reasoning: Some(n(usage
          .get("output_tokens_details")
          .and_then(|d| d.get("reasoning_tokens")))),
        service_tier: None,
      };
    }
    let served = response.get("service_tier").and_then(Value::as_str);
    self.usage.service_tier = match self.api {
      // Azure prices by the catalog rates only.
      ResponsesApi::Azure => None,
      ResponsesApi::OpenAi => served.or(self.requested_tier.as_deref()).map(String::from),
      ResponsesApi::Codex => {
        let requested = self.requested_tier.as_deref();
        match (served, requested) {
          (Some("default"), Some(r @ ("flex" | "priority"))) => Some(r.to_string()),
          _ => served.or(requested).map(String::from),
        }
      }
    };
    let status = response.get("status");
    let reason = response
      .get("incomplete_details")
      .and_then(|d| d.get("reason"))
      .and_then(Value::as_str);
    let (outcome, message) = if !truthy(status) {
      (Outcome::Stop(StopReason::Stop), None)
    } else {
      match status.and_then(Value::as_str) {
        Some("completed" | "in_progress" | "queued") => (Outcome::Stop(StopReason::Stop), None),
        Some("incomplete") => match reason {
          Some("max_output_tokens") => (Outcome::Stop(StopReason::Length), None),
          Some(r) => (Outcome::Error, Some(format!("Response incomplete: {r}"))),
          None => (
            Outcome::Error,
            Some("Response incomplete without a provider reason".to_string()),
          ),
        },
        Some("failed" | "cancelled") => (Outcome::Error, None),
        _ => return Err(format!("Unhandled stop reason: {}", js_string(status))),
      }
    };
    self.outcome = Some(outcome);
    self.error_message = message;
    if self.has_tool_call && outcome == Outcome::Stop(StopReason::Stop) {
      self.outcome = Some(Outcome::Stop(StopReason::ToolUse));
    }
    Ok(())
  }

  /// The terminal event for a finished response.
  fn finish(&mut self, out: &mut Vec<StreamEvent>) {
    self.finished = true;
    out.push(match self.outcome {
      Some(Outcome::Stop(reason)) => StreamEvent::Done {
        reason,
        usage: self.usage.clone(),
      },
      Some(Outcome::Error) => StreamEvent::Error {
        message: self
          .error_message
          .clone()
          .filter(|m| !m.is_empty())
          .unwrap_or_else(|| "An unknown error occurred".into()),
      },
      None => StreamEvent::Error {
        message: match self.api {
          ResponsesApi::OpenAi => "OpenAI Responses stream ended without a stop reason",
          ResponsesApi::Azure => "Azure OpenAI Responses stream ended without a stop reason",
          ResponsesApi::Codex => "Codex stream ended without a stop reason",
        }
        .into(),
      },
    });
  }
}

/// A TypeError text for reading `property` of a missing value.
fn type_error(v: Option<&Value>, property: &str) -> String {
  let what = if v.is_none() { "undefined" } else { "null" };
  format!("Cannot read properties of {what} (reading '{property}')")
}

impl StreamParser for ResponsesParser {
  fn on_event(&mut self, event: &SseEvent, out: &mut Vec<StreamEvent>) {
    if self.finished {
      return;
    }
    if let Err(message) = self.handle(event, out) {
      self.finished = true;
      out.push(StreamEvent::Error { message });
    }
  }

  fn on_end(&mut self, out: &mut Vec<StreamEvent>) {
    if self.finished {
      return;
    }
    if !self.saw_terminal {
      self.finished = true;
      out.push(StreamEvent::Error {
        message: "OpenAI Responses stream ended before a terminal response event".into(),
      });
      return;
    }
    self.finish(out);
  }
}

// ------------------------------------------------------------------------------------------------
// HTTP failures

const MAX_ERROR_BODY_CHARS: usize = 4000;

fn truncate_error_text(text: &str) -> String {
  let len = utf16_len(text);
  if len <= MAX_ERROR_BODY_CHARS {
    return text.to_string();
  }
  format!(
    "{}... [truncated {} chars]",
    utf16_prefix(text, MAX_ERROR_BODY_CHARS),
    len - MAX_ERROR_BODY_CHARS
  )
}

/// The message of the OpenAI SDK's `APIError` for a non-2xx response, composed the way pi-ai's
/// `formatProviderError` does (with `prefix` when given).
fn sdk_http_error(prefix: Option<&str>, status: u16, body: &str) -> String {
  let parsed = js_json_parse(body).ok();
  let plain = if truthy(parsed.as_ref()) { None } else { Some(body) };
  let error = parsed.as_ref().and_then(|p| p.get("error")).filter(|e| !e.is_null());
  let detail = match error {
    Some(e) if truthy(e.get("message")) => match &e["message"] {
      Value::String(s) => Some(s.clone()),
      other => Some(js_stringify(other)),
    },
    Some(e) if truthy(Some(e)) => Some(js_stringify(e)),
    _ => plain.map(String::from),
  };
  let message = match detail.filter(|d| !d.is_empty()) {
    Some(d) => format!("{status} {d}"),
    None => format!("{status} status code (no body)"),
  };
  let body_text = match error {
    Some(Value::Object(o)) if !o.is_empty() => {
      let text = js_stringify(&Value::Object(o.clone()));
      let trimmed = js_trim(&text);
      (!trimmed.is_empty()).then(|| truncate_error_text(trimmed))
    }
    _ => None,
  };
  match body_text {
    Some(b) if !message.contains(&b) => match prefix {
      Some(p) => format!("{p} ({status}): {b}"),
      None => format!("{status}: {b}"),
    },
    _ => match prefix {
      Some(p) => format!("{p} ({status}): {message}"),
      None => message,
    },
  }
}

fn reason_phrase(status: u16) -> &'static str {
  match status {
    400 => "Bad Request",
    401 => "Unauthorized",
    402 => "Payment Required",
    403 => "Forbidden",
    404 => "Not Found",
    405 => "Method Not Allowed",
    408 => "Request Timeout",
    409 => "Conflict",
    413 => "Payload Too Large",
    415 => "Unsupported Media Type",
    422 => "Unprocessable Entity",
    429 => "Too Many Requests",
    500 => "Internal Server Error",
    501 => "Not Implemented",
    502 => "Bad Gateway",
    503 => "Service Unavailable",
    504 => "Gateway Timeout",
    _ => "",
  }
}

/// Codex's `parseErrorResponse`: the server's message, or a usage-limit notice for 429 / limit codes.
fn codex_http_error(status: u16, body: &str) -> String {
  let mut message = if !body.is_empty() {
    body.to_string()
  } else if !reason_phrase(status).is_empty() {
    reason_phrase(status).to_string()
  } else {
    "Request failed".to_string()
  };
  let mut friendly: Option<String> = None;
  if let Ok(parsed) = js_json_parse(body) {
    let err = parsed.get("error").filter(|e| truthy(Some(e)));
    if let Some(err) = err {
      let code = ["code", "type"]
        .iter()
        .map(|k| err.get(*k))
        .find(|v| truthy(*v))
        .map(|v| js_string(v).to_ascii_lowercase())
        .unwrap_or_default();
      let limit_code = ["usage_limit_reached", "usage_not_included", "rate_limit_exceeded"]
        .iter()
        .any(|c| code.contains(c));
      // A non-string plan type throws inside the reference's try block: no notice, raw message.
      let plan = match err.get("plan_type") {
        Some(p) if truthy(Some(p)) => p.as_str().map(|s| format!(" ({} plan)", s.to_lowercase())),
        _ => Some(String::new()),
      };
      if limit_code || status == 429 {
        let Some(plan) = plan else { return message };
        let when = match err.get("resets_at") {
          Some(r) if truthy(Some(r)) => {
            let now_ms = std::time::SystemTime::now()
              .duration_since(std::time::UNIX_EPOCH)
              .map_or(0.0, |d| d.as_millis() as f64);
            let mins = match r.as_f64() {
              Some(at) => number_to_string(js_round((at * 1000.0 - now_ms) / 60000.0).max(0.0)),
              None => "NaN".into(),
            };
            format!(" Try again in ~{mins} min.")
          }
          _ => String::new(),
        };
        friendly = Some(
          format!("You have hit your ChatGPT usage limit{plan}.{when}")
            .trim()
            .to_string(),
        );
      }
      let err_message = err.get("message");
      message = if truthy(err_message) {
        js_string(err_message)
      } else {
        friendly.clone().unwrap_or(message)
      };
    }
  }
  friendly.unwrap_or(message)
}

/// The error text of a non-2xx response (spec §5.11) as pi-ai reports it for `api`:
/// `OpenAI API error (<status>): <body>` / `Azure OpenAI API error (<status>): <body>` for the SDK
/// based adapters, the server's own message (or the usage-limit notice) for Codex.
pub fn http_error_message(api: &str, status: u16, body: &str) -> String {
  match ResponsesApi::from_api(api) {
    Some(ResponsesApi::OpenAi) => sdk_http_error(Some("OpenAI API error"), status, body),
    Some(ResponsesApi::Azure) => sdk_http_error(Some("Azure OpenAI API error"), status, body),
    Some(ResponsesApi::Codex) => codex_http_error(status, body),
    None => sdk_http_error(None, status, body),
  }
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::chat::catalog::{cost_usd, Catalog, Cost};
  use crate::chat::sse::SseDecoder;
  use serde_json::json;

  // ---- fixtures and hand-built contexts ----

  fn fixture(name: &str) -> Value {
    let text = match name {
      "openai-responses" => include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/__test__/fixtures/chat/openai-responses.json"
      )),
      "azure-openai-responses" => include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/__test__/fixtures/chat/azure-openai-responses.json"
      )),
      "openai-codex-responses" => include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/__test__/fixtures/chat/openai-codex-responses.json"
      )),
      "required-tool-resp" => include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/__test__/fixtures/chat/required-tool-resp.json"
      )),
      "required-tool-azure" => include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/__test__/fixtures/chat/required-tool-azure.json"
      )),
      "no-thinking-resp" => include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/__test__/fixtures/chat/no-thinking-resp.json"
      )),
      "no-thinking-azure" => include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/__test__/fixtures/chat/no-thinking-azure.json"
      )),
      "cache-none-resp" => include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/__test__/fixtures/chat/cache-none-resp.json"
      )),
      "cache-short-resp" => include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/__test__/fixtures/chat/cache-short-resp.json"
      )),
      "error-messages" => include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/__test__/fixtures/chat/derived/error-messages.json"
      )),
      other => panic!("no fixture {other}"),
    };
    serde_json::from_str(text).unwrap()
  }

  const BASE: &str = "http://127.0.0.1:9";

  fn catalog_model(provider: &str, id: &str, base_path: &str) -> Model {
    let mut m = Catalog::embedded().get(provider, id).unwrap().clone();
    m.base_url = format!("{BASE}{base_path}");
    m
  }

  /// The Codex case's model: not in the catalog, so §2.0 defaults.
  fn codex_model() -> Model {
    Model {
      id: "gpt-5.1-codex".into(),
      name: "gpt-5.1-codex".into(),
      api: "openai-codex-responses".into(),
      provider: "openai-codex".into(),
      base_url: format!("{BASE}/backend-api"),
      reasoning: false,
      input: vec!["text".into()],
      cost: Cost::default(),
      context_window: 128_000,
      max_tokens: 2048,
      thinking_level_map: None,
      headers: None,
      compat: None,
      extra: Map::new(),
    }
  }

  fn tools() -> Vec<ToolDef> {
    vec![
      ToolDef {
        name: "list_dir".into(),
        description: "List a directory".into(),
        parameters: json!({"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}),
        constrained_sampling: None,
      },
      ToolDef {
        name: "read_file".into(),
        description: "Read a file".into(),
        parameters: json!({"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"}},
          "required":["path"]}),
        constrained_sampling: None,
      },
    ]
  }

  fn stamped(model: &Model, blocks: Vec<AssistantBlock>) -> CtxMessage {
    let has_calls = blocks.iter().any(|b| matches!(b, AssistantBlock::ToolCall { .. }));
    CtxMessage::Assistant {
      blocks,
      api: model.api.clone(),
      provider: model.provider.clone(),
      model: model.id.clone(),
      stop_reason: if has_calls { "toolUse" } else { "stop" }.into(),
    }
  }

  /// The multi-turn history of the `full` cases after Blade's filtering (the orphan call is gone).
  fn full_context(model: &Model) -> Context {
    let mut args = Map::new();
    args.insert("path".into(), json!("."));
    Context {
      system_prompt: Some("You are a coding agent.\n\nProject rules: be brief.".into()),
      messages: vec![
        CtxMessage::User(UserContent::Text("Read src/main.rs".into())),
        stamped(
          model,
          vec![
            AssistantBlock::Thinking {
              text: "Need to list files.".into(),
              signature: None,
            },
            AssistantBlock::Text {
              text: "Listing first.".into(),
              signature: None,
            },
            AssistantBlock::ToolCall {
              id: "call_prev_1".into(),
              name: "list_dir".into(),
              arguments: args,
            },
          ],
        ),
        CtxMessage::ToolResult {
          tool_call_id: "call_prev_1".into(),
          tool_name: "list_dir".into(),
          content: vec![UserBlock::Text("src/\nCargo.toml".into())],
          is_error: false,
        },
        CtxMessage::User(UserContent::Blocks(vec![UserBlock::Text("Now open it.".into())])),
      ],
      tools: Some(tools()),
    }
  }

  fn simple_context(required: Option<&str>) -> Context {
    Context {
      system_prompt: Some("You are a coding agent.".into()),
      messages: vec![CtxMessage::User(UserContent::Text("Read src/main.rs".into()))],
      tools: Some(
        tools()
          .into_iter()
          .filter(|t| required.is_none_or(|r| t.name == r))
          .collect(),
      ),
    }
  }

  fn options(scenario: &str) -> WireOptions {
    let mut headers = Map::new();
    headers.insert("x-mock-scenario".into(), json!(scenario));
    WireOptions {
      api_key: Some("sk-harness-test-key".into()),
      temperature: Some(0.2),
      max_tokens: Some(2048),
      headers,
      retention: Some(Retention::None),
      ..WireOptions::default()
    }
  }

  fn telemetry(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n == "user-agent" || n.starts_with("x-stainless-")
  }

  /// Body (exact, key order included), headers (ordered, minus telemetry), path and query.
  fn assert_request(req: &HttpRequest, fixture_name: &str) {
    let f = fixture(fixture_name);
    let expected = &f["expectedRequests"][0];
    assert_eq!(
      serde_json::to_string(&req.body).unwrap(),
      serde_json::to_string(&expected["body"]).unwrap(),
      "{fixture_name}: body"
    );
    let got: Vec<(String, String)> = req
      .headers
      .iter()
      .filter(|(k, _)| !telemetry(k))
      .map(|(k, v)| (k.to_ascii_lowercase(), v.clone()))
      .collect();
    let want: Vec<(String, String)> = expected["headers"]
      .as_object()
      .unwrap()
      .iter()
      .filter(|(k, _)| !telemetry(k))
      .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
      .collect();
    assert_eq!(got, want, "{fixture_name}: headers");
    let rest = req.url.strip_prefix(BASE).unwrap();
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    assert_eq!(path, expected["path"], "{fixture_name}: path");
    let mut want_query = String::new();
    for (k, v) in expected["query"].as_object().unwrap() {
      want_query = format!("{k}={}", v.as_str().unwrap());
    }
    assert_eq!(query, want_query, "{fixture_name}: query");
    assert_eq!(
      req.zstd,
      expected["bodyEncoding"] == "zstd",
      "{fixture_name}: body encoding"
    );
  }

  // ---- request fixtures ----

  #[test]
  fn openai_full_request_matches_the_reference() {
    let model = catalog_model("openai", "gpt-5", "/v1");
    let mut o = options("full");
    o.temperature = Some(0.0);
    o.max_tokens = Some(4096);
    o.retention = Some(Retention::Short);
    o.session_id = Some("session-abc-123".into());
    o.thinking = Some("medium".into());
    o.service_tier = Some("flex".into());
    o.verbosity = Some("low".into());
    let req = OPENAI_RESPONSES
      .build_request(&model, &full_context(&model), &o)
      .unwrap();
    assert_request(&req, "openai-responses");
  }

  #[test]
  fn azure_full_request_matches_the_reference() {
    let model = catalog_model("azure-openai-responses", "gpt-5", "/openai/v1");
    let mut o = options("full");
    o.temperature = Some(0.0);
    o.max_tokens = Some(4096);
    o.retention = Some(Retention::Short);
    o.session_id = Some("session-abc-123".into());
    o.thinking = Some("medium".into());
    o.service_tier = Some("priority".into());
    o.api_version = Some("2025-04-01-preview".into());
    let req = AZURE_OPENAI_RESPONSES
      .build_request(&model, &full_context(&model), &o)
      .unwrap();
    assert_request(&req, "azure-openai-responses");
  }

  #[test]
  fn codex_request_matches_the_reference() {
    let model = codex_model();
    let mut o = options("full");
    o.api_key = Some(
      concat!(
        "eyJhbGciOiAibm9uZSJ9.",
        "eyJodHRwczovL2FwaS5vcGVuYWkuY29tL2F1dGgiOiB7ImNoYXRncHRfYWNjb3VudF9pZCI6ICJhY2N0X21vY2sifX0.sig"
      )
      .into(),
    );
    o.retention = Some(Retention::Short);
    o.session_id = Some("sess-codex".into());
    o.thinking = Some("high".into());
    o.service_tier = Some("priority".into());
    o.verbosity = Some("medium".into());
    let req = OPENAI_CODEX_RESPONSES
      .build_request(&model, &simple_context(None), &o)
      .unwrap();
    assert_request(&req, "openai-codex-responses");
    let ua = req.headers.iter().find(|(k, _)| k == "user-agent").unwrap();
    assert!(ua.1.starts_with("pi (") && ua.1.ends_with(')'), "{}", ua.1);
  }

  #[test]
  fn required_tool_requests_match_the_reference() {
    // A required tool turns thinking off; gpt-5 cannot disable reasoning, so nothing is sent.
    let mut o = options("full");
    o.required_tool = Some("read_file".into());
    let model = catalog_model("openai", "gpt-5", "/v1");
    let req = OPENAI_RESPONSES
      .build_request(&model, &simple_context(Some("read_file")), &o)
      .unwrap();
    assert_request(&req, "required-tool-resp");
    let model = catalog_model("azure-openai-responses", "gpt-5", "/openai/v1");
    let req = AZURE_OPENAI_RESPONSES
      .build_request(&model, &simple_context(Some("read_file")), &o)
      .unwrap();
    assert_request(&req, "required-tool-azure");
  }

  #[test]
  fn thinking_off_and_cache_requests_match_the_reference() {
    let openai = catalog_model("openai", "gpt-5", "/v1");
    let azure = catalog_model("azure-openai-responses", "gpt-5", "/openai/v1");
    let o = options("text");
    let req = OPENAI_RESPONSES
      .build_request(&openai, &simple_context(None), &o)
      .unwrap();
    assert_request(&req, "no-thinking-resp");
    let req = AZURE_OPENAI_RESPONSES
      .build_request(&azure, &simple_context(None), &o)
      .unwrap();
    assert_request(&req, "no-thinking-azure");

    let mut o = options("full");
    o.thinking = Some("high".into());
    o.session_id = Some("sess-1".into());
    let req = OPENAI_RESPONSES
      .build_request(&openai, &simple_context(None), &o)
      .unwrap();
    assert_request(&req, "cache-none-resp");
    o.retention = Some(Retention::Short);
    let req = OPENAI_RESPONSES
      .build_request(&openai, &simple_context(None), &o)
      .unwrap();
    assert_request(&req, "cache-short-resp");
  }

  // ---- request rules beyond the fixtures ----

  #[test]
  fn thinking_off_sends_the_models_off_effort() {
    let model = catalog_model("openai", "gpt-5.5", "/v1");
    let req = OPENAI_RESPONSES
      .build_request(&model, &simple_context(None), &options("text"))
      .unwrap();
    assert_eq!(req.body["reasoning"], json!({"effort":"none"}));
    assert!(req.body.get("include").is_none());
    let mut o = options("text");
    o.thinking = Some("xhigh".into());
    let req = OPENAI_RESPONSES
      .build_request(&model, &simple_context(None), &o)
      .unwrap();
    assert_eq!(req.body["reasoning"], json!({"effort":"xhigh","summary":"auto"}));
  }

  #[test]
  fn caller_headers_override_case_insensitively_and_null_removes() {
    let model = catalog_model("openai", "gpt-5", "/v1");
    let mut o = options("text");
    o.headers.insert("Authorization".into(), json!("Bearer custom"));
    o.headers.insert("Accept".into(), Value::Null);
    o.headers.insert("Content-Type".into(), json!("text/plain"));
    let req = OPENAI_RESPONSES
      .build_request(&model, &simple_context(None), &o)
      .unwrap();
    let names: Vec<&str> = req.headers.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(names, ["x-mock-scenario", "Authorization", "content-type"]);
    assert_eq!(req.headers[1].1, "Bearer custom");
    // The SDK's JSON body header wins over the caller's.
    assert_eq!(req.headers[2].1, "application/json");
  }

  #[test]
  fn missing_keys_fail_like_the_reference() {
    let model = catalog_model("openai", "gpt-5", "/v1");
    let mut o = options("text");
    o.api_key = None;
    let err = OPENAI_RESPONSES
      .build_request(&model, &simple_context(None), &o)
      .unwrap_err();
    assert_eq!(err, "No API key for provider: openai");
    o.headers.insert("authorization".into(), json!("Bearer x"));
    let req = OPENAI_RESPONSES
      .build_request(&model, &simple_context(None), &o)
      .unwrap();
    assert!(req.headers.contains(&("authorization".into(), "Bearer x".into())));
    let azure = catalog_model("azure-openai-responses", "gpt-5", "/openai/v1");
    let err = AZURE_OPENAI_RESPONSES
      .build_request(&azure, &simple_context(None), &o)
      .unwrap_err();
    assert_eq!(err, "No API key for provider: azure-openai-responses");
    let mut o = options("text");
    o.api_key = Some("not-a-jwt".into());
    let err = OPENAI_CODEX_RESPONSES
      .build_request(&codex_model(), &simple_context(None), &o)
      .unwrap_err();
    assert_eq!(err, "Failed to extract accountId from token");
    // Base64url payloads are rejected by `atob`, as in the reference.
    assert!(codex_account_id("a.eyJ-_.c").is_err());
  }

  #[test]
  fn azure_base_urls_are_normalised() {
    let n = |s: &str| normalize_azure_base_url(s).unwrap();
    assert_eq!(
      n("https://res.openai.azure.com"),
      "https://res.openai.azure.com/openai/v1"
    );
    assert_eq!(
      n("https://RES.openai.azure.com/openai/"),
      "https://RES.openai.azure.com/openai/v1"
    );
    assert_eq!(
      n("https://x.cognitiveservices.azure.com/openai/v1/responses?a=1"),
      "https://x.cognitiveservices.azure.com/openai/v1"
    );
    assert_eq!(n("https://x.ai.azure.com/custom/"), "https://x.ai.azure.com/custom");
    assert_eq!(n("http://127.0.0.1:9/openai/v1/"), "http://127.0.0.1:9/openai/v1");
    assert_eq!(
      normalize_azure_base_url("not a url").unwrap_err(),
      "Invalid Azure OpenAI base URL: not a url"
    );
  }

  #[test]
  fn codex_urls_follow_the_reference() {
    assert_eq!(codex_url(""), "https://chatgpt.com/backend-api/codex/responses");
    assert_eq!(codex_url("http://h/x/"), "http://h/x/codex/responses");
    assert_eq!(codex_url("http://h/codex"), "http://h/codex/responses");
    assert_eq!(codex_url("http://h/codex/responses//"), "http://h/codex/responses");
  }

  #[test]
  fn replayed_tool_calls_split_their_ids() {
    let model = catalog_model("openai", "gpt-5", "/v1");
    let mut ctx = simple_context(None);
    ctx.messages.push(stamped(
      &model,
      vec![AssistantBlock::ToolCall {
        id: "call_mock_1|fc_mock1".into(),
        name: "read_file".into(),
        arguments: Map::new(),
      }],
    ));
    ctx.messages.push(CtxMessage::ToolResult {
      tool_call_id: "call_mock_1|fc_mock1".into(),
      tool_name: "read_file".into(),
      content: vec![],
      is_error: false,
    });
    // The same call as if produced by another provider: ids are re-derived.
    ctx.messages.push(CtxMessage::Assistant {
      blocks: vec![AssistantBlock::ToolCall {
        id: "call:x|item 7".into(),
        name: "read_file".into(),
        arguments: Map::new(),
      }],
      api: "anthropic-messages".into(),
      provider: "anthropic".into(),
      model: "claude".into(),
      stop_reason: "toolUse".into(),
    });
    ctx.messages.push(CtxMessage::ToolResult {
      tool_call_id: "call:x|item 7".into(),
      tool_name: "read_file".into(),
      content: vec![UserBlock::Text("ok".into())],
      is_error: false,
    });
    let req = OPENAI_RESPONSES.build_request(&model, &ctx, &options("text")).unwrap();
    let input = req.body["input"].as_array().unwrap();
    assert_eq!(
      input[2],
      json!({"type":"function_call","id":"fc_mock1","call_id":"call_mock_1","name":"read_file","arguments":"{}"})
    );
    assert_eq!(
      input[3],
      json!({"type":"function_call_output","call_id":"call_mock_1","output":"(no tool output)"})
    );
    let hashed = format!("fc_{}", short_hash("item 7"));
    assert_eq!(
      input[4],
      json!({"type":"function_call","id":hashed,"call_id":"call_x","name":"read_file","arguments":"{}"})
    );
    assert_eq!(input[5]["call_id"], "call_x");
  }

  #[test]
  fn short_hash_matches_the_reference() {
    // Values computed with pi-ai's shortHash under Node.
    assert_eq!(short_hash(""), "k4n83c7h0j2b");
    assert_eq!(short_hash("item 7"), "18bly5j1431fxo");
    assert_eq!(short_hash("\u{1F600}x"), "1yjycru1ayun52");
  }

  #[test]
  fn strict_and_grammar_tools() {
    let mut model = catalog_model("openai", "gpt-5", "/v1");
    let mut ctx = simple_context(None);
    let tools = ctx.tools.as_mut().unwrap();
    tools[0].constrained_sampling = Some(json!({"type":"json_schema","strict":"prefer"}));
    tools.push(ToolDef {
      name: "patch".into(),
      description: "Apply".into(),
      parameters: json!({"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}),
      constrained_sampling: Some(json!({"type":"grammar","variants":{"openai_lark":"start: /.+/"}})),
    });
    let req = OPENAI_RESPONSES.build_request(&model, &ctx, &options("text")).unwrap();
    let t = req.body["tools"].as_array().unwrap();
    assert_eq!(
      serde_json::to_string(&t[0]).unwrap(),
      concat!(
        r#"{"type":"function","name":"list_dir","description":"List a directory","parameters":"#,
        r#"{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"#,
        r#""additionalProperties":false},"#,
        r#""strict":true}"#
      )
    );
    assert_eq!(t[1]["strict"], false);
    assert_eq!(
      t[2],
      json!({"type":"custom","name":"patch","description":"Apply",
        "format":{"type":"grammar","syntax":"lark","definition":"start: /.+/"}})
    );
    // Without strict-mode support the flag is omitted; `require` then fails.
    model.compat = None;
    let req = OPENAI_RESPONSES.build_request(&model, &ctx, &options("text")).unwrap();
    assert!(req.body["tools"][0].get("strict").is_none());
    ctx.tools.as_mut().unwrap()[0].constrained_sampling = Some(json!({"type":"json_schema","strict":"require"}));
    assert_eq!(
      OPENAI_RESPONSES
        .build_request(&model, &ctx, &options("text"))
        .unwrap_err(),
      "Tool \"list_dir\" requires JSON-schema constrained sampling, but strict tools are unsupported."
    );
  }

  #[test]
  fn strict_schemas_make_optional_properties_nullable() {
    let s = make_strict_json_schema(
      &json!({"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},
      "required":["a"]}),
    )
    .unwrap();
    assert_eq!(
      serde_json::to_string(&s).unwrap(),
      concat!(
        r#"{"type":"object","properties":{"a":{"type":"string"},"b":{"anyOf":[{"type":"integer"},{"type":"null"}]}},"#,
        r#""required":["a","b"],"additionalProperties":false}"#
      )
    );
    assert_eq!(
      make_strict_json_schema(&json!({"type":"object","oneOf":[]}))
        .unwrap_err()
        .0,
      "oneOf schemas are unsupported"
    );
  }

  // ---- the mock's streams (a port of mock-provider.mjs `responsesScript`) ----

  fn mock_frames(body: &str, model: &str) -> Vec<(String, Value, bool)> {
    let mut frames: Vec<(String, Value, bool)> = Vec::new();
    let mut seq = 0;
    let mut ev = |kind: &str, fields: Value, text: bool| {
      let mut data = Map::new();
      data.insert("type".into(), json!(kind));
      data.insert("sequence_number".into(), json!(seq));
      seq += 1;
      for (k, v) in fields.as_object().unwrap() {
        data.insert(k.clone(), v.clone());
      }
      frames.push((kind.to_string(), Value::Object(data), text));
    };
    let response = |status: &str, extra: Value| {
      let mut r = json!({"id":"resp_mock1","object":"response","created_at":1764458886,"status":status,
        "background":false,"error":null,"incomplete_details":null,"model":model,"output":[],
        "parallel_tool_calls":true,"service_tier":"auto","store":false,"usage":null});
      for (k, v) in extra.as_object().unwrap() {
        r[k] = v.clone();
      }
      r
    };
    ev(
      "response.created",
      json!({"response": response("in_progress", json!({}))}),
      false,
    );
    ev(
      "response.in_progress",
      json!({"response": response("in_progress", json!({}))}),
      false,
    );
    let mut output = Vec::new();
    let mut index = 0;
    if body == "full" {
      let summary = "The user wants the file. I should call read_file.";
      ev(
        "response.output_item.added",
        json!({"output_index":index,"item":{"id":"rs_mock1","type":"reasoning","summary":[]}}),
        false,
      );
      ev(
        "response.reasoning_summary_part.added",
        json!({"item_id":"rs_mock1","output_index":index,"summary_index":0,"part":{"type":"summary_text","text":""}}),
        false,
      );
      for delta in ["The user wants the file. ", "I should call read_file."] {
        ev(
          "response.reasoning_summary_text.delta",
          json!({"item_id":"rs_mock1","output_index":index,"summary_index":0,"delta":delta,"obfuscation":"mock"}),
          false,
        );
      }
      ev(
        "response.reasoning_summary_text.done",
        json!({"item_id":"rs_mock1","output_index":index,"summary_index":0,"text":summary}),
        false,
      );
      ev(
        "response.reasoning_summary_part.done",
        json!({"item_id":"rs_mock1","output_index":index,"summary_index":0,
          "part":{"type":"summary_text","text":summary}}),
        false,
      );
      let item = json!({"id":"rs_mock1","type":"reasoning","encrypted_content":"gAAAAB-mock-encrypted-reasoning",
        "summary":[{"type":"summary_text","text":summary}]});
      ev(
        "response.output_item.done",
        json!({"output_index":index,"item":item}),
        false,
      );
      output.push(item);
      index += 1;
    }
    let pieces = ["I'll read ", "the file now."];
    let text = pieces.concat();
    ev(
      "response.output_item.added",
      json!({"output_index":index,"item":{"id":"msg_mock1","type":"message","status":"in_progress","content":[],
        "role":"assistant"}}),
      false,
    );
    ev(
      "response.content_part.added",
      json!({"item_id":"msg_mock1","output_index":index,"content_index":0,
        "part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}}),
      false,
    );
    for delta in pieces {
      ev(
        "response.output_text.delta",
        json!({"item_id":"msg_mock1","output_index":index,"content_index":0,"delta":delta,"logprobs":[],
          "obfuscation":"mock"}),
        true,
      );
    }
    ev(
      "response.output_text.done",
      json!({"item_id":"msg_mock1","output_index":index,"content_index":0,"text":text,"logprobs":[]}),
      false,
    );
    let part = json!({"type":"output_text","annotations":[],"logprobs":[],"text":text});
    ev(
      "response.content_part.done",
      json!({"item_id":"msg_mock1","output_index":index,"content_index":0,"part":part}),
      false,
    );
    let status = if body == "length" { "incomplete" } else { "completed" };
    let message = json!({"id":"msg_mock1","type":"message","status":status,"content":[part],"role":"assistant"});
    ev(
      "response.output_item.done",
      json!({"output_index":index,"item":message}),
      false,
    );
    output.push(message);
    index += 1;
    if body == "full" {
      let args = r#"{"path":"src/main.rs","limit":20}"#;
      let fc = json!({"id":"fc_mock1","type":"function_call","status":"in_progress","arguments":"",
        "call_id":"call_mock_1","name":"read_file"});
      ev(
        "response.output_item.added",
        json!({"output_index":index,"item":fc}),
        false,
      );
      for delta in [r#"{"path":"#, r#""src/main.rs""#, r#","limit":"#, "20}"] {
        ev(
          "response.function_call_arguments.delta",
          json!({"item_id":"fc_mock1","output_index":index,"delta":delta,"obfuscation":"mock"}),
          false,
        );
      }
      ev(
        "response.function_call_arguments.done",
        json!({"item_id":"fc_mock1","output_index":index,"arguments":args}),
        false,
      );
      let mut done = fc.clone();
      done["status"] = json!("completed");
      done["arguments"] = json!(args);
      ev(
        "response.output_item.done",
        json!({"output_index":index,"item":done}),
        false,
      );
      output.push(done);
    }
    let usage = json!({"input_tokens":1200,"input_tokens_details":{"cached_tokens":1024},"output_tokens":85,
      "output_tokens_details":{"reasoning_tokens":30},"total_tokens":1285});
    if body == "length" {
      ev(
        "response.incomplete",
        json!({"response": response("incomplete", json!({"incomplete_details":{"reason":"max_output_tokens"},
          "output":output,"usage":usage,"service_tier":"default"}))}),
        false,
      );
    } else {
      ev(
        "response.completed",
        json!({"response": response("completed", json!({"output":output,"usage":usage,"service_tier":"default"}))}),
        false,
      );
    }
    frames
  }

  /// The mock's SSE body for a scenario (`eof`: nothing; `eof-after-text`: cut after the text).
  fn mock_body(scenario: &str, model: &str) -> String {
    if scenario == "eof" {
      return String::new();
    }
    let kind = if scenario == "eof-after-text" { "text" } else { scenario };
    let mut frames = mock_frames(kind, model);
    if scenario == "eof-after-text" {
      let last = frames.iter().rposition(|f| f.2).unwrap();
      frames.truncate(last + 1);
    }
    frames
      .iter()
      .map(|(event, data, _)| format!("event: {event}\ndata: {}\n\n", js_stringify(data)))
      .collect()
  }

  /// Decode `body` in small chunks and run it through a parser.
  fn run(api: ResponsesApi, model: &Model, options: &WireOptions, body: &str) -> Vec<StreamEvent> {
    let mut parser = ResponsesAdapter(api).parser(model, options);
    let mut decoder = SseDecoder::default();
    let mut out = Vec::new();
    for chunk in body.as_bytes().chunks(7) {
      let mut events = Vec::new();
      decoder.feed(chunk, &mut events).unwrap();
      for e in &events {
        parser.on_event(e, &mut out);
      }
    }
    // The SDK and pi-ai's Codex reader drop an event left unterminated at the end of the body.
    decoder.finish();
    parser.on_end(&mut out);
    out
  }

  /// Blade's projection of the events to StreamChunk JSON (spec §5.2, §1.6), priced as pi-ai does.
  fn chunks(model: &Model, events: &[StreamEvent]) -> (Vec<Value>, Option<String>) {
    let mut out = Vec::new();
    let mut index = 0;
    for e in events {
      match e {
        StreamEvent::TextDelta(d) => out.push(json!({"content": d})),
        StreamEvent::ThinkingDelta(d) => out.push(json!({"reasoningContent": d})),
        StreamEvent::ToolCallEnd { id, name, arguments } => {
          out.push(json!({"toolCalls":[{"index":index,"id":id,"type":"function",
            "function":{"name":name,"arguments":js_stringify(&Value::Object(arguments.clone()))}}]}));
          index += 1;
        }
        StreamEvent::Done { reason, usage } => {
          let c = cost_usd(
            &model.cost,
            usage.input,
            usage.output,
            usage.cache_read,
            usage.cache_write,
            0.0,
          );
          let multiplier = match usage.service_tier.as_deref() {
            Some("flex") => 0.5,
            Some("priority") => 2.0,
            _ => 1.0,
          };
          let mut u = Map::new();
          u.insert(
            "promptTokens".into(),
            js_number(usage.input + usage.cache_read + usage.cache_write),
          );
          u.insert("completionTokens".into(), js_number(usage.output));
          u.insert("totalTokens".into(), js_number(usage.total));
          u.insert("costUsd".into(), js_number(c.total * multiplier));
          if let Some(r) = usage.reasoning {
            u.insert("reasoningTokens".into(), js_number(r));
          }
          if usage.cache_read > 0.0 {
            u.insert("cacheReadInputTokens".into(), js_number(usage.cache_read));
          }
          out.push(json!({"finishReason": reason.as_str(), "usage": u}));
        }
        StreamEvent::Error { message } => return (out, Some(message.clone())),
        _ => {}
      }
    }
    (out, None)
  }

  fn assert_chunks(got: &[Value], want: &Value) {
    let want = want.as_array().unwrap();
    assert_eq!(got.len(), want.len(), "{got:?}");
    for (g, w) in got.iter().zip(want) {
      match (g.get("usage"), w.get("usage")) {
        (Some(gu), Some(wu)) => {
          assert_eq!(g["finishReason"], w["finishReason"]);
          for (k, v) in wu.as_object().unwrap() {
            let (a, b) = (gu[k].as_f64().unwrap(), v.as_f64().unwrap());
            assert!((a - b).abs() < 1e-12, "{k}: {a} vs {b}");
          }
          assert_eq!(gu.as_object().unwrap().len(), wu.as_object().unwrap().len());
        }
        _ => assert_eq!(g, w),
      }
    }
  }

  #[test]
  fn full_streams_match_the_reference_chunks() {
    let cases = [
      (
        ResponsesApi::OpenAi,
        catalog_model("openai", "gpt-5", "/v1"),
        "openai-responses",
        Some("flex"),
      ),
      (
        ResponsesApi::Azure,
        catalog_model("azure-openai-responses", "gpt-5", "/openai/v1"),
        "azure-openai-responses",
        Some("priority"),
      ),
      (
        ResponsesApi::Codex,
        codex_model(),
        "openai-codex-responses",
        Some("priority"),
      ),
    ];
    for (api, model, name, tier) in cases {
      let mut o = options("full");
      o.service_tier = tier.map(String::from);
      let events = run(api, &model, &o, &mock_body("full", &model.id));
      let (got, error) = chunks(&model, &events);
      assert_eq!(error, None, "{name}");
      assert_chunks(&got, &fixture(name)["expectedChunks"]);
      // Semantic event order (spec §5.4).
      let kinds: Vec<&str> = events
        .iter()
        .map(|e| match e {
          StreamEvent::ThinkingStart => "thinking_start",
          StreamEvent::ThinkingDelta(_) => "thinking_delta",
          StreamEvent::ThinkingEnd => "thinking_end",
          StreamEvent::TextStart => "text_start",
          StreamEvent::TextDelta(_) => "text_delta",
          StreamEvent::TextEnd => "text_end",
          StreamEvent::ToolCallStart => "toolcall_start",
          StreamEvent::ToolCallDelta => "toolcall_delta",
          StreamEvent::ToolCallEnd { .. } => "toolcall_end",
          StreamEvent::Done { .. } => "done",
          _ => "other",
        })
        .collect();
      assert_eq!(
        kinds.join(" "),
        "thinking_start thinking_delta thinking_delta thinking_delta thinking_end text_start text_delta \
         text_delta text_end toolcall_start toolcall_delta toolcall_delta toolcall_delta toolcall_delta \
         toolcall_end done"
      );
      let StreamEvent::Done { usage, .. } = events.last().unwrap() else {
        panic!()
      };
      let expected_tier = if api == ResponsesApi::Azure {
        None
      } else if api == ResponsesApi::Codex {
        Some("priority".to_string())
      } else {
        Some("default".to_string())
      };
      assert_eq!(usage.service_tier, expected_tier, "{name}");
    }
  }

  #[test]
  fn text_length_and_truncated_streams() {
    let model = catalog_model("openai", "gpt-5", "/v1");
    for api in [ResponsesApi::OpenAi, ResponsesApi::Azure, ResponsesApi::Codex] {
      let o = options("text");
      let (got, error) = chunks(&model, &run(api, &model, &o, &mock_body("text", "gpt-5")));
      assert_eq!(error, None);
      assert_chunks(&got, &fixture("no-thinking-resp")["expectedChunks"]);

      let (got, error) = chunks(&model, &run(api, &model, &o, &mock_body("length", "gpt-5")));
      assert_eq!(error, None);
      assert_eq!(got.len(), 3);
      assert_eq!(got[2]["finishReason"], "length");
      assert_eq!(got[2]["usage"]["totalTokens"], 1285);

      let events = run(api, &model, &o, &mock_body("eof", "gpt-5"));
      assert_eq!(
        events,
        [StreamEvent::Error {
          message: "OpenAI Responses stream ended before a terminal response event".into()
        }]
      );
      let (got, error) = chunks(&model, &run(api, &model, &o, &mock_body("eof-after-text", "gpt-5")));
      assert_eq!(
        got,
        [json!({"content":"I'll read "}), json!({"content":"the file now."})]
      );
      assert_eq!(
        error.as_deref(),
        Some("OpenAI Responses stream ended before a terminal response event")
      );
    }
  }

  fn sse(events: &[Value]) -> String {
    events
      .iter()
      .map(|e| format!("event: {}\ndata: {}\n\n", e["type"].as_str().unwrap_or(""), e))
      .collect()
  }

  #[test]
  fn error_events_and_statuses() {
    let model = catalog_model("openai", "gpt-5", "/v1");
    let o = options("x");
    let last = |api, events: &[Value]| run(api, &model, &o, &sse(events)).pop().unwrap();
    let err = |m: &str| StreamEvent::Error { message: m.into() };
    assert_eq!(
      last(
        ResponsesApi::OpenAi,
        &[json!({"type":"error","code":"server_error","message":"boom"})]
      ),
      err("Error Code server_error: boom")
    );
    assert_eq!(
      last(ResponsesApi::OpenAi, &[json!({"type":"error","message":"boom"})]),
      err("Error Code undefined: boom")
    );
    assert_eq!(
      last(
        ResponsesApi::Codex,
        &[json!({"type":"error","code":"server_error","message":"boom"})]
      ),
      err("Codex error: boom")
    );
    let failed = json!({"type":"response.failed","response":{"status":"failed",
      "error":{"code":"rate_limit_exceeded","message":"slow down"}}});
    assert_eq!(
      last(ResponsesApi::OpenAi, std::slice::from_ref(&failed)),
      err("rate_limit_exceeded: slow down")
    );
    assert_eq!(last(ResponsesApi::Codex, &[failed]), err("slow down"));
    assert_eq!(
      last(ResponsesApi::Azure, &[json!({"type":"response.failed","response":{}})]),
      err("Unknown error (no error details in response)")
    );
    let incomplete = json!({"type":"response.incomplete","response":{"status":"incomplete",
      "incomplete_details":{"reason":"content_filter"}}});
    assert_eq!(
      last(ResponsesApi::OpenAi, std::slice::from_ref(&incomplete)),
      err("Response incomplete: content_filter")
    );
    assert_eq!(
      last(ResponsesApi::Codex, &[incomplete]),
      err("Response incomplete: content_filter")
    );
    let cancelled = json!({"type":"response.completed","response":{"status":"cancelled"}});
    assert_eq!(
      last(ResponsesApi::OpenAi, &[cancelled]),
      err("An unknown error occurred")
    );
    let odd = json!({"type":"response.completed","response":{"status":"weird"}});
    assert_eq!(
      last(ResponsesApi::OpenAi, std::slice::from_ref(&odd)),
      err("Unhandled stop reason: weird")
    );
    // Codex maps unknown statuses to none (→ stop) and treats `response.done` as terminal.
    let mut done = odd;
    done["type"] = json!("response.done");
    assert!(matches!(
      last(ResponsesApi::Codex, &[done]),
      StreamEvent::Done {
        reason: StopReason::Stop,
        ..
      }
    ));
    // An event with an `error` member is raised by the OpenAI SDK itself.
    assert_eq!(
      last(
        ResponsesApi::OpenAi,
        &[json!({"type":"x","error":{"message":"sdk says no"}})]
      ),
      err("sdk says no")
    );
  }

  #[test]
  fn codex_stops_at_the_terminal_event_and_openai_reads_to_the_end() {
    let model = catalog_model("openai", "gpt-5", "/v1");
    let o = options("x");
    let body = sse(&[
      json!({"type":"response.completed","response":{"status":"completed"}}),
      json!({"type":"error","code":"late","message":"after"}),
    ]);
    let codex = run(ResponsesApi::Codex, &model, &o, &body);
    assert!(matches!(codex.as_slice(), [StreamEvent::Done { .. }]));
    let openai = run(ResponsesApi::OpenAi, &model, &o, &body);
    assert_eq!(
      openai,
      [StreamEvent::Error {
        message: "Error Code late: after".into()
      }]
    );
    // After `[DONE]` the SDK ignores everything.
    let body = format!(
      "{}data: [DONE]\n\n{}",
      sse(&[json!({"type":"response.completed","response":{"status":"completed"}})]),
      sse(&[json!({"type":"error","code":"late","message":"after"})])
    );
    assert!(matches!(
      run(ResponsesApi::OpenAi, &model, &o, &body).as_slice(),
      [StreamEvent::Done { .. }]
    ));
  }

  #[test]
  fn custom_tool_calls_stream_their_input() {
    let model = catalog_model("openai", "gpt-5", "/v1");
    let mut ctx = simple_context(None);
    ctx.tools.as_mut().unwrap().push(ToolDef {
      name: "patch".into(),
      description: "Apply".into(),
      parameters: json!({"type":"object","properties":{"diff":{"type":"string"}},"required":["diff"]}),
      constrained_sampling: Some(json!({"type":"grammar","variants":{"openai_regex":".*"}})),
    });
    let o = options("x");
    let mut parser = OPENAI_RESPONSES.parser_for(&model, &ctx, &o);
    let body = sse(&[
      json!({"type":"response.output_item.added","output_index":0,
        "item":{"type":"custom_tool_call","id":"ctc_1","call_id":"call_1","name":"patch","input":""}}),
      json!({"type":"response.custom_tool_call_input.delta","output_index":0,"delta":"a\"b"}),
      json!({"type":"response.custom_tool_call_input.done","output_index":0,"input":"a\"bc"}),
      json!({"type":"response.output_item.done","output_index":0,
        "item":{"type":"custom_tool_call","id":"ctc_1","call_id":"call_1","name":"patch","input":"a\"bc"}}),
      json!({"type":"response.completed","response":{"status":"completed"}}),
    ]);
    let mut decoder = SseDecoder::default();
    let mut events = Vec::new();
    decoder.feed(body.as_bytes(), &mut events).unwrap();
    let mut out = Vec::new();
    for e in &events {
      parser.on_event(e, &mut out);
    }
    parser.on_end(&mut out);
    let mut args = Map::new();
    args.insert("diff".into(), json!("a\"bc"));
    assert_eq!(
      out[3],
      StreamEvent::ToolCallEnd {
        id: "call_1|ctc_1".into(),
        name: "patch".into(),
        arguments: args
      }
    );
    assert!(matches!(
      out[4],
      StreamEvent::Done {
        reason: StopReason::ToolUse,
        ..
      }
    ));
  }

  // ---- HTTP errors ----

  #[test]
  fn http_errors_match_the_derived_messages() {
    let f = fixture("error-messages");
    let bodies: HashMap<&str, (u16, &str, &str)> = [
      ("http429", (429, "Rate limit reached for requests", "rate_limit_error")),
      ("http500", (500, "Internal server error", "server_error")),
      ("http503", (503, "Service unavailable", "overloaded_error")),
      ("noretry503", (503, "Service unavailable", "overloaded_error")),
      (
        "http400",
        (
          400,
          "Invalid request: messages.0.content is malformed",
          "invalid_request_error",
        ),
      ),
      (
        "context",
        (
          400,
          "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
          "invalid_request_error",
        ),
      ),
    ]
    .into_iter()
    .collect();
    let mut checked = 0;
    for row in f["rows"].as_array().unwrap() {
      let api = row["api"].as_str().unwrap();
      let Some(&(status, message, kind)) = bodies.get(row["scenario"].as_str().unwrap()) else {
        continue;
      };
      if ResponsesApi::from_api(api).is_none() {
        continue;
      }
      let body = js_stringify(&json!({"error":{"message":message,"type":kind,"param":null,"code":kind}}));
      assert_eq!(
        http_error_message(api, status, &body),
        row["message"],
        "{api} {}",
        row["scenario"]
      );
      checked += 1;
    }
    assert_eq!(checked, 18);
  }

  #[test]
  fn http_errors_without_a_json_body() {
    assert_eq!(
      http_error_message("openai-responses", 502, "<html>bad gateway</html>"),
      "OpenAI API error (502): 502 <html>bad gateway</html>"
    );
    assert_eq!(
      http_error_message("azure-openai-responses", 500, ""),
      "Azure OpenAI API error (500): 500 status code (no body)"
    );
    assert_eq!(http_error_message("openai-codex-responses", 502, ""), "Bad Gateway");
    assert_eq!(
      http_error_message(
        "openai-codex-responses",
        400,
        r#"{"error":{"code":"usage_limit_reached","plan_type":"PLUS"}}"#
      ),
      "You have hit your ChatGPT usage limit (plus plan)."
    );
    let long = "x".repeat(4100);
    let msg = http_error_message(
      "openai-responses",
      400,
      &js_stringify(&json!({"error":{"detail":long}})),
    );
    assert!(msg.ends_with("... [truncated 113 chars]"), "{msg}");
  }
}

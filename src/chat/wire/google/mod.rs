//! Google's Gemini wire (spec §3.1–3.3, §4.6, §5.6, §5.10, §5.11), the way pi-ai 0.84.2 speaks it
//! over `@google/genai` 1.52.0.
//!
//! The work is split like the reference splits it, so that the Vertex API can reuse what the two
//! backends share:
//!
//! * this module: pi-ai's request parameters ([`build_params`]: contents, system instruction,
//!   function declarations, function-calling mode, generation and thinking config) in pi-ai's
//!   object shapes, the model-family rules they depend on, and the error text of non-2xx
//!   responses ([`http_error_message`], the SDK's `ApiError` text);
//! * [`stream`]: the SDK's own `alt=sse` framing and pi-ai's event mapping ([`GoogleStreamParser`]),
//!   the same for both backends;
//! * [`generative_ai`]: the Gemini API backend — URL, `x-goog-api-key`, and the SDK's "Mldev"
//!   converters that turn the parameters into the wire body (field order and selection).
//!
//! A Vertex adapter adds its URL/auth and the SDK's Vertex converters (they order a few objects
//! differently, e.g. function declarations as `description, name, parametersJsonSchema`) over the
//! same [`GoogleParams`] and the same parser.

pub mod generative_ai;
pub mod stream;

use serde_json::{json, Map, Value};

use super::anthropic::normalize_tool_call_id as sanitize_tool_call_id;
use super::strict::{make_strict_json_schema, resolve_json_schema_strict};
use super::transform::{js_json_parse, js_stringify, sanitize_surrogates, transform_messages};
use crate::chat::catalog::Model;
use crate::chat::types::{AssistantBlock, Context, CtxMessage, ToolDef, UserBlock, UserContent, WireOptions};
use crate::repair::jsnum::number_to_string;
use crate::repair::text::js_trim;

pub use stream::GoogleStreamParser;

/// What a tool result that only carries images says in place of text.
const ONLY_IMAGES_PLACEHOLDER: &str = "(see attached image)";
/// The text opening the extra user turn that carries tool-result images for Gemini < 3.
const TOOL_RESULT_IMAGE_TEXT: &str = "Tool result image:";

// ---------------------------------------------------------------------------------------------
// Model families

/// The major version of a `gemini-<n>…` / `gemini-live-<n>…` id (case-insensitive, anchored).
pub fn gemini_major_version(model_id: &str) -> Option<u64> {
  let id = model_id.to_lowercase();
  let rest = id.strip_prefix("gemini-")?;
  let rest = rest.strip_prefix("live-").unwrap_or(rest);
  let digits: &str = &rest[..rest.bytes().take_while(u8::is_ascii_digit).count()];
  if digits.is_empty() {
    return None;
  }
  // parseInt of a long digit run is a huge number: still "≥ 3".
  Some(digits.parse::<u64>().unwrap_or(u64::MAX))
}

/// Models that want the tool-call id echoed in `functionCall` / `functionResponse`: Claude and
/// gpt-oss behind Google endpoints, and Gemini ≥ 3.
pub fn requires_tool_call_id(model_id: &str) -> bool {
  model_id.starts_with("claude-")
    || model_id.starts_with("gpt-oss-")
    || gemini_major_version(model_id).is_some_and(|v| v >= 3)
}

/// Gemini ≥ 3 takes images inside `functionResponse.parts`; older Gemini needs a separate user
/// turn. Non-Gemini ids (Claude, Gemma…) count as capable.
pub fn supports_multimodal_function_response(model_id: &str) -> bool {
  gemini_major_version(model_id).is_none_or(|v| v >= 3)
}

/// Gemini ≥ 3 honours strict (validated) function calling.
pub fn supports_strict_tool_sampling(model_id: &str) -> bool {
  gemini_major_version(model_id).is_some_and(|v| v >= 3)
}

/// Whether `gemini-3` + optional `.<digits>` + `-<suffix>` occurs anywhere in the id
/// (`/gemini-3(?:\.\d+)?-<suffix>/`, case-insensitive).
fn has_gemini3_variant(model_id: &str, suffix: &str) -> bool {
  let id = model_id.to_lowercase();
  let wanted = format!("-{suffix}");
  id.match_indices("gemini-3").any(|(at, m)| {
    let mut rest = &id[at + m.len()..];
    if let Some(after_dot) = rest.strip_prefix('.') {
      let digits = after_dot.bytes().take_while(u8::is_ascii_digit).count();
      if digits > 0 {
        rest = &after_dot[digits..];
      }
    }
    rest.starts_with(&wanted)
  })
}

/// Gemini 3.x Pro (cannot switch thinking off).
pub fn is_gemini3_pro(model_id: &str) -> bool {
  has_gemini3_variant(model_id, "pro")
}

/// Gemini 3.x Flash / Flash-Lite and the `*-latest` aliases (no full thinking-off either).
pub fn is_gemini3_flash(model_id: &str) -> bool {
  let id = model_id.to_lowercase();
  has_gemini3_variant(model_id, "flash") || id == "gemini-flash-latest" || id == "gemini-flash-lite-latest"
}

/// Gemma 4 (`/gemma-?4/`).
pub fn is_gemma4(model_id: &str) -> bool {
  let id = model_id.to_lowercase();
  id.contains("gemma4") || id.contains("gemma-4")
}

// ---------------------------------------------------------------------------------------------
// Thinking (Blade's option, pi-ai's config)

/// Blade's `googleThinkingLevel`: the configured level as Google's enum; everything above
/// `medium` (`high`, `xhigh`, `max`) is `HIGH`. No per-model clamping: Blade calls pi-ai's
/// `stream` directly, which sends the level as given.
pub fn google_thinking_level(level: &str) -> &'static str {
  match level {
    "minimal" => "MINIMAL",
    "low" => "LOW",
    "medium" => "MEDIUM",
    _ => "HIGH",
  }
}

/// The `thinkingConfig` pi-ai sends. Blade always passes a thinking option for Google, so a
/// reasoning model always gets one:
///
/// * on: `{includeThoughts: true, thinkingLevel}` — a level, never a budget, even for Gemini 2.5
///   (spec §8 quirk 4, kept: it is what the reference sends and what its recordings pin);
/// * off: Gemini 3 Pro `{thinkingLevel: "LOW"}`, Gemini 3 Flash and Gemma 4
///   `{thinkingLevel: "MINIMAL"}` (they cannot switch thinking off; the hidden thinking stays
///   hidden because `includeThoughts` is absent), every other model `{thinkingBudget: 0}`.
///
/// Models without reasoning get no config.
pub fn thinking_config(model: &Model, thinking: Option<&str>) -> Option<Value> {
  if !model.reasoning {
    return None;
  }
  Some(match thinking {
    Some(level) => json!({"includeThoughts": true, "thinkingLevel": google_thinking_level(level)}),
    None => disabled_thinking_config(&model.id),
  })
}

fn disabled_thinking_config(model_id: &str) -> Value {
  if is_gemini3_pro(model_id) {
    json!({"thinkingLevel": "LOW"})
  } else if is_gemini3_flash(model_id) || is_gemma4(model_id) {
    json!({"thinkingLevel": "MINIMAL"})
  } else {
    json!({"thinkingBudget": 0})
  }
}

// ---------------------------------------------------------------------------------------------
// Request parameters (pi-ai's `buildParams`)

/// pi-ai's request parameters, in pi-ai's object shapes (before the SDK's converters).
#[derive(Clone, Debug, PartialEq)]
pub struct GoogleParams {
  /// `Content` objects: `{role, parts}`.
  pub contents: Vec<Value>,
  /// The system prompt (surrogate-sanitised), when non-empty.
  pub system_instruction: Option<String>,
  /// `[{functionDeclarations: [{name, description, parametersJsonSchema}]}]`, when there are tools.
  pub tools: Option<Vec<Value>>,
  /// `ANY` (a required tool) or `VALIDATED` (a strict-constrained tool on Gemini ≥ 3).
  pub function_calling_mode: Option<&'static str>,
  pub temperature: Option<f64>,
  pub max_output_tokens: Option<u64>,
  pub thinking_config: Option<Value>,
}

/// Build pi-ai's parameters; errors are pi-ai's texts (a required-strict tool whose schema cannot
/// be made strict).
pub fn build_params(model: &Model, context: &Context, options: &WireOptions) -> Result<GoogleParams, String> {
  let contents = convert_messages(model, &context.messages);
  let supports_strict = supports_strict_tool_sampling(&model.id);
  let tools = context.tools.as_deref().unwrap_or(&[]);
  let function_calling_mode = if tools.is_empty() {
    None
  } else {
    function_calling_mode(tools, options.required_tool.is_some(), supports_strict)?
  };
  let tools = if tools.is_empty() {
    None
  } else {
    Some(convert_tools(tools, supports_strict)?)
  };
  Ok(GoogleParams {
    contents,
    system_instruction: context
      .system_prompt
      .as_deref()
      .filter(|s| !s.is_empty())
      .map(sanitize_surrogates),
    tools,
    function_calling_mode,
    temperature: options.temperature,
    max_output_tokens: options.max_tokens,
    thinking_config: thinking_config(model, options.thinking.as_deref()),
  })
}

/// pi-ai's `resolveGoogleFunctionCallingMode` with Blade's tool choice (`"any"` for a required
/// tool, else none).
fn function_calling_mode(
  tools: &[ToolDef],
  required: bool,
  supports_strict: bool,
) -> Result<Option<&'static str>, String> {
  // `tools.some(...)`: evaluated in order, stopping at the first strict tool.
  let mut strict = false;
  for tool in tools {
    if resolve_json_schema_strict(tool, supports_strict)? == Some(true) {
      strict = true;
      break;
    }
  }
  Ok(if required {
    Some("ANY")
  } else if strict {
    Some("VALIDATED")
  } else {
    None
  })
}

/// pi-ai's `convertTools`: one tool object holding every function declaration, with the strict
/// schema where constrained sampling applies.
pub fn convert_tools(tools: &[ToolDef], supports_strict: bool) -> Result<Vec<Value>, String> {
  let mut declarations = Vec::with_capacity(tools.len());
  for tool in tools {
    let strict = resolve_json_schema_strict(tool, supports_strict)? == Some(true);
    let parameters = if strict {
      make_strict_json_schema(&tool.parameters).map_err(|e| e.0)?
    } else {
      tool.parameters.clone()
    };
    let mut d = Map::new();
    d.insert("name".into(), json!(tool.name));
    d.insert("description".into(), json!(tool.description));
    d.insert("parametersJsonSchema".into(), parameters);
    declarations.push(Value::Object(d));
  }
  Ok(vec![json!({ "functionDeclarations": declarations })])
}

/// pi-ai's tool-call id rule for Google: models that echo ids get `[A-Za-z0-9_-]`, 64 UTF-16
/// units; the others keep ids as they are (they are never sent). Applied by the shared transform
/// to turns of other models only.
pub fn normalize_tool_call_id(model_id: &str, id: &str) -> String {
  if requires_tool_call_id(model_id) {
    sanitize_tool_call_id(id)
  } else {
    id.to_string()
  }
}

/// Thought signatures are base64 (`TYPE_BYTES`): anything else is never echoed.
fn is_valid_thought_signature(signature: &str) -> bool {
  if signature.is_empty() || !signature.len().is_multiple_of(4) {
    return false;
  }
  let body = signature.trim_end_matches('=');
  signature.len() - body.len() <= 2
    && !body.is_empty()
    && body
      .bytes()
      .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
}

/// The signature to echo: only from the same provider and model, and only when valid.
fn resolve_thought_signature(same_model: bool, signature: Option<&str>) -> Option<String> {
  signature
    .filter(|s| same_model && is_valid_thought_signature(s))
    .map(String::from)
}

fn inline_data(mime_type: &str, data: &str) -> Value {
  json!({"inlineData": {"mimeType": mime_type, "data": data}})
}

/// pi-ai's `convertMessages`: the history (after the shared cross-model transform) as Gemini
/// contents.
pub fn convert_messages(model: &Model, messages: &[CtxMessage]) -> Vec<Value> {
  let model_id = model.id.clone();
  let transformed = transform_messages(messages, model, &|id| normalize_tool_call_id(&model_id, id));
  let include_id = requires_tool_call_id(&model.id);
  let multimodal_results = supports_multimodal_function_response(&model.id);
  let mut contents: Vec<Value> = Vec::with_capacity(transformed.len());
  for message in &transformed {
    match message {
      CtxMessage::User(UserContent::Text(text)) => {
        contents.push(json!({"role": "user", "parts": [{"text": sanitize_surrogates(text)}]}));
      }
      CtxMessage::User(UserContent::Blocks(blocks)) => {
        let parts: Vec<Value> = blocks
          .iter()
          .map(|b| match b {
            UserBlock::Text(t) => json!({"text": sanitize_surrogates(t)}),
            UserBlock::Image { mime_type, data } => inline_data(mime_type, data),
          })
          .collect();
        if !parts.is_empty() {
          contents.push(json!({"role": "user", "parts": parts}));
        }
      }
      CtxMessage::Assistant {
        blocks,
        provider,
        model: source_model,
        ..
      } => {
        let same_model = *provider == model.provider && *source_model == model.id;
        let mut parts = Vec::with_capacity(blocks.len());
        for block in blocks {
          match block {
            AssistantBlock::Text { text, signature } => {
              let signature = resolve_thought_signature(same_model, signature.as_deref());
              // An empty text is dropped unless it carries a signature Gemini wants echoed.
              if js_trim(text).is_empty() && signature.is_none() {
                continue;
              }
              let mut part = Map::new();
              part.insert("text".into(), json!(sanitize_surrogates(text)));
              if let Some(s) = signature {
                part.insert("thoughtSignature".into(), json!(s));
              }
              parts.push(Value::Object(part));
            }
            AssistantBlock::Thinking { text, signature } => {
              if same_model {
                // Blade's reasoning carries no signature: replayed as a thought part (§8 quirk 6).
                let signature = resolve_thought_signature(same_model, signature.as_deref());
                if js_trim(text).is_empty() && signature.is_none() {
                  continue;
                }
                let mut part = Map::new();
                part.insert("thought".into(), json!(true));
                part.insert("text".into(), json!(sanitize_surrogates(text)));
                if let Some(s) = signature {
                  part.insert("thoughtSignature".into(), json!(s));
                }
                parts.push(Value::Object(part));
              } else if !js_trim(text).is_empty() {
                parts.push(json!({"text": sanitize_surrogates(text)}));
              }
            }
            AssistantBlock::ToolCall { id, name, arguments } => {
              let mut call = Map::new();
              call.insert("name".into(), json!(name));
              call.insert("args".into(), Value::Object(arguments.clone()));
              if include_id {
                call.insert("id".into(), json!(id));
              }
              parts.push(json!({ "functionCall": call }));
            }
          }
        }
        if !parts.is_empty() {
          contents.push(json!({"role": "model", "parts": parts}));
        }
      }
      CtxMessage::ToolResult {
        tool_call_id,
        tool_name,
        content,
        is_error,
      } => {
        let texts: Vec<&str> = content
          .iter()
          .filter_map(|b| match b {
            UserBlock::Text(t) => Some(t.as_str()),
            UserBlock::Image { .. } => None,
          })
          .collect();
        let text = texts.join("\n");
        let images: Vec<Value> = if model.supports_images() {
          content
            .iter()
            .filter_map(|b| match b {
              UserBlock::Image { mime_type, data } => Some(inline_data(mime_type, data)),
              UserBlock::Text(_) => None,
            })
            .collect()
        } else {
          Vec::new()
        };
        let value = if !text.is_empty() {
          sanitize_surrogates(&text)
        } else if !images.is_empty() {
          ONLY_IMAGES_PLACEHOLDER.to_string()
        } else {
          String::new()
        };
        let mut response = Map::new();
        response.insert("name".into(), json!(tool_name));
        response.insert(
          "response".into(),
          if *is_error {
            json!({ "error": value })
          } else {
            json!({ "output": value })
          },
        );
        if !images.is_empty() && multimodal_results {
          response.insert("parts".into(), Value::Array(images.clone()));
        }
        if include_id {
          response.insert("id".into(), json!(tool_call_id));
        }
        let part = json!({ "functionResponse": response });
        // Consecutive results share one user turn (the previous one, if it holds results).
        let merged = match contents.last_mut() {
          Some(last) if last["role"] == "user" => match last.get_mut("parts") {
            Some(Value::Array(parts)) if parts.iter().any(|p| p.get("functionResponse").is_some()) => {
              parts.push(part.clone());
              true
            }
            _ => false,
          },
          _ => false,
        };
        if !merged {
          contents.push(json!({"role": "user", "parts": [part]}));
        }
        if !images.is_empty() && !multimodal_results {
          let mut parts = vec![json!({ "text": TOOL_RESULT_IMAGE_TEXT })];
          parts.extend(images);
          contents.push(json!({"role": "user", "parts": parts}));
        }
      }
    }
  }
  contents
}

// ---------------------------------------------------------------------------------------------
// HTTP errors

/// The error text of a non-2xx response, as the SDK's `ApiError` words it (pi-ai forwards it
/// unchanged because the message already carries the body): a JSON body (by `content-type`)
/// re-serialised, e.g. `{"error":{"code":429,"message":"…","status":"RESOURCE_EXHAUSTED"}}`;
/// any other body wrapped as `{"error":{"message":<text>,"code":<status>,"status":<reason>}}`.
/// A body that claims JSON but does not parse gives the parser's own error text.
pub fn http_error_message(status: u16, content_type: Option<&str>, body: &str) -> String {
  // `response.json()` / `response.text()` decode UTF-8 without a byte-order mark.
  let body = body.strip_prefix('\u{feff}').unwrap_or(body);
  if content_type.is_some_and(|ct| ct.contains("application/json")) {
    return match js_json_parse(body) {
      Ok(v) => js_stringify(&v),
      Err(e) => e.0,
    };
  }
  let reason = reqwest::StatusCode::from_u16(status)
    .ok()
    .and_then(|s| s.canonical_reason())
    .unwrap_or("");
  js_stringify(&json!({"error": {"message": body, "code": status, "status": reason}}))
}

// ---------------------------------------------------------------------------------------------
// JS value helpers

/// JS `String(x)` for a JSON value (`undefined` when absent).
fn js_string(v: Option<&Value>) -> String {
  match v {
    None => "undefined".into(),
    Some(Value::String(s)) => s.clone(),
    Some(Value::Number(n)) => number_to_string(n.as_f64().unwrap_or(0.0)),
    Some(Value::Bool(b)) => b.to_string(),
    Some(Value::Null) => "null".into(),
    Some(Value::Array(items)) => items
      .iter()
      .map(|x| if x.is_null() { String::new() } else { js_string(Some(x)) })
      .collect::<Vec<_>>()
      .join(","),
    Some(Value::Object(_)) => "[object Object]".into(),
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

#[cfg(test)]
mod tests;

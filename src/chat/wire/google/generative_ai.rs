//! The `google-generative-ai` wire: the Gemini API with an API key (spec §4.6), as pi-ai 0.84.2
//! sends it through `@google/genai` 1.52.0.
//!
//! Request: `POST <baseUrl>/models/<model>:streamGenerateContent?alt=sse` (the base carries the API
//! version, e.g. `…/v1beta`; without one the SDK's `https://generativelanguage.googleapis.com/v1beta`).
//! Headers: `content-type: application/json`, the model's and the caller's headers (JSON-null
//! values dropped), then `x-goog-api-key` unless a caller header already carries it. Names are
//! sent lower-case; a caller header that differs from an earlier one only in case is appended to
//! it (`a, b`), as `Headers.append` does. The SDK's telemetry (`user-agent`, `x-goog-api-client`)
//! is left out. The body is the SDK's "Mldev" conversion of pi-ai's parameters: `contents`,
//! `systemInstruction`, `tools`, `toolConfig`, `generationConfig`, each object with the SDK's
//! field order.

use serde_json::{json, Map, Value};

use super::{build_params, js_string, GoogleParams, GoogleStreamParser};
use crate::chat::catalog::Model;
use crate::chat::types::{Context, HttpRequest, StreamParser, WireAdapter, WireOptions};
use crate::chat::wire::transform::js_number;

pub const API: &str = "google-generative-ai";
/// The SDK's Gemini API endpoint and version when the model has no base URL.
const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";

/// The adapter object handed to the transport.
#[derive(Clone, Copy, Debug, Default)]
pub struct GoogleGenerativeAi;

impl WireAdapter for GoogleGenerativeAi {
  fn build_request(&self, model: &Model, context: &Context, options: &WireOptions) -> Result<HttpRequest, String> {
    build_request(model, context, options)
  }

  fn parser(&self, _model: &Model, _options: &WireOptions) -> Box<dyn StreamParser + Send> {
    Box::new(GoogleStreamParser::new())
  }
}

/// Build the whole HTTP request. Failures are the reference's texts, in the order it meets them.
pub fn build_request(model: &Model, context: &Context, options: &WireOptions) -> Result<HttpRequest, String> {
  let api_key = options
    .api_key
    .as_deref()
    .filter(|k| !k.is_empty())
    .ok_or_else(|| format!("No API key for provider: {}", model.provider))?;
  let params = build_params(model, context, options)?;
  let model_path = model_resource(&model.id)?;
  let body = mldev_body(&params)?;
  let url = request_url(&model.base_url, &model_path)?;
  let headers = build_headers(model, options, api_key)?;
  Ok(HttpRequest {
    url,
    headers,
    body,
    zstd: false,
  })
}

/// The SDK's `tModel` for the Gemini API: `models/<id>` (ids already under `models/` or
/// `tunedModels/` as they are).
pub fn model_resource(id: &str) -> Result<String, String> {
  if id.is_empty() {
    return Err("model is required and must be a string".into());
  }
  if id.contains("..") || id.contains('?') || id.contains('&') {
    return Err("invalid model parameter".into());
  }
  if id.starts_with("models/") || id.starts_with("tunedModels/") {
    Ok(id.to_string())
  } else {
    Ok(format!("models/{id}"))
  }
}

/// `<base>/<model>:streamGenerateContent?alt=sse`, parsed the way `new URL` does (an unparsable
/// one is `Invalid URL`); `alt=sse` is forced when the query does not already say so.
pub fn request_url(base_url: &str, model_path: &str) -> Result<String, String> {
  let base = if base_url.is_empty() {
    DEFAULT_BASE_URL
  } else {
    base_url
  };
  let base = base.strip_suffix('/').unwrap_or(base);
  let joined = format!("{base}/{model_path}:streamGenerateContent?alt=sse");
  let mut url = reqwest::Url::parse(&joined).map_err(|_| "Invalid URL".to_string())?;
  let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
  let alt = pairs.iter().find(|(k, _)| k == "alt").map(|(_, v)| v.as_str());
  if alt != Some("sse") {
    // `URLSearchParams.set`: the first `alt` takes the value, the others go.
    let mut out: Vec<(String, String)> = Vec::with_capacity(pairs.len() + 1);
    let mut set = false;
    for (k, v) in pairs {
      if k == "alt" {
        if !set {
          out.push((k, "sse".into()));
          set = true;
        }
      } else {
        out.push((k, v));
      }
    }
    if !set {
      out.push(("alt".into(), "sse".into()));
    }
    url.query_pairs_mut().clear().extend_pairs(out);
  }
  // fetch never sends a fragment.
  url.set_fragment(None);
  Ok(url.to_string())
}

/// The header list as sent (telemetry left out).
fn build_headers(model: &Model, options: &WireOptions, api_key: &str) -> Result<Vec<(String, String)>, String> {
  // `{...model.headers, ...options.headers}` without nulls, laid over the SDK's defaults with
  // `Object.assign` (case-sensitive keys; a repeated key keeps its slot).
  let mut record: Vec<(String, Value)> = vec![("Content-Type".into(), json!("application/json"))];
  let mut caller: Vec<(String, Value)> = Vec::new();
  for (k, v) in model.headers.iter().flatten().chain(options.headers.iter()) {
    assign(&mut caller, k, v.clone());
  }
  for (k, v) in caller {
    if !v.is_null() {
      assign(&mut record, &k, v);
    }
  }
  // `new Headers()` + `append` for each entry.
  let mut headers: Vec<(String, String)> = Vec::with_capacity(record.len() + 1);
  for (k, v) in record {
    let value = js_string(Some(&v));
    let value = value.trim_matches([' ', '\t', '\r', '\n']).to_string();
    match headers.iter_mut().find(|(n, _)| n.eq_ignore_ascii_case(&k)) {
      Some(slot) => slot.1 = format!("{}, {value}", slot.1),
      None => headers.push((k.to_ascii_lowercase(), value)),
    }
  }
  if api_key.starts_with("auth_tokens/") {
    return Err("Ephemeral tokens are only supported by the live API.".into());
  }
  if !headers.iter().any(|(n, _)| n == "x-goog-api-key") {
    headers.push((
      "x-goog-api-key".into(),
      api_key.trim_matches([' ', '\t', '\r', '\n']).to_string(),
    ));
  }
  Ok(headers)
}

/// `Object.assign` of one key.
fn assign(target: &mut Vec<(String, Value)>, name: &str, value: Value) {
  match target.iter_mut().find(|(n, _)| n == name) {
    Some(slot) => slot.1 = value,
    None => target.push((name.to_string(), value)),
  }
}

// ---------------------------------------------------------------------------------------------
// The SDK's Mldev converters (field selection and order of the Gemini API body)

/// `generateContentParametersToMldev` over pi-ai's parameters.
pub fn mldev_body(params: &GoogleParams) -> Result<Value, String> {
  if params.contents.is_empty() {
    return Err("contents are required".into());
  }
  let mut body = Map::new();
  body.insert(
    "contents".into(),
    Value::Array(params.contents.iter().map(mldev_content).collect()),
  );
  if let Some(system) = &params.system_instruction {
    body.insert(
      "systemInstruction".into(),
      json!({"parts": [{"text": system}], "role": "user"}),
    );
  }
  if let Some(tools) = &params.tools {
    let tools: Vec<Value> = tools
      .iter()
      .map(|t| match t.get("functionDeclarations") {
        Some(d) if !d.is_null() => json!({ "functionDeclarations": d }),
        _ => json!({}),
      })
      .collect();
    body.insert("tools".into(), Value::Array(tools));
  }
  if let Some(mode) = params.function_calling_mode {
    body.insert("toolConfig".into(), json!({"functionCallingConfig": {"mode": mode}}));
  }
  let mut generation = Map::new();
  if let Some(t) = params.temperature {
    generation.insert("temperature".into(), js_number(t));
  }
  if let Some(m) = params.max_output_tokens {
    generation.insert("maxOutputTokens".into(), json!(m));
  }
  if let Some(thinking) = &params.thinking_config {
    generation.insert("thinkingConfig".into(), thinking.clone());
  }
  body.insert("generationConfig".into(), Value::Object(generation));
  Ok(Value::Object(body))
}

/// `contentToMldev`: `{parts, role}`.
fn mldev_content(content: &Value) -> Value {
  let mut out = Map::new();
  if let Some(Value::Array(parts)) = content.get("parts") {
    out.insert("parts".into(), Value::Array(parts.iter().map(mldev_part).collect()));
  }
  if let Some(role) = content.get("role").filter(|r| !r.is_null()) {
    out.insert("role".into(), role.clone());
  }
  Value::Object(out)
}

/// `partToMldev` for the fields pi-ai sets, in the SDK's order: `functionCall` (`id, args,
/// name`), `functionResponse` (as given), `inlineData` (`data, mimeType`), `text`, `thought`,
/// `thoughtSignature`.
fn mldev_part(part: &Value) -> Value {
  let field = |key: &str| part.get(key).filter(|v| !v.is_null());
  let mut out = Map::new();
  if let Some(call) = field("functionCall") {
    let mut c = Map::new();
    for key in ["id", "args", "name"] {
      if let Some(v) = call.get(key).filter(|v| !v.is_null()) {
        c.insert(key.into(), v.clone());
      }
    }
    out.insert("functionCall".into(), Value::Object(c));
  }
  if let Some(response) = field("functionResponse") {
    out.insert("functionResponse".into(), response.clone());
  }
  if let Some(blob) = field("inlineData") {
    let mut b = Map::new();
    for key in ["data", "mimeType"] {
      if let Some(v) = blob.get(key).filter(|v| !v.is_null()) {
        b.insert(key.into(), v.clone());
      }
    }
    out.insert("inlineData".into(), Value::Object(b));
  }
  for key in ["text", "thought", "thoughtSignature"] {
    if let Some(v) = field(key) {
      out.insert(key.into(), v.clone());
    }
  }
  Value::Object(out)
}

#[cfg(test)]
mod tests;

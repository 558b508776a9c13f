//! Per-request option building (spec §2.8, §3) and fallback configuration (spec §6.8), over the
//! caller's `ChatConfig` / `ChatRequestOptions` JSON.

use serde_json::{Map, Value};

use super::catalog::{normalize_base_url, Model, Resolver};
use super::options::{resolve_response_verbosity, ModelInfo};
use super::types::{Retention, WireOptions};

pub fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
  v.get(key).and_then(Value::as_str)
}

pub fn num_field(v: &Value, key: &str) -> Option<f64> {
  v.get(key).and_then(Value::as_f64)
}

pub fn bool_field(v: &Value, key: &str) -> Option<bool> {
  v.get(key).and_then(Value::as_bool)
}

/// Resolve the config's model with the catalog overrides of §2.0 (base URL, max tokens).
pub fn resolve_model(resolver: &Resolver, config: &Value) -> Result<Model, String> {
  let provider = str_field(config, "provider").unwrap_or("");
  let id = str_field(config, "model").unwrap_or("");
  let mut model = resolver.resolve(provider, id).map_err(|e| e.to_string())?;
  if let Some(base) = str_field(config, "baseUrl").filter(|s| !s.is_empty()) {
    model.base_url = normalize_base_url(base, &model.api);
  }
  if let Some(max) = num_field(config, "maxOutputTokens").filter(|m| *m > 0.0) {
    model.max_tokens = max as u64;
  }
  Ok(model)
}

/// `none` unless caching is on; `long` for session-scoped non-OpenAI Chat Completions endpoints.
pub fn prompt_cache_retention(config: &Value, model: &Model, session_id: Option<&str>) -> Retention {
  if bool_field(config, "enablePromptCaching") != Some(true) {
    return Retention::None;
  }
  if session_id.is_some_and(|s| !s.is_empty())
    && model.api == "openai-completions"
    && !model.base_url.contains("api.openai.com")
  {
    return Retention::Long;
  }
  Retention::Short
}

/// The thinking level for this request, or `None` when thinking is off (§2.4, §3.1).
pub fn thinking_level(config: &Value, disabled: bool) -> Option<String> {
  if disabled || bool_field(config, "reasoningEnabled") != Some(true) {
    return None;
  }
  Some(
    str_field(config, "reasoningEffort")
      .or_else(|| str_field(config, "reasoningLevel"))
      .unwrap_or("high")
      .to_string(),
  )
}

/// Build the wire options for one attempt (§2.8). Fails like Blade when an explicit response
/// verbosity is not supported by the model.
pub fn wire_options(
  config: &Value,
  model: &Model,
  request_options: &Value,
  disable_thinking: bool,
) -> Result<WireOptions, String> {
  let session_id = str_field(request_options, "providerSessionId").map(String::from);
  let verbosity = str_field(config, "responseVerbosity").map(String::from);
  if let Some(v) = &verbosity {
    let info = ModelInfo {
      api: &model.api,
      id: &model.id,
      name: &model.name,
      reasoning: model.reasoning,
      thinking_level_map: model.thinking_level_map.as_ref(),
    };
    resolve_response_verbosity(&info, v).map_err(|e| e.to_string())?;
  }
  let headers = match config.get("customHeaders") {
    Some(Value::Object(h)) => h.clone(),
    _ => Map::new(),
  };
  Ok(WireOptions {
    api_key: str_field(config, "apiKey").map(String::from),
    temperature: Some(
      num_field(request_options, "temperature")
        .or_else(|| num_field(config, "temperature"))
        .unwrap_or(0.0),
    ),
    max_tokens: num_field(request_options, "maxOutputTokens")
      .or_else(|| num_field(config, "maxOutputTokens"))
      .map(|m| m as u64),
    timeout_ms: num_field(config, "timeout")
      .filter(|t| t.is_finite() && *t > 0.0)
      .map(|t| t as u64),
    headers,
    retention: Some(prompt_cache_retention(config, model, session_id.as_deref())),
    session_id,
    thinking: thinking_level(config, disable_thinking),
    required_tool: request_options
      .get("toolChoice")
      .and_then(|c| c.get("toolName"))
      .and_then(Value::as_str)
      .map(String::from),
    service_tier: str_field(config, "serviceTier").map(String::from),
    verbosity,
    api_version: str_field(config, "apiVersion").map(String::from),
  })
}

/// The configuration a fallback model runs with (§6.8).
pub fn fallback_config(primary: &Value, fallback: &Value) -> Value {
  let mut out = match primary {
    Value::Object(o) => o.clone(),
    _ => Map::new(),
  };
  let provider = fallback.get("provider").cloned().unwrap_or(Value::Null);
  let same_provider = primary.get("provider") == Some(&provider);
  let channel = fallback.get("channel").filter(|c| c.is_object());
  let inherit = same_provider && channel.is_none();
  let channel_value = |key: &str| channel.and_then(|c| c.get(key)).filter(|v| !v.is_null()).cloned();
  let set = |out: &mut Map<String, Value>, key: &str, v: Option<Value>| match v {
    Some(v) => {
      out.insert(key.to_string(), v);
    }
    None => {
      out.remove(key);
    }
  };
  out.insert("provider".into(), provider);
  out.insert("model".into(), fallback.get("model").cloned().unwrap_or(Value::Null));
  for key in [
    "apiKey",
    "baseUrl",
    "maxOutputTokens",
    "apiVersion",
    "customHeaders",
    "enablePromptCaching",
  ] {
    let v = channel_value(key).or_else(|| if inherit { primary.get(key).cloned() } else { None });
    set(&mut out, key, v);
  }
  for key in ["temperature", "timeout", "streamIdleTimeout"] {
    let v = channel_value(key).or_else(|| primary.get(key).cloned());
    set(&mut out, key, v);
  }
  for key in ["serviceTier", "responseVerbosity"] {
    let v = if same_provider { primary.get(key).cloned() } else { None };
    set(&mut out, key, v);
  }
  out.remove("fallbackModels");
  Value::Object(out)
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::chat::catalog::Catalog;
  use serde_json::json;

  #[test]
  fn retention_rules() {
    let r = Resolver {
      custom: &[],
      catalog: Catalog::embedded(),
    };
    let cfg = json!({"provider": "openai-compatible", "model": "x", "baseUrl": "http://127.0.0.1:1/v1", "enablePromptCaching": true});
    let m = resolve_model(&r, &cfg).unwrap();
    assert_eq!(prompt_cache_retention(&cfg, &m, Some("s")), Retention::Long);
    assert_eq!(prompt_cache_retention(&cfg, &m, None), Retention::Short);
    assert_eq!(prompt_cache_retention(&json!({}), &m, Some("s")), Retention::None);
  }

  #[test]
  fn options_follow_request_overrides() {
    let r = Resolver {
      custom: &[],
      catalog: Catalog::embedded(),
    };
    let cfg = json!({"provider": "openai", "model": "gpt-5", "temperature": 0.5, "maxOutputTokens": 100,
      "reasoningEnabled": true, "reasoningLevel": "low"});
    let m = resolve_model(&r, &cfg).unwrap();
    assert_eq!(m.max_tokens, 100);
    let o = wire_options(
      &cfg,
      &m,
      &json!({"temperature": 0.1, "toolChoice": {"type": "tool", "toolName": "t"}}),
      true,
    )
    .unwrap();
    assert_eq!(o.temperature, Some(0.1));
    assert_eq!(o.max_tokens, Some(100));
    assert_eq!(o.thinking, None);
    assert_eq!(o.required_tool.as_deref(), Some("t"));
    let o = wire_options(&cfg, &m, &json!({}), false).unwrap();
    assert_eq!(o.thinking.as_deref(), Some("low"));
  }

  #[test]
  fn fallback_inheritance() {
    let primary = json!({"provider": "openai", "model": "gpt-5", "apiKey": "k", "baseUrl": "b", "temperature": 0.3,
      "serviceTier": "priority", "customHeaders": {"x": "1"}, "fallbackModels": [{}], "maxRetries": 1});
    let same = fallback_config(&primary, &json!({"provider": "openai", "model": "gpt-4.1"}));
    assert_eq!(same["apiKey"], "k");
    assert_eq!(same["serviceTier"], "priority");
    assert_eq!(same["maxRetries"], 1);
    assert!(same.get("fallbackModels").is_none());
    let channel = fallback_config(
      &primary,
      &json!({"provider": "openai", "model": "m", "channel": {"timeout": 5}}),
    );
    assert!(channel.get("apiKey").is_none());
    assert_eq!(channel["timeout"], 5);
    assert_eq!(channel["temperature"], 0.3);
    let other = fallback_config(&primary, &json!({"provider": "anthropic", "model": "m"}));
    assert!(other.get("serviceTier").is_none() && other.get("baseUrl").is_none());
  }
}

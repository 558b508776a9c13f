//! Capability checks for the user-facing model options (spec §3.4, §3.5, §6.1, §7).
//!
//! Each resolver takes the selection as a string, exactly as Blade's does: any value that is not
//! `auto` and not in the model's supported list (unknown words included) is rejected with Blade's
//! message. Results serialise to Blade's object shapes.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The wire APIs whose service tiers follow OpenAI's vocabulary; also the APIs that may take a
/// response verbosity.
const OPENAI_FAMILY_APIS: [&str; 4] = [
  "openai-completions",
  "openai-responses",
  "openai-codex-responses",
  "azure-openai-responses",
];

/// The part of a catalog `Model` these checks read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModelInfo<'a> {
  pub api: &'a str,
  pub id: &'a str,
  /// Display name, used in error messages.
  pub name: &'a str,
  pub reasoning: bool,
  /// `thinkingLevelMap`: a level mapped to `null` is unsupported; `xhigh`/`max` need an entry.
  pub thinking_level_map: Option<&'a Map<String, Value>>,
}

impl<'a> ModelInfo<'a> {
  /// Reads a model in pi-ai's JSON shape. Missing strings read as empty, except a missing `name`,
  /// which reads as `undefined` (what Blade's template string would print); `reasoning` follows JS
  /// truthiness.
  pub fn from_json(model: &'a Value) -> Self {
    let text = |key: &str| model.get(key).and_then(Value::as_str);
    ModelInfo {
      api: text("api").unwrap_or(""),
      id: text("id").unwrap_or(""),
      name: text("name").unwrap_or("undefined"),
      reasoning: match model.get("reasoning") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(flag)) => *flag,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|n| n != 0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(_) => true,
      },
      thinking_level_map: model.get("thinkingLevelMap").and_then(Value::as_object),
    }
  }
}

/// Rejections raised while resolving options; the messages are Blade's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OptionsError {
  #[error("Reasoning effort {selection} is not supported by {model_name}")]
  UnsupportedReasoningEffort { selection: String, model_name: String },
  #[error("Service tier {selection} is not supported by {model_name}")]
  UnsupportedServiceTier { selection: String, model_name: String },
  #[error("Response verbosity {selection} is not supported by {model_name}")]
  UnsupportedResponseVerbosity { selection: String, model_name: String },
}

// ---------------------------------------------------------------------------------------------
// Thinking levels (§7)

/// pi-ai's thinking levels, in ascending order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingLevel {
  Off,
  Minimal,
  Low,
  Medium,
  High,
  Xhigh,
  Max,
}

pub const THINKING_LEVELS: [ThinkingLevel; 7] = [
  ThinkingLevel::Off,
  ThinkingLevel::Minimal,
  ThinkingLevel::Low,
  ThinkingLevel::Medium,
  ThinkingLevel::High,
  ThinkingLevel::Xhigh,
  ThinkingLevel::Max,
];

impl ThinkingLevel {
  pub fn as_str(self) -> &'static str {
    match self {
      ThinkingLevel::Off => "off",
      ThinkingLevel::Minimal => "minimal",
      ThinkingLevel::Low => "low",
      ThinkingLevel::Medium => "medium",
      ThinkingLevel::High => "high",
      ThinkingLevel::Xhigh => "xhigh",
      ThinkingLevel::Max => "max",
    }
  }

  pub fn parse(text: &str) -> Option<Self> {
    THINKING_LEVELS.into_iter().find(|level| level.as_str() == text)
  }
}

/// The levels a model accepts: `off` only for non-reasoning models; otherwise `off` to `high`
/// unless mapped to `null`, plus `xhigh` / `max` only when the map names them (with a non-null
/// value). Ascending order.
pub fn supported_thinking_levels(model: &ModelInfo) -> Vec<ThinkingLevel> {
  if !model.reasoning {
    return vec![ThinkingLevel::Off];
  }
  THINKING_LEVELS
    .into_iter()
    .filter(|level| {
      let mapped = model.thinking_level_map.and_then(|map| map.get(level.as_str()));
      match mapped {
        Some(Value::Null) => false,
        None => !matches!(level, ThinkingLevel::Xhigh | ThinkingLevel::Max),
        Some(_) => true,
      }
    })
    .collect()
}

/// The supported level nearest to `level`: itself, else the next higher supported one, else the
/// next lower one. An unknown level (or a model supporting nothing) yields the lowest supported
/// level, or `off`.
pub fn clamp_thinking_level(model: &ModelInfo, level: &str) -> ThinkingLevel {
  let supported = supported_thinking_levels(model);
  let fallback = supported.first().copied().unwrap_or(ThinkingLevel::Off);
  let Some(requested) = ThinkingLevel::parse(level) else {
    return fallback;
  };
  if supported.contains(&requested) {
    return requested;
  }
  let upward = THINKING_LEVELS.into_iter().filter(|l| *l > requested);
  let downward = THINKING_LEVELS.into_iter().rev().filter(|l| *l < requested);
  upward
    .chain(downward)
    .find(|l| supported.contains(l))
    .unwrap_or(fallback)
}

/// The user's reasoning-effort choice: `auto` or an explicit level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningEffortSelection {
  Auto,
  Off,
  Minimal,
  Low,
  Medium,
  High,
  Xhigh,
  Max,
}

impl ReasoningEffortSelection {
  pub fn as_str(self) -> &'static str {
    match self.level() {
      Some(level) => level.as_str(),
      None => "auto",
    }
  }

  /// Blade's `isReasoningEffortSelection`.
  pub fn parse(text: &str) -> Option<Self> {
    if text == "auto" {
      return Some(ReasoningEffortSelection::Auto);
    }
    ThinkingLevel::parse(text).map(Self::from)
  }

  /// The explicit level, `None` for `auto`.
  pub fn level(self) -> Option<ThinkingLevel> {
    match self {
      ReasoningEffortSelection::Auto => None,
      ReasoningEffortSelection::Off => Some(ThinkingLevel::Off),
      ReasoningEffortSelection::Minimal => Some(ThinkingLevel::Minimal),
      ReasoningEffortSelection::Low => Some(ThinkingLevel::Low),
      ReasoningEffortSelection::Medium => Some(ThinkingLevel::Medium),
      ReasoningEffortSelection::High => Some(ThinkingLevel::High),
      ReasoningEffortSelection::Xhigh => Some(ThinkingLevel::Xhigh),
      ReasoningEffortSelection::Max => Some(ThinkingLevel::Max),
    }
  }
}

impl From<ThinkingLevel> for ReasoningEffortSelection {
  fn from(level: ThinkingLevel) -> Self {
    match level {
      ThinkingLevel::Off => ReasoningEffortSelection::Off,
      ThinkingLevel::Minimal => ReasoningEffortSelection::Minimal,
      ThinkingLevel::Low => ReasoningEffortSelection::Low,
      ThinkingLevel::Medium => ReasoningEffortSelection::Medium,
      ThinkingLevel::High => ReasoningEffortSelection::High,
      ThinkingLevel::Xhigh => ReasoningEffortSelection::Xhigh,
      ThinkingLevel::Max => ReasoningEffortSelection::Max,
    }
  }
}

/// Blade's `{ selection, effective, supported }` for reasoning effort.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReasoningEffortConfiguration {
  pub selection: ReasoningEffortSelection,
  pub effective: ThinkingLevel,
  pub supported: Vec<ThinkingLevel>,
}

/// Checks a reasoning-effort selection against the model; `auto` becomes `high` clamped to what
/// the model supports.
pub fn resolve_reasoning_effort(
  model: &ModelInfo,
  selection: &str,
) -> Result<ReasoningEffortConfiguration, OptionsError> {
  let supported = supported_thinking_levels(model);
  let rejected = || OptionsError::UnsupportedReasoningEffort {
    selection: selection.to_owned(),
    model_name: model.name.to_owned(),
  };
  let parsed = ReasoningEffortSelection::parse(selection).ok_or_else(rejected)?;
  let effective = match parsed.level() {
    None => clamp_thinking_level(model, ThinkingLevel::High.as_str()),
    Some(level) if supported.contains(&level) => level,
    Some(_) => return Err(rejected()),
  };
  Ok(ReasoningEffortConfiguration {
    selection: parsed,
    effective,
    supported,
  })
}

// ---------------------------------------------------------------------------------------------
// Service tier (§3.4)

/// The user's service-tier choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ServiceTierSelection {
  Auto,
  Standard,
  Fast,
  Flex,
}

impl ServiceTierSelection {
  pub fn as_str(self) -> &'static str {
    match self {
      ServiceTierSelection::Auto => "auto",
      ServiceTierSelection::Standard => "standard",
      ServiceTierSelection::Fast => "fast",
      ServiceTierSelection::Flex => "flex",
    }
  }

  /// Blade's `isServiceTierSelection`.
  pub fn parse(text: &str) -> Option<Self> {
    [Self::Auto, Self::Standard, Self::Fast, Self::Flex]
      .into_iter()
      .find(|tier| tier.as_str() == text)
  }
}

/// What the selection amounts to; `auto` leaves the choice to the provider.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ServiceTierEffective {
  ProviderDefault,
  Standard,
  Fast,
  Flex,
}

/// The value sent on the wire (config `serviceTier`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderServiceTier {
  Default,
  Priority,
  Flex,
  Fast,
}

impl ProviderServiceTier {
  pub fn as_str(self) -> &'static str {
    match self {
      ProviderServiceTier::Default => "default",
      ProviderServiceTier::Priority => "priority",
      ProviderServiceTier::Flex => "flex",
      ProviderServiceTier::Fast => "fast",
    }
  }
}

/// Blade's `{ selection, effective, supported, providerValue? }` for service tiers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceTierConfiguration {
  pub selection: ServiceTierSelection,
  pub effective: ServiceTierEffective,
  pub supported: Vec<ServiceTierSelection>,
  #[serde(default, skip_serializing_if = "Option::is_none")]
  pub provider_value: Option<ProviderServiceTier>,
}

/// Explicit tiers a model accepts (never `auto`): all three on OpenAI-family APIs, `standard` and
/// `fast` for Claude Opus 4.6 on the Anthropic API, otherwise `standard` only.
pub fn supported_service_tiers(api: &str, model_id: &str) -> &'static [ServiceTierSelection] {
  use ServiceTierSelection::{Fast, Flex, Standard};
  if OPENAI_FAMILY_APIS.contains(&api) {
    &[Standard, Fast, Flex]
  } else if api == "anthropic-messages" && has_delimited_token(model_id, "claude-opus-4-6", |b| b == b'-') {
    &[Standard, Fast]
  } else {
    &[Standard]
  }
}

/// Checks a service-tier selection against the model and derives the provider value.
pub fn resolve_service_tier(model: &ModelInfo, selection: &str) -> Result<ServiceTierConfiguration, OptionsError> {
  let supported = supported_service_tiers(model.api, model.id);
  let parsed = ServiceTierSelection::parse(selection)
    .filter(|tier| *tier == ServiceTierSelection::Auto || supported.contains(tier))
    .ok_or_else(|| OptionsError::UnsupportedServiceTier {
      selection: selection.to_owned(),
      model_name: model.name.to_owned(),
    })?;
  let openai_family = OPENAI_FAMILY_APIS.contains(&model.api);
  let (effective, provider_value) = match parsed {
    ServiceTierSelection::Auto => (ServiceTierEffective::ProviderDefault, None),
    ServiceTierSelection::Standard => (
      ServiceTierEffective::Standard,
      openai_family.then_some(ProviderServiceTier::Default),
    ),
    ServiceTierSelection::Fast => {
      let value = if model.api == "anthropic-messages" {
        ProviderServiceTier::Fast
      } else {
        ProviderServiceTier::Priority
      };
      (ServiceTierEffective::Fast, Some(value))
    }
    ServiceTierSelection::Flex => (ServiceTierEffective::Flex, Some(ProviderServiceTier::Flex)),
  };
  Ok(ServiceTierConfiguration {
    selection: parsed,
    effective,
    supported: supported.to_vec(),
    provider_value,
  })
}

// ---------------------------------------------------------------------------------------------
// Response verbosity (§3.5)

/// The user's verbosity choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResponseVerbositySelection {
  Auto,
  Low,
  Medium,
  High,
}

impl ResponseVerbositySelection {
  pub fn as_str(self) -> &'static str {
    match self {
      ResponseVerbositySelection::Auto => "auto",
      ResponseVerbositySelection::Low => "low",
      ResponseVerbositySelection::Medium => "medium",
      ResponseVerbositySelection::High => "high",
    }
  }

  /// Blade's `isResponseVerbositySelection`.
  pub fn parse(text: &str) -> Option<Self> {
    [Self::Auto, Self::Low, Self::Medium, Self::High]
      .into_iter()
      .find(|v| v.as_str() == text)
  }
}

/// What the selection amounts to; `auto` leaves the choice to the provider.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResponseVerbosityEffective {
  ProviderDefault,
  Low,
  Medium,
  High,
}

/// Blade's `{ selection, effective, supported, providerValue? }` for verbosity. `provider_value`
/// is the selection itself whenever it is explicit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResponseVerbosityConfiguration {
  pub selection: ResponseVerbositySelection,
  pub effective: ResponseVerbosityEffective,
  pub supported: Vec<ResponseVerbositySelection>,
  #[serde(default, skip_serializing_if = "Option::is_none")]
  pub provider_value: Option<ResponseVerbositySelection>,
}

/// Explicit verbosities a model accepts (never `auto`): all three for the Codex API, and for the
/// other OpenAI-family APIs when the model id contains `gpt-5` as a token delimited by start/end or
/// one of `/ . : _ -`; none otherwise.
pub fn supported_response_verbosities(api: &str, model_id: &str) -> &'static [ResponseVerbositySelection] {
  use ResponseVerbositySelection::{High, Low, Medium};
  let gpt5 = || has_delimited_token(model_id, "gpt-5", |b| matches!(b, b'/' | b'.' | b':' | b'_' | b'-'));
  if api == "openai-codex-responses" || (OPENAI_FAMILY_APIS.contains(&api) && gpt5()) {
    &[Low, Medium, High]
  } else {
    &[]
  }
}

/// Checks a verbosity selection against the model.
pub fn resolve_response_verbosity(
  model: &ModelInfo,
  selection: &str,
) -> Result<ResponseVerbosityConfiguration, OptionsError> {
  let supported = supported_response_verbosities(model.api, model.id);
  let parsed = ResponseVerbositySelection::parse(selection)
    .filter(|v| *v == ResponseVerbositySelection::Auto || supported.contains(v))
    .ok_or_else(|| OptionsError::UnsupportedResponseVerbosity {
      selection: selection.to_owned(),
      model_name: model.name.to_owned(),
    })?;
  let (effective, provider_value) = match parsed {
    ResponseVerbositySelection::Auto => (ResponseVerbosityEffective::ProviderDefault, None),
    ResponseVerbositySelection::Low => (ResponseVerbosityEffective::Low, Some(parsed)),
    ResponseVerbositySelection::Medium => (ResponseVerbosityEffective::Medium, Some(parsed)),
    ResponseVerbositySelection::High => (ResponseVerbosityEffective::High, Some(parsed)),
  };
  Ok(ResponseVerbosityConfiguration {
    selection: parsed,
    effective,
    supported: supported.to_vec(),
    provider_value,
  })
}

/// True when `token` occurs in `text` (ASCII case-insensitively) with each side either the text's
/// edge or a byte accepted by `is_delimiter`.
fn has_delimited_token(text: &str, token: &str, is_delimiter: fn(u8) -> bool) -> bool {
  let lowered = text.to_ascii_lowercase();
  let bytes = lowered.as_bytes();
  lowered.match_indices(token).any(|(start, _)| {
    let end = start + token.len();
    (start == 0 || is_delimiter(bytes[start - 1])) && (end == bytes.len() || is_delimiter(bytes[end]))
  })
}

// ---------------------------------------------------------------------------------------------
// Stream watchdog timings (§6.1)

/// Idle timeout used when none (or a non-positive one) is configured.
pub const DEFAULT_STREAM_IDLE_TIMEOUT_MS: u64 = 300_000;
/// Stall warning used when none is configured.
pub const DEFAULT_STREAM_STALL_WARNING_MS: u64 = 30_000;

/// The idle timeout in force: the configured value when positive, else the default.
pub fn resolve_stream_idle_timeout_ms(configured_ms: Option<i64>) -> u64 {
  match configured_ms {
    Some(ms) if ms > 0 => ms as u64,
    _ => DEFAULT_STREAM_IDLE_TIMEOUT_MS,
  }
}

/// When the stall warning fires. `Some(0)` configured disables it (`None`); a positive value is
/// used, anything else means the 30 s default; the result is bounded to
/// `[1, floor(idle_timeout_ms / 2)]` (the lower bound wins for tiny timeouts).
pub fn resolve_stream_stall_warning_ms(idle_timeout_ms: u64, configured_warning_ms: Option<i64>) -> Option<u64> {
  let requested = match configured_warning_ms {
    Some(0) => return None,
    Some(ms) if ms > 0 => ms as u64,
    _ => DEFAULT_STREAM_STALL_WARNING_MS,
  };
  Some(requested.min(idle_timeout_ms / 2).max(1))
}

#[cfg(test)]
mod tests {
  use super::*;
  use serde_json::json;

  fn reasoning_model(map: Option<Value>) -> Value {
    let mut model = json!({
      "id": "reasoning-model",
      "name": "Reasoning Model",
      "provider": "openai",
      "api": "openai-responses",
      "baseUrl": "https://example.test/v1",
      "reasoning": true,
      "input": ["text"],
      "contextWindow": 128000,
      "maxTokens": 16000
    });
    if let Some(map) = map {
      model["thinkingLevelMap"] = map;
    }
    model
  }

  fn levels(names: &[&str]) -> Vec<ThinkingLevel> {
    names.iter().map(|name| ThinkingLevel::parse(name).unwrap()).collect()
  }

  fn model(api: &'static str, id: &'static str) -> ModelInfo<'static> {
    ModelInfo {
      api,
      id,
      name: id,
      reasoning: false,
      thinking_level_map: None,
    }
  }

  // ---- reasoning effort: Blade's suite ----

  #[test]
  fn explicit_supported_level() {
    let json = reasoning_model(None);
    let config = resolve_reasoning_effort(&ModelInfo::from_json(&json), "medium").unwrap();
    assert_eq!(
      serde_json::to_value(&config).unwrap(),
      json!({ "selection": "medium", "effective": "medium", "supported": ["off", "minimal", "low", "medium", "high"] })
    );
  }

  #[test]
  fn auto_resolves_near_high() {
    let json = reasoning_model(Some(json!({ "off": null, "high": null, "xhigh": "xhigh" })));
    let config = resolve_reasoning_effort(&ModelInfo::from_json(&json), "auto").unwrap();
    assert_eq!(
      serde_json::to_value(&config).unwrap(),
      json!({ "selection": "auto", "effective": "xhigh", "supported": ["minimal", "low", "medium", "xhigh"] })
    );
  }

  #[test]
  fn rejects_unsupported_and_mandatory_off() {
    let mandatory_json = reasoning_model(Some(json!({ "off": null, "minimal": null, "xhigh": null })));
    let mandatory = ModelInfo::from_json(&mandatory_json);
    assert_eq!(
      resolve_reasoning_effort(&mandatory, "off").unwrap_err().to_string(),
      "Reasoning effort off is not supported by Reasoning Model"
    );
    assert_eq!(
      resolve_reasoning_effort(&mandatory, "minimal").unwrap_err().to_string(),
      "Reasoning effort minimal is not supported by Reasoning Model"
    );
    let plain_json = reasoning_model(None);
    assert_eq!(
      resolve_reasoning_effort(&ModelInfo::from_json(&plain_json), "xhigh").unwrap_err(),
      OptionsError::UnsupportedReasoningEffort {
        selection: "xhigh".into(),
        model_name: "Reasoning Model".into()
      }
    );
  }

  #[test]
  fn non_reasoning_models_only_offer_off() {
    let mut json = reasoning_model(None);
    json["reasoning"] = json!(false);
    let plain = ModelInfo::from_json(&json);
    let config = resolve_reasoning_effort(&plain, "auto").unwrap();
    assert_eq!(
      serde_json::to_value(&config).unwrap(),
      json!({ "selection": "auto", "effective": "off", "supported": ["off"] })
    );
    assert_eq!(
      resolve_reasoning_effort(&plain, "off").unwrap().effective,
      ThinkingLevel::Off
    );
    assert!(resolve_reasoning_effort(&plain, "low")
      .unwrap_err()
      .to_string()
      .contains("low is not supported"));
  }

  #[test]
  fn selection_vocabulary() {
    for value in ["auto", "off", "minimal", "low", "medium", "high", "xhigh", "max"] {
      let parsed = ReasoningEffortSelection::parse(value).unwrap();
      assert_eq!(parsed.as_str(), value);
    }
    assert_eq!(ReasoningEffortSelection::parse("ultra"), None);
    assert_eq!(ReasoningEffortSelection::parse("HIGH"), None);
    // Unknown words get the same message as unsupported levels.
    let json = reasoning_model(None);
    assert_eq!(
      resolve_reasoning_effort(&ModelInfo::from_json(&json), "ultra")
        .unwrap_err()
        .to_string(),
      "Reasoning effort ultra is not supported by Reasoning Model"
    );
  }

  // ---- supported levels and clamping (§7) ----

  #[test]
  fn supported_levels_rules() {
    let deepseek_flash = reasoning_model(Some(json!({ "minimal": null, "medium": null, "max": "max" })));
    assert_eq!(
      supported_thinking_levels(&ModelInfo::from_json(&deepseek_flash)),
      levels(&["off", "low", "high", "max"])
    );
    let gpt5 = reasoning_model(Some(json!({
      "off": null, "minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": null, "max": null
    })));
    assert_eq!(
      supported_thinking_levels(&ModelInfo::from_json(&gpt5)),
      levels(&["minimal", "low", "medium", "high"])
    );
    let everything = reasoning_model(Some(json!({ "xhigh": "x", "max": "m" })));
    assert_eq!(
      supported_thinking_levels(&ModelInfo::from_json(&everything)),
      THINKING_LEVELS.to_vec()
    );
    // Reasoning flag off wins over any map.
    let mut off = everything.clone();
    off["reasoning"] = json!(false);
    assert_eq!(supported_thinking_levels(&ModelInfo::from_json(&off)), levels(&["off"]));
    // A non-object map counts as absent.
    let odd = reasoning_model(Some(json!("weird")));
    assert_eq!(
      supported_thinking_levels(&ModelInfo::from_json(&odd)),
      levels(&["off", "minimal", "low", "medium", "high"])
    );
  }

  #[test]
  fn clamping_prefers_upward_then_downward() {
    let json = reasoning_model(Some(json!({ "off": null, "high": null, "xhigh": "xhigh" })));
    let info = ModelInfo::from_json(&json);
    assert_eq!(clamp_thinking_level(&info, "high"), ThinkingLevel::Xhigh);
    assert_eq!(clamp_thinking_level(&info, "off"), ThinkingLevel::Minimal);
    assert_eq!(clamp_thinking_level(&info, "max"), ThinkingLevel::Xhigh);
    assert_eq!(clamp_thinking_level(&info, "low"), ThinkingLevel::Low);
    assert_eq!(clamp_thinking_level(&info, "bogus"), ThinkingLevel::Minimal);

    let capped = reasoning_model(Some(json!({ "high": null })));
    let info = ModelInfo::from_json(&capped);
    assert_eq!(clamp_thinking_level(&info, "high"), ThinkingLevel::Medium);
    assert_eq!(
      resolve_reasoning_effort(&info, "auto").unwrap().effective,
      ThinkingLevel::Medium
    );

    let nothing = reasoning_model(Some(json!({
      "off": null, "minimal": null, "low": null, "medium": null, "high": null
    })));
    let info = ModelInfo::from_json(&nothing);
    assert!(supported_thinking_levels(&info).is_empty());
    assert_eq!(clamp_thinking_level(&info, "high"), ThinkingLevel::Off);
    assert_eq!(
      resolve_reasoning_effort(&info, "auto").unwrap().effective,
      ThinkingLevel::Off
    );
    assert!(resolve_reasoning_effort(&info, "off").is_err());
  }

  #[test]
  fn model_info_from_json_defaults() {
    let bare = json!({});
    let info = ModelInfo::from_json(&bare);
    assert_eq!(
      (info.api, info.id, info.name, info.reasoning),
      ("", "", "undefined", false)
    );
    assert_eq!(
      resolve_service_tier(&info, "fast").unwrap_err().to_string(),
      "Service tier fast is not supported by undefined"
    );
    let truthy = json!({ "reasoning": 1 });
    assert!(ModelInfo::from_json(&truthy).reasoning);
  }

  // ---- service tier: Blade's suite ----

  #[test]
  fn openai_tiers() {
    let openai = model("openai-responses", "model");
    assert_eq!(
      serde_json::to_value(resolve_service_tier(&openai, "auto").unwrap()).unwrap(),
      json!({ "selection": "auto", "effective": "provider-default", "supported": ["standard", "fast", "flex"] })
    );
    let standard = resolve_service_tier(&openai, "standard").unwrap();
    assert_eq!(
      (standard.effective, standard.provider_value),
      (ServiceTierEffective::Standard, Some(ProviderServiceTier::Default))
    );
    let fast = resolve_service_tier(&openai, "fast").unwrap();
    assert_eq!(
      (fast.effective, fast.provider_value),
      (ServiceTierEffective::Fast, Some(ProviderServiceTier::Priority))
    );
    let flex = resolve_service_tier(&openai, "flex").unwrap();
    assert_eq!(
      serde_json::to_value(flex).unwrap(),
      json!({ "selection": "flex", "effective": "flex", "supported": ["standard", "fast", "flex"], "providerValue": "flex" })
    );
    for api in OPENAI_FAMILY_APIS {
      assert_eq!(supported_service_tiers(api, "anything").len(), 3, "{api}");
      assert_eq!(
        resolve_service_tier(&model(api, "x"), "fast").unwrap().provider_value,
        Some(ProviderServiceTier::Priority)
      );
    }
  }

  #[test]
  fn anthropic_fast_only_for_opus_4_6() {
    let opus46 = model("anthropic-messages", "claude-opus-4-6");
    assert_eq!(
      supported_service_tiers(opus46.api, opus46.id),
      [ServiceTierSelection::Standard, ServiceTierSelection::Fast]
    );
    assert_eq!(
      resolve_service_tier(&opus46, "fast").unwrap().provider_value,
      Some(ProviderServiceTier::Fast)
    );
    // Standard on Anthropic carries no provider value.
    assert_eq!(
      serde_json::to_value(resolve_service_tier(&opus46, "standard").unwrap()).unwrap(),
      json!({ "selection": "standard", "effective": "standard", "supported": ["standard", "fast"] })
    );

    let unsupported = model("anthropic-messages", "claude-opus-4-8");
    assert_eq!(
      supported_service_tiers(unsupported.api, unsupported.id),
      [ServiceTierSelection::Standard]
    );
    assert_eq!(
      resolve_service_tier(&unsupported, "fast").unwrap_err().to_string(),
      "Service tier fast is not supported by claude-opus-4-8"
    );
    assert!(resolve_service_tier(&unsupported, "flex")
      .unwrap_err()
      .to_string()
      .contains("flex is not supported"));

    for id in [
      "claude-opus-4-6-20260101",
      "us-claude-opus-4-6",
      "Claude-Opus-4-6",
      "x-CLAUDE-OPUS-4-6-y",
    ] {
      assert_eq!(supported_service_tiers("anthropic-messages", id).len(), 2, "{id}");
    }
    for id in [
      "claude-opus-4-60",
      "anthropic.claude-opus-4-6-v1",
      "claude-opus-4-6@2026",
      "xclaude-opus-4-6",
      "claude-opus-4-7",
    ] {
      assert_eq!(supported_service_tiers("anthropic-messages", id).len(), 1, "{id}");
    }
    // The same id on another API does not qualify.
    assert_eq!(
      supported_service_tiers("bedrock-converse-stream", "claude-opus-4-6").len(),
      1
    );
  }

  #[test]
  fn standard_only_elsewhere() {
    let google = model("google-generative-ai", "model");
    assert_eq!(
      serde_json::to_value(resolve_service_tier(&google, "standard").unwrap()).unwrap(),
      json!({ "selection": "standard", "effective": "standard", "supported": ["standard"] })
    );
    assert!(resolve_service_tier(&google, "fast")
      .unwrap_err()
      .to_string()
      .contains("fast is not supported"));
    assert_eq!(
      resolve_service_tier(&google, "priority").unwrap_err(),
      OptionsError::UnsupportedServiceTier {
        selection: "priority".into(),
        model_name: "model".into()
      }
    );
    assert_eq!(resolve_service_tier(&google, "auto").unwrap().provider_value, None);
  }

  #[test]
  fn service_tier_vocabulary() {
    for value in ["auto", "standard", "fast", "flex"] {
      assert_eq!(ServiceTierSelection::parse(value).unwrap().as_str(), value);
    }
    assert_eq!(ServiceTierSelection::parse("priority"), None);
    assert_eq!(ProviderServiceTier::Priority.as_str(), "priority");
  }

  // ---- response verbosity: Blade's suite ----

  #[test]
  fn verbosity_native_levels() {
    for (api, id) in [
      ("openai-completions", "gpt-5.5"),
      ("openai-responses", "gpt-5.4"),
      ("azure-openai-responses", "deployment/gpt-5.3-codex"),
      ("openai-codex-responses", "codex-model"),
    ] {
      let info = model(api, id);
      let all = [
        ResponseVerbositySelection::Low,
        ResponseVerbositySelection::Medium,
        ResponseVerbositySelection::High,
      ];
      assert_eq!(supported_response_verbosities(api, id), all);
      assert_eq!(
        serde_json::to_value(resolve_response_verbosity(&info, "auto").unwrap()).unwrap(),
        json!({ "selection": "auto", "effective": "provider-default", "supported": ["low", "medium", "high"] })
      );
      assert_eq!(
        serde_json::to_value(resolve_response_verbosity(&info, "high").unwrap()).unwrap(),
        json!({ "selection": "high", "effective": "high", "supported": ["low", "medium", "high"], "providerValue": "high" })
      );
    }
  }

  #[test]
  fn verbosity_fails_closed() {
    for (api, id) in [
      ("openai-completions", "gpt-4.1"),
      ("openai-responses", "o3"),
      ("anthropic-messages", "claude-opus-4-6"),
    ] {
      let info = model(api, id);
      assert!(supported_response_verbosities(api, id).is_empty());
      assert!(resolve_response_verbosity(&info, "auto").unwrap().supported.is_empty());
      assert_eq!(
        resolve_response_verbosity(&info, "low").unwrap_err().to_string(),
        format!("Response verbosity low is not supported by {id}")
      );
    }
    // Blade's request-options case: the display name appears in the message.
    let claude = ModelInfo {
      name: "Claude Opus 4.6",
      ..model("anthropic-messages", "claude-opus-4-6")
    };
    assert_eq!(
      resolve_response_verbosity(&claude, "high").unwrap_err().to_string(),
      "Response verbosity high is not supported by Claude Opus 4.6"
    );
  }

  #[test]
  fn gpt5_token_boundaries() {
    for id in [
      "gpt-5",
      "GPT-5",
      "openai/gpt-5",
      "gpt-5-mini",
      "gpt-5:latest",
      "x_gpt-5_y",
      "a.gpt-5.b",
      "my-gpt-5",
    ] {
      assert_eq!(supported_response_verbosities("openai-responses", id).len(), 3, "{id}");
    }
    for id in [
      "gpt-50",
      "chatgpt-5",
      "gpt-5o",
      "gpt5",
      "gpt-4o",
      "gpt-5@x",
      "gpt-5 mini",
    ] {
      assert!(
        supported_response_verbosities("openai-responses", id).is_empty(),
        "{id}"
      );
    }
    // Non-OpenAI APIs never qualify, whatever the id.
    assert!(supported_response_verbosities("openrouter-whatever", "gpt-5").is_empty());
    assert!(supported_response_verbosities("mistral-conversations", "gpt-5").is_empty());
  }

  #[test]
  fn verbosity_vocabulary() {
    for value in ["auto", "low", "medium", "high"] {
      assert_eq!(ResponseVerbositySelection::parse(value).unwrap().as_str(), value);
    }
    assert_eq!(ResponseVerbositySelection::parse("detailed"), None);
    let codex = model("openai-codex-responses", "codex");
    assert!(resolve_response_verbosity(&codex, "detailed")
      .unwrap_err()
      .to_string()
      .contains("detailed is not supported"));
  }

  // ---- watchdog timings: Blade's stream-adapter suite and §6.1 ----

  #[test]
  fn stall_warning_derivation() {
    assert_eq!(resolve_stream_stall_warning_ms(300_000, None), Some(30_000));
    assert_eq!(resolve_stream_stall_warning_ms(20_000, None), Some(10_000));
    assert_eq!(resolve_stream_stall_warning_ms(20_000, Some(4_000)), Some(4_000));
    assert_eq!(resolve_stream_stall_warning_ms(20_000, Some(0)), None);
    assert_eq!(resolve_stream_stall_warning_ms(2_000, None), Some(1_000));
    assert_eq!(resolve_stream_stall_warning_ms(20, None), Some(10));
    assert_eq!(resolve_stream_stall_warning_ms(21, None), Some(10));
    assert_eq!(resolve_stream_stall_warning_ms(1, None), Some(1));
    assert_eq!(resolve_stream_stall_warning_ms(0, None), Some(1));
    assert_eq!(resolve_stream_stall_warning_ms(20_000, Some(15_000)), Some(10_000));
    assert_eq!(resolve_stream_stall_warning_ms(20_000, Some(-5)), Some(10_000));
    assert_eq!(resolve_stream_stall_warning_ms(600_000, Some(45_000)), Some(45_000));
  }

  #[test]
  fn idle_timeout_default() {
    assert_eq!(resolve_stream_idle_timeout_ms(None), 300_000);
    assert_eq!(resolve_stream_idle_timeout_ms(Some(0)), 300_000);
    assert_eq!(resolve_stream_idle_timeout_ms(Some(-1)), 300_000);
    assert_eq!(resolve_stream_idle_timeout_ms(Some(2_000)), 2_000);
  }
}

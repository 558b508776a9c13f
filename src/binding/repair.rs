//! N-API entry points of the repair core.
//!
//! Values cross the boundary as JSON text (a V8 `JSON.stringify` plus one Rust parse is several
//! times cheaper than walking objects through N-API); values JSON cannot carry use the extended
//! wire form of `repair::json`. Schemas, preprocessor lists and legacy configs are compiled once
//! into class handles that the JS facade caches per object identity.

use napi::bindgen_prelude::Function;
use napi::{Error, Result, Status};
use napi_derive::napi;

use super::handles::Registry;
use crate::repair::config::{parse_legacy, parse_preprocessors};
use crate::repair::engine::LegacyConfig;
use crate::repair::envelope::{self, Limits};
use crate::repair::host::{Host, NoHost, ShimOutcome, StructuralOutcome};
use crate::repair::json;
use crate::repair::pipeline::{run_repair_pipeline, PipelineConfig, PipelineResult};
use crate::repair::preprocess::{self, FamilyMatch, PreprocessCall, Preprocessor};
use crate::repair::schema::Schema;
use crate::repair::tables;
use crate::repair::{Change, Observation, RepairError, Value};

/// The facade's callback dispatcher: `(op, index, payload, extra) => reply`.
type Dispatch<'a> = Function<'a, (u32, u32, String, String), Option<String>>;

/// Marker message: the JS facade rethrows the exception its callback dispatcher kept.
const CALLBACK_THREW: &str = "\u{0}callback";

fn invalid(msg: impl std::fmt::Display) -> Error {
  Error::new(Status::InvalidArg, msg.to_string())
}

fn map_err(e: RepairError) -> Error {
  match e {
    RepairError::CallbackThrew => Error::new(Status::GenericFailure, CALLBACK_THREW),
    RepairError::DataClone => Error::new(Status::GenericFailure, "\u{0}dataclone"),
    RepairError::InvalidRegex(src) => Error::new(Status::GenericFailure, format!("\u{0}regex:{src}")),
    RepairError::TypeError(m) => Error::new(Status::GenericFailure, format!("\u{0}type:{m}")),
    RepairError::RangeError(m) => Error::new(Status::GenericFailure, format!("\u{0}range:{m}")),
    RepairError::Config(m) => invalid(m),
  }
}

fn parse_input(text: &str, ext: bool) -> Result<Value> {
  let parsed = if ext { json::parse_ext_utf8(text) } else { json::parse_utf8(text) };
  match parsed {
    Ok(v) => Ok(v),
    Err(json::JsonError::TooDeep) => Ok(Value::Opaque(crate::repair::Opaque::Unrepresentable)),
    Err(e) => Err(invalid(format!("pi-native: malformed value from the facade: {e}"))),
  }
}

/// A config string (the tool name) sent as JSON text, a JSON string literal such as
/// `JSON.stringify(String(toolName))`, so lone surrogates cross exactly (a napi `String` would turn
/// them into U+FFFD). The result is in the encoding of `crate::js::text`.
pub(crate) fn tool_name_from_json(text: &str) -> Result<String> {
  match json::parse_utf8(text) {
    Ok(Value::String(s)) => Ok(s),
    _ => Err(invalid("pi-native: the tool name must cross as a JSON string literal")),
  }
}

static SCHEMAS: Registry<Schema> = Registry::new();
static PREPROCESSORS: Registry<Vec<Preprocessor>> = Registry::new();
static LEGACY: Registry<LegacyConfig> = Registry::new();

/// A compiled tool schema; `id` is what the entry points take. Freed when collected.
#[napi]
pub struct NativeSchema {
  #[napi(readonly)]
  pub id: u32,
}

impl Drop for NativeSchema {
  fn drop(&mut self) {
    SCHEMAS.remove(self.id);
  }
}

/// Compile a schema given as JSON in which TypeBox's `~kind` / `~optional` markers are ordinary keys.
#[napi(catch_unwind)]
pub fn compile_schema(schema_json: String) -> Result<NativeSchema> {
  let v = json::parse_utf8(&schema_json).map_err(invalid)?;
  let schema = Schema::compile(&v).map_err(invalid)?;
  Ok(NativeSchema {
    id: SCHEMAS.insert(schema),
  })
}

/// A compiled preprocessor list.
#[napi]
pub struct NativePreprocessors {
  #[napi(readonly)]
  pub id: u32,
}

impl Drop for NativePreprocessors {
  fn drop(&mut self) {
    PREPROCESSORS.remove(self.id);
  }
}

#[napi(catch_unwind)]
pub fn compile_preprocessors(json_text: String) -> Result<NativePreprocessors> {
  let v = json::parse_utf8(&json_text).map_err(invalid)?;
  Ok(NativePreprocessors {
    id: PREPROCESSORS.insert(parse_preprocessors(&v)),
  })
}

/// A compiled legacy `ToolRepairConfig`.
#[napi]
pub struct NativeLegacyConfig {
  #[napi(readonly)]
  pub id: u32,
}

impl Drop for NativeLegacyConfig {
  fn drop(&mut self) {
    LEGACY.remove(self.id);
  }
}

#[napi(catch_unwind)]
pub fn compile_legacy_config(json_text: String) -> Result<NativeLegacyConfig> {
  let v = json::parse_utf8(&json_text).map_err(invalid)?;
  Ok(NativeLegacyConfig {
    id: LEGACY.insert(parse_legacy(&v)),
  })
}

fn unknown_handle() -> Error {
  invalid("pi-native: unknown compiled handle (was it garbage-collected?)")
}

/// Calls back into the facade's dispatcher `(op, index, payload, extra) => string | undefined`.
struct JsHost<'a> {
  dispatch: Option<&'a Dispatch<'a>>,
}

const OP_OWNER: u32 = 1;
const OP_STRUCTURAL: u32 = 2;
const OP_LEGACY: u32 = 3;
const OP_FAMILY: u32 = 4;

impl JsHost<'_> {
  fn call(&self, op: u32, index: u32, payload: String, extra: String) -> std::result::Result<String, RepairError> {
    let f = self
      .dispatch
      .ok_or(RepairError::Config("no callback dispatcher".into()))?;
    match f.call((op, index, payload, extra)) {
      Ok(Some(s)) if s != "!" => Ok(s),
      _ => Err(RepairError::CallbackThrew),
    }
  }
}

fn ext_field(v: &Value, key: &str) -> Value {
  v.get_key(key).cloned().unwrap_or(Value::Undefined)
}

impl Host for JsHost<'_> {
  fn owner_shim(&mut self, value: &Value, is_input: bool) -> ShimOutcome {
    let reply = self.call(OP_OWNER, is_input as u32, json::stringify_ext(value), String::new());
    let Ok(reply) = reply else {
      return ShimOutcome::Threw(value.clone());
    };
    // "S<arg>": returned its own (possibly mutated) argument; "R{a,r}": returned something else;
    // "T<arg>": threw.
    let (tag, body) = reply.split_at(1.min(reply.len()));
    let parsed = json::parse_ext_utf8(body).unwrap_or(Value::Undefined);
    match tag {
      "S" => ShimOutcome::Returned {
        value: parsed.clone(),
        argument_after: parsed,
      },
      "R" => ShimOutcome::Returned {
        value: ext_field(&parsed, "r"),
        argument_after: ext_field(&parsed, "a"),
      },
      _ => ShimOutcome::Threw(parsed),
    }
  }

  fn structural(&mut self, index: usize, value: &Value) -> std::result::Result<StructuralOutcome, RepairError> {
    let reply = self.call(OP_STRUCTURAL, index as u32, json::stringify_ext(value), String::new())?;
    let v = json::parse_ext_utf8(&reply).map_err(|_| RepairError::CallbackThrew)?;
    let result = match (v.get_key("r"), v.get_key("n")) {
      (Some(r), Some(n)) => Some((r.clone(), crate::repair::report::js_string(n))),
      _ => None,
    };
    Ok(StructuralOutcome {
      result,
      argument_after: ext_field(&v, "a"),
    })
  }

  fn legacy_structural(
    &mut self,
    index: usize,
    args: &Value,
    tool_name: &str,
  ) -> std::result::Result<(Option<String>, Value), RepairError> {
    // The tool name goes back as a JSON string literal (exact for lone surrogates).
    let reply = self.call(OP_LEGACY, index as u32, json::stringify_ext(args), json::quote(tool_name))?;
    let v = json::parse_ext_utf8(&reply).map_err(|_| RepairError::CallbackThrew)?;
    let note = match v.get_key("n") {
      Some(Value::String(s)) => Some(s.clone()),
      _ => None,
    };
    Ok((note, ext_field(&v, "a")))
  }

  fn model_matches(&mut self, index: usize) -> std::result::Result<bool, RepairError> {
    Ok(self.call(OP_FAMILY, index as u32, String::new(), String::new())? == "1")
  }
}

fn family_matches(spec: Option<&str>) -> Vec<FamilyMatch> {
  spec
    .unwrap_or("")
    .bytes()
    .map(|b| match b {
      b'1' => FamilyMatch::Yes,
      b'2' => FamilyMatch::AskHost,
      _ => FamilyMatch::No,
    })
    .collect()
}

fn limits_from(values: Option<Vec<f64>>, shared_references: bool) -> Limits {
  let limits = match values {
    Some(v) if v.len() == 5 => Limits {
      max_input_bytes: v[0],
      max_nesting_depth: v[1],
      max_decode_attempts: v[2],
      max_candidates: v[3],
      max_work_ms: v[4],
      shared_references: false,
    },
    _ => Limits::default(),
  };
  Limits {
    shared_references,
    ..limits
  }
}

fn push_change(out: &mut String, c: &Change) {
  out.push_str("{\"ruleId\":");
  json::write_string(out, &c.rule_id);
  out.push_str(",\"stage\":\"");
  out.push_str(c.stage.as_str());
  out.push_str("\",\"note\":");
  json::write_string(out, &c.note);
  out.push('}');
}

fn push_changes(out: &mut String, changes: &[Change]) {
  out.push('[');
  for (i, c) in changes.iter().enumerate() {
    if i > 0 {
      out.push(',');
    }
    push_change(out, c);
  }
  out.push(']');
}

fn push_observations(out: &mut String, obs: &[Observation]) {
  out.push('[');
  for (i, o) in obs.iter().enumerate() {
    if i > 0 {
      out.push(',');
    }
    out.push_str("{\"channel\":\"tool\",\"stage\":\"valid-value\",\"ruleId\":");
    json::write_string(out, &o.rule_id);
    out.push_str(",\"toolName\":");
    json::write_string(out, &o.tool_name);
    out.push_str(",\"outcome\":\"detected\"}");
  }
  out.push(']');
}

fn push_opt(out: &mut String, key: &str, v: &Option<String>) {
  if let Some(s) = v {
    out.push_str(",\"");
    out.push_str(key);
    out.push_str("\":");
    json::write_string(out, s);
  }
}

/// Field separator of the split result form (see [`encode_result`]).
const SEP: char = '\u{1}';

/// Can `s` travel as a raw field of the split form? (No separator, and nothing that only JSON
/// escapes carry exactly: control characters and the private-use plane-16 block.)
fn raw_field(s: &str) -> bool {
  !s.chars().any(|c| c < ' ' || c >= '\u{10F000}')
}

/// Encode a pipeline result for the facade: `"V"` for "valid, the caller's own object, nothing
/// recorded"; otherwise the split form — fields joined by U+0001, which `String.prototype.split`
/// takes apart far faster than `JSON.parse` builds objects: outcome, args (extended JSON, or empty
/// for the caller's input), the number of changes and each change's rule id / stage / note, the
/// observations and the emitted observations (count, then rule id / tool name each), then issue
/// summary, fingerprint and retry message (U+0002 for absent). When any text cannot travel raw the
/// result is a JSON object with short keys instead.
fn encode_result(r: &PipelineResult) -> String {
  if r.outcome == crate::repair::engine::Outcome::Valid
    && r.args.is_none()
    && r.changes.is_empty()
    && r.emitted.is_empty()
    && r.issue_summary.is_none()
  {
    return "V".into();
  }
  let texts_raw = r.changes.iter().all(|c| raw_field(&c.rule_id) && raw_field(&c.note))
    && r.observations.iter().chain(&r.emitted).all(|o| raw_field(&o.rule_id) && raw_field(&o.tool_name))
    && [&r.issue_summary, &r.fingerprint].iter().all(|v| v.as_deref().is_none_or(raw_field))
    && r.retry_message.as_deref().is_none_or(|m| !m.chars().any(|c| (c < ' ' && c != '\n') || c >= '\u{10F000}'));
  if texts_raw {
    let mut out = String::with_capacity(256);
    out.push_str(r.outcome.as_str());
    out.push(SEP);
    if let Some(a) = &r.args {
      out.push_str(&json::stringify_ext(a));
    }
    out.push(SEP);
    out.push_str(&r.changes.len().to_string());
    for c in &r.changes {
      for field in [c.rule_id.as_str(), c.stage.as_str(), c.note.as_str()] {
        out.push(SEP);
        out.push_str(field);
      }
    }
    for list in [&r.observations, &r.emitted] {
      out.push(SEP);
      out.push_str(&list.len().to_string());
      for o in list.iter() {
        out.push(SEP);
        out.push_str(&o.rule_id);
        out.push(SEP);
        out.push_str(&o.tool_name);
      }
    }
    for v in [&r.issue_summary, &r.fingerprint, &r.retry_message] {
      out.push(SEP);
      match v {
        Some(s) => out.push_str(s),
        None => out.push('\u{2}'),
      }
    }
    return out;
  }
  let mut out = String::with_capacity(256);
  out.push_str("{\"o\":\"");
  out.push_str(r.outcome.as_str());
  out.push('"');
  if let Some(a) = &r.args {
    out.push_str(",\"a\":");
    out.push_str(&json::stringify_ext(a));
  }
  out.push_str(",\"c\":");
  push_changes(&mut out, &r.changes);
  out.push_str(",\"ob\":");
  push_observations(&mut out, &r.observations);
  out.push_str(",\"e\":");
  push_observations(&mut out, &r.emitted);
  push_opt(&mut out, "is", &r.issue_summary);
  push_opt(&mut out, "fp", &r.fingerprint);
  push_opt(&mut out, "rm", &r.retry_message);
  out.push('}');
  out
}

/// Run the whole pipeline once. `flags`: 1 = allow truncated completion, 2 = allow valid-value
/// transforms, 4 = an owner shim exists, 8 = the input text is in the extended form, 16 = the
/// input reaches some object twice. `tool_name_json` is the tool name as a JSON string literal
/// (see [`tool_name_from_json`]).
#[napi(catch_unwind)]
#[allow(clippy::too_many_arguments)]
pub fn run_pipeline(
  input_json: String,
  flags: u32,
  tool_name_json: String,
  schema_id: u32,
  preprocessors_id: u32,
  legacy_id: u32,
  family_match: Option<String>,
  limits: Option<Vec<f64>>,
  dispatch: Option<Dispatch>,
) -> Result<String> {
  let ext = flags & 8 != 0;
  let tool_name = tool_name_from_json(&tool_name_json)?;
  let input = parse_input(&input_json, ext)?;
  let schema = SCHEMAS.get(schema_id).ok_or_else(unknown_handle)?;
  let preprocessors = PREPROCESSORS.get(preprocessors_id);
  let legacy = LEGACY.get(legacy_id);
  let empty_legacy = LegacyConfig::default();
  let fam = family_matches(family_match.as_deref());
  let config = PipelineConfig {
    tool_name: &tool_name,
    schema: &schema,
    allow_truncated_envelope_completion: flags & 1 != 0,
    allow_valid_value_transforms: flags & 2 != 0,
    preprocessors: preprocessors.as_deref().map(|p| p.as_slice()).unwrap_or(&[]),
    family_match: &fam,
    legacy: legacy.as_deref().unwrap_or(&empty_legacy),
    has_owner_shim: flags & 4 != 0,
    limits: limits_from(limits, flags & 16 != 0),
    input_bytes_hint: if ext { None } else { Some(input_json.len() as f64) },
  };
  let result = match &dispatch {
    Some(f) => run_repair_pipeline(&input, &config, &mut JsHost { dispatch: Some(f) }),
    None => run_repair_pipeline(&input, &config, &mut NoHost),
  };
  result.map(|r| encode_result(&r)).map_err(map_err)
}

/// `recoverEnvelope`: JSON `{"v"?: value, "c": changes, "k": candidates, "l": limited}`.
#[napi(catch_unwind)]
pub fn recover_envelope(input_json: String, flags: u32, limits: Option<Vec<f64>>) -> Result<String> {
  let input = parse_input(&input_json, flags & 8 != 0)?;
  let env = envelope::recover_envelope(&input, &limits_from(limits, flags & 16 != 0)).map_err(map_err)?;
  let mut out = String::from("{");
  if let Some(v) = &env.value {
    out.push_str("\"v\":");
    out.push_str(&json::stringify_ext(v));
    out.push(',');
  }
  out.push_str("\"c\":");
  push_changes(&mut out, &env.changes);
  out.push_str(",\"k\":[");
  for (i, c) in env.candidates.iter().enumerate() {
    if i > 0 {
      out.push(',');
    }
    out.push_str(&json::stringify_ext(c));
  }
  out.push_str("],\"l\":");
  out.push_str(if env.limited { "true" } else { "false" });
  out.push('}');
  Ok(out)
}

/// `preprocessInput`: JSON `{"v": value, "c": changes, "ob": [ruleIds]}`; `tool_name_json` as in
/// [`run_pipeline`].
#[napi(catch_unwind)]
pub fn preprocess_input(
  input_json: String,
  ext: bool,
  tool_name_json: String,
  preprocessors_id: u32,
  allow_valid_value_transforms: bool,
  family_match: Option<String>,
  dispatch: Option<Dispatch>,
) -> Result<String> {
  let tool_name = tool_name_from_json(&tool_name_json)?;
  let input = parse_input(&input_json, ext)?;
  if input.contains_uncloneable() {
    return Err(map_err(RepairError::DataClone));
  }
  let fam = family_matches(family_match.as_deref());
  let preprocessors = PREPROCESSORS.get(preprocessors_id).ok_or_else(unknown_handle)?;
  let call = PreprocessCall {
    tool_name: &tool_name,
    preprocessors: &preprocessors,
    family_match: &fam,
    allow_valid_value_transforms,
  };
  let out = match &dispatch {
    Some(f) => preprocess::preprocess(input, &call, &mut JsHost { dispatch: Some(f) }),
    None => preprocess::preprocess(input, &call, &mut NoHost),
  }
  .map_err(map_err)?;
  let mut s = String::from("{\"v\":");
  s.push_str(&json::stringify_ext(&out.value));
  s.push_str(",\"c\":");
  push_changes(&mut s, &out.changes);
  s.push_str(",\"ob\":[");
  for (i, o) in out.observations.iter().enumerate() {
    if i > 0 {
      s.push(',');
    }
    json::write_string(&mut s, o);
  }
  s.push(']');
  if !out.null_prototype.is_empty() {
    s.push_str(",\"np\":[");
    for (i, path) in out.null_prototype.iter().enumerate() {
      s.push_str(if i > 0 { ",[" } else { "[" });
      for (j, seg) in path.iter().enumerate() {
        if j > 0 {
          s.push(',');
        }
        json::write_string(&mut s, seg);
      }
      s.push(']');
    }
    s.push(']');
  }
  s.push('}');
  Ok(s)
}

/// The edit fold on one value (ext JSON in): `""` when it does not apply, else
/// JSON `{"v": folded value, "n": note}`; `tool_name_json` as in [`run_pipeline`].
#[napi(catch_unwind)]
pub fn fold_flat_edit_fields(value_json: String, tool_name_json: String) -> Result<String> {
  let tool_name = tool_name_from_json(&tool_name_json)?;
  let mut v = parse_input(&value_json, true)?;
  let Value::Object(o) = &mut v else {
    return Ok(String::new());
  };
  match tables::fold_flat_edit_fields(o, &tool_name) {
    None => Ok(String::new()),
    Some(note) => {
      let mut s = String::from("{\"v\":");
      s.push_str(&json::stringify_ext(&v));
      s.push_str(",\"n\":");
      json::write_string(&mut s, &note);
      s.push('}');
      Ok(s)
    }
  }
}

/// The built-in tables of pi's seven tools, as JSON.
#[napi(catch_unwind)]
pub fn builtin_tables() -> String {
  tables::builtin_tables_json()
}

/// A JSON string in, a JSON string out (exact for lone surrogates).
#[napi(catch_unwind)]
pub fn escape_json_string_control_characters(text_json: String) -> Result<String> {
  let v = json::parse_utf8(&text_json).map_err(invalid)?;
  let s = v.as_str().unwrap_or_default();
  Ok(json::quote(&envelope::escape_json_string_control_characters(s)))
}

/// A JSON string in, a JSON string out.
#[napi(catch_unwind)]
pub fn unwrap_markdown_auto_links(text_json: String) -> Result<String> {
  let v = json::parse_utf8(&text_json).map_err(invalid)?;
  let s = v.as_str().unwrap_or_default();
  Ok(json::quote(&crate::repair::engine::unwrap_markdown_auto_links(s)))
}

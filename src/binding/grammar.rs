//! N-API entry points of grammar-leak recovery. Texts cross as JSON strings (exact for lone
//! surrogates); messages cross in a slim form carrying only what recovery reads, so large
//! non-text parts (images) never cross.

use napi::bindgen_prelude::Utf16String;
use napi::{Error, Result, Status};
use napi_derive::napi;

use crate::repair::grammar::{self, Mode, RecoveredToolCall, RecoveryOptions};
use crate::repair::json;
use crate::repair::value::{Obj, Value};

fn invalid(msg: impl std::fmt::Display) -> Error {
  Error::new(Status::InvalidArg, msg.to_string())
}

fn calls_json(out: &mut String, calls: &[RecoveredToolCall]) {
  out.push('[');
  for (i, c) in calls.iter().enumerate() {
    if i > 0 {
      out.push(',');
    }
    out.push_str("{\"name\":");
    json::write_string(out, &c.name);
    out.push_str(",\"arguments\":");
    out.push_str(&json::stringify_ext(&Value::Object(c.arguments.clone())));
    out.push_str(",\"grammar\":");
    json::write_string(out, c.grammar);
    out.push('}');
  }
  out.push(']');
}

fn names_json(out: &mut String, names: &[&str]) {
  let quoted: Vec<String> = names.iter().map(|n| json::quote(n)).collect();
  out.push('[');
  out.push_str(&quoted.join(","));
  out.push(']');
}

fn strings(v: Option<&Value>) -> Option<Vec<String>> {
  match v {
    Some(Value::Array(a)) => Some(a.iter().filter_map(|x| x.as_str().map(String::from)).collect()),
    _ => None,
  }
}

/// `parseToolGrammarLeaks(text, grammars?)`: the text crosses as UTF-16 (one copy, lone
/// surrogates intact).
#[napi(catch_unwind)]
pub fn grammar_parse(text: Utf16String, grammars_json: Option<String>) -> Result<String> {
  let grammars = match grammars_json {
    Some(g) => strings(Some(&json::parse(&g).map_err(invalid)?)),
    None => None,
  };
  let names: Option<Vec<&str>> = grammars.as_ref().map(|g| g.iter().map(String::as_str).collect());
  let calls = grammar::parse_tool_grammar_leaks_utf16(&text, names.as_deref());
  let mut out = String::new();
  calls_json(&mut out, &calls);
  Ok(out)
}

/// `recoverGrammarLeaks` over a slim message (`{role, stopReason?, content: [...]}`) and options
/// `{mode, knownTools: [...], grammars?, requireKnownTool?, unknownToolText?}`. Returns `"U"` for
/// the unchanged result, otherwise the result as JSON with `message` (the new slim message) when
/// the message changed.
#[napi(catch_unwind)]
pub fn grammar_recover(message_json: String, options_json: String, now_ms: f64) -> Result<String> {
  let message = json::parse_ext(&message_json).map_err(invalid)?;
  let options = json::parse(&options_json).map_err(invalid)?;
  let mode_name = options.get_key("mode").and_then(Value::as_str).unwrap_or("");
  // Any mode string other than the four known ones behaves like "strip" in the reference.
  let mode = Mode::from_name(mode_name).unwrap_or(Mode::Strip);
  let mut opts = RecoveryOptions::new(mode, strings(options.get_key("knownTools")).unwrap_or_default());
  opts.grammars = strings(options.get_key("grammars"));
  opts.require_known_tool = !matches!(options.get_key("requireKnownTool"), Some(Value::Bool(false)));
  opts.unknown_tool_text_strip = options.get_key("unknownToolText").and_then(Value::as_str) == Some("strip");
  let r = grammar::recover_grammar_leaks(&message, &opts, now_ms);
  if !r.changed && !r.observed && r.message.is_none() {
    return Ok("U".into());
  }
  let mut out = String::with_capacity(256);
  out.push_str(&format!("{{\"changed\":{},\"recoveredCalls\":", r.changed));
  calls_json(&mut out, &r.recovered_calls);
  out.push_str(",\"strippedGrammars\":");
  names_json(&mut out, &r.stripped_grammars);
  out.push_str(&format!(
    ",\"strippedRanges\":{},\"promoted\":{},\"observed\":{},\"detectedGrammars\":",
    r.stripped_ranges, r.promoted, r.observed
  ));
  names_json(&mut out, &r.detected_grammars);
  out.push_str(&format!(
    ",\"detectedRanges\":{},\"promotedCallIds\":",
    r.detected_ranges
  ));
  let ids: Vec<&str> = r.promoted_call_ids.iter().map(String::as_str).collect();
  names_json(&mut out, &ids);
  if let Some(m) = &r.message {
    out.push_str(",\"message\":");
    out.push_str(&json::stringify_ext(m));
  }
  out.push('}');
  Ok(out)
}

/// Model-gate families as `{source, flags}` pairs for the JS RegExp list.
#[napi(catch_unwind)]
pub fn grammar_recovery_models() -> String {
  let mut o = Obj::new();
  let list: Vec<Value> = grammar::GRAMMAR_RECOVERY_MODELS
    .iter()
    .map(|s| Value::str(*s))
    .collect();
  o.set("sources", Value::Array(list));
  json::stringify_ext(&Value::Object(o))
}

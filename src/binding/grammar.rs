//! N-API entry points of grammar-leak recovery. Texts cross as UTF-16 (one copy each, lone
//! surrogates intact) and only the parts' kinds cross beside them, so large non-text parts
//! (images) never cross; a changed text comes back as slices of the old one.

use napi::bindgen_prelude::Utf16String;
use napi::{Error, Result, Status};
use napi_derive::napi;

use crate::repair::grammar::{self, Mode, PartIn, RecoveredToolCall, RecoveryOptions};
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
    Some(g) => strings(Some(&json::parse_utf8(&g).map_err(invalid)?)),
    None => None,
  };
  let names: Option<Vec<&str>> = grammars.as_ref().map(|g| g.iter().map(String::as_str).collect());
  let calls = grammar::parse_tool_grammar_leaks_utf16(&text, names.as_deref());
  let mut out = String::new();
  calls_json(&mut out, &calls);
  Ok(out)
}

/// `recoverGrammarLeaks` over an assistant message's parts: `kinds` has one letter per content
/// part (`t` text, `h` thinking, `c` toolCall with a string name, anything else for other parts),
/// `texts` the text of each `t`/`h` part in order (UTF-16, one copy each), `stop_reason` the
/// message's `stopReason` when it is a string, and the options as JSON
/// `{mode, knownTools: [...], grammars?, requireKnownTool?, unknownToolText?}`. Returns `"U"` for
/// the unchanged result, otherwise the result as JSON where `replaced` lists
/// `[part index, [start, end, start, end, …]]`: each changed part's new text as slices of its old
/// text, so no text crosses back.
#[napi(catch_unwind)]
pub fn grammar_recover(
  kinds: String,
  texts: Vec<Utf16String>,
  stop_reason: Option<String>,
  options_json: String,
  now_ms: f64,
) -> Result<String> {
  let options = json::parse_utf8(&options_json).map_err(invalid)?;
  let mode_name = options.get_key("mode").and_then(Value::as_str).unwrap_or("");
  // Any mode string other than the four known ones behaves like "strip" in the reference.
  let mode = Mode::from_name(mode_name).unwrap_or(Mode::Strip);
  let mut opts = RecoveryOptions::new(mode, strings(options.get_key("knownTools")).unwrap_or_default());
  opts.grammars = strings(options.get_key("grammars"));
  opts.require_known_tool = !matches!(options.get_key("requireKnownTool"), Some(Value::Bool(false)));
  opts.unknown_tool_text_strip = options.get_key("unknownToolText").and_then(Value::as_str) == Some("strip");
  let mut next_text = texts.iter();
  let mut parts = Vec::with_capacity(kinds.len());
  for k in kinds.bytes() {
    parts.push(match k {
      b't' | b'h' => {
        let units: &[u16] = next_text.next().ok_or_else(|| invalid("pi-native: fewer texts than text parts"))?;
        PartIn::Text {
          field: if k == b't' { "text" } else { "thinking" },
          units,
        }
      }
      b'c' => PartIn::ToolCall,
      _ => PartIn::Other,
    });
  }
  let r = grammar::recover_parts(&parts, stop_reason.as_deref(), &opts, now_ms);
  if !r.changed && !r.observed {
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
  out.push_str(&format!(",\"detectedRanges\":{},\"promotedCallIds\":", r.detected_ranges));
  let ids: Vec<&str> = r.promoted_call_ids.iter().map(String::as_str).collect();
  names_json(&mut out, &ids);
  out.push_str(",\"replaced\":[");
  for (i, (index, segments)) in r.replaced.iter().enumerate() {
    if i > 0 {
      out.push(',');
    }
    out.push_str(&format!("[{index},["));
    for (j, (a, b)) in segments.iter().enumerate() {
      if j > 0 {
        out.push(',');
      }
      out.push_str(&format!("{a},{b}"));
    }
    out.push_str("]]");
  }
  out.push_str("]}");
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

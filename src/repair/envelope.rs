//! Envelope recovery: turn what the model sent into a candidate argument object (spec §4).

use std::time::Instant;

use super::json;
use super::text::{js_trim_start, node_utf8_len};
use super::value::{Opaque, Value};
use super::{Change, RepairError, Stage};

/// Limits as resolved by the caller. A limit that JavaScript would compare as `undefined` (or a
/// non-number) is `NaN` here, so every comparison with it is false, exactly as in JS.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
  pub max_input_bytes: f64,
  pub max_nesting_depth: f64,
  pub max_decode_attempts: f64,
  pub max_candidates: f64,
  pub max_work_ms: f64,
  /// The caller's input reaches some object twice (a shared sub-object or a cycle): the
  /// reference's depth walk then reports `limit + 1`.
  pub shared_references: bool,
}

impl Default for Limits {
  fn default() -> Self {
    Limits {
      max_input_bytes: 262_144.0,
      max_nesting_depth: 64.0,
      max_decode_attempts: 3.0,
      max_candidates: 4.0,
      max_work_ms: 25.0,
      shared_references: false,
    }
  }
}

#[derive(Debug, Clone)]
pub struct Envelope {
  /// `None` means "the caller's original input" (same reference on the JS side).
  pub value: Option<Value>,
  pub changes: Vec<Change>,
  pub candidates: Vec<Value>,
  pub limited: bool,
}

pub const DECODE_NOTE: &str =
  "Decoded a JSON-encoded tool-argument envelope. Send the argument object directly next time.";
const ESCAPE_NOTE: &str = "Escaped a raw control character inside the JSON argument envelope.";
const UNWRAP_NOTE: &str = "Unwrapped a singleton object array used as the tool-argument envelope.";
const TRUNCATED_NOTE: &str =
  "Completed a truncated JSON object envelope after the completed candidate passed the tool schema.";

pub fn truncated_envelope_change() -> Change {
  Change::new("envelope.complete-truncated-object", Stage::Envelope, TRUNCATED_NOTE)
}

fn change(rule: &str, note: &str) -> Change {
  Change::new(rule, Stage::Envelope, note)
}

/// `Buffer.byteLength` of the input (strings) or of its JSON text; +inf when stringify throws.
pub fn input_bytes(v: &Value) -> f64 {
  match v {
    Value::String(s) => node_utf8_len(s) as f64,
    _ => match json::stringify(v) {
      Ok(Some(s)) => node_utf8_len(&s) as f64,
      Ok(None) => 0.0,
      Err(_) => f64::INFINITY,
    },
  }
}

/// Maximum depth of the value (root 0), stopping early once above `limit`. Our values are trees,
/// so the reference's shared-reference rule cannot trigger; an unrepresentable value counts as
/// over the limit.
pub fn nesting_depth(v: &Value, limit: f64) -> f64 {
  let mut stack: Vec<(&Value, usize)> = vec![(v, 0)];
  let mut max = 0usize;
  while let Some((item, depth)) = stack.pop() {
    max = max.max(depth);
    if (max as f64) > limit {
      return max as f64;
    }
    match item {
      Value::Array(a) => stack.extend(a.iter().map(|c| (c, depth + 1))),
      Value::Object(o) => stack.extend(o.values().map(|c| (c, depth + 1))),
      Value::Opaque(Opaque::Unrepresentable) => return limit + 1.0,
      _ => {}
    }
  }
  max as f64
}

/// Escape raw control characters that occur inside JSON string literals (spec §4).
pub fn escape_json_string_control_characters(text: &str) -> std::borrow::Cow<'_, str> {
  let bytes = text.as_bytes();
  // Quick reject: nothing to escape without a control byte.
  if !bytes.iter().any(|&b| b < 0x20) {
    return std::borrow::Cow::Borrowed(text);
  }
  let mut out = String::with_capacity(text.len() + 16);
  let mut in_string = false;
  let mut escaped = false;
  let mut changed = false;
  for c in text.chars() {
    if !in_string {
      out.push(c);
      if c == '"' {
        in_string = true;
      }
      continue;
    }
    if escaped {
      out.push(c);
      escaped = false;
      continue;
    }
    match c {
      '\\' => {
        out.push(c);
        escaped = true;
      }
      '"' => {
        out.push(c);
        in_string = false;
      }
      c if (c as u32) < 0x20 => {
        out.push_str(&format!("\\u{:04x}", c as u32));
        changed = true;
      }
      c => out.push(c),
    }
  }
  if changed {
    std::borrow::Cow::Owned(out)
  } else {
    std::borrow::Cow::Borrowed(text)
  }
}

fn parse_json(text: &str) -> Option<Value> {
  json::parse(text).ok()
}

/// Plain object in the envelope sense (our objects are always plain).
fn is_plain_object(v: &Value) -> bool {
  matches!(v, Value::Object(_))
}

const TRUNCATED_SUFFIXES: [&str; 4] = ["}", "\"}", "]}", "\"}]}"];

/// `recoverEnvelope` (spec §4). Fails only where the reference's `structuredClone` would throw.
pub fn recover_envelope(input: &Value, limits: &Limits) -> Result<Envelope, RepairError> {
  let unchanged = |limited| Envelope {
    value: None,
    changes: vec![],
    candidates: vec![],
    limited,
  };
  let depth = if limits.shared_references {
    limits.max_nesting_depth + 1.0
  } else {
    nesting_depth(input, limits.max_nesting_depth)
  };
  // A NaN limit compares false whatever the size (the pipeline passes NaN when it already
  // checked the size from the JSON text it was given), so the size is only computed when it counts.
  let too_big = !limits.max_input_bytes.is_nan() && input_bytes(input) > limits.max_input_bytes;
  if too_big || depth > limits.max_nesting_depth {
    return Ok(unchanged(true));
  }
  if input.contains_uncloneable() {
    return Err(RepairError::DataClone);
  }
  // The work clock only matters for string envelopes (the decode loop).
  let started = matches!(input, Value::String(_)).then(Instant::now);
  let elapsed_ms = || started.map_or(0.0, |t| t.elapsed().as_secs_f64() * 1000.0);
  let mut changes = Vec::new();
  let mut value = input.clone();
  let mut attempts = 0f64;
  while let Value::String(s) = &value {
    if !(attempts < limits.max_decode_attempts && elapsed_ms() <= limits.max_work_ms) {
      break;
    }
    attempts += 1.0;
    let escaped = escape_json_string_control_characters(s);
    let parsed = match json::parse(&escaped) {
      Ok(v) => v,
      // Deeper than we parse: an object would fail the depth re-check below (step 5) anyway.
      Err(json::JsonError::TooDeep)
        if js_trim_start(&escaped).starts_with('{') && (json::MAX_DEPTH as f64) > limits.max_nesting_depth =>
      {
        return Ok(unchanged(true));
      }
      Err(_) => break,
    };
    let escaped_differs = matches!(input, Value::String(orig) if *escaped != **orig);
    value = parsed;
    changes.push(change("envelope.decode-json", DECODE_NOTE));
    if escaped_differs && attempts == 1.0 {
      changes.push(change("envelope.escape-control-character", ESCAPE_NOTE));
    }
  }
  if let Value::Array(a) = &mut value {
    if a.len() == 1 && is_plain_object(&a[0]) {
      let inner = a.pop().unwrap_or(Value::Undefined);
      value = inner;
      changes.push(change("envelope.unwrap-singleton-object-array", UNWRAP_NOTE));
    }
  }
  if is_plain_object(&value) {
    // An object input that nothing changed has the depth measured above.
    let remeasure = !changes.is_empty() || !matches!(input, Value::Object(_));
    if remeasure && nesting_depth(&value, limits.max_nesting_depth) > limits.max_nesting_depth {
      return Ok(unchanged(true));
    }
    return Ok(Envelope {
      value: Some(value),
      changes,
      candidates: vec![],
      limited: false,
    });
  }
  let mut candidates = Vec::new();
  if let Value::String(s) = input {
    if js_trim_start(s).starts_with('{') {
      for suffix in TRUNCATED_SUFFIXES {
        if (candidates.len() as f64) >= limits.max_candidates || elapsed_ms() > limits.max_work_ms {
          break;
        }
        let text = format!("{s}{suffix}");
        if let Some(parsed) = parse_json(&escape_json_string_control_characters(&text)) {
          if is_plain_object(&parsed) {
            candidates.push(parsed);
          }
        }
      }
    }
  }
  Ok(Envelope {
    value: None,
    changes: vec![],
    candidates,
    limited: false,
  })
}

#[cfg(test)]
mod tests {
  use super::*;

  fn rules(e: &Envelope) -> Vec<&str> {
    e.changes.iter().map(|c| c.rule_id.as_str()).collect()
  }

  #[test]
  fn decodes_double_encoding_and_control_characters() {
    let e = recover_envelope(&Value::str("\"{\\\"path\\\":\\\"a\\\"}\""), &Limits::default()).unwrap();
    assert_eq!(rules(&e), ["envelope.decode-json", "envelope.decode-json"]);
    let e = recover_envelope(&Value::str("{\"a\":\"x\ny\"}"), &Limits::default()).unwrap();
    assert_eq!(rules(&e), ["envelope.decode-json", "envelope.escape-control-character"]);
    assert_eq!(
      escape_json_string_control_characters("{\"a\":\"\n\"}\n"),
      "{\"a\":\"\\u000a\"}\n"
    );
  }

  #[test]
  fn truncation_candidates_only_for_object_prefixes() {
    let e = recover_envelope(&Value::str("{\"path\":\"a.txt"), &Limits::default()).unwrap();
    assert!(e.value.is_none());
    assert_eq!(e.candidates.len(), 1);
    let e = recover_envelope(&Value::str("[\"a"), &Limits::default()).unwrap();
    assert!(e.candidates.is_empty());
  }

  #[test]
  fn limits_use_js_comparison_semantics() {
    let limits = Limits {
      max_input_bytes: 4.0,
      ..Limits::default()
    };
    assert!(
      recover_envelope(&Value::str("{\"path\":\"a\"}"), &limits)
        .unwrap()
        .limited
    );
    let limits = Limits {
      max_decode_attempts: f64::NAN,
      ..Limits::default()
    };
    let e = recover_envelope(&Value::str("{\"a\":1}"), &limits).unwrap();
    assert!(e.changes.is_empty() && e.value.is_none());
  }

  #[test]
  fn text_too_deep_to_parse_is_limited() {
    let text = format!("{{\"n\":{}{}}}", "[".repeat(5000), "]".repeat(5000));
    assert!(
      recover_envelope(&Value::String(text), &Limits::default())
        .unwrap()
        .limited
    );
  }

  #[test]
  fn unwraps_singleton_arrays_once() {
    let e = recover_envelope(&Value::str("[{\"a\":1}]"), &Limits::default()).unwrap();
    assert_eq!(
      rules(&e),
      ["envelope.decode-json", "envelope.unwrap-singleton-object-array"]
    );
  }
}

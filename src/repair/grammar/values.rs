//! Turning leaked argument text into values: JSON with `JSON.parse` semantics, the lenient
//! "JSON if it looks like JSON" rule, call objects, and Python-style keyword values.

use super::scan::{self, string, trim, Re};
use crate::repair::jsnum::string_to_number;
use crate::repair::json;
use crate::repair::text::js_trim;
use crate::repair::value::{Obj, Value};

/// `JSON.parse(text)`, or `None` where it would throw.
pub fn parse_json(text: &str) -> Option<Value> {
  json::parse(text).ok()
}

pub fn parse_json_units(units: &[u16]) -> Option<Value> {
  parse_json(&string(units))
}

/// The parsed value when it is a record (a non-array object).
pub fn parse_json_object(units: &[u16]) -> Option<Obj> {
  match parse_json_units(units) {
    Some(Value::Object(o)) => Some(o),
    _ => None,
  }
}

/// Parsed JSON, or the text itself when it is not JSON.
pub fn json_or_string(units: &[u16]) -> Value {
  parse_json_units(units).unwrap_or_else(|| Value::String(string(units)))
}

/// Parse only text that starts like a JSON literal; anything else stays a string.
pub fn maybe_json(units: &[u16], looks_like_json: &Re) -> Value {
  if units.is_empty() {
    return Value::String(String::new());
  }
  if looks_like_json.test_units(units) {
    json_or_string(units)
  } else {
    Value::String(string(units))
  }
}

/// Reduce an `arguments` payload to an object: strings are parsed, and an object whose own
/// `arguments` member (string or object) reduces to an object is replaced by that.
pub fn normalize_arguments(value: Value) -> Option<Obj> {
  match value {
    Value::String(s) => parse_json(&s).and_then(normalize_arguments),
    Value::Object(o) => {
      if let Some(nested @ (Value::String(_) | Value::Object(_))) = o.get("arguments") {
        if let Some(inner) = normalize_arguments(nested.clone()) {
          return Some(inner);
        }
      }
      Some(o)
    }
    _ => None,
  }
}

/// JS `a ?? b ?? c` over members that may be absent (absent reads as `undefined`).
fn coalesce<'a>(choices: &[Option<&'a Value>]) -> Option<&'a Value> {
  let mut last = None;
  for choice in choices {
    last = *choice;
    if let Some(v) = choice {
      if !v.is_nullish() {
        return Some(v);
      }
    }
  }
  last
}

/// A call described by a JSON object: `{name|function_name|function.name, arguments|args|
/// parameters|function.arguments}`. The name must be a non-blank string.
pub fn call_from_object(o: &Obj) -> Option<(String, Obj)> {
  let function = o.get("function").and_then(Value::as_obj);
  let name = coalesce(&[
    o.get("name"),
    o.get("function_name"),
    function.and_then(|f| f.get("name")),
  ]);
  let name = js_trim(name?.as_str()?);
  if name.is_empty() {
    return None;
  }
  let mut args = coalesce(&[o.get("arguments"), o.get("args"), o.get("parameters")]);
  if args.is_none_or(Value::is_undefined) {
    if let Some(f) = function {
      args = f.get("arguments");
    }
  }
  let args = args.cloned().and_then(normalize_arguments).unwrap_or_default();
  Some((name.to_string(), args))
}

/// Calls from a parsed JSON value: an object, or an array of objects (other items ignored).
pub fn calls_from_value(value: Option<&Value>) -> Vec<(String, Obj)> {
  match value {
    Some(Value::Array(items)) => items
      .iter()
      .filter(|item| item.is_record())
      .flat_map(|item| calls_from_value(Some(item)))
      .collect(),
    Some(Value::Object(o)) => call_from_object(o).into_iter().collect(),
    _ => Vec::new(),
  }
}

/// A Python-literal-ish keyword value: `True`/`False`/`None`, plain decimals, quoted strings (with
/// `\'`, `\"`, `\\` unescaped), otherwise JSON after mapping the Python words, or the raw text.
pub fn pythonish(raw: &[u16], decimal: &Re) -> Value {
  let t = trim(raw);
  let word = |w: &str| t == scan::units(w).as_slice();
  if word("True") {
    return Value::Bool(true);
  }
  if word("False") {
    return Value::Bool(false);
  }
  if word("None") {
    return Value::Null;
  }
  if decimal.test_units(t) {
    return Value::Number(string_to_number(&string(t)));
  }
  let quoted = |q: u8| t.first() == Some(&(q as u16)) && t.last() == Some(&(q as u16));
  if quoted(b'\'') || quoted(b'"') {
    let inner = if t.len() >= 2 { &t[1..t.len() - 1] } else { &[][..] };
    return Value::String(string(&unescape_quotes(inner)));
  }
  let mapped = scan::replace_word(t, "True", "true");
  let mapped = scan::replace_word(&mapped, "False", "false");
  let mapped = scan::replace_word(&mapped, "None", "null");
  json_or_string(&mapped)
}

/// `s.replace(/\\(['"\\])/g, "$1")`.
fn unescape_quotes(s: &[u16]) -> Vec<u16> {
  let mut out = Vec::with_capacity(s.len());
  let mut i = 0;
  while i < s.len() {
    let escapable = |u: u16| u == b'\'' as u16 || u == b'"' as u16 || u == b'\\' as u16;
    if s[i] == b'\\' as u16 && i + 1 < s.len() && escapable(s[i + 1]) {
      out.push(s[i + 1]);
      i += 2;
    } else {
      out.push(s[i]);
      i += 1;
    }
  }
  out
}

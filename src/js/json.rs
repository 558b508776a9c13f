//! `JSON.parse` / `JSON.stringify` with JavaScript's observable semantics, plus the extended wire
//! form the binding uses to carry values JSON cannot (undefined, NaN, BigInt, ...).
//!
//! Parse: JSON whitespace is space/tab/LF/CR only; a duplicate key keeps its first position and
//! takes the last value; `__proto__` is an ordinary key; numbers are IEEE doubles (`1e400` is
//! Infinity); `\uD800` lone surrogates are accepted and kept. The text is a JS string in the
//! encoding of [`super::text`] (text from outside goes through [`super::text::encode_str`] first,
//! as the binding does), and parsed strings come out in that encoding. Stringify: `undefined`, functions and symbols
//! are dropped from objects and become `null` in arrays; non-finite numbers become `null`; BigInt
//! throws.

use super::jsnum::number_to_string;
use super::text::{cp_at, push_code_point, ESC};
use super::value::{Obj, Opaque, Value};

/// Deepest nesting the recursive parser and serialiser accept. Deeper input is treated as an
/// opaque value (fail closed); the reference itself overflows V8's stack somewhere between 1,000
/// and 2,000 levels in its later stages.
pub const MAX_DEPTH: usize = 1_000;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonError {
  #[error("invalid JSON at byte {0}")]
  Syntax(usize),
  #[error("JSON nested deeper than {MAX_DEPTH}")]
  TooDeep,
}

/// JSON text from outside (`JSON.stringify` output as well-formed UTF-8) rewritten so that any
/// JSON parser reads its strings in the crate's string encoding ([`super::text`]): a lone-surrogate
/// escape (`\ud800` with no partner) becomes the encoding's raw characters, and U+10FFFF (raw, or
/// as an escaped pair) becomes `ESC ESC`. Everything else is copied as it is; text without either
/// is returned borrowed after one scan. The chat request uses this in front of serde_json, whose
/// parser refuses lone surrogates, so that any string a caller passes survives to the wire.
pub fn encode_json_text(text: &str) -> std::borrow::Cow<'_, str> {
  let b = text.as_bytes();
  let has_surrogate_escape = memchr::memmem::find_iter(b, b"\\u").any(|i| matches!(b.get(i + 2), Some(b'd' | b'D')));
  if !has_surrogate_escape && !text.contains(ESC) {
    return std::borrow::Cow::Borrowed(text);
  }
  let hex4 = |at: usize| -> Option<u32> {
    let h = b.get(at..at + 4)?;
    u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()
  };
  let mut out = String::with_capacity(text.len() + 16);
  let (mut i, mut run, mut in_string) = (0usize, 0usize, false);
  while i < b.len() {
    match b[i] {
      b'"' => {
        in_string = !in_string;
        i += 1;
      }
      b'\\' if in_string => {
        if b.get(i + 1) != Some(&b'u') {
          i += 2;
          continue;
        }
        let Some(unit) = hex4(i + 2) else {
          i += 2;
          continue;
        };
        match unit {
          0xD800..=0xDBFF => {
            let low = (b.get(i + 6) == Some(&b'\\') && b.get(i + 7) == Some(&b'u'))
              .then(|| hex4(i + 8))
              .flatten()
              .filter(|l| (0xDC00..=0xDFFF).contains(l));
            match low {
              Some(low) => {
                let cp = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                if cp == 0x10FFFF {
                  out.push_str(&text[run..i]);
                  push_code_point(&mut out, cp);
                  run = i + 12;
                }
                i += 12;
              }
              None => {
                out.push_str(&text[run..i]);
                push_code_point(&mut out, unit);
                i += 6;
                run = i;
              }
            }
          }
          0xDC00..=0xDFFF => {
            out.push_str(&text[run..i]);
            push_code_point(&mut out, unit);
            i += 6;
            run = i;
          }
          _ => i += 6,
        }
      }
      0xF4 if text[i..].starts_with(ESC) => {
        out.push_str(&text[run..i]);
        push_code_point(&mut out, 0x10FFFF);
        i += ESC.len_utf8();
        run = i;
      }
      _ => i += 1,
    }
  }
  out.push_str(&text[run..]);
  std::borrow::Cow::Owned(out)
}

/// JS `JSON.parse(text)`.
pub fn parse(text: &str) -> Result<Value, JsonError> {
  parse_with(text, false)
}

/// Parse the binding's extended wire form: JSON whose strings starting with U+0000 are tags.
pub fn parse_ext(text: &str) -> Result<Value, JsonError> {
  parse_with(text, true)
}

/// [`parse`] for JSON text that arrived from outside as well-formed UTF-8 (a napi `String`): a raw
/// U+10FFFF is escaped into the string encoding first (a no-op copy-free check otherwise).
pub fn parse_utf8(text: &str) -> Result<Value, JsonError> {
  parse_with(&super::text::encode_str(text), false)
}

/// [`parse_ext`] for JSON text from outside (see [`parse_utf8`]).
pub fn parse_ext_utf8(text: &str) -> Result<Value, JsonError> {
  parse_with(&super::text::encode_str(text), true)
}

fn parse_with(text: &str, ext: bool) -> Result<Value, JsonError> {
  let mut p = Parser {
    b: text.as_bytes(),
    s: text,
    i: 0,
    ext,
  };
  p.ws();
  let v = p.value(0)?;
  p.ws();
  if p.i != p.b.len() {
    return Err(JsonError::Syntax(p.i));
  }
  Ok(v)
}

struct Parser<'a> {
  b: &'a [u8],
  s: &'a str,
  i: usize,
  ext: bool,
}

impl Parser<'_> {
  fn ws(&mut self) {
    while let Some(&c) = self.b.get(self.i) {
      if c == b' ' || c == b'\t' || c == b'\n' || c == b'\r' {
        self.i += 1;
      } else {
        break;
      }
    }
  }

  fn err<T>(&self) -> Result<T, JsonError> {
    Err(JsonError::Syntax(self.i))
  }

  fn lit(&mut self, word: &str, v: Value) -> Result<Value, JsonError> {
    if self.b[self.i..].starts_with(word.as_bytes()) {
      self.i += word.len();
      Ok(v)
    } else {
      self.err()
    }
  }

  fn value(&mut self, depth: usize) -> Result<Value, JsonError> {
    if depth > MAX_DEPTH {
      return Err(JsonError::TooDeep);
    }
    match self.b.get(self.i) {
      Some(b'{') => {
        self.i += 1;
        let mut o = Obj::new();
        self.ws();
        if self.b.get(self.i) == Some(&b'}') {
          self.i += 1;
          return Ok(Value::Object(o));
        }
        loop {
          self.ws();
          if self.b.get(self.i) != Some(&b'"') {
            return self.err();
          }
          let k = self.string()?;
          self.ws();
          if self.b.get(self.i) != Some(&b':') {
            return self.err();
          }
          self.i += 1;
          self.ws();
          let v = self.value(depth + 1)?;
          o.set(k, v);
          self.ws();
          match self.b.get(self.i) {
            Some(b',') => self.i += 1,
            Some(b'}') => {
              self.i += 1;
              return Ok(Value::Object(o));
            }
            _ => return self.err(),
          }
        }
      }
      Some(b'[') => {
        self.i += 1;
        let mut a = Vec::new();
        self.ws();
        if self.b.get(self.i) == Some(&b']') {
          self.i += 1;
          return Ok(Value::Array(a));
        }
        loop {
          self.ws();
          a.push(self.value(depth + 1)?);
          self.ws();
          match self.b.get(self.i) {
            Some(b',') => self.i += 1,
            Some(b']') => {
              self.i += 1;
              return Ok(Value::Array(a));
            }
            _ => return self.err(),
          }
        }
      }
      Some(b'"') => {
        let s = self.string()?;
        if self.ext && s.starts_with('\0') {
          return Ok(decode_tag(s));
        }
        Ok(Value::String(s))
      }
      Some(b't') => self.lit("true", Value::Bool(true)),
      Some(b'f') => self.lit("false", Value::Bool(false)),
      Some(b'n') => self.lit("null", Value::Null),
      Some(b'-' | b'0'..=b'9') => self.number(),
      _ => self.err(),
    }
  }

  fn number(&mut self) -> Result<Value, JsonError> {
    let start = self.i;
    let b = self.b;
    if b.get(self.i) == Some(&b'-') {
      self.i += 1;
    }
    match b.get(self.i) {
      Some(b'0') => self.i += 1,
      Some(b'1'..=b'9') => {
        while matches!(b.get(self.i), Some(b'0'..=b'9')) {
          self.i += 1;
        }
      }
      _ => return self.err(),
    }
    if b.get(self.i) == Some(&b'.') {
      self.i += 1;
      if !matches!(b.get(self.i), Some(b'0'..=b'9')) {
        return self.err();
      }
      while matches!(b.get(self.i), Some(b'0'..=b'9')) {
        self.i += 1;
      }
    }
    if matches!(b.get(self.i), Some(b'e' | b'E')) {
      self.i += 1;
      if matches!(b.get(self.i), Some(b'+' | b'-')) {
        self.i += 1;
      }
      if !matches!(b.get(self.i), Some(b'0'..=b'9')) {
        return self.err();
      }
      while matches!(b.get(self.i), Some(b'0'..=b'9')) {
        self.i += 1;
      }
    }
    let n: f64 = self.s[start..self.i].parse().map_err(|_| JsonError::Syntax(start))?;
    Ok(Value::Number(n))
  }

  fn hex4(&mut self) -> Result<u16, JsonError> {
    if self.i + 4 > self.b.len() {
      return self.err();
    }
    let h = std::str::from_utf8(&self.b[self.i..self.i + 4]).map_err(|_| JsonError::Syntax(self.i))?;
    let v = u16::from_str_radix(h, 16).map_err(|_| JsonError::Syntax(self.i))?;
    if !h.bytes().all(|c| c.is_ascii_hexdigit()) {
      return self.err();
    }
    self.i += 4;
    Ok(v)
  }

  fn string(&mut self) -> Result<String, JsonError> {
    self.i += 1; // opening quote
    let start = self.i;
    // Fast path: jump to the next quote or backslash, then check the run for control bytes.
    if let Some(off) = memchr::memchr2(b'"', b'\\', &self.b[self.i..]) {
      let end = self.i + off;
      if has_control(&self.b[self.i..end]) {
        while self.b[self.i] >= 0x20 {
          self.i += 1;
        }
        return self.err();
      }
      self.i = end;
      if self.b[end] == b'"' {
        let s = self.s[start..end].to_string();
        self.i += 1;
        return Ok(s);
      }
    } else {
      return Err(JsonError::Syntax(self.b.len()));
    }
    let mut out = String::with_capacity(self.i - start + 16);
    out.push_str(&self.s[start..self.i]);
    loop {
      let Some(&c) = self.b.get(self.i) else {
        return self.err();
      };
      match c {
        b'"' => {
          self.i += 1;
          return Ok(out);
        }
        b'\\' => {
          self.i += 1;
          let Some(&e) = self.b.get(self.i) else {
            return self.err();
          };
          self.i += 1;
          match e {
            b'"' => out.push('"'),
            b'\\' => out.push('\\'),
            b'/' => out.push('/'),
            b'b' => out.push('\u{8}'),
            b'f' => out.push('\u{C}'),
            b'n' => out.push('\n'),
            b'r' => out.push('\r'),
            b't' => out.push('\t'),
            b'u' => {
              let u = self.hex4()?;
              if (0xD800..0xDC00).contains(&u) {
                // A high surrogate: pair it with a following \uDC00-\uDFFF escape if present.
                let save = self.i;
                if self.b.get(self.i) == Some(&b'\\') && self.b.get(self.i + 1) == Some(&b'u') {
                  self.i += 2;
                  if let Ok(low) = self.hex4() {
                    if (0xDC00..0xE000).contains(&low) {
                      let cp = 0x10000 + (((u as u32) - 0xD800) << 10) + ((low as u32) - 0xDC00);
                      push_code_point(&mut out, cp);
                      continue;
                    }
                  }
                  self.i = save;
                }
                push_code_point(&mut out, u as u32);
              } else if (0xDC00..0xE000).contains(&u) {
                push_code_point(&mut out, u as u32);
              } else {
                out.push(char::from_u32(u as u32).unwrap_or('\u{FFFD}'));
              }
            }
            _ => return Err(JsonError::Syntax(self.i - 1)),
          }
        }
        0..=0x1F => return self.err(),
        _ => {
          // Copy a run of plain bytes (valid UTF-8 since the source is a &str).
          let run = self.i;
          while let Some(&c) = self.b.get(self.i) {
            if c == b'"' || c == b'\\' || c < 0x20 {
              break;
            }
            self.i += 1;
          }
          out.push_str(&self.s[run..self.i]);
        }
      }
    }
  }
}

/// Any byte below 0x20? Written as a branch-free fold so it vectorises on long strings.
fn has_control(b: &[u8]) -> bool {
  b.iter().fold(0u8, |acc, &c| acc | (c < 0x20) as u8) != 0
}

/// Does a string need escaping beyond copying (quote, backslash, control, a plane-16 lead byte that
/// may start the lone-surrogate escape)?
fn needs_escape(b: &[u8]) -> bool {
  b.iter().fold(0u8, |acc, &c| {
    acc | (c < 0x20 || c == b'"' || c == b'\\' || c == 0xF4) as u8
  }) != 0
}

fn decode_tag(s: String) -> Value {
  let rest = &s[1..];
  match rest.as_bytes().first() {
    Some(b'u') => Value::Undefined,
    Some(b'n') => Value::Number(f64::NAN),
    Some(b'i') => Value::Number(f64::INFINITY),
    Some(b'I') => Value::Number(f64::NEG_INFINITY),
    Some(b'z') => Value::Number(-0.0),
    Some(b'f') => Value::Opaque(Opaque::Function),
    Some(b'y') => Value::Opaque(Opaque::Symbol),
    Some(b'b') => Value::Opaque(Opaque::BigInt(rest[1..].to_string())),
    Some(b's') => Value::String(format!("\0{}", &rest[1..])),
    Some(b'd') => Value::Object(Obj::date(super::jsnum::string_to_number(&rest[1..]))),
    _ => Value::Opaque(Opaque::Unrepresentable),
  }
}

/// Why `JSON.stringify` threw.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StringifyError {
  #[error("Do not know how to serialize a BigInt")]
  BigInt,
  #[error("value cannot be serialised")]
  Unrepresentable,
}

/// JS `JSON.stringify(v)`: `Ok(None)` where JS returns `undefined`. The text is the JS string
/// `JSON.stringify` returns, in the encoding of [`super::text`] (lone surrogates written as `\uXXXX`
/// escapes, a real U+10FFFF kept escaped), so it can be embedded in other strings (retry
/// messages) and parsed again with [`parse`].
pub fn stringify(v: &Value) -> Result<Option<String>, StringifyError> {
  match v {
    Value::Undefined | Value::Opaque(Opaque::Function | Opaque::Symbol) => Ok(None),
    _ => {
      let mut out = String::new();
      write_value(&mut out, v, false, 0)?;
      Ok(Some(out))
    }
  }
}

/// Serialise to the extended wire form (every value representable, tags for non-JSON values) as
/// well-formed UTF-8 text for the JS side (like [`write_string`]; parse it back with
/// [`parse_ext_utf8`]).
pub fn stringify_ext(v: &Value) -> String {
  let mut out = String::new();
  // Cannot fail in ext mode.
  let _ = write_value(&mut out, v, true, 0);
  out
}

fn write_value(out: &mut String, v: &Value, ext: bool, depth: usize) -> Result<(), StringifyError> {
  if depth > MAX_DEPTH {
    return Err(StringifyError::Unrepresentable);
  }
  match v {
    Value::Null => out.push_str("null"),
    Value::Bool(true) => out.push_str("true"),
    Value::Bool(false) => out.push_str("false"),
    Value::Number(n) => {
      if n.is_finite() {
        if ext && *n == 0.0 && n.is_sign_negative() {
          out.push_str("\"\\u0000z\"");
        } else {
          out.push_str(&number_to_string(*n));
        }
      } else if ext {
        out.push_str(if n.is_nan() {
          "\"\\u0000n\""
        } else if *n > 0.0 {
          "\"\\u0000i\""
        } else {
          "\"\\u0000I\""
        });
      } else {
        out.push_str("null");
      }
    }
    Value::String(s) => {
      if ext && s.starts_with('\0') {
        out.push_str("\"\\u0000s");
        write_str_body(out, &s[1..], ext);
        out.push('"');
      } else {
        write_quoted(out, s, ext);
      }
    }
    Value::Array(a) => {
      out.push('[');
      for (i, item) in a.iter().enumerate() {
        if i > 0 {
          out.push(',');
        }
        match item {
          Value::Undefined | Value::Opaque(Opaque::Function | Opaque::Symbol) if !ext => out.push_str("null"),
          _ => write_value(out, item, ext, depth + 1)?,
        }
      }
      out.push(']');
    }
    Value::Object(o) if o.date_value().is_some() => {
      let time = o.date_value().unwrap_or(f64::NAN);
      if ext {
        // Tagged so the facade rebuilds a Date (structuredClone keeps Dates).
        out.push_str("\"\\u0000d");
        out.push_str(&number_to_string(time));
        out.push('"');
      } else {
        // JSON.stringify calls Date.prototype.toJSON.
        match super::value::iso_date(time) {
          Some(iso) => write_quoted(out, &iso, false),
          None => out.push_str("null"),
        }
      }
    }
    Value::Object(o) => {
      out.push('{');
      let mut first = true;
      for (k, item) in o.iter() {
        if !ext
          && matches!(
            item,
            Value::Undefined | Value::Opaque(Opaque::Function | Opaque::Symbol)
          )
        {
          continue;
        }
        if !first {
          out.push(',');
        }
        first = false;
        write_quoted(out, k, ext);
        out.push(':');
        write_value(out, item, ext, depth + 1)?;
      }
      out.push('}');
    }
    Value::Undefined => {
      if ext {
        out.push_str("\"\\u0000u\"")
      } else {
        out.push_str("null")
      }
    }
    Value::Opaque(o) => {
      if !ext {
        return match o {
          Opaque::BigInt(_) => Err(StringifyError::BigInt),
          Opaque::Unrepresentable => Err(StringifyError::Unrepresentable),
          _ => {
            out.push_str("null");
            Ok(())
          }
        };
      }
      match o {
        Opaque::Function => out.push_str("\"\\u0000f\""),
        Opaque::Symbol => out.push_str("\"\\u0000y\""),
        Opaque::BigInt(d) => {
          out.push_str("\"\\u0000b");
          out.push_str(d);
          out.push('"');
        }
        Opaque::Unrepresentable => out.push_str("\"\\u0000x\""),
      }
    }
  }
  Ok(())
}

/// A JSON string literal as `JSON.stringify` writes it, as well-formed UTF-8 for the JS side (the
/// binding's output): lone surrogates become `\uXXXX` escapes, the escaped U+10FFFF one character.
pub fn write_string(out: &mut String, s: &str) {
  write_quoted(out, s, true);
}

/// `raw`: well-formed UTF-8 for outside; otherwise the JS string in the crate's encoding.
fn write_quoted(out: &mut String, s: &str, raw: bool) {
  out.push('"');
  write_str_body(out, s, raw);
  out.push('"');
}

pub fn quote(s: &str) -> String {
  let mut out = String::with_capacity(s.len() + 2);
  write_string(&mut out, s);
  out
}

fn write_str_body(out: &mut String, s: &str, raw: bool) {
  let bytes = s.as_bytes();
  if !needs_escape(bytes) {
    out.push_str(s);
    return;
  }
  let mut run = 0;
  for (i, &b) in bytes.iter().enumerate() {
    let esc: Option<&str> = match b {
      b'"' => Some("\\\""),
      b'\\' => Some("\\\\"),
      b'\n' => Some("\\n"),
      b'\r' => Some("\\r"),
      b'\t' => Some("\\t"),
      0x08 => Some("\\b"),
      0x0C => Some("\\f"),
      0..=0x1F => None,
      // Lead byte of a plane-16 character; only the escape (U+10FFFF) needs work.
      0xF4 => {
        if i < run || !s[i..].starts_with(ESC) {
          continue;
        }
        let (cp, n) = cp_at(s, i);
        out.push_str(&s[run..i]);
        run = i + n;
        match cp {
          0xD800..=0xDBFF if run < s.len() && matches!(cp_at(s, run), (0xDC00..=0xDFFF, _)) => {
            // A lone high then a lone low (two strings joined in Rust): JS sees one pair.
            let (low, m) = cp_at(s, run);
            let c = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            out.push(char::from_u32(c).expect("astral scalar"));
            run += m;
          }
          0xD800..=0xDFFF => out.push_str(&format!("\\u{:04x}", cp)),
          _ if raw => out.push(ESC),
          _ => push_code_point(out, cp),
        }
        continue;
      }
      _ => continue,
    };
    if i < run {
      continue;
    }
    out.push_str(&s[run..i]);
    match esc {
      Some(e) => out.push_str(e),
      None => out.push_str(&format!("\\u{:04x}", b)),
    }
    run = i + 1;
  }
  out.push_str(&s[run..]);
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn outside_json_text_is_rewritten_into_the_string_encoding() {
    use crate::js::text::{lone_surrogate, ESC};
    // Nothing to do: borrowed, even with other escapes and well-formed pairs.
    let plain = "{\"a\":\"x\\n\\u0041\\u00e9 \u{1F600}\"}";
    assert!(matches!(encode_json_text(plain), std::borrow::Cow::Borrowed(_)));
    // A well-formed escaped pair is left as it is.
    let pair = r#"{"a":"\ud83d\ude00"}"#;
    assert_eq!(encode_json_text(pair), pair);
    // Lone high, lone low, a high before a non-low escape, U+10FFFF raw and as a pair.
    let text = format!(r#"{{"k\ud800":"a\ud800b\udfffc\uDBFF\u0041","m":"\udbff\udfff","r":"{ESC}"}}"#);
    let encoded = encode_json_text(&text);
    let v: serde_json::Value = serde_json::from_str(&encoded).unwrap();
    let lone = lone_surrogate;
    let key = format!("k{}", lone(0xD800));
    assert_eq!(v[&key], serde_json::json!(format!("a{}b{}c{}A", lone(0xD800), lone(0xDFFF), lone(0xDBFF))));
    assert_eq!(v["m"], serde_json::json!(format!("{ESC}{ESC}")));
    assert_eq!(v["r"], serde_json::json!(format!("{ESC}{ESC}")));
    // Written back for the wire, the strings are what JSON.stringify writes.
    let mut out = String::new();
    write_string(&mut out, v[&key].as_str().unwrap());
    assert_eq!(out, r#""a\ud800b\udfffc\udbffA""#);
    let mut out = String::new();
    write_string(&mut out, v["m"].as_str().unwrap());
    assert_eq!(out, format!("\"{ESC}\""));
    // An escaped backslash before "ud800" is text, not an escape.
    let escaped = r#"["\\ud800"]"#;
    assert_eq!(encode_json_text(escaped), escaped);
  }
  use crate::js::text::to_utf16;

  fn rt(s: &str) -> String {
    stringify(&parse(s).unwrap()).unwrap().unwrap()
  }

  #[test]
  fn duplicate_keys_keep_first_position_last_value() {
    assert_eq!(rt(r#"{"a":1,"b":2,"a":3}"#), r#"{"a":3,"b":2}"#);
  }

  #[test]
  fn integer_keys_sort_first() {
    assert_eq!(rt(r#"{"b":1,"2":2,"1":3}"#), r#"{"1":3,"2":2,"b":1}"#);
  }

  #[test]
  fn lone_surrogates_survive() {
    let v = parse(r#""a\ud800b\udc00\ud83d\ude00""#).unwrap();
    let s = v.as_str().unwrap();
    assert_eq!(to_utf16(s), [0x61, 0xD800, 0x62, 0xDC00, 0xD83D, 0xDE00]);
    assert_eq!(stringify(&v).unwrap().unwrap(), "\"a\\ud800b\\udc00\u{1F600}\"");
  }

  #[test]
  fn plane_16_edges_round_trip() {
    // Raw U+10F7FF, U+10F800, U+10FFFF and escaped lone surrogates, in values and keys.
    let text = "{\"\u{10F7FF}\u{10F800}\u{10FFFF}\":\"\\udbff\u{10FFFF}\\udfff\u{10F000}\\ud800\\udc00\\udc00\\ud800\"}";
    let v = parse_utf8(text).unwrap();
    let (k, s) = v.as_obj().unwrap().iter().next().unwrap();
    assert_eq!(to_utf16(k), [0xDBFD, 0xDFFF, 0xDBFE, 0xDC00, 0xDBFF, 0xDFFF]);
    assert_eq!(
      to_utf16(s.as_str().unwrap()),
      [0xDBFF, 0xDBFF, 0xDFFF, 0xDFFF, 0xDBFC, 0xDC00, 0xD800, 0xDC00, 0xDC00, 0xD800]
    );
    // For the JS side: lone surrogates as escapes and everything else raw, well-formed UTF-8.
    let wire = "{\"\u{10F7FF}\u{10F800}\u{10FFFF}\":\"\\udbff\u{10FFFF}\\udfff\u{10F000}\u{10000}\\udc00\\ud800\"}";
    assert_eq!(stringify_ext(&v), wire);
    assert_eq!(parse_ext_utf8(&stringify_ext(&v)).unwrap(), v);
    // JSON.stringify's result as a JS string: the same text in the crate's encoding.
    let js = stringify(&v).unwrap().unwrap();
    assert_eq!(js, crate::js::text::encode_str(wire));
    assert_eq!(parse(&js).unwrap(), v);
    // A real U+10FFFF followed by a payload character is not a lone surrogate on the way back.
    let tricky = Value::str(crate::js::text::encode_str("\u{10FFFF}\u{10F000}").into_owned());
    let js = stringify(&tricky).unwrap().unwrap();
    assert_eq!(to_utf16(&js), [0x22, 0xDBFF, 0xDFFF, 0xDBFC, 0xDC00, 0x22]);
    assert_eq!(parse(&js).unwrap(), tricky);
    // A lone high and a lone low joined in Rust serialise as the pair JS would see.
    let joined = format!("{}{}", crate::js::text::lone_surrogate(0xD83D), crate::js::text::lone_surrogate(0xDE00));
    assert_eq!(quote(&joined), "\"\u{1F600}\"");
  }

  #[test]
  fn numbers_and_escapes() {
    assert_eq!(rt("[1e400,-0,0.5,1E2]"), "[null,0,0.5,100]");
    assert_eq!(rt(r#""\u0001\n\"\/""#), r#""\u0001\n\"/""#);
    assert!(parse("01").is_err());
    assert!(parse("1.").is_err());
    assert!(parse("\"\n\"").is_err());
    assert!(parse(" \u{A0}1").is_err());
    assert!(parse("{\"a\":1,}").is_err());
    assert_eq!(rt(" \t\r\n[ ] "), "[]");
  }

  #[test]
  fn stringify_drops_undefined_like_js() {
    let v = crate::obj! { "a" => Value::Undefined, "b" => Value::Array(vec![Value::Undefined]) };
    assert_eq!(stringify(&v).unwrap().unwrap(), r#"{"b":[null]}"#);
    assert_eq!(stringify(&Value::Undefined).unwrap(), None);
    assert!(stringify(&Value::Opaque(Opaque::BigInt("1".into()))).is_err());
  }

  #[test]
  fn ext_round_trips_everything() {
    let v = crate::obj! {
      "u" => Value::Undefined,
      "n" => Value::Number(f64::NAN),
      "z" => Value::Number(-0.0),
      "s" => Value::str("\0tag"),
      "b" => Value::Opaque(Opaque::BigInt("12".into())),
    };
    let back = parse_ext(&stringify_ext(&v)).unwrap();
    let o = back.as_obj().unwrap();
    assert!(o.get("u").unwrap().is_undefined());
    assert!(matches!(o.get("n"), Some(Value::Number(n)) if n.is_nan()));
    assert!(matches!(o.get("z"), Some(Value::Number(n)) if n.is_sign_negative()));
    assert_eq!(o.get("s").unwrap().as_str(), Some("\0tag"));
  }

  #[test]
  fn deep_nesting_is_bounded() {
    let deep = "[".repeat(MAX_DEPTH + 5) + &"]".repeat(MAX_DEPTH + 5);
    assert_eq!(parse(&deep), Err(JsonError::TooDeep));
  }
}

//! A JavaScript-shaped value model.
//!
//! The repair layer must reproduce JavaScript observable behaviour: object key order (with the
//! engine's integer-key rule), `undefined` distinct from absent and from `null`, all numbers as
//! `f64`, and strings as UTF-16. Strings and keys are Rust `String`s in the injective encoding of
//! [`crate::js::text`] (lone surrogates escaped, everything else stored as is), so `==` on them is
//! JS `===` and every string survives a round trip.

use std::collections::HashMap;

/// Values JSON cannot carry, which callers may still hand to the pipeline.
#[derive(Clone, Debug, PartialEq)]
pub enum Opaque {
  /// A JS function (structuredClone throws on it; JSON.stringify drops it).
  Function,
  /// A JS symbol (structuredClone throws on it; JSON.stringify drops it).
  Symbol,
  /// A JS BigInt, as its decimal text (JSON.stringify throws on it).
  BigInt(String),
  /// A value the binding could not represent at all (a cycle, or nesting deeper than we walk).
  Unrepresentable,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
  Undefined,
  Null,
  Bool(bool),
  Number(f64),
  String(String),
  Array(Vec<Value>),
  Object(Obj),
  Opaque(Opaque),
}

impl Value {
  pub fn str(s: impl Into<String>) -> Value {
    Value::String(s.into())
  }
  pub fn is_undefined(&self) -> bool {
    matches!(self, Value::Undefined)
  }
  pub fn is_nullish(&self) -> bool {
    matches!(self, Value::Undefined | Value::Null)
  }
  /// "record" in the engine's sense: a non-null, non-array object.
  pub fn is_record(&self) -> bool {
    matches!(self, Value::Object(_))
  }
  pub fn as_str(&self) -> Option<&str> {
    match self {
      Value::String(s) => Some(s),
      _ => None,
    }
  }
  pub fn as_obj(&self) -> Option<&Obj> {
    match self {
      Value::Object(o) => Some(o),
      _ => None,
    }
  }
  pub fn as_obj_mut(&mut self) -> Option<&mut Obj> {
    match self {
      Value::Object(o) => Some(o),
      _ => None,
    }
  }
  pub fn as_array(&self) -> Option<&Vec<Value>> {
    match self {
      Value::Array(a) => Some(a),
      _ => None,
    }
  }
  /// JS `typeof`.
  pub fn type_of(&self) -> &'static str {
    match self {
      Value::Undefined => "undefined",
      Value::Null | Value::Array(_) | Value::Object(_) => "object",
      Value::Bool(_) => "boolean",
      Value::Number(_) => "number",
      Value::String(_) => "string",
      Value::Opaque(Opaque::Function) => "function",
      Value::Opaque(Opaque::Symbol) => "symbol",
      Value::Opaque(Opaque::BigInt(_)) => "bigint",
      Value::Opaque(Opaque::Unrepresentable) => "object",
    }
  }
  /// Child by JS property access semantics on own data (`obj[key]`, `arr[index]`).
  pub fn get_key(&self, key: &str) -> Option<&Value> {
    match self {
      Value::Object(o) => o.get(key),
      Value::Array(a) => array_index(key).and_then(|i| a.get(i)),
      _ => None,
    }
  }
  /// Does the value contain a function or symbol anywhere (structuredClone would throw)?
  pub fn contains_uncloneable(&self) -> bool {
    match self {
      Value::Opaque(Opaque::Function | Opaque::Symbol) => true,
      Value::Array(a) => a.iter().any(Value::contains_uncloneable),
      Value::Object(o) => o.values().any(Value::contains_uncloneable),
      _ => false,
    }
  }
}

/// Parse a canonical array index ("0", "42"; not "01", "-1", or >= 2^32 - 1) the way V8 orders
/// integer-like keys first.
pub fn array_index(key: &str) -> Option<usize> {
  let b = key.as_bytes();
  if b.is_empty() || b.len() > 10 || !b.iter().all(u8::is_ascii_digit) {
    return None;
  }
  if b.len() > 1 && b[0] == b'0' {
    return None;
  }
  let n: u64 = key.parse().ok()?;
  if n < 4_294_967_295 {
    Some(n as usize)
  } else {
    None
  }
}

/// An object with JavaScript own-key order: integer-like keys first in ascending numeric order,
/// then string keys in insertion order.
///
/// Entries live in a `Vec` (tool arguments have a handful of keys, where a linear scan beats any
/// hash); objects larger than [`INDEX_AT`] keys also get a hash index so hostile inputs with many
/// keys stay linear.
#[derive(Clone, Debug, Default)]
pub struct Obj {
  entries: Vec<(String, Value)>,
  index: Option<HashMap<String, usize>>,
  /// A JS `Date` (its time value, NaN for an invalid date): an object without own keys whose
  /// `JSON.stringify` is `toISOString()` (or `null`), kept through structuredClone-like copies.
  date: Option<f64>,
}

/// Key count above which an object keeps a hash index.
const INDEX_AT: usize = 24;

impl PartialEq for Obj {
  fn eq(&self, other: &Obj) -> bool {
    self.entries == other.entries && self.date.map(f64::to_bits) == other.date.map(f64::to_bits)
  }
}

impl Obj {
  pub fn new() -> Obj {
    Obj {
      entries: Vec::new(),
      index: None,
      date: None,
    }
  }
  /// A JS `Date` with time value `time` (ms since the epoch; NaN for an invalid date).
  pub fn date(time: f64) -> Obj {
    Obj {
      date: Some(time),
      ..Obj::new()
    }
  }
  /// The time value when this object is a `Date`.
  pub fn date_value(&self) -> Option<f64> {
    self.date
  }
  pub fn len(&self) -> usize {
    self.entries.len()
  }
  pub fn is_empty(&self) -> bool {
    self.entries.is_empty()
  }
  fn position(&self, key: &str) -> Option<usize> {
    match &self.index {
      Some(index) => index.get(key).copied(),
      None => self.entries.iter().position(|(k, _)| k == key),
    }
  }
  fn reindex(&mut self) {
    self.index = if self.entries.len() > INDEX_AT {
      Some(
        self
          .entries
          .iter()
          .enumerate()
          .map(|(i, (k, _))| (k.clone(), i))
          .collect(),
      )
    } else {
      None
    };
  }
  pub fn get(&self, key: &str) -> Option<&Value> {
    self.position(key).map(|i| &self.entries[i].1)
  }
  pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
    self.position(key).map(move |i| &mut self.entries[i].1)
  }
  /// JS `key in obj` for own data properties.
  pub fn has(&self, key: &str) -> bool {
    self.position(key).is_some()
  }
  /// JS assignment `obj[key] = value` on an own data property (defines, never touches a
  /// prototype): an existing key keeps its position, a new key goes where V8 would enumerate it.
  pub fn set(&mut self, key: impl Into<String>, value: Value) {
    let key = key.into();
    if let Some(i) = self.position(&key) {
      self.entries[i].1 = value;
      return;
    }
    let pos = match array_index(&key) {
      // Integer keys come first, ascending.
      Some(index) => self
        .entries
        .iter()
        .position(|(k, _)| match array_index(k) {
          Some(other) => other > index,
          None => true,
        })
        .unwrap_or(self.entries.len()),
      None => self.entries.len(),
    };
    if pos == self.entries.len() {
      if let Some(index) = &mut self.index {
        index.insert(key.clone(), pos);
      }
      self.entries.push((key, value));
      if self.index.is_none() && self.entries.len() > INDEX_AT {
        self.reindex();
      }
    } else {
      self.entries.insert(pos, (key, value));
      if self.entries.len() > INDEX_AT {
        self.reindex();
      }
    }
  }
  /// JS `delete obj[key]`.
  pub fn remove(&mut self, key: &str) -> Option<Value> {
    let i = self.position(key)?;
    let (_, v) = self.entries.remove(i);
    if self.index.is_some() {
      self.reindex();
    }
    Some(v)
  }
  pub fn keys(&self) -> impl Iterator<Item = &String> {
    self.entries.iter().map(|(k, _)| k)
  }
  pub fn values(&self) -> impl Iterator<Item = &Value> {
    self.entries.iter().map(|(_, v)| v)
  }
  pub fn iter(&self) -> impl Iterator<Item = (&String, &Value)> {
    self.entries.iter().map(|(k, v)| (k, v))
  }
  pub fn iter_mut(&mut self) -> impl Iterator<Item = (&String, &mut Value)> {
    self.entries.iter_mut().map(|(k, v)| (&*k, v))
  }
}

impl FromIterator<(String, Value)> for Obj {
  fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Obj {
    let mut o = Obj::new();
    for (k, v) in iter {
      o.set(k, v);
    }
    o
  }
}

/// Build an object literal: `obj! { "a" => Value::Null }`.
#[macro_export]
macro_rules! obj {
  ($($k:expr => $v:expr),* $(,)?) => {{
    #[allow(unused_mut)]
    let mut o = $crate::js::value::Obj::new();
    $( o.set($k, $v); )*
    $crate::js::value::Value::Object(o)
  }};
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn integer_keys_enumerate_first_in_numeric_order() {
    let mut o = Obj::new();
    o.set("b", Value::Null);
    o.set("10", Value::Null);
    o.set("a", Value::Null);
    o.set("2", Value::Null);
    o.set("01", Value::Null);
    o.set("4294967295", Value::Null);
    let keys: Vec<_> = o.keys().cloned().collect();
    assert_eq!(keys, ["2", "10", "b", "a", "01", "4294967295"]);
  }

  #[test]
  fn reassignment_keeps_position_and_delete_removes() {
    let mut o = Obj::new();
    o.set("a", Value::Null);
    o.set("b", Value::Null);
    o.set("a", Value::Bool(true));
    assert_eq!(o.keys().collect::<Vec<_>>(), ["a", "b"]);
    o.remove("a");
    o.set("a", Value::Null);
    assert_eq!(o.keys().collect::<Vec<_>>(), ["b", "a"]);
  }

  #[test]
  fn large_objects_keep_order_through_the_index() {
    let mut o = Obj::new();
    for i in 0..100 {
      o.set(format!("k{i}"), Value::Number(i as f64));
    }
    o.set("7", Value::Null);
    o.remove("k50");
    o.set("k50", Value::Bool(true));
    assert_eq!(o.len(), 101);
    assert_eq!(o.keys().next().unwrap(), "7");
    assert_eq!(o.keys().last().unwrap(), "k50");
    assert_eq!(o.get("k99"), Some(&Value::Number(99.0)));
    assert_eq!(o.get("k50"), Some(&Value::Bool(true)));
  }

  #[test]
  fn proto_is_an_ordinary_key() {
    let mut o = Obj::new();
    o.set("__proto__", Value::Number(1.0));
    assert!(o.has("__proto__"));
    assert!(!o.has("constructor"));
  }
}

/// `Date.prototype.toISOString()` for a finite time value (`None` where JS throws a RangeError,
/// i.e. where `toJSON` returns `null`).
pub fn iso_date(time: f64) -> Option<String> {
  if !time.is_finite() || time.abs() > 8.64e15 {
    return None;
  }
  let t = time as i64;
  let days = t.div_euclid(86_400_000);
  let ms_of_day = t.rem_euclid(86_400_000);
  // Howard Hinnant's civil_from_days.
  let z = days + 719_468;
  let era = z.div_euclid(146_097);
  let doe = z.rem_euclid(146_097);
  let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
  let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  let mp = (5 * doy + 2) / 153;
  let day = doy - (153 * mp + 2) / 5 + 1;
  let month = if mp < 10 { mp + 3 } else { mp - 9 };
  let year = yoe + era * 400 + i64::from(month <= 2);
  let year_text = if (0..=9999).contains(&year) {
    format!("{year:04}")
  } else if year < 0 {
    format!("-{:06}", -year)
  } else {
    format!("+{year:06}")
  };
  let (h, m, sec, ms) = (
    ms_of_day / 3_600_000,
    ms_of_day / 60_000 % 60,
    ms_of_day / 1000 % 60,
    ms_of_day % 1000,
  );
  Some(format!("{year_text}-{month:02}-{day:02}T{h:02}:{m:02}:{sec:02}.{ms:03}Z"))
}

#[cfg(test)]
mod date_tests {
  use super::iso_date;

  #[test]
  fn iso_dates_match_v8() {
    assert_eq!(iso_date(0.0).unwrap(), "1970-01-01T00:00:00.000Z");
    assert_eq!(iso_date(-1.0).unwrap(), "1969-12-31T23:59:59.999Z");
    assert_eq!(iso_date(951_782_400_000.0).unwrap(), "2000-02-29T00:00:00.000Z");
    assert_eq!(iso_date(1_764_585_296_123.0).unwrap(), "2025-12-01T10:34:56.123Z");
    assert_eq!(iso_date(8.64e15).unwrap(), "+275760-09-13T00:00:00.000Z");
    assert_eq!(iso_date(-8.64e15).unwrap(), "-271821-04-20T00:00:00.000Z");
    assert_eq!(iso_date(-62_198_755_200_000.0).unwrap(), "-000001-01-01T00:00:00.000Z");
    assert_eq!(iso_date(253_402_300_800_000.0).unwrap(), "+010000-01-01T00:00:00.000Z");
    assert_eq!(iso_date(f64::NAN), None);
  }
}

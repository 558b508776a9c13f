//! A JavaScript-shaped value model for the repair core.
//!
//! The repair layer must reproduce JavaScript observable behaviour: object key order (with the
//! engine's integer-key rule), `undefined` distinct from absent and from `null`, all numbers as
//! `f64`, and strings as UTF-16. Strings are stored as Rust `String`s; a lone UTF-16 surrogate
//! (which JSON can carry as `\uD800`) is mapped to a private-use code point in plane 16 so that it
//! survives a round trip (see [`crate::repair::text`]).

use indexmap::IndexMap;

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
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Obj {
  map: IndexMap<String, Value>,
}

impl Obj {
  pub fn new() -> Obj {
    Obj { map: IndexMap::new() }
  }
  pub fn len(&self) -> usize {
    self.map.len()
  }
  pub fn is_empty(&self) -> bool {
    self.map.is_empty()
  }
  pub fn get(&self, key: &str) -> Option<&Value> {
    self.map.get(key)
  }
  pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
    self.map.get_mut(key)
  }
  /// JS `key in obj` for own data properties.
  pub fn has(&self, key: &str) -> bool {
    self.map.contains_key(key)
  }
  /// JS assignment `obj[key] = value` on an own data property (defines, never touches a
  /// prototype): an existing key keeps its position, a new key goes where V8 would enumerate it.
  pub fn set(&mut self, key: impl Into<String>, value: Value) {
    let key = key.into();
    if let Some(slot) = self.map.get_mut(&key) {
      *slot = value;
      return;
    }
    match array_index(&key) {
      Some(index) => {
        // Integer keys come first, ascending.
        let pos = self
          .map
          .keys()
          .position(|k| match array_index(k) {
            Some(other) => other > index,
            None => true,
          })
          .unwrap_or(self.map.len());
        self.map.shift_insert(pos, key, value);
      }
      None => {
        self.map.insert(key, value);
      }
    }
  }
  /// JS `delete obj[key]`.
  pub fn remove(&mut self, key: &str) -> Option<Value> {
    self.map.shift_remove(key)
  }
  pub fn keys(&self) -> impl Iterator<Item = &String> {
    self.map.keys()
  }
  pub fn values(&self) -> impl Iterator<Item = &Value> {
    self.map.values()
  }
  pub fn iter(&self) -> impl Iterator<Item = (&String, &Value)> {
    self.map.iter()
  }
  pub fn iter_mut(&mut self) -> impl Iterator<Item = (&String, &mut Value)> {
    self.map.iter_mut()
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
    let mut o = $crate::repair::value::Obj::new();
    $( o.set($k, $v); )*
    $crate::repair::value::Value::Object(o)
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
  fn proto_is_an_ordinary_key() {
    let mut o = Obj::new();
    o.set("__proto__", Value::Number(1.0));
    assert!(o.has("__proto__"));
    assert!(!o.has("constructor"));
  }
}

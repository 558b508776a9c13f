//! `Value.Convert`: best-effort coercion driven by TypeBox's `~kind` markers.
//!
//! Nodes without a kind (plain JSON Schema) leave the value alone. The `Try*` helpers mirror
//! TypeBox's `value/convert/try`: each either produces the converted value or declines, in which
//! case the input is kept.

use std::cell::Cell;

use super::check;
use super::num::{big_to_i128, canonical_big, integral_f64_to_decimal};
use super::{Conv, ConvertError, KeyMatcher, Node, NodeId, Schema};
use crate::repair::jsnum::{number_to_string, string_to_number};
use crate::repair::text::js_lower;
use crate::repair::value::{Opaque, Value};

const MAX_SAFE: i128 = 9_007_199_254_740_991;

pub(crate) fn convert(schema: &Schema, root: NodeId, value: Value) -> Result<Value, ConvertError> {
  let mut ctx: Vec<(String, NodeId)> = Vec::new();
  let converter = Converter {
    schema,
    depth: Cell::new(0),
    overflowed: Cell::new(false),
  };
  converter.convert_node(root, value, &mut ctx)
}

struct Converter<'s> {
  schema: &'s Schema,
  /// Conversions currently nested; with the evaluations a union's Check nests below them, bounded
  /// by [`check::MAX_EVAL_DEPTH`].
  depth: Cell<usize>,
  /// The bound was hit (here or in a Check a union made): everything fails at once.
  overflowed: Cell<bool>,
}

fn big(text: impl Into<String>) -> Value {
  Value::Opaque(Opaque::BigInt(text.into()))
}

// --- Try helpers ---------------------------------------------------------------------------------

fn try_string(v: &Value) -> Option<Value> {
  match v {
    Value::Opaque(Opaque::BigInt(t)) => Some(Value::String(t.clone())),
    Value::Bool(b) => Some(Value::str(if *b { "true" } else { "false" })),
    Value::Number(n) if n.is_finite() => Some(Value::String(number_to_string(*n))),
    Value::Null => Some(Value::str("null")),
    Value::String(_) => Some(v.clone()),
    Value::Undefined => Some(Value::str("")),
    _ => None,
  }
}

/// `/^-?(0|[1-9]\d*)$/`
fn is_integer_like(s: &str) -> bool {
  let d = s.strip_prefix('-').unwrap_or(s);
  let b = d.as_bytes();
  !b.is_empty() && b.iter().all(u8::is_ascii_digit) && (b[0] != b'0' || b.len() == 1)
}

/// TypeBox `TryBigInt` on a string: `123n`, `12.5` (truncated), `12`, `true`/`false`.
fn string_to_bigint(s: &str) -> Option<String> {
  if let Some(body) = s.strip_suffix('n') {
    if is_integer_like(body) {
      return Some(canonical_big(body));
    }
  }
  if let Some((int, frac)) = s.split_once('.') {
    if is_integer_like(int) && !frac.is_empty() && frac.bytes().all(|b| b.is_ascii_digit()) {
      return Some(canonical_big(int));
    }
  }
  if is_integer_like(s) {
    return Some(canonical_big(s));
  }
  match js_lower(s).as_str() {
    "false" => Some("0".into()),
    "true" => Some("1".into()),
    _ => None,
  }
}

fn try_bigint(v: &Value) -> Option<Value> {
  match v {
    Value::Opaque(Opaque::BigInt(_)) => Some(v.clone()),
    Value::Bool(b) => Some(big(if *b { "1" } else { "0" })),
    Value::Number(n) if n.is_finite() => Some(big(integral_f64_to_decimal(n.trunc()))),
    Value::Null | Value::Undefined => Some(big("0")),
    Value::String(s) => string_to_bigint(s).map(big),
    _ => None,
  }
}

fn safe_big_to_number(text: &str) -> Option<f64> {
  let n = big_to_i128(text)?;
  (-MAX_SAFE..=MAX_SAFE).contains(&n).then_some(n as f64)
}

fn try_number(v: &Value) -> Option<f64> {
  match v {
    Value::Opaque(Opaque::BigInt(t)) => safe_big_to_number(t),
    Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
    Value::Number(n) if n.is_finite() => Some(*n),
    Value::Null | Value::Undefined => Some(0.0),
    Value::String(s) => {
      let coerced = string_to_number(s);
      if coerced.is_finite() {
        return Some(coerced);
      }
      match js_lower(s).as_str() {
        "false" => return Some(0.0),
        "true" => return Some(1.0),
        _ => {}
      }
      string_to_bigint(s).and_then(|t| safe_big_to_number(&t))
    }
    _ => None,
  }
}

fn try_boolean(v: &Value) -> Option<bool> {
  match v {
    Value::Opaque(Opaque::BigInt(t)) => match t.as_str() {
      "0" => Some(false),
      "1" => Some(true),
      _ => None,
    },
    Value::Bool(b) => Some(*b),
    Value::Number(n) if n.is_finite() => {
      if *n == 0.0 {
        Some(false)
      } else if *n == 1.0 {
        Some(true)
      } else {
        None
      }
    }
    Value::Null | Value::Undefined => Some(false),
    Value::String(s) => match js_lower(s).as_str() {
      "false" => Some(false),
      "true" => Some(true),
      _ if s == "0" => Some(false),
      _ if s == "1" => Some(true),
      _ => None,
    },
    _ => None,
  }
}

/// Shared by `TryNull` and `TryUndefined`: which inputs mean "nothing".
fn means_nothing(v: &Value) -> bool {
  match v {
    Value::Opaque(Opaque::BigInt(t)) => t == "0",
    Value::Bool(b) => !*b,
    Value::Number(n) if n.is_finite() => *n == 0.0,
    Value::Null | Value::Undefined => true,
    Value::String(s) => {
      let lower = js_lower(s);
      lower == "undefined" || lower == "null" || s.is_empty() || s == "0"
    }
    _ => false,
  }
}

/// `===` between a literal constant and a converted primitive.
fn same_primitive(a: &Value, b: &Value) -> bool {
  match (a, b) {
    (Value::Number(x), Value::Number(y)) => x == y,
    (Value::String(x), Value::String(y)) => x == y,
    (Value::Bool(x), Value::Bool(y)) => x == y,
    (Value::Opaque(Opaque::BigInt(x)), Value::Opaque(Opaque::BigInt(y))) => x == y,
    _ => false,
  }
}

impl<'s> Converter<'s> {
  fn check(&self, id: NodeId, v: &Value) -> bool {
    if self.overflowed.get() {
      return false;
    }
    check::check_bounded(self.schema, id, v, self.depth.get()).unwrap_or_else(|| {
      self.overflowed.set(true);
      false
    })
  }

  fn convert_node(&self, id: NodeId, value: Value, ctx: &mut Vec<(String, NodeId)>) -> Result<Value, ConvertError> {
    let depth = self.depth.get();
    if depth >= check::MAX_EVAL_DEPTH || self.overflowed.get() {
      if !self.overflowed.replace(true) {
        super::regex::record_too_deep();
      }
      return Err(ConvertError::TooDeep);
    }
    self.depth.set(depth + 1);
    let out = self.convert_kind(id, value, ctx);
    self.depth.set(depth);
    out
  }

  fn convert_kind(&self, id: NodeId, value: Value, ctx: &mut Vec<(String, NodeId)>) -> Result<Value, ConvertError> {
    let Node::Obj(node) = self.schema.node(id) else {
      return Ok(value);
    };
    Ok(match &node.conv {
      Conv::Identity => value,
      Conv::String => try_string(&value).unwrap_or(value),
      Conv::Number => match try_number(&value) {
        Some(n) => Value::Number(n),
        None => value,
      },
      Conv::Integer => match try_number(&value) {
        Some(n) => Value::Number(n.trunc()),
        None => value,
      },
      Conv::Boolean => match try_boolean(&value) {
        Some(b) => Value::Bool(b),
        None => value,
      },
      Conv::Null => {
        if means_nothing(&value) {
          Value::Null
        } else {
          value
        }
      }
      Conv::Undefined | Conv::Void => {
        if means_nothing(&value) {
          Value::Undefined
        } else {
          value
        }
      }
      Conv::BigInt => try_bigint(&value).unwrap_or(value),
      Conv::Literal(c) => {
        if same_primitive(c, &value) {
          return Ok(value);
        }
        let converted = match c {
          Value::Opaque(Opaque::BigInt(_)) => try_bigint(&value),
          Value::Bool(_) => try_boolean(&value).map(Value::Bool),
          Value::Number(_) => try_number(&value).map(Value::Number),
          Value::String(_) => try_string(&value),
          _ => None,
        };
        match converted {
          Some(r) if same_primitive(c, &r) => r,
          _ => value,
        }
      }
      Conv::Array(items) => {
        let list = match value {
          Value::Array(list) => list,
          other => vec![other],
        };
        match items {
          Some(items) => {
            let mut out = Vec::with_capacity(list.len());
            for item in list {
              out.push(self.convert_node(*items, item, ctx)?);
            }
            Value::Array(out)
          }
          None => Value::Array(list),
        }
      }
      Conv::Object(o) => {
        if !matches!(value, Value::Object(_) | Value::Opaque(Opaque::Unrepresentable)) {
          return Ok(value);
        }
        // TypeBox builds every property expression before looking at any key.
        if let Some((source, reason)) = &o.invalid {
          return Err(ConvertError::InvalidRegex {
            source: source.clone(),
            flags: String::new(),
            reason: reason.clone(),
          });
        }
        let mut value = value;
        let Value::Object(map) = &mut value else {
          // An unrepresentable value is an object without keys: nothing to convert.
          return Ok(value);
        };
        let keys: Vec<String> = map.keys().cloned().collect();
        for prop in &o.props {
          let optional = matches!(self.schema.node(prop.node), Node::Obj(n) if n.optional);
          for key in &keys {
            if !prop.matcher.matches(key) {
              continue;
            }
            let slot = map.get_mut(key).expect("key taken from this object");
            if optional && matches!(slot, Value::Undefined) {
              continue;
            }
            let current = std::mem::replace(slot, Value::Undefined);
            let converted = self.convert_node(prop.node, current, ctx)?;
            *map.get_mut(key).expect("key still present") = converted;
          }
        }
        if let Some(additional) = o.additional {
          let matchers: Vec<&KeyMatcher> = o.props.iter().map(|p| &p.matcher).collect();
          self.additional(map, &matchers, additional, ctx)?;
        }
        value
      }
      Conv::Record(r) => {
        if !matches!(value, Value::Object(_) | Value::Opaque(Opaque::Unrepresentable)) {
          return Ok(value);
        }
        if let Some((source, reason)) = &r.invalid {
          return Err(ConvertError::InvalidRegex {
            source: source.clone(),
            flags: String::new(),
            reason: reason.clone(),
          });
        }
        let mut value = value;
        let Value::Object(map) = &mut value else {
          return Ok(value);
        };
        let keys: Vec<String> = map.keys().cloned().collect();
        for (matcher, node) in &r.patterns {
          for key in &keys {
            if matcher.matches(key) {
              let slot = map.get_mut(key).expect("key taken from this object");
              let current = std::mem::replace(slot, Value::Undefined);
              let converted = self.convert_node(*node, current, ctx)?;
              *map.get_mut(key).expect("key still present") = converted;
            }
          }
        }
        if let Some(additional) = r.additional {
          let matchers: Vec<&KeyMatcher> = r.patterns.iter().map(|(m, _)| m).collect();
          self.additional(map, &matchers, additional, ctx)?;
        }
        value
      }
      Conv::Tuple(items) => {
        let mut value = value;
        if let Value::Array(list) = &mut value {
          let n = items.len().min(list.len());
          for (i, &node) in items.iter().enumerate().take(n) {
            let current = std::mem::replace(&mut list[i], Value::Undefined);
            list[i] = self.convert_node(node, current, ctx)?;
          }
        }
        value
      }
      Conv::Union(branches) => self.union(id, branches, value, ctx)?,
      Conv::Enum(union) | Conv::Evaluated(union) => self.convert_node(*union, value, ctx)?,
      Conv::Ref(name) => match ctx.iter().rev().find(|(k, _)| k == name) {
        Some(&(_, target)) => self.convert_node(target, value, ctx)?,
        None => value,
      },
      Conv::Cyclic { defs, target } => {
        let before = ctx.len();
        ctx.extend(defs.iter().cloned());
        let result = match defs.iter().rev().find(|(k, _)| k == target) {
          Some(&(_, node)) => self.convert_node(node, value, ctx),
          None => match ctx[..before].iter().rev().find(|(k, _)| k == target) {
            Some(&(_, node)) => self.convert_node(node, value, ctx),
            None => Ok(value),
          },
        };
        ctx.truncate(before);
        result?
      }
    })
  }

  /// TypeBox `FromAdditionalProperties`: for every declared matcher, each key it does not match is
  /// converted with the additional schema (so a key matching nothing is converted once per
  /// declared property).
  fn additional(
    &self,
    map: &mut crate::repair::value::Obj,
    matchers: &[&KeyMatcher],
    node: NodeId,
    ctx: &mut Vec<(String, NodeId)>,
  ) -> Result<(), ConvertError> {
    let keys: Vec<String> = map.keys().cloned().collect();
    for m in matchers {
      for key in &keys {
        if !m.matches(key) {
          let slot = map.get_mut(key).expect("key taken from this object");
          let current = std::mem::replace(slot, Value::Undefined);
          let converted = self.convert_node(node, current, ctx)?;
          *map.get_mut(key).expect("key still present") = converted;
        }
      }
    }
    Ok(())
  }

  /// TypeBox `FromUnion`: keep a value some branch accepts; otherwise convert a copy with every
  /// branch and keep the first copy the whole union accepts.
  fn union(
    &self,
    union: NodeId,
    branches: &[NodeId],
    value: Value,
    ctx: &mut Vec<(String, NodeId)>,
  ) -> Result<Value, ConvertError> {
    if branches.iter().any(|&b| self.check(b, &value)) {
      return Ok(value);
    }
    let mut candidates = Vec::with_capacity(branches.len());
    for &b in branches {
      candidates.push(self.convert_node(b, value.clone(), ctx)?);
    }
    match candidates.into_iter().find(|c| self.check(union, c)) {
      // An `undefined` winner is indistinguishable from "none found" in TypeBox.
      Some(Value::Undefined) | None => Ok(value),
      Some(selected) => Ok(selected),
    }
  }
}

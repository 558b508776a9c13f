//! TypeBox 1.1.38's `Evaluate` of an `Intersect`, which `Value.Convert` applies before converting
//! inside one (`value/convert/from_intersect`: `FromType(Evaluate(Instantiate(type)), value)`).
//!
//! Works on the schema JSON (with `~kind` / `~optional` as ordinary keys) and produces the evaluated
//! schema JSON, which is compiled like any other node and used only for Convert. Ported from
//! `type/engine/evaluate/{evaluate,distribute,broaden,composite,narrow,compare}` with the part of
//! `type/extends` that decides `Compare` for the kinds TypeBox builds (Any, Unknown, Never,
//! String, Number, Integer, Boolean, Null, Literal, Enum, Union, Array, Tuple, Object, Record);
//! other kinds compare as disjoint.

use crate::repair::value::{Obj, Value};

fn kind(t: &Value) -> &str {
  match t.get_key("~kind") {
    Some(Value::String(k)) => k,
    _ => "",
  }
}

fn is_kind(t: &Value, k: &str) -> bool {
  kind(t) == k
}

fn never() -> Value {
  Value::Object(Obj::from_iter([
    ("~kind".to_string(), Value::str("Never")),
    ("not".to_string(), Value::Object(Obj::new())),
  ]))
}

fn union(types: Vec<Value>) -> Value {
  Value::Object(Obj::from_iter([
    ("~kind".to_string(), Value::str("Union")),
    ("anyOf".to_string(), Value::Array(types)),
  ]))
}

fn list<'a>(t: &'a Value, key: &str) -> &'a [Value] {
  match t.get_key(key) {
    Some(Value::Array(a)) => a,
    _ => &[],
  }
}

fn is_optional(t: &Value) -> bool {
  matches!(t, Value::Object(o) if o.has("~optional"))
}

fn optional_remove(t: Value) -> Value {
  match t {
    Value::Object(mut o) if o.has("~optional") => {
      o.remove("~optional");
      Value::Object(o)
    }
    other => other,
  }
}

fn optional_add(t: Value) -> Value {
  match t {
    Value::Object(mut o) => {
      o.set("~optional", Value::Bool(true));
      Value::Object(o)
    }
    other => other,
  }
}

/// `Type.Object(properties)`: a fresh object type (the operands' other keywords are dropped).
fn object(properties: Obj) -> Value {
  let required: Vec<Value> = properties
    .iter()
    .filter(|(_, p)| !is_optional(p))
    .map(|(k, _)| Value::str(k.clone()))
    .collect();
  let mut o = Obj::new();
  o.set("~kind", Value::str("Object"));
  o.set("type", Value::str("object"));
  if !required.is_empty() {
    o.set("required", Value::Array(required));
  }
  o.set("properties", Value::Object(properties));
  Value::Object(o)
}

// --- evaluate.mjs ---------------------------------------------------------------------------------

pub(crate) fn evaluate_intersect(types: &[Value]) -> Value {
  broaden(distribute(types, Vec::new()))
}

fn evaluate_type(t: &Value) -> Value {
  if is_kind(t, "Intersect") {
    evaluate_intersect(list(t, "allOf"))
  } else if is_kind(t, "Union") {
    broaden(list(t, "anyOf").to_vec())
  } else {
    t.clone()
  }
}

// --- distribute.mjs -------------------------------------------------------------------------------

fn is_object_like(t: &Value) -> bool {
  is_kind(t, "Object") || is_kind(t, "Tuple")
}

fn distribute_operation(left: &Value, right: &Value) -> Value {
  let l = evaluate_type(left);
  let r = evaluate_type(right);
  if is_kind(&l, "Union") || is_kind(&r, "Union") {
    evaluate_intersect(&[l, r])
  } else if is_object_like(&l) && is_object_like(&r) {
    composite(&l, &r)
  } else if is_object_like(&l) {
    l
  } else if is_object_like(&r) {
    r
  } else {
    narrow(l, r)
  }
}

fn distribute_type(t: &Value, types: Vec<Value>) -> Vec<Value> {
  if types.is_empty() {
    return vec![t.clone()];
  }
  types.iter().map(|left| distribute_operation(t, left)).collect()
}

fn distribute(types: &[Value], mut result: Vec<Value>) -> Vec<Value> {
  for left in types {
    result = if is_kind(left, "Union") {
      let mut out = Vec::new();
      for member in list(left, "anyOf") {
        out.extend(distribute(std::slice::from_ref(member), result.clone()));
      }
      out
    } else {
      distribute_type(left, result)
    };
  }
  result
}

// --- broaden.mjs / flatten.mjs --------------------------------------------------------------------

fn broaden_type(t: &Value, types: Vec<Value>) -> Vec<Value> {
  let evaluated = evaluate_type(t);
  if is_kind(&evaluated, "Any") {
    return vec![evaluated];
  }
  let broadest = !types
    .iter()
    .any(|left| matches!(compare(&evaluated, left), Cmp::LeftInside | Cmp::Equal));
  if broadest {
    let mut out: Vec<Value> = types
      .into_iter()
      .filter(|left| compare(&evaluated, left) != Cmp::RightInside)
      .collect();
    out.push(evaluated);
    out
  } else {
    types
  }
}

fn flatten(types: Vec<Value>, out: &mut Vec<Value>) {
  for t in types {
    if is_kind(&t, "Union") {
      flatten(list(&t, "anyOf").to_vec(), out);
    } else {
      out.push(t);
    }
  }
}

fn broaden(types: Vec<Value>) -> Value {
  let mut result: Vec<Value> = Vec::new();
  for left in types {
    if is_kind(&left, "Object") {
      result.push(left);
    } else if is_kind(&left, "Never") {
    } else {
      result = broaden_type(&left, result);
    }
  }
  let mut flat = Vec::new();
  flatten(result, &mut flat);
  match flat.len() {
    0 => never(),
    1 => flat.pop().expect("one element"),
    _ => union(flat),
  }
}

// --- composite.mjs --------------------------------------------------------------------------------

fn properties_of(t: &Value) -> Obj {
  if is_kind(t, "Tuple") {
    let mut o = Obj::new();
    for (i, item) in list(t, "items").iter().enumerate() {
      o.set(i.to_string(), item.clone());
    }
    return o;
  }
  match t.get_key("properties") {
    Some(Value::Object(p)) => p.clone(),
    _ => Obj::new(),
  }
}

/// Names `key in {}` finds on `Object.prototype`.
fn is_object_prototype_member(key: &str) -> bool {
  matches!(
    key,
    "__proto__"
      | "constructor"
      | "hasOwnProperty"
      | "isPrototypeOf"
      | "propertyIsEnumerable"
      | "toString"
      | "toLocaleString"
      | "valueOf"
      | "__defineGetter__"
      | "__defineSetter__"
      | "__lookupGetter__"
      | "__lookupSetter__"
  )
}

fn composite_property(left: &Value, right: &Value) -> Value {
  let optional = is_optional(left) && is_optional(right);
  let property = optional_remove(evaluate_intersect(&[left.clone(), right.clone()]));
  if optional {
    optional_add(property)
  } else {
    property
  }
}

fn composite(left: &Value, right: &Value) -> Value {
  let lp = properties_of(left);
  let rp = properties_of(right);
  let mut out = Obj::new();
  for key in rp.keys().chain(lp.keys()) {
    if out.has(key) {
      continue;
    }
    let v = match (lp.get(key), rp.get(key)) {
      (Some(l), Some(r)) => composite_property(l, r),
      // TypeBox tests `key in properties`: the other side's inherited `Object.prototype` member
      // (`__proto__`, `constructor`, ...) is not a schema, and intersecting with it gives Never.
      (Some(_), None) | (None, Some(_)) if is_object_prototype_member(key) => never(),
      (Some(l), None) => l.clone(),
      (None, Some(r)) => r.clone(),
      (None, None) => never(),
    };
    out.set(key.clone(), v);
  }
  object(out)
}

// --- narrow.mjs / compare.mjs ---------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Cmp {
  Equal,
  Disjoint,
  LeftInside,
  RightInside,
}

fn narrow(left: Value, right: Value) -> Value {
  match compare(&left, &right) {
    Cmp::LeftInside => left,
    Cmp::RightInside | Cmp::Equal => right,
    Cmp::Disjoint => never(),
  }
}

fn compare(left: &Value, right: &Value) -> Cmp {
  let (a, b) = if is_kind(left, "Unknown") {
    (false, true)
  } else {
    (extends(left, right), extends(right, left))
  };
  match (a, b) {
    (true, true) => Cmp::Equal,
    (true, false) => Cmp::LeftInside,
    (false, true) => Cmp::RightInside,
    (false, false) => Cmp::Disjoint,
  }
}

/// Members of a union-like type: `Union` branches, or the literals of an `Enum`.
fn union_members(t: &Value) -> Option<Vec<Value>> {
  match kind(t) {
    "Union" => Some(list(t, "anyOf").to_vec()),
    "Enum" => Some(
      list(t, "enum")
        .iter()
        .map(|v| {
          Value::Object(Obj::from_iter([
            ("~kind".to_string(), Value::str("Literal")),
            ("const".to_string(), v.clone()),
          ]))
        })
        .collect(),
    ),
    _ => None,
  }
}

/// Is `left` assignable to `right` (TypeBox `Extends` true or union-of-true)?
fn extends(left: &Value, right: &Value) -> bool {
  let (lk, rk) = (kind(left), kind(right));
  if lk == "Record" {
    return false;
  }
  if lk == "Any" || lk == "Never" {
    return true;
  }
  if rk == "Any" || rk == "Unknown" {
    return true;
  }
  if lk == "Unknown" {
    return false;
  }
  if let Some(members) = union_members(left) {
    return members.iter().all(|m| extends(m, right));
  }
  if let Some(members) = union_members(right) {
    return members.iter().any(|m| extends(left, m));
  }
  match (lk, rk) {
    ("Literal", _) => {
      let c = left.get_key("const");
      match rk {
        "Literal" => match (c, right.get_key("const")) {
          (Some(Value::Number(x)), Some(Value::Number(y))) => x == y,
          (Some(x), Some(y)) => x == y,
          _ => false,
        },
        "String" => matches!(c, Some(Value::String(_))),
        "Number" => matches!(c, Some(Value::Number(_))),
        "Boolean" => matches!(c, Some(Value::Bool(_))),
        _ => false,
      }
    }
    ("Integer", "Number") => true,
    ("String", "String")
    | ("Number", "Number")
    | ("Integer", "Integer")
    | ("Boolean", "Boolean")
    | ("Null", "Null")
    | ("Never", "Never") => true,
    ("Array", "Array") => match (left.get_key("items"), right.get_key("items")) {
      (Some(l), Some(r)) => extends(l, r),
      _ => false,
    },
    ("Tuple", "Array") => match right.get_key("items") {
      Some(r) => list(left, "items").iter().all(|l| extends(l, r)),
      None => false,
    },
    ("Tuple", "Tuple") => {
      let (l, r) = (list(left, "items"), list(right, "items"));
      l.len() == r.len() && l.iter().zip(r).all(|(a, b)| extends(a, b))
    }
    ("Object", "Object") => object_extends(&properties_of(left), &properties_of(right)),
    _ => false,
  }
}

/// Structural object assignability: every property of `right` is satisfied by `left`.
fn object_extends(lp: &Obj, rp: &Obj) -> bool {
  rp.iter().all(|(k, r)| match lp.get(k) {
    Some(l) => (is_optional(r) || !is_optional(l)) && extends(&optional_remove(l.clone()), &optional_remove(r.clone())),
    None => is_optional(r),
  })
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::repair::json;

  fn t(text: &str) -> Value {
    json::parse(text).unwrap()
  }

  #[test]
  fn composite_of_objects_merges_properties_and_drops_options() {
    let a = t(r#"{"~kind":"Object","type":"object","properties":{"a":{"~kind":"String","type":"string"},"b":{"~kind":"Number","type":"number","~optional":true}},"additionalProperties":false}"#);
    let b = t(r#"{"~kind":"Object","type":"object","properties":{"b":{"~kind":"Integer","type":"integer","~optional":true},"c":{"~kind":"Boolean","type":"boolean"}}}"#);
    let e = evaluate_intersect(&[a, b]);
    assert_eq!(
      json::stringify(&e).unwrap().unwrap(),
      r#"{"~kind":"Object","type":"object","required":["a","c"],"properties":{"a":{"~kind":"String","type":"string"},"b":{"~kind":"Integer","type":"integer","~optional":true},"c":{"~kind":"Boolean","type":"boolean"}}}"#
    );
  }

  #[test]
  fn one_sided_object_prototype_names_become_never() {
    // TypeBox's `key in properties` finds the other side's inherited `__proto__` / `constructor`.
    let a = t(r#"{"~kind":"Object","type":"object","properties":{"__proto__":{"~kind":"Number","type":"number"}}}"#);
    let b = t(r#"{"~kind":"Object","type":"object","properties":{"a":{"~kind":"String","type":"string","~optional":true}}}"#);
    let e = evaluate_intersect(&[a, b]);
    let props = e.get_key("properties").unwrap();
    assert!(is_kind(props.get_key("__proto__").unwrap(), "Never"));
    assert!(is_kind(props.get_key("a").unwrap(), "String"));
  }

  #[test]
  fn narrowing_of_shared_keys() {
    let s = t(r#"{"~kind":"String","type":"string"}"#);
    let n = t(r#"{"~kind":"Number","type":"number"}"#);
    let u = t(r#"{"~kind":"Union","anyOf":[{"~kind":"String","type":"string"},{"~kind":"Number","type":"number"}]}"#);
    assert!(is_kind(&evaluate_intersect(&[s.clone(), n.clone()]), "Never"));
    assert_eq!(evaluate_intersect(&[u, n.clone()]), n);
    let lit = t(r#"{"~kind":"Literal","const":"a"}"#);
    assert_eq!(evaluate_intersect(&[s, lit.clone()]), lit);
  }
}

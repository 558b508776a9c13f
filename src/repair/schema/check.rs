//! `Value.Check` / `Value.Errors` evaluation.
//!
//! One evaluator serves both: the [`Sink`] decides whether failures are recorded (and whether
//! evaluation may stop at the first failure, as `Check` does) and the [`Ann`] decides whether the
//! evaluated keys/indices that `unevaluated*` keywords need are tracked.
//!
//! TypeBox's `Errors` nests throw-away error contexts inside `anyOf`/`oneOf`/`allOf`/`$ref` and
//! replays the failing ones into the parent; the resulting order equals appending every error to
//! one list and rewinding the list where TypeBox would drop a context, which is what we do.

use std::collections::HashSet;
use std::sync::LazyLock;

use super::format;
use super::num::{compare, is_multiple_of, NumRef};
use super::{
  ArrayKws, Dependency, IfKw, Issue, Items, KnownKeys, Node, NodeId, NumberKws, ObjNode, ObjectKws, Schema, StringKws,
  TypeKw, TypeName, TypeRaw,
};
use crate::repair::jsnum::{is_integer, number_to_string};
use crate::repair::text::{cmp_utf16, code_points, cp_at, to_well_formed};
use crate::repair::value::{Obj, Opaque, Value};

/// TypeBox's default `Settings.maxErrors`: `Value.Errors` never returns more entries than this.
pub const TYPEBOX_MAX_ERRORS: usize = 8;

/// Deepest nesting of schema evaluations and conversions (each `eval` / Convert step below
/// another) before they stop with JS's `RangeError: Maximum call stack size exceeded`. Only a
/// schema that recurses without end (a `$ref` cycle that never descends into the value) or a
/// value nested over a thousand levels into a recursive schema gets there; TypeBox overflows V8's
/// stack on those too. A step takes at most about 1 KiB of native stack in release builds, so the
/// bound keeps a call under about 2.5 MiB (a Node main thread has 8 MiB, a worker 4 MiB).
pub const MAX_EVAL_DEPTH: usize = 2_500;

pub(crate) fn check(schema: &Schema, root: NodeId, value: &Value) -> bool {
  check_bounded(schema, root, value, 0).unwrap_or(false)
}

/// [`check`] starting `depth` steps deep (inside a Convert), or `None` when evaluation ran deeper
/// than [`MAX_EVAL_DEPTH`] (the fault is recorded).
pub(crate) fn check_bounded(schema: &Schema, root: NodeId, value: &Value, depth: usize) -> Option<bool> {
  let ev = Eval::new(schema);
  ev.depth.set(depth);
  let ok = if schema.tracks_evaluation {
    ev.eval(root, value, &mut NoSink, &mut Track::new())
  } else {
    ev.eval(root, value, &mut NoSink, &mut NoAnn)
  };
  (!ev.overflowed.get()).then_some(ok)
}

pub(crate) fn errors(schema: &Schema, root: NodeId, value: &Value, limit: usize) -> Vec<Issue> {
  let ev = Eval::new(schema);
  let mut sink = ErrSink {
    issues: Vec::new(),
    path: String::new(),
  };
  if schema.tracks_evaluation {
    ev.eval(root, value, &mut sink, &mut Track::new());
  } else {
    ev.eval(root, value, &mut sink, &mut NoAnn);
  }
  sink.issues.truncate(limit);
  sink.issues
}

// ------------------------------------------------------------------------------------------------
// Sinks
// ------------------------------------------------------------------------------------------------

pub(crate) trait Sink {
  /// Evaluate every keyword (Errors) instead of stopping at the first failure (Check).
  const ALL: bool;
  fn enter(&mut self, segment: &str) -> usize;
  fn enter_index(&mut self, index: usize) -> usize;
  fn leave(&mut self, mark: usize);
  fn mark(&self) -> usize;
  fn rewind(&mut self, mark: usize);
  /// Record an error; always returns `false` (like TypeBox's `AddError`).
  fn report(&mut self, make: impl FnOnce(String) -> Issue) -> bool;
}

pub(crate) struct NoSink;

impl Sink for NoSink {
  const ALL: bool = false;
  #[inline(always)]
  fn enter(&mut self, _: &str) -> usize {
    0
  }
  #[inline(always)]
  fn enter_index(&mut self, _: usize) -> usize {
    0
  }
  #[inline(always)]
  fn leave(&mut self, _: usize) {}
  #[inline(always)]
  fn mark(&self) -> usize {
    0
  }
  #[inline(always)]
  fn rewind(&mut self, _: usize) {}
  #[inline(always)]
  fn report(&mut self, _: impl FnOnce(String) -> Issue) -> bool {
    false
  }
}

/// Error-mode evaluation whose errors TypeBox throws away (a nested `AccumulatedErrorContext`
/// that is never replayed): every keyword runs, nothing is recorded.
pub(crate) struct Discard;

impl Sink for Discard {
  const ALL: bool = true;
  fn enter(&mut self, _: &str) -> usize {
    0
  }
  fn enter_index(&mut self, _: usize) -> usize {
    0
  }
  fn leave(&mut self, _: usize) {}
  fn mark(&self) -> usize {
    0
  }
  fn rewind(&mut self, _: usize) {}
  fn report(&mut self, _: impl FnOnce(String) -> Issue) -> bool {
    false
  }
}

struct ErrSink {
  issues: Vec<Issue>,
  path: String,
}

impl Sink for ErrSink {
  const ALL: bool = true;
  fn enter(&mut self, segment: &str) -> usize {
    let mark = self.path.len();
    self.path.push('/');
    self.path.push_str(segment);
    mark
  }
  fn enter_index(&mut self, index: usize) -> usize {
    let mark = self.path.len();
    self.path.push('/');
    self.path.push_str(&index.to_string());
    mark
  }
  fn leave(&mut self, mark: usize) {
    self.path.truncate(mark);
  }
  fn mark(&self) -> usize {
    self.issues.len()
  }
  fn rewind(&mut self, mark: usize) {
    self.issues.truncate(mark);
  }
  fn report(&mut self, make: impl FnOnce(String) -> Issue) -> bool {
    let issue = make(self.path.clone());
    self.issues.push(issue);
    false
  }
}

fn issue(keyword: &str, instance_path: String, message: String) -> Issue {
  Issue {
    keyword: keyword.to_string(),
    instance_path,
    params_type: None,
    params_type_list: None,
    required_properties: None,
    message,
  }
}

// ------------------------------------------------------------------------------------------------
// Evaluation annotations (for unevaluatedItems / unevaluatedProperties)
// ------------------------------------------------------------------------------------------------

pub(crate) trait Ann: Sized {
  const TRACKS: bool;
  fn push(&mut self);
  fn pop(&mut self);
  fn add_key(&mut self, key: &str) -> bool;
  fn add_index(&mut self, index: usize) -> bool;
  fn fresh(&self) -> Self;
  fn merge(&mut self, other: &Self) -> bool;
  fn has_key(&self, key: &str) -> bool;
  fn has_index(&self, index: usize) -> bool;
}

pub(crate) struct NoAnn;

impl Ann for NoAnn {
  const TRACKS: bool = false;
  #[inline(always)]
  fn push(&mut self) {}
  #[inline(always)]
  fn pop(&mut self) {}
  #[inline(always)]
  fn add_key(&mut self, _: &str) -> bool {
    true
  }
  #[inline(always)]
  fn add_index(&mut self, _: usize) -> bool {
    true
  }
  #[inline(always)]
  fn fresh(&self) -> Self {
    NoAnn
  }
  #[inline(always)]
  fn merge(&mut self, _: &Self) -> bool {
    true
  }
  fn has_key(&self, _: &str) -> bool {
    false
  }
  fn has_index(&self, _: usize) -> bool {
    false
  }
}

/// TypeBox's `CheckContext`: a stack of frames of evaluated keys and indices. Like TypeBox, a
/// frame pushed for a child is only popped when the child passed.
pub(crate) struct Track {
  stack: Vec<(HashSet<String>, HashSet<usize>)>,
}

impl Track {
  fn new() -> Track {
    Track {
      stack: vec![(HashSet::new(), HashSet::new())],
    }
  }
  fn top(&mut self) -> &mut (HashSet<String>, HashSet<usize>) {
    self.stack.last_mut().expect("context stack is never empty")
  }
}

impl Ann for Track {
  const TRACKS: bool = true;
  fn push(&mut self) {
    self.stack.push((HashSet::new(), HashSet::new()));
  }
  fn pop(&mut self) {
    if self.stack.len() > 1 {
      self.stack.pop();
    }
  }
  fn add_key(&mut self, key: &str) -> bool {
    self.top().0.insert(key.to_string());
    true
  }
  fn add_index(&mut self, index: usize) -> bool {
    self.top().1.insert(index);
    true
  }
  fn fresh(&self) -> Self {
    Track::new()
  }
  fn merge(&mut self, other: &Self) -> bool {
    let (keys, indices) = other.stack.last().expect("context stack is never empty");
    let top = self.top();
    top.0.extend(keys.iter().cloned());
    top.1.extend(indices.iter().copied());
    true
  }
  fn has_key(&self, key: &str) -> bool {
    self.stack.last().is_some_and(|t| t.0.contains(key))
  }
  fn has_index(&self, index: usize) -> bool {
    self.stack.last().is_some_and(|t| t.1.contains(&index))
  }
}

// ------------------------------------------------------------------------------------------------
// Value predicates (TypeBox guards)
// ------------------------------------------------------------------------------------------------

static EMPTY: LazyLock<Obj> = LazyLock::new(Obj::new);

/// A non-null, non-array object; an unrepresentable value counts as an empty one.
fn as_record(v: &Value) -> Option<&Obj> {
  match v {
    Value::Object(o) => Some(o),
    Value::Opaque(Opaque::Unrepresentable) => Some(&EMPTY),
    _ => None,
  }
}

/// `typeof v === 'object' && v !== null`.
fn is_js_object(v: &Value) -> bool {
  matches!(
    v,
    Value::Object(_) | Value::Array(_) | Value::Opaque(Opaque::Unrepresentable)
  )
}

fn type_matches(t: TypeName, v: &Value) -> bool {
  match t {
    TypeName::Object => as_record(v).is_some(),
    TypeName::Array => matches!(v, Value::Array(_)),
    TypeName::Boolean => matches!(v, Value::Bool(_)),
    TypeName::Integer => matches!(v, Value::Number(n) if is_integer(*n)),
    TypeName::Number => matches!(v, Value::Number(n) if n.is_finite()),
    TypeName::Null => matches!(v, Value::Null),
    TypeName::String => matches!(v, Value::String(_)),
    // Arrays are the only iterables our model holds.
    TypeName::Iterator => matches!(v, Value::Array(_)),
    TypeName::AsyncIterator => false,
    TypeName::BigInt => matches!(v, Value::Opaque(Opaque::BigInt(_))),
    // We cannot tell classes/native functions from ordinary ones.
    TypeName::Constructor => false,
    TypeName::Function => matches!(v, Value::Opaque(Opaque::Function)),
    TypeName::Symbol => matches!(v, Value::Opaque(Opaque::Symbol)),
    TypeName::Undefined => matches!(v, Value::Undefined),
    TypeName::Unknown => true,
  }
}

/// TypeBox `IsValueLike`.
fn is_value_like(v: &Value) -> bool {
  match v {
    Value::Number(n) => n.is_finite(),
    Value::Opaque(Opaque::BigInt(_)) | Value::Bool(_) | Value::Null | Value::String(_) | Value::Undefined => true,
    _ => false,
  }
}

/// `===` (distinct objects are never identical; functions and symbols are treated as distinct).
fn strict_equal(a: &Value, b: &Value) -> bool {
  match (a, b) {
    (Value::Number(x), Value::Number(y)) => x == y,
    (Value::String(x), Value::String(y)) => x == y,
    (Value::Bool(x), Value::Bool(y)) => x == y,
    (Value::Null, Value::Null) | (Value::Undefined, Value::Undefined) => true,
    (Value::Opaque(Opaque::BigInt(x)), Value::Opaque(Opaque::BigInt(y))) => x == y,
    _ => false,
  }
}

/// Own property names count and lookup with JS semantics (arrays add `length`).
fn js_key_count(v: &Value) -> usize {
  match v {
    Value::Object(o) => o.len(),
    Value::Array(a) => a.len() + 1,
    _ => 0,
  }
}

fn js_get(v: &Value, key: &str) -> Option<Value> {
  match v {
    Value::Array(a) if key == "length" => Some(Value::Number(a.len() as f64)),
    _ => v.get_key(key).cloned(),
  }
}

/// TypeBox `IsDeepEqual(left, right)`.
pub(crate) fn deep_equal(left: &Value, right: &Value) -> bool {
  match left {
    Value::Array(l) => match right {
      Value::Array(r) => l.len() == r.len() && l.iter().zip(r).all(|(a, b)| deep_equal(a, b)),
      _ => false,
    },
    Value::Object(_) | Value::Opaque(Opaque::Unrepresentable) => {
      if !is_js_object(right) {
        return false;
      }
      let l = as_record(left).expect("record");
      l.len() == js_key_count(right)
        && l.iter().all(|(k, lv)| match js_get(right, k) {
          Some(rv) => deep_equal(lv, &rv),
          None => deep_equal(lv, &Value::Undefined),
        })
    }
    _ => strict_equal(left, right),
  }
}

/// The byte stream TypeBox's FNV-1a `Hash` consumes; equal streams mean equal hashes, which is
/// how `uniqueItems` decides duplicates.
fn hash_stream(v: &Value, out: &mut Vec<u8>) {
  match v {
    Value::Array(a) => {
      out.push(0);
      for item in a {
        hash_stream(item, out);
      }
    }
    Value::Opaque(Opaque::BigInt(text)) => {
      out.push(1);
      out.extend_from_slice(&bigint_as_i64(text).to_be_bytes());
    }
    Value::Bool(b) => {
      out.push(2);
      out.push(u8::from(*b));
    }
    Value::Null => out.push(6),
    Value::Number(n) => {
      out.push(7);
      out.extend_from_slice(&n.to_le_bytes());
    }
    Value::Object(_) | Value::Opaque(Opaque::Unrepresentable) => {
      out.push(8);
      let o = as_record(v).expect("record");
      let mut keys: Vec<&String> = o.keys().filter(|k| k.as_str() != "constructor").collect();
      keys.sort_by(|a, b| cmp_utf16(a, b));
      for k in keys {
        hash_string(k, out);
        hash_stream(o.get(k).expect("own key"), out);
      }
    }
    Value::String(s) => hash_string(s, out),
    Value::Opaque(Opaque::Symbol) => {
      out.push(11);
      hash_string("Symbol()", out);
    }
    Value::Undefined => out.push(13),
    Value::Opaque(Opaque::Function) => {
      out.push(5);
      hash_string("function", out);
    }
  }
}

/// `TextEncoder` output: a lone surrogate becomes U+FFFD.
fn hash_string(s: &str, out: &mut Vec<u8>) {
  out.push(10);
  out.extend_from_slice(to_well_formed(s).as_bytes());
}

/// `BigInt.asIntN(64, v)`.
fn bigint_as_i64(text: &str) -> i64 {
  let (neg, digits) = match text.strip_prefix('-') {
    Some(d) => (true, d),
    None => (false, text),
  };
  let mut acc: u64 = 0;
  for b in digits.bytes() {
    acc = acc.wrapping_mul(10).wrapping_add(u64::from(b.wrapping_sub(b'0')));
  }
  let acc = if neg { acc.wrapping_neg() } else { acc };
  acc as i64
}

// ------------------------------------------------------------------------------------------------
// Grapheme counting (TypeBox's own approximation, not UAX #29)
// ------------------------------------------------------------------------------------------------

fn is_regional_indicator(cp: u32) -> bool {
  (0x1F1E6..=0x1F1FF).contains(&cp)
}

fn is_modifier(cp: u32) -> bool {
  (0x0300..=0x036F).contains(&cp)
    || (0x1AB0..=0x1AFF).contains(&cp)
    || (0x1DC0..=0x1DFF).contains(&cp)
    || (0xFE20..=0xFE2F).contains(&cp)
    || (0xFE00..=0xFE0F).contains(&cp)
}

// Offsets below are byte offsets into the encoded string; `cp_at` gives the JS code point
// (`codePointAt`, a lone surrogate as itself) and its encoded length.

fn skip_modifiers(s: &str, mut i: usize) -> usize {
  while i < s.len() {
    let (cp, n) = cp_at(s, i);
    if is_modifier(cp) {
      i += n;
    } else {
      break;
    }
  }
  i
}

fn next_cluster(s: &str, start: usize) -> usize {
  let (first, n) = cp_at(s, start);
  let mut end = skip_modifiers(s, start + n);
  // A ZWJ joins the next code point when it is not the last code unit.
  while end < s.len() && cp_at(s, end).0 == 0x200D && end + 3 < s.len() {
    let (_, m) = cp_at(s, end + 3);
    end = skip_modifiers(s, end + 3 + m);
  }
  if is_regional_indicator(first) && end < s.len() && is_regional_indicator(cp_at(s, end).0) {
    end += cp_at(s, end).1;
  }
  end
}

/// Does this UTF-16 unit send TypeBox's fast path to the full count?
fn is_grapheme_trigger(unit: u32) -> bool {
  (0xD800..=0xDBFF).contains(&unit) || (0x0300..=0x036F).contains(&unit) || unit == 0x200D
}

/// First UTF-16 unit of a code point.
fn first_unit(cp: u32) -> u32 {
  if cp > 0xFFFF {
    0xD800 + ((cp - 0x10000) >> 10)
  } else {
    cp
  }
}

fn unit_len(cp: u32) -> usize {
  if cp > 0xFFFF {
    2
  } else {
    1
  }
}

pub(crate) fn is_max_length(s: &str, max: f64) -> bool {
  let mut index = 0usize;
  for c in code_points(s) {
    if is_grapheme_trigger(first_unit(c)) {
      let mut count = 0usize;
      let mut i = 0;
      while i < s.len() {
        i = next_cluster(s, i);
        count += 1;
        if count as f64 > max {
          return false;
        }
      }
      return true;
    }
    // A non-trigger char is one unit (astral chars always trigger).
    index += unit_len(c);
    if index as f64 > max {
      return false;
    }
  }
  true
}

pub(crate) fn is_min_length(s: &str, min: f64) -> bool {
  if min == 0.0 {
    return true;
  }
  let mut index = 0usize;
  for c in code_points(s) {
    if is_grapheme_trigger(first_unit(c)) {
      let mut count = 0usize;
      let mut i = 0;
      while i < s.len() {
        i = next_cluster(s, i);
        count += 1;
        if count as f64 >= min {
          return true;
        }
      }
      return false;
    }
    index += unit_len(c);
    if index as f64 >= min {
      return true;
    }
  }
  false
}

// ------------------------------------------------------------------------------------------------
// Evaluator
// ------------------------------------------------------------------------------------------------

pub(crate) struct Eval<'s> {
  pub schema: &'s Schema,
  /// Evaluations currently nested (see [`MAX_EVAL_DEPTH`]).
  depth: std::cell::Cell<usize>,
  /// The depth bound was hit: every further evaluation fails at once (JS has thrown).
  overflowed: std::cell::Cell<bool>,
}

macro_rules! step {
  ($ok:ident, $S:ty, $e:expr) => {
    if !$e {
      $ok = false;
      if !<$S>::ALL {
        return false;
      }
    }
  };
}

impl<'s> Eval<'s> {
  pub(crate) fn new(schema: &'s Schema) -> Eval<'s> {
    Eval {
      schema,
      depth: std::cell::Cell::new(0),
      overflowed: std::cell::Cell::new(false),
    }
  }

  pub(crate) fn eval<S: Sink, A: Ann>(&self, id: NodeId, v: &Value, s: &mut S, a: &mut A) -> bool {
    let depth = self.depth.get();
    if depth >= MAX_EVAL_DEPTH || self.overflowed.get() {
      // The result no longer matters: the recorded fault makes the call fail as JS throws.
      if !self.overflowed.replace(true) {
        super::regex::record_too_deep();
      }
      return false;
    }
    self.depth.set(depth + 1);
    let r = match self.schema.node(id) {
      Node::Bool(true) | Node::Other => true,
      Node::Bool(false) => s.report(|p| issue("boolean", p, "schema is false".into())),
      Node::Obj(n) => self.eval_obj(n, v, s, a),
    };
    self.depth.set(depth);
    r
  }

  /// TypeBox's `*SchemaPushStack`: a new annotation frame, popped only when the child passes.
  fn eval_pushed<S: Sink, A: Ann>(&self, id: NodeId, v: &Value, s: &mut S, a: &mut A) -> bool {
    a.push();
    let r = self.eval(id, v, s, a);
    if r {
      a.pop();
    }
    r
  }

  fn eval_obj<S: Sink, A: Ann>(&self, n: &ObjNode, v: &Value, s: &mut S, a: &mut A) -> bool {
    let mut ok = true;
    if let Some(t) = &n.ty {
      step!(ok, S, self.kw_type(t, v, s));
    }
    if let Some(kws) = &n.object {
      if let Some(o) = as_record(v) {
        step!(ok, S, self.object_kws(kws, o, v, s, a));
      }
    }
    if let Some(kws) = &n.array {
      if let Value::Array(items) = v {
        step!(ok, S, self.array_kws(kws, items, s, a));
      }
    }
    if let Some(kws) = &n.string {
      if let Value::String(text) = v {
        step!(ok, S, self.string_kws(kws, text, s));
      }
    }
    if let Some(kws) = &n.number {
      if let Some(x) = NumRef::of(v) {
        step!(ok, S, self.number_kws(kws, x, s));
      }
    }
    for &target in &n.refs {
      step!(ok, S, {
        let mut fresh = a.fresh();
        let r = self.eval(target, v, s, &mut fresh);
        if r {
          a.merge(&fresh);
        }
        r
      });
    }
    if let Some(c) = &n.const_ {
      let equal = if is_value_like(c) {
        strict_equal(v, c)
      } else {
        deep_equal(v, c)
      };
      step!(
        ok,
        S,
        equal || s.report(|p| issue("const", p, "must be equal to constant".into()))
      );
    }
    if let Some(options) = &n.enum_ {
      let hit = options.iter().any(|o| {
        if is_value_like(o) {
          strict_equal(v, o)
        } else {
          deep_equal(v, o)
        }
      });
      step!(
        ok,
        S,
        hit || s.report(|p| issue("enum", p, "must be equal to one of the allowed values".into()))
      );
    }
    if let Some(kw) = &n.if_ {
      step!(ok, S, self.kw_if(kw, v, s, a));
    }
    if let Some(not) = n.not {
      let mut fresh = a.fresh();
      let passes = !self.eval(not, v, &mut NoSink, &mut fresh);
      if passes {
        a.merge(&fresh);
      }
      step!(
        ok,
        S,
        passes || s.report(|p| issue("not", p, "must not be valid".into()))
      );
    }
    if let Some(list) = &n.all_of {
      step!(ok, S, self.kw_all_of(list, v, s, a));
    }
    if let Some(list) = &n.any_of {
      step!(ok, S, self.kw_any_of(list, v, s, a));
    }
    if let Some(list) = &n.one_of {
      step!(ok, S, self.kw_one_of(list, v, s, a));
    }
    if let Some(u) = n.unevaluated_items {
      if let Value::Array(items) = v {
        step!(ok, S, self.kw_unevaluated_items(u, items, s, a));
      }
    }
    if let Some(u) = n.unevaluated_properties {
      if is_js_object(v) {
        step!(ok, S, self.kw_unevaluated_properties(u, v, s, a));
      }
    }
    ok
  }

  fn kw_type<S: Sink>(&self, t: &TypeKw, v: &Value, s: &mut S) -> bool {
    if t.names.iter().any(|&name| type_matches(name, v)) {
      return true;
    }
    s.report(|p| match &t.raw {
      TypeRaw::One(name) => Issue {
        params_type: Some(name.clone()),
        ..issue("type", p, format!("must be {name}"))
      },
      TypeRaw::Many(list) => Issue {
        params_type_list: Some(list.clone()),
        ..issue("type", p, format!("must be either {}", list.join(" or ")))
      },
    })
  }

  // --------------------------------------------------------------------------------------------
  // Objects
  // --------------------------------------------------------------------------------------------

  fn object_kws<S: Sink, A: Ann>(&self, k: &ObjectKws, o: &Obj, v: &Value, s: &mut S, a: &mut A) -> bool {
    let mut ok = true;
    if let Some(required) = &k.required {
      let pass = if S::ALL {
        let missing: Vec<String> = required.iter().filter(|key| !o.has(key)).cloned().collect();
        missing.is_empty()
          || s.report(|p| Issue {
            required_properties: Some(missing.clone()),
            ..issue(
              "required",
              p,
              format!("must have required properties {}", missing.join(", ")),
            )
          })
      } else {
        required.iter().all(|key| o.has(key))
      };
      step!(ok, S, pass);
    }
    if let Some(ap) = &k.additional_properties {
      // TypeBox builds the known-keys expression before looking at any key.
      if let KnownKeys::Regex(re) = &ap.known {
        re.touch();
      }
      let known = |key: &str| match &ap.known {
        KnownKeys::Names(names) => names.iter().any(|n| n == key),
        KnownKeys::Regex(re) => re.test(key),
      };
      let pass = if S::ALL {
        let mut any_failed = false;
        for (key, val) in o.iter() {
          // The child's own errors go to a context TypeBox throws away.
          let fine = known(key) || {
            let mut fresh = a.fresh();
            fresh.push();
            self.eval(ap.node, val, &mut Discard, &mut fresh) && a.add_key(key)
          };
          any_failed |= !fine;
        }
        !any_failed || s.report(|p| issue("additionalProperties", p, "must not have additional properties".into()))
      } else {
        o.iter()
          .all(|(key, val)| known(key) || (self.eval_pushed(ap.node, val, s, a) && a.add_key(key)))
      };
      step!(ok, S, pass);
    }
    if let Some(deps) = &k.dependencies {
      let is_empty = o.is_empty();
      let mut every = true;
      for (key, dep) in deps {
        if !o.has(key) {
          continue;
        }
        let fine = match dep {
          Dependency::Keys(list) => list.iter().all(|d| {
            o.has(d)
              || s.report(|p| {
                issue(
                  "dependencies",
                  p,
                  format!(
                    "must have properties {} when property {key} is present",
                    list.join(", ")
                  ),
                )
              })
          }),
          Dependency::Schema(node) => self.eval(*node, v, s, a),
        };
        if !fine {
          every = false;
          if !S::ALL {
            break;
          }
        }
      }
      step!(ok, S, is_empty || every);
    }
    if let Some(deps) = &k.dependent_required {
      let is_empty = o.is_empty();
      let mut every = true;
      for (key, list) in deps {
        if !o.has(key) {
          continue;
        }
        for d in list {
          if !o.has(d) {
            every = false;
            s.report(|p| {
              issue(
                "dependentRequired",
                p,
                format!(
                  "must have properties {} when property {key} is present",
                  list.join(", ")
                ),
              )
            });
            if !S::ALL {
              break;
            }
          }
        }
        if !every && !S::ALL {
          break;
        }
      }
      step!(ok, S, is_empty || every);
    }
    if let Some(deps) = &k.dependent_schemas {
      let is_empty = o.is_empty();
      let mut every = true;
      for (key, node) in deps {
        if o.has(key) && !self.eval(*node, v, s, a) {
          every = false;
          if !S::ALL {
            break;
          }
        }
      }
      step!(ok, S, is_empty || every);
    }
    if let Some(patterns) = &k.pattern_properties {
      let mut every = true;
      'outer: for (re, node) in patterns {
        re.touch();
        for (key, val) in o.iter() {
          if !re.test(key) {
            continue;
          }
          let mark = s.enter(key);
          let fine = self.eval_pushed(*node, val, s, a) && a.add_key(key);
          s.leave(mark);
          if !fine {
            every = false;
            if !S::ALL {
              break 'outer;
            }
          }
        }
      }
      step!(ok, S, every);
    }
    if let Some(props) = &k.properties {
      let mut every = true;
      for prop in props {
        let Some(val) = o.get(&prop.key) else {
          continue;
        };
        // A non-required key holding undefined passes. Check still evaluates it (TypeBox computes
        // the result eagerly there, recording the key as evaluated when it passes); Errors
        // defers and skips it. Only `unevaluated*` can tell the difference.
        if !prop.required && matches!(val, Value::Undefined) {
          if !S::ALL && A::TRACKS {
            let _ = self.eval_pushed(prop.node, val, s, a) && a.add_key(&prop.key);
          }
          continue;
        }
        let mark = s.enter(&prop.key);
        let fine = self.eval_pushed(prop.node, val, s, a) && a.add_key(&prop.key);
        s.leave(mark);
        if !fine {
          every = false;
          if !S::ALL {
            break;
          }
        }
      }
      step!(ok, S, every);
    }
    if let Some(node) = k.property_names {
      let pass = if S::ALL {
        let mut invalid: Vec<&str> = Vec::new();
        for key in o.keys() {
          let mut fresh = a.fresh();
          if !self.eval(node, &Value::String(key.clone()), &mut Discard, &mut fresh) {
            invalid.push(key);
          }
        }
        invalid.is_empty()
          || s.report(|p| {
            issue(
              "propertyNames",
              p,
              format!("property names {} are invalid", invalid.join(", ")),
            )
          })
      } else {
        o.keys().all(|key| self.eval(node, &Value::String(key.clone()), s, a))
      };
      step!(ok, S, pass);
    }
    if let Some(min) = k.min_properties {
      step!(
        ok,
        S,
        o.len() as f64 >= min
          || s.report(|p| {
            issue(
              "minProperties",
              p,
              format!("must not have fewer than {} properties", number_to_string(min)),
            )
          })
      );
    }
    if let Some(max) = k.max_properties {
      step!(
        ok,
        S,
        o.len() as f64 <= max
          || s.report(|p| {
            issue(
              "maxProperties",
              p,
              format!("must not have more than {} properties", number_to_string(max)),
            )
          })
      );
    }
    ok
  }

  // --------------------------------------------------------------------------------------------
  // Arrays
  // --------------------------------------------------------------------------------------------

  fn array_kws<S: Sink, A: Ann>(&self, k: &ArrayKws, items: &[Value], s: &mut S, a: &mut A) -> bool {
    let mut ok = true;
    if let (Some(node), Some(Items::Tuple(tuple))) = (k.additional_items, &k.items) {
      // `Array.prototype.every` in both modes: stops at the first failing extra item.
      let pass = items.iter().enumerate().all(|(i, item)| {
        i < tuple.len() || {
          let mark = s.enter_index(i);
          let r = self.eval_pushed(node, item, s, a) && a.add_index(i);
          s.leave(mark);
          r
        }
      });
      step!(ok, S, pass);
    }
    if let Some(node) = k.contains {
      if k.contains_active {
        let pass = !items.is_empty() && items.iter().any(|item| self.eval(node, item, &mut NoSink, a));
        step!(
          ok,
          S,
          pass || s.report(|p| issue("contains", p, "must contain at least 1 valid item".into()))
        );
      }
    }
    if let Some(it) = &k.items {
      let mut every = true;
      match it {
        Items::Tuple(tuple) => {
          for (i, &node) in tuple.iter().enumerate() {
            if items.len() <= i {
              continue;
            }
            let mark = s.enter_index(i);
            let fine = self.eval_pushed(node, &items[i], s, a) && a.add_index(i);
            s.leave(mark);
            if !fine {
              every = false;
              if !S::ALL {
                break;
              }
            }
          }
        }
        Items::Single(node) => {
          let offset = k.prefix_items.as_ref().map_or(0, Vec::len);
          for (i, item) in items.iter().enumerate().skip(offset) {
            let mark = s.enter_index(i);
            let fine = self.eval_pushed(*node, item, s, a) && a.add_index(i);
            s.leave(mark);
            if !fine {
              every = false;
              if !S::ALL {
                break;
              }
            }
          }
        }
      }
      step!(ok, S, every);
    }
    if let (Some(max), Some(node)) = (k.max_contains, k.contains) {
      let count = items
        .iter()
        .filter(|item| self.eval(node, item, &mut NoSink, a))
        .count();
      step!(
        ok,
        S,
        count as f64 <= max || s.report(|p| issue("contains", p, "must contain at least 1 valid item".into()))
      );
    }
    if let Some(max) = k.max_items {
      step!(
        ok,
        S,
        items.len() as f64 <= max
          || s.report(|p| issue(
            "maxItems",
            p,
            format!("must not have more than {} items", number_to_string(max))
          ))
      );
    }
    if let (Some(min), Some(node)) = (k.min_contains, k.contains) {
      let count = items
        .iter()
        .filter(|item| self.eval(node, item, &mut NoSink, a))
        .count();
      step!(
        ok,
        S,
        count as f64 >= min || s.report(|p| issue("contains", p, "must contain at least 1 valid item".into()))
      );
    }
    if let Some(min) = k.min_items {
      step!(
        ok,
        S,
        items.len() as f64 >= min
          || s.report(|p| issue(
            "minItems",
            p,
            format!("must not have fewer than {} items", number_to_string(min))
          ))
      );
    }
    if let Some(prefix) = &k.prefix_items {
      let mut every = true;
      if !items.is_empty() {
        for (i, &node) in prefix.iter().enumerate() {
          if items.len() <= i {
            continue;
          }
          let mark = s.enter_index(i);
          let fine = self.eval_pushed(node, &items[i], s, a) && a.add_index(i);
          s.leave(mark);
          if !fine {
            every = false;
            if !S::ALL {
              break;
            }
          }
        }
      }
      step!(ok, S, every);
    }
    if k.unique_items {
      step!(
        ok,
        S,
        unique(items) || s.report(|p| issue("uniqueItems", p, "must not have duplicate items".into()))
      );
    }
    ok
  }

  // --------------------------------------------------------------------------------------------
  // Strings and numbers
  // --------------------------------------------------------------------------------------------

  fn string_kws<S: Sink>(&self, k: &StringKws, text: &str, s: &mut S) -> bool {
    let mut ok = true;
    if let Some(max) = k.max_length {
      step!(
        ok,
        S,
        is_max_length(text, max)
          || s.report(|p| {
            issue(
              "maxLength",
              p,
              format!("must not have more than {} characters", number_to_string(max)),
            )
          })
      );
    }
    if let Some(min) = k.min_length {
      step!(
        ok,
        S,
        is_min_length(text, min)
          || s.report(|p| {
            issue(
              "minLength",
              p,
              format!("must not have fewer than {} characters", number_to_string(min)),
            )
          })
      );
    }
    if let Some((name, f)) = &k.format {
      let pass = f.as_ref().is_none_or(|f| format::test(*f, text));
      step!(
        ok,
        S,
        pass || s.report(|p| issue("format", p, format!("must match format \"{name}\"")))
      );
    }
    if let Some((source, re)) = &k.pattern {
      step!(
        ok,
        S,
        re.test(text) || s.report(|p| issue("pattern", p, format!("must match pattern \"{source}\"")))
      );
    }
    ok
  }

  fn number_kws<S: Sink>(&self, k: &NumberKws, x: NumRef<'_>, s: &mut S) -> bool {
    use std::cmp::Ordering::{Equal, Greater, Less};
    let mut ok = true;
    let limit_msg = |kw: &'static str, op: &'static str, lim: &super::num::Num| {
      let text = format!("must be {op} {}", lim.display());
      move |p: String| issue(kw, p, text)
    };
    if let Some(lim) = &k.exclusive_maximum {
      let pass = matches!(compare(x, lim), Some(Less));
      step!(ok, S, pass || s.report(limit_msg("exclusiveMaximum", "<", lim)));
    }
    if let Some(lim) = &k.exclusive_minimum {
      let pass = matches!(compare(x, lim), Some(Greater));
      step!(ok, S, pass || s.report(limit_msg("exclusiveMinimum", ">", lim)));
    }
    if let Some(lim) = &k.maximum {
      let pass = matches!(compare(x, lim), Some(Less | Equal));
      step!(ok, S, pass || s.report(limit_msg("maximum", "<=", lim)));
    }
    if let Some(lim) = &k.minimum {
      let pass = matches!(compare(x, lim), Some(Greater | Equal));
      step!(ok, S, pass || s.report(limit_msg("minimum", ">=", lim)));
    }
    if let Some(m) = &k.multiple_of {
      step!(
        ok,
        S,
        is_multiple_of(x, m) || s.report(|p| issue("multipleOf", p, format!("must be multiple of {}", m.display())))
      );
    }
    ok
  }

  // --------------------------------------------------------------------------------------------
  // Applicators
  // --------------------------------------------------------------------------------------------

  fn kw_if<S: Sink, A: Ann>(&self, k: &IfKw, v: &Value, s: &mut S, a: &mut A) -> bool {
    if !S::ALL {
      // Check evaluates if/then/else in the current context.
      return if self.eval(k.if_, v, s, a) {
        k.then.is_none_or(|t| self.eval(t, v, s, a))
      } else {
        k.else_.is_none_or(|e| self.eval(e, v, s, a))
      };
    }
    let mut true_ctx = a.fresh();
    let result = if self.eval(k.if_, v, &mut Discard, &mut true_ctx) {
      k.then.is_none_or(|t| self.eval(t, v, &mut Discard, &mut true_ctx))
        || s.report(|p| issue("if", p, "must match \"then\" schema".into()))
    } else {
      k.else_.is_none_or(|e| self.eval(e, v, s, a)) || s.report(|p| issue("if", p, "must match \"else\" schema".into()))
    };
    if result {
      a.merge(&true_ctx);
    }
    result
  }

  fn kw_all_of<S: Sink, A: Ann>(&self, list: &[NodeId], v: &Value, s: &mut S, a: &mut A) -> bool {
    let mut passed = Vec::new();
    let mut all = true;
    for &node in list {
      let mark = s.mark();
      let mut fresh = a.fresh();
      if self.eval(node, v, s, &mut fresh) {
        s.rewind(mark);
        passed.push(fresh);
      } else {
        all = false;
        if !S::ALL && !A::TRACKS {
          return false;
        }
      }
    }
    if all {
      for ctx in &passed {
        a.merge(ctx);
      }
    }
    all
  }

  fn kw_any_of<S: Sink, A: Ann>(&self, list: &[NodeId], v: &Value, s: &mut S, a: &mut A) -> bool {
    let start = s.mark();
    let mut passed = Vec::new();
    for &node in list {
      let mark = s.mark();
      let mut fresh = a.fresh();
      if self.eval(node, v, s, &mut fresh) {
        s.rewind(mark);
        passed.push(fresh);
        if !S::ALL && !A::TRACKS {
          return true;
        }
      }
    }
    if !passed.is_empty() {
      s.rewind(start);
      for ctx in &passed {
        a.merge(ctx);
      }
      return true;
    }
    s.report(|p| issue("anyOf", p, "must match a schema in anyOf".into()))
  }

  fn kw_one_of<S: Sink, A: Ann>(&self, list: &[NodeId], v: &Value, s: &mut S, a: &mut A) -> bool {
    let start = s.mark();
    let mut passed = Vec::new();
    for &node in list {
      let mark = s.mark();
      let mut fresh = a.fresh();
      if self.eval(node, v, s, &mut fresh) {
        s.rewind(mark);
        passed.push(fresh);
        if passed.len() == 2 && !S::ALL && !A::TRACKS {
          return false;
        }
      }
    }
    if passed.len() == 1 {
      s.rewind(start);
      a.merge(&passed[0]);
      return true;
    }
    if !passed.is_empty() {
      // Branch errors are only replayed when no branch passed.
      s.rewind(start);
    }
    s.report(|p| issue("oneOf", p, "must match exactly one schema in oneOf".into()))
  }

  fn kw_unevaluated_items<S: Sink, A: Ann>(&self, node: NodeId, items: &[Value], s: &mut S, a: &mut A) -> bool {
    if !S::ALL {
      return items
        .iter()
        .enumerate()
        .all(|(i, item)| (a.has_index(i) || self.eval(node, item, s, a)) && a.add_index(i));
    }
    let mut failed = false;
    for (i, item) in items.iter().enumerate() {
      let fine = a.has_index(i) || {
        let mut fresh = a.fresh();
        self.eval(node, item, &mut Discard, &mut fresh)
      };
      if fine {
        a.add_index(i);
      } else {
        failed = true;
      }
    }
    !failed || s.report(|p| issue("unevaluatedItems", p, "must not have unevaluated items".into()))
  }

  fn kw_unevaluated_properties<S: Sink, A: Ann>(&self, node: NodeId, v: &Value, s: &mut S, a: &mut A) -> bool {
    let entries: Vec<(String, &Value)> = match v {
      Value::Array(items) => items.iter().enumerate().map(|(i, x)| (i.to_string(), x)).collect(),
      _ => as_record(v)
        .map(|o| o.iter().map(|(k, x)| (k.clone(), x)).collect())
        .unwrap_or_default(),
    };
    if !S::ALL {
      return entries
        .iter()
        .all(|(k, x)| (a.has_key(k) || self.eval(node, x, s, a)) && a.add_key(k));
    }
    let mut failed = false;
    for (k, x) in &entries {
      let fine = a.has_key(k) || {
        let mut fresh = a.fresh();
        self.eval(node, x, &mut Discard, &mut fresh)
      };
      if fine {
        a.add_key(k);
      } else {
        failed = true;
      }
    }
    !failed
      || s.report(|p| {
        issue(
          "unevaluatedProperties",
          p,
          "must not have unevaluated properties".into(),
        )
      })
  }
}

fn unique(items: &[Value]) -> bool {
  if items.len() < 2 {
    return true;
  }
  let mut seen: HashSet<Vec<u8>> = HashSet::with_capacity(items.len());
  items.iter().all(|item| {
    let mut bytes = Vec::new();
    hash_stream(item, &mut bytes);
    seen.insert(bytes)
  })
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn grapheme_counts_follow_typebox() {
    assert!(is_max_length("abc", 3.0));
    assert!(!is_max_length("abcd", 3.0));
    // e + combining acute is one cluster.
    assert!(is_max_length("e\u{301}", 1.0));
    // The fast path counts variation selectors until something sends it to the full count.
    assert!(!is_max_length("a\u{FE0F}\u{FE0F}", 1.0));
    // Family emoji joined by ZWJ: one cluster.
    assert!(is_max_length("\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}", 1.0));
    // Flags pair up.
    assert!(is_max_length("\u{1F1FA}\u{1F1F8}", 1.0));
    assert!(is_min_length("\u{1F1FA}\u{1F1F8}\u{1F1FA}", 2.0));
    assert!(is_min_length("", 0.0));
    assert!(!is_min_length("", 1.0));
  }

  #[test]
  fn deep_equality() {
    let a = crate::obj! { "x" => Value::Number(1.0), "y" => Value::Array(vec![Value::Null]) };
    let b = crate::obj! { "y" => Value::Array(vec![Value::Null]), "x" => Value::Number(1.0) };
    assert!(deep_equal(&a, &b));
    assert!(!deep_equal(&crate::obj! {}, &Value::Array(vec![])));
    assert!(deep_equal(&Value::Number(0.0), &Value::Number(-0.0)));
  }

  #[test]
  fn uniqueness_uses_hash_bytes() {
    assert!(!unique(&[Value::Number(1.0), Value::Number(1.0)]));
    // 0 and -0 hash differently.
    assert!(unique(&[Value::Number(0.0), Value::Number(-0.0)]));
    let a = crate::obj! { "a" => Value::Number(1.0), "b" => Value::Number(2.0) };
    let b = crate::obj! { "b" => Value::Number(2.0), "a" => Value::Number(1.0) };
    assert!(!unique(&[a, b]));
  }
}

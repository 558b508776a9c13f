//! A compiled JSON Schema validator and converter reproducing TypeBox 1.1.38's `Value.Check`,
//! `Value.Errors` and `Value.Convert` over our JS value model.
//!
//! `Schema::compile` turns the schema tree (with TypeBox's `~kind` / `~optional` markers copied in
//! as ordinary keys) into an arena of nodes: each keyword is resolved once (guards applied the way
//! TypeBox applies them, regular expressions compiled, `$ref`s linked), so validation walks plain
//! Rust structures. See `check.rs` for the evaluation rules and `convert.rs` for conversion.

mod check;
mod compile;
mod convert;
mod evaluate;
mod format;
mod num;
mod regex;

use crate::repair::value::Value;

pub use check::{MAX_EVAL_DEPTH, TYPEBOX_MAX_ERRORS};
pub use regex::RegexFault;

/// A compiled schema: immutable, `Send + Sync`, reusable across calls.
#[derive(Debug)]
pub struct Schema {
  nodes: Vec<Node>,
  root: NodeId,
  /// Whether `unevaluatedItems` / `unevaluatedProperties` occur anywhere; only then do we track
  /// which keys and indices were evaluated.
  tracks_evaluation: bool,
}

/// Why a schema could not be compiled.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SchemaError {
  /// The root is neither an object nor a boolean (TypeBox throws a TypeError on it).
  #[error("schema root must be an object or a boolean")]
  InvalidRoot,
  /// A `pattern`, `patternProperties` key or the derived additional-properties expression is not a
  /// valid JS regular expression (TypeBox throws a SyntaxError when it reaches it).
  #[error("Invalid regular expression: /{pattern}/{flags}: {reason}")]
  InvalidPattern {
    pattern: String,
    flags: String,
    reason: String,
  },
}

/// One `Value.Errors` entry (the parts the repair layer consumes).
#[derive(Debug, Clone, PartialEq)]
pub struct Issue {
  pub keyword: String,
  pub instance_path: String,
  pub params_type: Option<String>,
  pub params_type_list: Option<Vec<String>>,
  pub required_properties: Option<Vec<String>>,
  pub message: String,
}

/// Why evaluating a schema failed where JS throws.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaFault {
  /// A schema regular expression that does not compile, reached by the value (a SyntaxError).
  Regex(RegexFault),
  /// Evaluation nested deeper than [`MAX_EVAL_DEPTH`]: a schema that recurses without end (a
  /// `$ref` cycle that never descends into the value, Convert wrapping a value in arrays forever).
  /// JS overflows its stack there (`RangeError: Maximum call stack size exceeded`).
  TooDeep,
}

/// The message of JS's stack-overflow `RangeError`.
pub const STACK_OVERFLOW_MESSAGE: &str = "Maximum call stack size exceeded";

/// A failure while converting.
#[derive(Debug, Clone, PartialEq)]
pub enum ConvertError {
  /// A declared property name of an `Object` node (or a `patternProperties` key of a `Record`)
  /// does not compile as the regular expression `^name$` (TypeBox's `new RegExp` throws a
  /// SyntaxError). `source` is that expression text, e.g. `^a($`, so a JS caller can reproduce the
  /// exact SyntaxError with `new RegExp(source)`; `reason` is regress's description.
  InvalidRegex { source: String, flags: String, reason: String },
  /// See [`SchemaFault::TooDeep`].
  TooDeep,
}

impl From<SchemaFault> for ConvertError {
  fn from(f: SchemaFault) -> ConvertError {
    match f {
      SchemaFault::Regex(f) => ConvertError::InvalidRegex {
        source: f.source,
        flags: f.flags,
        reason: f.reason,
      },
      SchemaFault::TooDeep => ConvertError::TooDeep,
    }
  }
}

// Hand-written: thiserror would treat a field called `source` as the underlying error.
impl std::fmt::Display for ConvertError {
  fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    match self {
      ConvertError::InvalidRegex { source, flags, reason } => {
        write!(f, "Invalid regular expression: /{source}/{flags}: {reason}")
      }
      ConvertError::TooDeep => f.write_str(STACK_OVERFLOW_MESSAGE),
    }
  }
}

impl std::error::Error for ConvertError {}

impl Schema {
  pub fn compile(schema: &Value) -> Result<Schema, SchemaError> {
    compile::compile(schema)
  }

  /// `Value.Check(schema, value)` inside a `try`: a schema regular expression that does not
  /// compile (JS would throw its SyntaxError) counts as "not valid".
  pub fn check(&self, value: &Value) -> bool {
    let _ = regex::take_fault();
    let ok = check::check(self, self.root, value);
    regex::take_fault().is_none() && ok
  }

  /// `Value.Check(schema, value)`, failing where JS throws: a schema regular expression that does
  /// not compile, reached by the value, or a schema that recurses without end.
  pub fn try_check(&self, value: &Value) -> Result<bool, SchemaFault> {
    let _ = regex::take_fault();
    let ok = check::check(self, self.root, value);
    match regex::take_fault() {
      Some(fault) => Err(fault),
      None => Ok(ok),
    }
  }

  /// The first `limit` entries of `Value.Errors(schema, value)` in TypeBox order. TypeBox itself
  /// stops collecting after `TYPEBOX_MAX_ERRORS` (its default `maxErrors` setting).
  pub fn errors(&self, value: &Value, limit: usize) -> Vec<Issue> {
    let _ = regex::take_fault();
    let out = check::errors(self, self.root, value, limit);
    let _ = regex::take_fault();
    out
  }

  /// `errors`, failing where JS throws (see `try_check`).
  pub fn try_errors(&self, value: &Value, limit: usize) -> Result<Vec<Issue>, SchemaFault> {
    let _ = regex::take_fault();
    let out = check::errors(self, self.root, value, limit);
    match regex::take_fault() {
      Some(fault) => Err(fault),
      None => Ok(out),
    }
  }

  /// `Value.Convert(schema, value)`.
  pub fn convert(&self, value: Value) -> Result<Value, ConvertError> {
    let _ = regex::take_fault();
    let out = convert::convert(self, self.root, value);
    match (regex::take_fault(), out) {
      // Running too deep stops everything; a fault met before it is what JS threw first.
      (Some(f), Err(ConvertError::TooDeep)) => Err(f.into()),
      (_, Err(e)) => Err(e),
      (Some(f), Ok(_)) => Err(f.into()),
      (None, Ok(v)) => Ok(v),
    }
  }
}

// ------------------------------------------------------------------------------------------------
// Compiled representation
// ------------------------------------------------------------------------------------------------

pub(crate) type NodeId = usize;

#[derive(Debug)]
pub(crate) enum Node {
  /// A boolean schema.
  Bool(bool),
  /// An object schema.
  Obj(Box<ObjNode>),
  /// Something that is not a schema (only reachable from Convert, which treats it as identity).
  Other,
}

#[derive(Debug, Default)]
pub(crate) struct ObjNode {
  pub ty: Option<TypeKw>,
  pub object: Option<Box<ObjectKws>>,
  pub array: Option<Box<ArrayKws>>,
  pub string: Option<Box<StringKws>>,
  pub number: Option<Box<NumberKws>>,
  /// `$ref`, `$recursiveRef`, `$dynamicRef` targets, in that order.
  pub refs: Vec<NodeId>,
  pub const_: Option<Value>,
  pub enum_: Option<Vec<Value>>,
  pub if_: Option<IfKw>,
  pub not: Option<NodeId>,
  pub all_of: Option<Vec<NodeId>>,
  pub any_of: Option<Vec<NodeId>>,
  pub one_of: Option<Vec<NodeId>>,
  pub unevaluated_items: Option<NodeId>,
  pub unevaluated_properties: Option<NodeId>,
  /// Has the (non-enumerable in TypeBox) `~optional` marker.
  pub optional: bool,
  /// What Convert does with this node (from `~kind`).
  pub conv: Conv,
}

#[derive(Debug)]
pub(crate) struct TypeKw {
  pub names: Vec<TypeName>,
  pub raw: TypeRaw,
}

#[derive(Debug)]
pub(crate) enum TypeRaw {
  One(String),
  Many(Vec<String>),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum TypeName {
  Object,
  Array,
  Boolean,
  Integer,
  Number,
  Null,
  String,
  AsyncIterator,
  BigInt,
  Constructor,
  Function,
  Iterator,
  Symbol,
  Undefined,
  Unknown,
}

#[derive(Debug, Default)]
pub(crate) struct ObjectKws {
  pub required: Option<Vec<String>>,
  pub additional_properties: Option<AdditionalProps>,
  pub dependencies: Option<Vec<(String, Dependency)>>,
  pub dependent_required: Option<Vec<(String, Vec<String>)>>,
  pub dependent_schemas: Option<Vec<(String, NodeId)>>,
  pub pattern_properties: Option<Vec<(regex::LazyRegex, NodeId)>>,
  pub properties: Option<Vec<Prop>>,
  pub property_names: Option<NodeId>,
  pub min_properties: Option<f64>,
  pub max_properties: Option<f64>,
}

#[derive(Debug)]
pub(crate) struct AdditionalProps {
  pub node: NodeId,
  pub known: KnownKeys,
}

/// Which keys count as declared for `additionalProperties`.
#[derive(Debug)]
pub(crate) enum KnownKeys {
  /// Exactly the declared property names (no `patternProperties`).
  Names(Vec<String>),
  /// TypeBox's combined alternation of pattern keys and escaped property names.
  Regex(regex::LazyRegex),
}

#[derive(Debug)]
pub(crate) enum Dependency {
  Keys(Vec<String>),
  Schema(NodeId),
}

#[derive(Debug)]
pub(crate) struct Prop {
  pub key: String,
  pub node: NodeId,
  /// The key is listed in `required` (then an undefined value is validated, not skipped).
  pub required: bool,
}

#[derive(Debug, Default)]
pub(crate) struct ArrayKws {
  /// Only kept when `items` is a tuple (TypeBox ignores it otherwise).
  pub additional_items: Option<NodeId>,
  pub contains: Option<NodeId>,
  /// `contains` is skipped when `minContains` is 0.
  pub contains_active: bool,
  pub items: Option<Items>,
  pub max_contains: Option<f64>,
  pub max_items: Option<f64>,
  pub min_contains: Option<f64>,
  pub min_items: Option<f64>,
  pub prefix_items: Option<Vec<NodeId>>,
  pub unique_items: bool,
}

#[derive(Debug)]
pub(crate) enum Items {
  Single(NodeId),
  Tuple(Vec<NodeId>),
}

#[derive(Debug, Default)]
pub(crate) struct StringKws {
  pub max_length: Option<f64>,
  pub min_length: Option<f64>,
  pub format: Option<(String, Option<format::Format>)>,
  pub pattern: Option<(String, regex::LazyRegex)>,
}

#[derive(Debug, Default)]
pub(crate) struct NumberKws {
  pub exclusive_maximum: Option<num::Num>,
  pub exclusive_minimum: Option<num::Num>,
  pub maximum: Option<num::Num>,
  pub minimum: Option<num::Num>,
  pub multiple_of: Option<num::Num>,
}

#[derive(Debug)]
pub(crate) struct IfKw {
  pub if_: NodeId,
  pub then: Option<NodeId>,
  pub else_: Option<NodeId>,
}

/// Convert behaviour of a node, from its `~kind`.
#[derive(Debug, Default)]
pub(crate) enum Conv {
  #[default]
  Identity,
  String,
  Number,
  Integer,
  Boolean,
  Null,
  BigInt,
  Undefined,
  Void,
  Literal(Value),
  Array(Option<NodeId>),
  Object(Box<ConvObject>),
  Record(Box<ConvRecord>),
  Tuple(Vec<NodeId>),
  /// `anyOf` branches; the node itself is the union checked against.
  Union(Vec<NodeId>),
  /// The synthetic union of literals TypeBox builds from an `enum`.
  Enum(NodeId),
  /// An `Intersect`: converted as its evaluated type (a synthetic node).
  Evaluated(NodeId),
  Ref(String),
  Cyclic {
    defs: Vec<(String, NodeId)>,
    target: String,
  },
}

#[derive(Debug)]
pub(crate) struct ConvObject {
  pub props: Vec<ConvProp>,
  /// The first property name (in declaration order) that is not a valid `^name$` expression.
  pub invalid: Option<(String, String)>,
  pub additional: Option<NodeId>,
}

#[derive(Debug)]
pub(crate) struct ConvProp {
  pub matcher: KeyMatcher,
  pub node: NodeId,
}

#[derive(Debug)]
pub(crate) enum KeyMatcher {
  Exact(String),
  Regex(regex::JsRegex),
  /// Never used for matching: an invalid expression makes the whole node fail first.
  Invalid,
}

impl KeyMatcher {
  pub(crate) fn matches(&self, key: &str) -> bool {
    match self {
      KeyMatcher::Exact(name) => name == key,
      KeyMatcher::Regex(re) => re.test(key),
      KeyMatcher::Invalid => false,
    }
  }
}

#[derive(Debug)]
pub(crate) struct ConvRecord {
  pub patterns: Vec<(KeyMatcher, NodeId)>,
  pub invalid: Option<(String, String)>,
  pub additional: Option<NodeId>,
}

impl Schema {
  pub(crate) fn node(&self, id: NodeId) -> &Node {
    &self.nodes[id]
  }
}

#[cfg(test)]
mod tests;

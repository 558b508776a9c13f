//! The tool-call repair core: a napi-free port of `@r3b1s/pi-repair-layer` 0.4.x behaviour.
//!
//! Stage order (spec §3): envelope recovery → owner shim → preprocessors → schema repair →
//! final Convert + Check. JavaScript callbacks (owner shims, structural `apply` functions,
//! stateful model-family RegExps) are reached through the [`host::Host`] trait so this module has
//! no N-API types and `cargo test` covers it on its own.

pub mod config;
pub mod engine;
pub mod envelope;
pub mod grammar;
pub mod host;
pub mod pipeline;
pub mod preprocess;
pub mod report;
pub mod schema;
pub mod tables;

// The JS-semantics layer lives in `crate::js`; these paths stay for the repair modules.
pub use crate::js::{jsnum, json, text, value};

pub use value::{Obj, Opaque, Value};

/// Where a change or observation came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
  Envelope,
  Preprocess,
  ValidValue,
  SchemaRepair,
}

impl Stage {
  pub fn as_str(self) -> &'static str {
    match self {
      Stage::Envelope => "envelope",
      Stage::Preprocess => "preprocess",
      Stage::ValidValue => "valid-value",
      Stage::SchemaRepair => "schema-repair",
    }
  }
}

/// One recorded repair: `{ruleId, stage, note}`.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
  pub rule_id: String,
  pub stage: Stage,
  pub note: String,
}

impl Change {
  pub fn new(rule_id: impl Into<String>, stage: Stage, note: impl Into<String>) -> Change {
    Change {
      rule_id: rule_id.into(),
      stage,
      note: note.into(),
    }
  }
}

/// A heuristic that matched but was not applied (or was applied), for telemetry.
#[derive(Clone, Debug, PartialEq)]
pub struct Observation {
  pub rule_id: String,
  pub tool_name: String,
}

/// Errors that abort a repair call. Callback failures carry no payload: the binding keeps the
/// thrown JS value and rethrows it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RepairError {
  /// A structural preprocessor's or legacy structural repair's JS function threw.
  #[error("a repair callback threw")]
  CallbackThrew,
  /// structuredClone would throw: the input holds a function or symbol.
  #[error("could not be cloned")]
  DataClone,
  /// Value.Convert compiled a property name that is not a valid regular expression.
  #[error("Invalid regular expression: /{0}/")]
  InvalidRegex(String),
  /// A JS `TypeError` the reference throws at the same point (e.g. `JSON.stringify` of a BigInt).
  #[error("{0}")]
  TypeError(String),
  /// A JS `RangeError` the reference throws at the same point (its stack overflowing on a schema
  /// that recurses without end).
  #[error("{0}")]
  RangeError(String),
  /// Bad configuration handed to the core.
  #[error("{0}")]
  Config(String),
}

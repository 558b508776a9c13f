//! Callbacks into the caller's JavaScript, abstracted so the core stays napi-free.

use super::value::Value;
use super::RepairError;

/// What a structural `apply` produced: its result (`undefined` → `None`) and the argument as it
/// looks after the call (the function may have mutated it in place).
pub struct StructuralOutcome {
  pub result: Option<(Value, String)>,
  pub argument_after: Value,
}

/// What the owner shim did.
pub enum ShimOutcome {
  /// It returned `value`; `argument_after` is its argument after the call (shims may mutate it).
  Returned { value: Value, argument_after: Value },
  /// It threw; the argument as left by the shim (mutations before the throw persist).
  Threw(Value),
}

pub trait Host {
  /// `config.ownerPrepareArguments(value)`; `is_input` says the value is the caller's own input
  /// reference (limited or non-object envelopes), which the shim may mutate.
  fn owner_shim(&mut self, value: &Value, is_input: bool) -> ShimOutcome;
  /// `preprocessors[index].apply(value)` for a JS structural preprocessor.
  fn structural(&mut self, index: usize, value: &Value) -> Result<StructuralOutcome, RepairError>;
  /// `legacyConfig.structural[index].apply(args, toolName)`: the note (or `None` for `false`) and
  /// the args after the call.
  fn legacy_structural(
    &mut self,
    index: usize,
    args: &Value,
    tool_name: &str,
  ) -> Result<(Option<String>, Value), RepairError>;
  /// `preprocessors[index].modelFamilies.some(r => r.test(modelId))` for stateful RegExps.
  fn model_matches(&mut self, index: usize) -> Result<bool, RepairError>;
}

/// A host for calls with no JS callbacks at all.
pub struct NoHost;

impl Host for NoHost {
  fn owner_shim(&mut self, value: &Value, _is_input: bool) -> ShimOutcome {
    ShimOutcome::Returned {
      value: value.clone(),
      argument_after: value.clone(),
    }
  }
  fn structural(&mut self, _index: usize, _value: &Value) -> Result<StructuralOutcome, RepairError> {
    Err(RepairError::Config("structural preprocessor without a host".into()))
  }
  fn legacy_structural(
    &mut self,
    _index: usize,
    _args: &Value,
    _tool: &str,
  ) -> Result<(Option<String>, Value), RepairError> {
    Err(RepairError::Config("structural repair without a host".into()))
  }
  fn model_matches(&mut self, _index: usize) -> Result<bool, RepairError> {
    Ok(false)
  }
}

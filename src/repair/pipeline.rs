//! `runRepairPipeline` (spec §3): envelope → owner shim → preprocess → schema repair → final check.

use super::engine::{repair_schema_input, LegacyConfig, Outcome};
use super::envelope::{recover_envelope, truncated_envelope_change, Envelope, Limits};
use super::host::{Host, ShimOutcome};
use super::json;
use super::preprocess::{preprocess, FamilyMatch, PreprocessCall, Preprocessor};
use super::report::js_string;
use super::schema::Schema;
use super::text::cmp_utf16;
use super::value::{Obj, Value};
use super::{Change, Observation, RepairError, Stage};

pub struct PipelineConfig<'a> {
  pub tool_name: &'a str,
  pub schema: &'a Schema,
  pub allow_truncated_envelope_completion: bool,
  pub allow_valid_value_transforms: bool,
  pub preprocessors: &'a [Preprocessor],
  pub family_match: &'a [FamilyMatch],
  pub legacy: &'a LegacyConfig,
  pub has_owner_shim: bool,
  pub limits: Limits,
  /// `Buffer.byteLength(JSON.stringify(input))` when the caller already knows it.
  pub input_bytes_hint: Option<f64>,
}

#[derive(Debug)]
pub struct PipelineResult {
  pub outcome: Outcome,
  /// `None`: the caller's own input object.
  pub args: Option<Value>,
  pub changes: Vec<Change>,
  pub observations: Vec<Observation>,
  /// Every observation of every downstream run, in order (what `onObservation` receives).
  pub emitted: Vec<Observation>,
  pub issue_summary: Option<String>,
  pub fingerprint: Option<String>,
  pub retry_message: Option<String>,
}

fn normalize(v: &Value) -> Value {
  match v {
    Value::Array(a) => Value::Array(a.iter().map(normalize).collect()),
    Value::Object(o) => {
      let mut entries: Vec<(&String, &Value)> = o.iter().collect();
      entries.sort_by(|a, b| cmp_utf16(a.0, b.0));
      let mut out = Obj::new();
      for (k, item) in entries {
        out.set(k.clone(), normalize(item));
      }
      Value::Object(out)
    }
    other => other.clone(),
  }
}

/// Equality key with `stableSerialize` semantics (sorted keys, undefined-valued keys vanish).
pub fn stable_key(v: &Value) -> String {
  match json::stringify(&normalize(v)) {
    Ok(Some(s)) => s,
    _ => js_string(v),
  }
}

enum DownInput {
  /// The caller's input reference.
  Input,
  /// A value of our own; `same_as_input` when it is an unchanged deep copy of the input.
  Owned(Value, bool),
}

fn decode_note(tool: &str) -> String {
  format!(
    "Parsed your JSON-stringified arguments for tool \"{tool}\". Send the arguments as a JSON object next time, not a string."
  )
}

fn downstream(
  input: &Value,
  down: DownInput,
  config: &PipelineConfig,
  initial: Vec<Change>,
  host: &mut dyn Host,
  emitted: &mut Vec<Observation>,
) -> Result<PipelineResult, RepairError> {
  let tool = config.tool_name;
  let mut changes: Vec<Change> = initial
    .into_iter()
    .map(|c| {
      if c.rule_id == "envelope.decode-json" {
        Change {
          note: decode_note(tool),
          ..c
        }
      } else {
        c
      }
    })
    .collect();
  let (is_input, mut same_as_input) = match &down {
    DownInput::Input => (true, true),
    DownInput::Owned(_, same) => (false, *same),
  };
  let (mut given, mut current) = match down {
    DownInput::Input => (None, input.clone()),
    DownInput::Owned(v, _) if same_as_input && !config.has_owner_shim => (None, v),
    DownInput::Owned(v, _) => {
      let c = v.clone();
      (Some(v), c)
    }
  };
  let mut owner_changed = false;
  if config.has_owner_shim {
    let before = stable_key(&current);
    // The shim works on the downstream value itself: its in-place mutations stick to it, so the
    // value is no longer known to equal the input (the final stable comparison decides).
    same_as_input = false;
    match host.owner_shim(&current, is_input) {
      ShimOutcome::Returned { value, argument_after } => {
        if given.is_some() {
          given = Some(argument_after);
        }
        current = value;
        owner_changed = stable_key(&current) != before;
      }
      ShimOutcome::Threw(after) => {
        if given.is_some() {
          given = Some(after.clone());
        }
        current = after;
      }
    }
  }
  if current.contains_uncloneable() {
    return Err(RepairError::DataClone);
  }
  let call = PreprocessCall {
    tool_name: tool,
    preprocessors: config.preprocessors,
    family_match: config.family_match,
    allow_valid_value_transforms: config.allow_valid_value_transforms,
  };
  let pre = preprocess(current, &call, host)?;
  changes.extend(pre.changes);
  let observations: Vec<Observation> = pre
    .observations
    .into_iter()
    .map(|rule_id| Observation {
      rule_id,
      tool_name: tool.to_string(),
    })
    .collect();
  let schema_input = pre.value;
  let sr = repair_schema_input(tool, config.schema, &schema_input, config.legacy, host)?;
  let unrepairable = |sr: &super::engine::SchemaRepair, observations: Vec<Observation>| PipelineResult {
    outcome: Outcome::Unrepairable,
    args: None,
    changes: vec![],
    observations,
    emitted: vec![],
    issue_summary: sr.issue_summary.clone(),
    fingerprint: sr.fingerprint.clone(),
    retry_message: sr.retry_message.clone(),
  };
  if sr.outcome == Outcome::Unrepairable {
    emitted.extend(observations.iter().cloned());
    return Ok(unrepairable(&sr, observations));
  }
  for (rule, note) in &sr.changes {
    changes.push(Change::new(rule.clone(), Stage::SchemaRepair, note.clone()));
  }
  let schema_args = match &sr.args {
    Some(v) => v.clone(),
    None => schema_input,
  };
  // Final arbiter: Convert then Check (a Convert throw counts as invalid). The unconverted value is
  // only needed afterwards when an owner shim reshaped the input and nothing was recorded.
  let keep_schema_args = changes.is_empty() && owner_changed;
  let (converted, schema_args) = if keep_schema_args {
    (config.schema.convert(schema_args.clone()).ok(), Some(schema_args))
  } else {
    (config.schema.convert(schema_args).ok(), None)
  };
  let valid = matches!(&converted, Some(c) if config.schema.check(c));
  if !valid {
    emitted.extend(observations.iter().cloned());
    return Ok(unrepairable(&sr, observations));
  }
  let args = if !changes.is_empty() {
    converted
  } else if owner_changed {
    schema_args
  } else if same_as_input {
    None
  } else {
    given
  };
  emitted.extend(observations.iter().cloned());
  Ok(PipelineResult {
    outcome: if changes.is_empty() {
      Outcome::Valid
    } else {
      Outcome::Repaired
    },
    args,
    changes,
    observations,
    emitted: vec![],
    issue_summary: sr.issue_summary,
    fingerprint: sr.fingerprint,
    retry_message: None,
  })
}

pub fn run_repair_pipeline(
  input: &Value,
  config: &PipelineConfig,
  host: &mut dyn Host,
) -> Result<PipelineResult, RepairError> {
  let env: Envelope = recover_envelope_hinted(input, config)?;
  let mut emitted = Vec::new();
  if config.allow_truncated_envelope_completion {
    for cand in env.candidates {
      let r = downstream(
        input,
        DownInput::Owned(cand, false),
        config,
        vec![truncated_envelope_change()],
        host,
        &mut emitted,
      )?;
      if r.outcome != Outcome::Unrepairable {
        return Ok(PipelineResult { emitted, ..r });
      }
    }
  }
  let unchanged_copy = env.changes.is_empty();
  let down = match env.value {
    Some(v) => DownInput::Owned(v, unchanged_copy),
    None => DownInput::Input,
  };
  let mut primary = downstream(input, down, config, env.changes, host, &mut emitted)?;
  primary.emitted = emitted;
  if primary.outcome == Outcome::Valid {
    if let Some(a) = &primary.args {
      if stable_key(a) == stable_key(input) {
        primary.args = None;
      }
    }
  }
  Ok(primary)
}

fn recover_envelope_hinted(input: &Value, config: &PipelineConfig) -> Result<Envelope, RepairError> {
  match (config.input_bytes_hint, input) {
    // The hint is only valid for non-string inputs (strings count their own bytes).
    (Some(bytes), v) if !matches!(v, Value::String(_)) => {
      if bytes > config.limits.max_input_bytes {
        return Ok(Envelope {
          value: None,
          changes: vec![],
          candidates: vec![],
          limited: true,
        });
      }
      let limits = Limits {
        max_input_bytes: f64::NAN,
        ..config.limits
      };
      recover_envelope(input, &limits)
    }
    _ => recover_envelope(input, &config.limits),
  }
}

//! Reading caller configuration (preprocessor lists, legacy configs) from the JSON description the
//! JS facade sends. Functions never cross as data: a structural entry says whether it is the
//! built-in fold (`"native"`) or a JS function the host will call.

use super::engine::{LegacyConfig, LegacyStructural, RootString};
use super::preprocess::{FieldKind, Preprocessor, StructuralImpl};
use super::value::Value;

fn string_of(v: Option<&Value>) -> String {
  match v {
    Some(Value::String(s)) => s.clone(),
    _ => String::new(),
  }
}

fn strings(v: Option<&Value>) -> Vec<String> {
  match v {
    Some(Value::Array(a)) => a.iter().filter_map(|x| x.as_str().map(String::from)).collect(),
    _ => vec![],
  }
}

fn structural_impl(entry: &Value) -> StructuralImpl {
  match entry.get_key("native") {
    Some(Value::String(s)) if s == "foldFlatEditFields" => StructuralImpl::FoldFlatEditFields,
    _ => StructuralImpl::Host,
  }
}

pub fn parse_preprocessors(v: &Value) -> Vec<Preprocessor> {
  let Value::Array(items) = v else { return vec![] };
  items
    .iter()
    .map(|p| {
      let kind = string_of(p.get_key("kind"));
      let selector = string_of(p.get_key("selector"));
      match kind.as_str() {
        "alias" => Preprocessor::alias(
          &selector,
          strings(p.get_key("aliases")),
          p.get_key("accepts").and_then(|a| a.as_str().map(String::from)),
          matches!(p.get_key("emptyEquivalentToMissing"), Some(Value::Bool(true))),
        ),
        // The reference throws this TypeError when its loop reaches the entry (`null.kind`, ...).
        "throw" => Preprocessor::Throw(string_of(p.get_key("message"))),
        "structural" => Preprocessor::structural(&selector, string_of(p.get_key("ruleId")), structural_impl(p)),
        other => match FieldKind::parse(other) {
          Some(kind) => Preprocessor::field(
            kind,
            &selector,
            p.get_key("scalarType").and_then(|a| a.as_str().map(String::from)),
          ),
          None => Preprocessor::Ignored,
        },
      }
    })
    .collect()
}

pub fn parse_legacy(v: &Value) -> LegacyConfig {
  let mut c = LegacyConfig::default();
  if let Some(Value::Object(aliases)) = v.get_key("fieldAliases") {
    c.field_aliases = aliases
      .iter()
      .map(|(k, list)| (k.clone(), strings(Some(list))))
      .collect();
  }
  if let Some(rs @ Value::Object(_)) = v.get_key("rootString") {
    c.root_string = Some(RootString {
      field: string_of(rs.get_key("field")),
      wrap_in_array: matches!(rs.get_key("wrapInArray"), Some(Value::Bool(true))),
    });
  }
  c.path_fields = strings(v.get_key("pathFields"));
  if let Some(Value::Array(items)) = v.get_key("structural") {
    c.structural = items
      .iter()
      .map(|s| LegacyStructural {
        name: string_of(s.get_key("name")),
        imp: structural_impl(s),
      })
      .collect();
  }
  c
}

/// Model-family test for the built-in tables: case-insensitive substring (the families are plain
/// `/word/i` patterns).
pub fn builtin_family_matches(families: &Value, model_id: &str) -> bool {
  let lower = model_id.to_ascii_lowercase();
  match families {
    Value::Array(a) => a.iter().any(|f| match f.get_key("source") {
      Some(Value::String(src)) => lower.contains(&src.to_ascii_lowercase()),
      _ => false,
    }),
    _ => false,
  }
}

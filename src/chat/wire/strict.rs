//! pi-ai's strict JSON-schema subset (`makeStrictJsonSchema`), shared by the adapters that send
//! strict tools: every object closed, every property required, optional ones widened to
//! `anyOf [schema, {type: null}]`; unsupported constructs are refused with pi-ai's reason text.

use std::collections::HashSet;

use serde_json::{json, Value};

use crate::chat::types::ToolDef;

/// A schema the strict subset cannot express.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnsupportedStrictSchema(pub String);

impl std::fmt::Display for UnsupportedStrictSchema {
  fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    f.write_str(&self.0)
  }
}

const UNSUPPORTED_STRICT_KEYS: [&str; 16] = [
  "$ref",
  "$defs",
  "definitions",
  "allOf",
  "oneOf",
  "patternProperties",
  "dependentSchemas",
  "dependencies",
  "unevaluatedProperties",
  "propertyNames",
  "contains",
  "prefixItems",
  "not",
  "if",
  "then",
  "else",
];

/// pi-ai's `makeStrictJsonSchema`: every object closed (`additionalProperties: false`), every
/// property required, optional ones widened to `anyOf [schema, {type: null}]`.
pub fn make_strict_json_schema(schema: &Value) -> Result<Value, UnsupportedStrictSchema> {
  let mut cloned = schema.clone();
  if !cloned.is_object() {
    return Err(UnsupportedStrictSchema("root schema must have type object".into()));
  }
  strict_node(&mut cloned)?;
  if cloned.get("type") != Some(&Value::String("object".into())) {
    return Err(UnsupportedStrictSchema("root schema must have type object".into()));
  }
  Ok(cloned)
}

fn is_structured(schema: &Value) -> bool {
  let Some(o) = schema.as_object() else {
    return false;
  };
  let types: Vec<&Value> = match o.get("type") {
    Some(Value::String(_)) => vec![&o["type"]],
    Some(Value::Array(items)) => items.iter().collect(),
    _ => vec![],
  };
  types
    .iter()
    .any(|t| t.as_str() == Some("object") || t.as_str() == Some("array"))
    || o.contains_key("properties")
    || o.contains_key("items")
}

fn allows_null(schema: &Value) -> bool {
  let Some(o) = schema.as_object() else {
    return false;
  };
  match o.get("type") {
    Some(Value::String(t)) if t == "null" => return true,
    Some(Value::Array(items)) if items.iter().any(|t| t.as_str() == Some("null")) => return true,
    _ => {}
  }
  if o.get("const") == Some(&Value::Null) {
    return true;
  }
  if let Some(Value::Array(items)) = o.get("enum") {
    if items.iter().any(Value::is_null) {
      return true;
    }
  }
  matches!(o.get("anyOf"), Some(Value::Array(v)) if v.iter().any(allows_null))
}

fn strict_node(schema: &mut Value) -> Result<(), UnsupportedStrictSchema> {
  let err = |m: &str| Err(UnsupportedStrictSchema(m.to_string()));
  let Some(o) = schema.as_object_mut() else {
    return err("boolean schemas are unsupported");
  };
  for key in UNSUPPORTED_STRICT_KEYS {
    if o.contains_key(key) {
      return err(&format!("{key} schemas are unsupported"));
    }
  }
  if let Some(any_of) = o.get_mut("anyOf") {
    match any_of {
      Value::Array(variants) if !variants.is_empty() => {
        for v in variants.iter_mut() {
          if is_structured(v) {
            return err("object and array unions are unsupported");
          }
          strict_node(v)?;
        }
      }
      _ => return err("anyOf must contain at least one schema"),
    }
  }
  if let Some(items) = o.get_mut("items") {
    if items.is_array() {
      return err("tuple schemas are unsupported");
    }
    strict_node(items)?;
  }
  let is_object = o.get("type") == Some(&Value::String("object".into()));
  if o.contains_key("properties") && !is_object {
    return err("properties require type object");
  }
  if !is_object {
    return Ok(());
  }
  if o.get("additionalProperties").is_some_and(|v| *v != Value::Bool(false)) {
    return err("schema-valued or true additionalProperties is unsupported");
  }
  if o.get("properties").is_some_and(|p| !p.is_object()) {
    return err("object properties must be a schema map");
  }
  let required: Option<Vec<String>> = match o.get("required") {
    None => None,
    Some(Value::Array(items)) if items.iter().all(Value::is_string) => {
      Some(items.iter().filter_map(|v| v.as_str().map(String::from)).collect())
    }
    Some(_) => return err("object required must be a string array"),
  };
  let required: HashSet<String> = required.unwrap_or_default().into_iter().collect();
  let names: Vec<String> = o
    .get("properties")
    .and_then(Value::as_object)
    .map(|p| p.keys().cloned().collect())
    .unwrap_or_default();
  if required.iter().any(|r| !names.contains(r)) {
    return err("required contains an unknown property");
  }
  if let Some(Value::Object(props)) = o.get_mut("properties") {
    for (key, property) in props.iter_mut() {
      strict_node(property)?;
      if !required.contains(key) && !allows_null(property) {
        let inner = property.take();
        *property = json!({ "anyOf": [inner, { "type": "null" }] });
      }
    }
  }
  o.insert(
    "required".into(),
    Value::Array(names.into_iter().map(Value::String).collect()),
  );
  o.insert("additionalProperties".into(), Value::Bool(false));
  Ok(())
}

/// Whether a tool's JSON-schema constrained sampling applies: `Some(true)` when the schema can be
/// made strict on an endpoint with strict mode; `None` when it does not apply (or is only
/// preferred); an error when it is required but impossible.
pub fn resolve_json_schema_strict(tool: &ToolDef, supports_strict_mode: bool) -> Result<Option<bool>, String> {
  let Some(config) = tool.constrained_sampling.as_ref() else {
    return Ok(None);
  };
  if config.get("type") != Some(&Value::String("json_schema".into())) {
    return Ok(None);
  }
  let required = config.get("strict") == Some(&Value::String("require".into()));
  if supports_strict_mode {
    return match make_strict_json_schema(&tool.parameters) {
      Ok(_) => Ok(Some(true)),
      Err(_) if !required => Ok(None),
      Err(e) => Err(format!(
        "Tool \"{}\" requires JSON-schema constrained sampling, but {}.",
        tool.name, e.0
      )),
    };
  }
  if required {
    return Err(format!(
      "Tool \"{}\" requires JSON-schema constrained sampling, but strict tools are unsupported.",
      tool.name
    ));
  }
  Ok(None)
}

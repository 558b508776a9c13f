//! TEMPORARY stub until the TypeBox-compatible validator lands.
use super::value::Value;

pub struct Schema {
  root: Value,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum SchemaError {
  #[error("bad schema")]
  Bad,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Issue {
  pub keyword: String,
  pub instance_path: String,
  pub params_type: Option<String>,
  pub params_type_list: Option<Vec<String>>,
  pub required_properties: Option<Vec<String>>,
  pub message: String,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum ConvertError {
  #[error("Invalid regular expression: /{pattern}/")]
  InvalidRegex { pattern: String },
}

impl Schema {
  pub fn compile(schema: &Value) -> Result<Schema, SchemaError> {
    Ok(Schema { root: schema.clone() })
  }
  pub fn check(&self, value: &Value) -> bool {
    self.errors(value, 1).is_empty()
  }
  pub fn errors(&self, value: &Value, limit: usize) -> Vec<Issue> {
    let mut out = vec![];
    walk(&self.root, value, "", &mut out);
    out.truncate(limit);
    out
  }
  pub fn convert(&self, value: Value) -> Result<Value, ConvertError> {
    Ok(value)
  }
}

fn walk(s: &Value, v: &Value, path: &str, out: &mut Vec<Issue>) {
  let issue = |kw: &str, ty: Option<&str>, req: Option<Vec<String>>, msg: String| Issue {
    keyword: kw.into(),
    instance_path: path.into(),
    params_type: ty.map(String::from),
    params_type_list: None,
    required_properties: req,
    message: msg,
  };
  if let Some(Value::String(t)) = s.get_key("type") {
    let ok = match t.as_str() {
      "object" => v.is_record(),
      "array" => matches!(v, Value::Array(_)),
      "string" => matches!(v, Value::String(_)),
      "number" => matches!(v, Value::Number(n) if n.is_finite()),
      "boolean" => matches!(v, Value::Bool(_)),
      "integer" => matches!(v, Value::Number(n) if n.is_finite() && n.trunc() == *n),
      "null" => matches!(v, Value::Null),
      _ => true,
    };
    if !ok {
      out.push(issue("type", Some(t), None, format!("must be {t}")));
      return;
    }
  }
  if let Value::Object(o) = v {
    if let Some(Value::Array(req)) = s.get_key("required") {
      let missing: Vec<String> = req
        .iter()
        .filter_map(|r| r.as_str())
        .filter(|r| !o.has(r))
        .map(String::from)
        .collect();
      if !missing.is_empty() {
        out.push(issue(
          "required",
          None,
          Some(missing.clone()),
          format!("must have required properties {}", missing.join(", ")),
        ));
      }
    }
    if let Some(Value::Object(props)) = s.get_key("properties") {
      for (k, ps) in props.iter() {
        if let Some(pv) = o.get(k) {
          if !pv.is_undefined() {
            walk(ps, pv, &format!("{path}/{k}"), out);
          }
        }
      }
    }
  }
}

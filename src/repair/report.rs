//! Issue summaries, fingerprints and retry messages (spec §8).

use super::jsnum::number_to_string;
use super::json;
use super::schema::Issue;
use super::text::{cmp_utf16, to_utf16, utf16_len, utf16_prefix};
use super::value::{Opaque, Value};

/// `<path or (root)>|<keyword>|<detail>`.
pub fn describe(issue: &Issue) -> String {
  let path = if issue.instance_path.is_empty() {
    "(root)"
  } else {
    &issue.instance_path
  };
  let detail = if let Some(t) = &issue.params_type {
    t.clone()
  } else if let Some(req) = &issue.required_properties {
    req.join(",")
  } else {
    String::new()
  };
  format!("{path}|{}|{detail}", issue.keyword)
}

pub fn issue_summary(issues: &[Issue]) -> String {
  issues.iter().map(describe).collect::<Vec<_>>().join("; ")
}

/// FNV-1a (32-bit) over UTF-16 code units, as 8 lowercase hex digits.
pub fn fnv1a_utf16(text: &str) -> String {
  let mut h: u32 = 0x811c_9dc5;
  for unit in to_utf16(text) {
    h = (h ^ unit as u32).wrapping_mul(0x0100_0193);
  }
  format!("{h:08x}")
}

pub fn fingerprint(tool_name: &str, issues: &[Issue]) -> String {
  let mut d: Vec<String> = issues.iter().map(describe).collect();
  d.sort_by(|a, b| cmp_utf16(a, b));
  fnv1a_utf16(&format!("{tool_name}::{}", d.join(";")))
}

/// JS `String(v)` for the values the retry message may need to print.
pub fn js_string(v: &Value) -> String {
  match v {
    Value::Undefined => "undefined".into(),
    Value::Null => "null".into(),
    Value::Bool(b) => b.to_string(),
    Value::Number(n) => number_to_string(*n),
    Value::String(s) => s.clone(),
    Value::Array(a) => a
      .iter()
      .map(|x| if x.is_nullish() { String::new() } else { js_string(x) })
      .collect::<Vec<_>>()
      .join(","),
    Value::Object(_) | Value::Opaque(Opaque::Unrepresentable) => "[object Object]".into(),
    Value::Opaque(Opaque::BigInt(d)) => d.clone(),
    Value::Opaque(Opaque::Symbol) => "Symbol()".into(),
    Value::Opaque(Opaque::Function) => "function () {}".into(),
  }
}

pub fn retry_message(tool_name: &str, issues: &[Issue], received: &Value) -> String {
  let mut out = format!("Invalid input for tool \"{tool_name}\". Fix these issues and retry:\n");
  for issue in issues.iter().take(8) {
    let path = if issue.instance_path.is_empty() {
      "(root)"
    } else {
      &issue.instance_path
    };
    let message = if issue.message.is_empty() {
      &issue.keyword
    } else {
      &issue.message
    };
    out.push_str("  • ");
    out.push_str(path);
    out.push_str(": ");
    out.push_str(message);
    out.push('\n');
  }
  let mut text = match json::stringify(received) {
    Ok(Some(s)) => s,
    _ => js_string(received),
  };
  if utf16_len(&text) > 300 {
    text = utf16_prefix(&text, 300);
    text.push('…');
  }
  out.push_str("Received: ");
  out.push_str(&text);
  out
}

#[cfg(test)]
mod tests {
  use super::*;

  fn issue(path: &str, keyword: &str, ty: Option<&str>, req: Option<&[&str]>) -> Issue {
    Issue {
      keyword: keyword.into(),
      instance_path: path.into(),
      params_type: ty.map(String::from),
      params_type_list: None,
      required_properties: req.map(|r| r.iter().map(|s| s.to_string()).collect()),
      message: String::new(),
    }
  }

  #[test]
  fn fingerprints_match_the_reference_examples() {
    assert_eq!(
      fingerprint("read", &[issue("", "required", None, Some(&["path"]))]),
      "c888829a"
    );
    assert_eq!(
      fingerprint("read", &[issue("/offset", "type", Some("number"), None)]),
      "601455cc"
    );
    assert_eq!(
      fingerprint("read", &[issue("", "type", Some("object"), None)]),
      "3c4599d5"
    );
  }

  #[test]
  fn received_is_cut_at_300_units() {
    let long = Value::str("x".repeat(400));
    let m = retry_message("t", &[issue("", "type", Some("object"), None)], &long);
    let received = m.split("Received: ").nth(1).unwrap();
    assert_eq!(utf16_len(received), 301);
    assert!(received.ends_with('…'));
  }
}

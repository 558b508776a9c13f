//! Validate-then-repair at the strict validator's failure sites (spec §6).

use std::borrow::Cow;

use super::host::Host;
use super::jsnum::number_to_string;
use super::json;
use super::preprocess::StructuralImpl;
use super::report;
use super::schema::{ConvertError, Issue, RegexFault, Schema, SchemaFault, STACK_OVERFLOW_MESSAGE};
use super::tables::fold_flat_edit_fields;
use super::text::js_trim;
use super::value::{Obj, Value};
use super::RepairError;

/// The reference keeps the first 32 validator errors, but TypeBox 1.1.38's `Value.Errors` stops at
/// its `maxErrors` setting (8 by default), so 8 is what is ever seen.
pub const MAX_ISSUES: usize = 8;
const MAX_ISSUE_PASSES: usize = 3;

/// Replace `[text](http(s)://text)` by `text`; any other markdown link stays (spec §5.5).
pub fn unwrap_markdown_auto_links(s: &str) -> Cow<'_, str> {
  if !s.contains("](http") {
    return Cow::Borrowed(s);
  }
  let mut out = String::with_capacity(s.len());
  let mut rest = s;
  while let Some(open) = rest.find('[') {
    out.push_str(&rest[..open]);
    let after = &rest[open + 1..];
    match match_link(after) {
      Some((text, url, consumed)) => {
        let bare = url
          .strip_prefix("https://")
          .or_else(|| url.strip_prefix("http://"))
          .unwrap_or(url);
        if bare == text {
          out.push_str(text);
        } else {
          out.push_str(&rest[open..open + 1 + consumed]);
        }
        rest = &after[consumed..];
      }
      None => {
        out.push('[');
        rest = after;
      }
    }
  }
  out.push_str(rest);
  if out == s {
    Cow::Borrowed(s)
  } else {
    Cow::Owned(out)
  }
}

/// Match `([^\]\n]+)\]\((https?://[^)\s]+)\)` at the start of `s`; returns (text, url, bytes).
fn match_link(s: &str) -> Option<(&str, &str, usize)> {
  let close = s.find([']', '\n'])?;
  if close == 0 || s.as_bytes()[close] != b']' {
    return None;
  }
  let text = &s[..close];
  let tail = s[close + 1..].strip_prefix('(')?;
  let scheme = if tail.starts_with("https://") {
    8
  } else if tail.starts_with("http://") {
    7
  } else {
    return None;
  };
  let end = tail[scheme..].find(|c: char| c == ')' || c.is_whitespace_js())? + scheme;
  if end == scheme || tail.as_bytes()[end] != b')' {
    return None;
  }
  let url = &tail[..end];
  Some((text, url, close + 2 + end + 1))
}

trait JsWhitespace {
  fn is_whitespace_js(&self) -> bool;
}
impl JsWhitespace for char {
  fn is_whitespace_js(&self) -> bool {
    super::text::is_js_whitespace(*self)
  }
}

#[derive(Clone, Debug, PartialEq)]
pub struct RootString {
  pub field: String,
  pub wrap_in_array: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct LegacyStructural {
  pub name: String,
  pub imp: StructuralImpl,
}

/// The legacy `ToolRepairConfig`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LegacyConfig {
  pub field_aliases: Vec<(String, Vec<String>)>,
  pub root_string: Option<RootString>,
  pub path_fields: Vec<String>,
  pub structural: Vec<LegacyStructural>,
}

impl LegacyConfig {
  fn aliases_for(&self, key: &str) -> Option<&[String]> {
    self
      .field_aliases
      .iter()
      .find(|(k, _)| k == key)
      .map(|(_, v)| v.as_slice())
  }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
  Valid,
  Repaired,
  Unrepairable,
}

impl Outcome {
  pub fn as_str(self) -> &'static str {
    match self {
      Outcome::Valid => "valid",
      Outcome::Repaired => "repaired",
      Outcome::Unrepairable => "unrepairable",
    }
  }
}

pub struct SchemaRepair {
  pub outcome: Outcome,
  /// `None`: the input value itself.
  pub args: Option<Value>,
  pub changes: Vec<(String, String)>,
  pub issue_summary: Option<String>,
  pub fingerprint: Option<String>,
  pub retry_message: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
enum Seg {
  Key(String),
  Num(f64),
}

fn parse_pointer(pointer: &str) -> Vec<Seg> {
  if pointer.is_empty() || pointer == "/" {
    return vec![];
  }
  pointer
    .split('/')
    .skip(1)
    .map(|s| {
      let d = if s.contains('~') {
        s.replace("~1", "/").replace("~0", "~")
      } else {
        s.to_string()
      };
      if !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()) {
        Seg::Num(d.parse::<f64>().unwrap_or(f64::NAN))
      } else {
        Seg::Key(d)
      }
    })
    .collect()
}

fn seg_key(seg: &Seg) -> String {
  match seg {
    Seg::Key(k) => k.clone(),
    Seg::Num(n) => number_to_string(*n),
  }
}

fn child<'v>(v: &'v Value, seg: &Seg) -> Option<&'v Value> {
  match (v, seg) {
    (Value::Array(a), Seg::Num(n)) if *n >= 0.0 && (*n as usize as f64) == *n => a.get(*n as usize),
    (Value::Array(_), Seg::Key(k)) => v.get_key(k),
    (Value::Object(o), s) => o.get(&seg_key(s)),
    _ => None,
  }
}

fn child_mut<'v>(v: &'v mut Value, seg: &Seg) -> Option<&'v mut Value> {
  match (v, seg) {
    (Value::Array(a), Seg::Num(n)) if *n >= 0.0 && (*n as usize as f64) == *n => a.get_mut(*n as usize),
    (Value::Object(o), s) => o.get_mut(&seg_key(s)),
    _ => None,
  }
}

fn resolve<'v>(root: &'v Value, path: &[Seg]) -> Option<&'v Value> {
  let mut cur = root;
  for s in path {
    cur = child(cur, s)?;
  }
  Some(cur)
}

fn resolve_mut<'v>(root: &'v mut Value, path: &[Seg]) -> Option<&'v mut Value> {
  let mut cur = root;
  for s in path {
    cur = child_mut(cur, s)?;
  }
  Some(cur)
}

struct Site {
  parent: Vec<Seg>,
  key: Seg,
  expected: Option<String>,
}

fn collect_sites(issues: &[Issue], value: &Value) -> Vec<Site> {
  let mut sites = Vec::new();
  let mut seen: Vec<String> = Vec::new();
  for issue in issues {
    if issue.keyword == "required" {
      let path = parse_pointer(&issue.instance_path);
      if !matches!(resolve(value, &path), Some(Value::Object(_))) {
        continue;
      }
      let Some(missing) = &issue.required_properties else {
        continue;
      };
      for key in missing {
        let dedup = format!("{}::{key}", issue.instance_path);
        if seen.contains(&dedup) {
          continue;
        }
        seen.push(dedup);
        sites.push(Site {
          parent: path.clone(),
          key: Seg::Key(key.clone()),
          expected: None,
        });
      }
      continue;
    }
    let mut segs = parse_pointer(&issue.instance_path);
    let Some(key) = segs.pop() else { continue };
    if !matches!(resolve(value, &segs), Some(Value::Object(_) | Value::Array(_))) {
      continue;
    }
    if seen.contains(&issue.instance_path) {
      continue;
    }
    seen.push(issue.instance_path.clone());
    sites.push(Site {
      parent: segs,
      key,
      expected: issue.params_type.clone(),
    });
  }
  sites
}

fn parse_json_if(text: &str, open: char, close: char) -> Option<Value> {
  let t = js_trim(text);
  if !t.starts_with(open) || !t.ends_with(close) {
    return None;
  }
  json::parse(t).ok()
}

/// Apply the first issue rule that fires at a site; returns (rule, note).
fn apply_rules(root: &mut Value, site: &Site, tool: &str, config: &LegacyConfig) -> Option<(&'static str, String)> {
  let expected = site.expected.as_deref();
  let parent = resolve_mut(root, &site.parent)?;
  // Rules 1-3: string keys on records only.
  if let (Seg::Key(key), Value::Object(rec)) = (&site.key, &mut *parent) {
    if let Some(note) = rename_aliased_field(rec, key, tool, config) {
      return Some(("renameAliasedField", note));
    }
    if let Some(v) = rec.get(key) {
      if v.is_nullish() {
        let kind = if matches!(v, Value::Null) { "null" } else { "undefined" };
        rec.remove(key);
        return Some((
          "dropNullOrUndefinedField",
          format!("Dropped {kind} `{key}` from tool \"{tool}\". Optional fields can be omitted entirely rather than sent as {kind}."),
        ));
      }
    }
    if expected == Some("array") && matches!(rec.get(key), Some(Value::Object(o)) if o.is_empty()) {
      rec.remove(key);
      return Some((
        "dropEmptyObjectPlaceholder",
        format!("Dropped empty `{{}}` placeholder from `{key}` for tool \"{tool}\". Send an actual array (or omit the field) next time."),
      ));
    }
  }
  let key_text = seg_key(&site.key);
  let slot = child_mut(parent, &site.key)?;
  let Value::String(s) = &*slot else { return None };
  match expected {
    Some("array") => {
      if let Some(parsed @ Value::Array(_)) = parse_json_if(s, '[', ']') {
        *slot = parsed;
        return Some((
          "parseJsonStringifiedArray",
          format!("Parsed JSON-stringified array for `{key_text}` in tool \"{tool}\". Send the array literal directly (e.g. `[\"a\",\"b\"]`) next time, not a string."),
        ));
      }
      let wrapped = Value::Array(vec![slot.clone()]);
      *slot = wrapped;
      Some((
        "wrapBareStringAsArray",
        format!("Wrapped your bare string in a single-element array for `{key_text}` in tool \"{tool}\". Send an array (e.g. `[\"foo\"]`) next time, not a single string."),
      ))
    }
    Some("object") => {
      if let Some(parsed @ Value::Object(_)) = parse_json_if(s, '{', '}') {
        *slot = parsed;
        return Some((
          "parseJsonStringifiedObject",
          format!("Parsed JSON-stringified object for `{key_text}` in tool \"{tool}\". Send the object literal directly next time, not a string."),
        ));
      }
      None
    }
    _ => None,
  }
}

fn rename_aliased_field(rec: &mut Obj, key: &str, tool: &str, config: &LegacyConfig) -> Option<String> {
  if matches!(rec.get(key), Some(v) if !v.is_nullish()) {
    return None;
  }
  let aliases = config.aliases_for(key)?;
  for alias in aliases {
    let Some(v) = rec.get(alias) else { continue };
    if v.is_nullish() || matches!(v, Value::String(s) if s.is_empty()) {
      continue;
    }
    let v = v.clone();
    rec.set(key, v);
    rec.remove(alias);
    return Some(format!(
      "Renamed `{alias}` to `{key}` for tool \"{tool}\". Use `{key}` next time — `{alias}` is not a valid field for this tool."
    ));
  }
  None
}

/// Where JS throws while evaluating the schema. A schema regular expression that does not
/// compile, reached by the value: its SyntaxError, payload `flags NUL source NUL reason` (the
/// facade rebuilds V8's error). A schema that recurses without end: the stack-overflow RangeError.
fn regex_error(f: SchemaFault) -> RepairError {
  match f {
    SchemaFault::Regex(f) => RepairError::InvalidRegex(format!("{}\u{0}{}\u{0}{}", f.flags, f.source, f.reason)),
    SchemaFault::TooDeep => RepairError::RangeError(STACK_OVERFLOW_MESSAGE.into()),
  }
}

/// The schema-repair stage. `input` is the preprocessed value.
pub fn repair_schema_input(
  tool: &str,
  schema: &Schema,
  input: &Value,
  config: &LegacyConfig,
  host: &mut dyn Host,
) -> Result<SchemaRepair, RepairError> {
  // Stage 1 works on `structuredClone(input)`: a function or symbol a preprocessor put there throws.
  if input.contains_uncloneable() {
    return Err(RepairError::DataClone);
  }
  let mut changes: Vec<(String, String)> = Vec::new();
  let unwrap_path_fields = |target: &mut Obj, changes: &mut Vec<(String, String)>| {
    for field in &config.path_fields {
      let Some(Value::String(old)) = target.get(field) else {
        continue;
      };
      let Cow::Owned(new) = unwrap_markdown_auto_links(old) else {
        continue;
      };
      let note = format!(
        "Unwrapped a markdown auto-link in `{field}` for tool \"{tool}\" (`{old}` -> `{new}`). Send plain paths, not markdown links."
      );
      target.set(field.clone(), Value::String(new));
      changes.push(("unwrapMarkdownAutoLink".into(), note));
    }
  };
  // Path-field unwrapping first; the copy is only made when it changes something.
  let needs_unwrap = match input {
    Value::Object(o) => config
      .path_fields
      .iter()
      .any(|f| matches!(o.get(f), Some(Value::String(s)) if matches!(unwrap_markdown_auto_links(s), Cow::Owned(_)))),
    _ => false,
  };
  if !needs_unwrap && schema.try_check(input).map_err(regex_error)? {
    return Ok(SchemaRepair {
      outcome: Outcome::Valid,
      args: None,
      changes,
      issue_summary: None,
      fingerprint: None,
      retry_message: None,
    });
  }
  let mut current = input.clone();
  if let Value::Object(o) = &mut current {
    unwrap_path_fields(o, &mut changes);
  }
  if schema.try_check(&current).map_err(regex_error)? {
    let repaired = !changes.is_empty();
    return Ok(SchemaRepair {
      outcome: if repaired { Outcome::Repaired } else { Outcome::Valid },
      args: if repaired { Some(current) } else { None },
      changes,
      issue_summary: None,
      fingerprint: None,
      retry_message: None,
    });
  }
  // The original failure shape; summary and fingerprint are only rendered for results that carry them.
  let original = schema.try_errors(&current, MAX_ISSUES).map_err(regex_error)?;
  let unrepairable = |original: &[Issue]| SchemaRepair {
    outcome: Outcome::Unrepairable,
    args: None,
    changes: vec![],
    issue_summary: Some(report::issue_summary(original)),
    fingerprint: Some(report::fingerprint(tool, original)),
    retry_message: Some(report::retry_message(tool, original, input)),
  };

  if let Value::String(s) = &current {
    let t = js_trim(s);
    let parsed = if t.starts_with('{') && t.ends_with('}') {
      json::parse(t).ok()
    } else {
      None
    };
    if let Some(p @ Value::Object(_)) = parsed {
      current = p;
      changes.push((
        "parseJsonStringifiedRootObject".into(),
        format!("Parsed your JSON-stringified arguments for tool \"{tool}\". Send the arguments as a JSON object next time, not a string."),
      ));
    } else if let Some(rs) = &config.root_string {
      let inner = if rs.wrap_in_array {
        Value::Array(vec![current.clone()])
      } else {
        current.clone()
      };
      let mut o = Obj::new();
      o.set(rs.field.clone(), inner);
      current = Value::Object(o);
      let shape = if rs.wrap_in_array { "[\"...\"]" } else { "\"...\"" };
      changes.push((
        "wrapRootStringAsObject".into(),
        format!(
          "Wrapped your bare string as `{{{}: {shape}}}` for tool \"{tool}\". Call this tool with an object, not a bare string, next time.",
          rs.field
        ),
      ));
    }
    if let Value::Object(o) = &mut current {
      unwrap_path_fields(o, &mut changes);
    }
  }
  if !current.is_record() {
    return Ok(unrepairable(&original));
  }

  for (index, st) in config.structural.iter().enumerate() {
    let note = match st.imp {
      StructuralImpl::FoldFlatEditFields => match &mut current {
        Value::Object(o) => fold_flat_edit_fields(o, tool),
        _ => None,
      },
      StructuralImpl::Host => {
        let (note, after) = host.legacy_structural(index, &current, tool)?;
        current = after;
        note
      }
    };
    if let Some(note) = note {
      changes.push((st.name.clone(), note));
    }
  }

  let mut pass = 0;
  while pass < MAX_ISSUE_PASSES && !schema.try_check(&current).map_err(regex_error)? {
    let issues = schema.try_errors(&current, MAX_ISSUES).map_err(regex_error)?;
    let sites = collect_sites(&issues, &current);
    let mut fired = false;
    for site in &sites {
      if let Some((rule, note)) = apply_rules(&mut current, site, tool, config) {
        changes.push((rule.into(), note));
        fired = true;
      }
    }
    if !fired {
      break;
    }
    pass += 1;
  }

  let probe = schema.convert(current).map_err(|e| match e {
    ConvertError::InvalidRegex { source, flags, reason } => {
      regex_error(SchemaFault::Regex(RegexFault { source, flags, reason }))
    }
    ConvertError::TooDeep => regex_error(SchemaFault::TooDeep),
  })?;
  if schema.try_check(&probe).map_err(regex_error)? {
    if changes.is_empty() {
      return Ok(SchemaRepair {
        outcome: Outcome::Valid,
        args: None,
        changes,
        issue_summary: None,
        fingerprint: None,
        retry_message: None,
      });
    }
    return Ok(SchemaRepair {
      outcome: Outcome::Repaired,
      args: Some(probe),
      changes,
      issue_summary: Some(report::issue_summary(&original)),
      fingerprint: Some(report::fingerprint(tool, &original)),
      retry_message: None,
    });
  }
  Ok(unrepairable(&original))
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn markdown_auto_links() {
    assert_eq!(unwrap_markdown_auto_links("[notes.md](http://notes.md)"), "notes.md");
    assert_eq!(
      unwrap_markdown_auto_links("see [a.rs](https://a.rs) and [b](http://c)"),
      "see a.rs and [b](http://c)"
    );
    assert_eq!(
      unwrap_markdown_auto_links("[notes](http://example.com/notes.md)"),
      "[notes](http://example.com/notes.md)"
    );
    assert_eq!(
      unwrap_markdown_auto_links("[[x.md](http://x.md)"),
      "[[x.md](http://x.md)"
    );
    assert_eq!(unwrap_markdown_auto_links("[a\nb](http://a)"), "[a\nb](http://a)");
    assert_eq!(unwrap_markdown_auto_links("[x](http://x y)"), "[x](http://x y)");
  }

  #[test]
  fn endless_schema_recursion_throws_a_range_error() {
    // Fuzz target `pipeline`: the schema-repair stage's first Check on a schema that recurses
    // without end throws JS's RangeError (it used to overflow the native stack and abort).
    let schema = Schema::compile(&crate::repair::json::parse(r##"{"$ref":"#"}"##).unwrap()).unwrap();
    let input = crate::obj! { "path" => Value::str("a") };
    let r = repair_schema_input(
      "read",
      &schema,
      &input,
      &LegacyConfig::default(),
      &mut crate::repair::host::NoHost,
    );
    assert_eq!(r.err(), Some(RepairError::RangeError(STACK_OVERFLOW_MESSAGE.into())));
  }

  #[test]
  fn pointers_turn_digit_segments_into_numbers() {
    assert_eq!(
      parse_pointer("/a/0/b~1c"),
      vec![Seg::Key("a".into()), Seg::Num(0.0), Seg::Key("b/c".into())]
    );
  }
}

//! Selector-driven preprocessors (spec §5): aliases, field transforms, structural hooks.

use super::engine::unwrap_markdown_auto_links;
use super::host::Host;
use super::jsnum::{number_to_string, string_to_number};
use super::json;
use super::tables::fold_flat_edit_fields;
use super::text::js_trim;
use super::value::{Obj, Value};
use super::{Change, RepairError, Stage};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
  FilesystemPath,
  FilesystemPathArray,
  Glob,
  StringOrArray,
  Scalar,
  AnchorBleed,
  GrammarTokens,
}

impl FieldKind {
  pub fn parse(kind: &str) -> Option<FieldKind> {
    Some(match kind {
      "filesystem-path" => FieldKind::FilesystemPath,
      "filesystem-path-array" => FieldKind::FilesystemPathArray,
      "glob" => FieldKind::Glob,
      "string-or-array" => FieldKind::StringOrArray,
      "scalar" => FieldKind::Scalar,
      "anchor-bleed" => FieldKind::AnchorBleed,
      "grammar-tokens" => FieldKind::GrammarTokens,
      _ => return None,
    })
  }
  pub fn name(self) -> &'static str {
    match self {
      FieldKind::FilesystemPath => "filesystem-path",
      FieldKind::FilesystemPathArray => "filesystem-path-array",
      FieldKind::Glob => "glob",
      FieldKind::StringOrArray => "string-or-array",
      FieldKind::Scalar => "scalar",
      FieldKind::AnchorBleed => "anchor-bleed",
      FieldKind::GrammarTokens => "grammar-tokens",
    }
  }
  pub fn is_heuristic(self) -> bool {
    matches!(self, FieldKind::AnchorBleed | FieldKind::GrammarTokens)
  }
}

/// Who implements a structural preprocessor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StructuralImpl {
  /// The built-in edit fold, run natively.
  FoldFlatEditFields,
  /// A JS `apply` function, reached through the host.
  Host,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Preprocessor {
  Alias {
    selector: String,
    aliases: Vec<String>,
    /// `None` = the `accepts` key is absent/undefined.
    accepts: Option<String>,
    empty_equivalent_to_missing: bool,
    /// Decoded last segment of the selector, and the parent selector's segments (precomputed).
    canonical: String,
    parent_segments: Vec<String>,
  },
  Field {
    kind: FieldKind,
    selector: String,
    scalar_type: Option<String>,
    segments: Vec<String>,
  },
  Structural {
    selector: String,
    rule_id: String,
    imp: StructuralImpl,
    segments: Vec<String>,
  },
  /// An unrecognised kind: skipped silently.
  Ignored,
  /// An entry the reference cannot read (`null`, a non-string selector): its TypeError, raised
  /// when the loop reaches it.
  Throw(String),
}

impl Preprocessor {
  pub fn alias(
    selector: &str,
    aliases: Vec<String>,
    accepts: Option<String>,
    empty_equivalent_to_missing: bool,
  ) -> Self {
    let mut parts: Vec<&str> = selector.split('/').collect();
    let canonical = decode_segment(parts.pop().unwrap_or(""));
    let parent = parts.join("/");
    let parent_segments = selector_segments(if parent.is_empty() { "/" } else { &parent });
    Preprocessor::Alias {
      selector: selector.to_string(),
      aliases,
      accepts,
      empty_equivalent_to_missing,
      canonical,
      parent_segments,
    }
  }
  pub fn field(kind: FieldKind, selector: &str, scalar_type: Option<String>) -> Self {
    Preprocessor::Field {
      kind,
      selector: selector.to_string(),
      scalar_type,
      segments: selector_segments(selector),
    }
  }
  pub fn structural(selector: &str, rule_id: String, imp: StructuralImpl) -> Self {
    Preprocessor::Structural {
      selector: selector.to_string(),
      rule_id,
      imp,
      segments: selector_segments(selector),
    }
  }
}

/// How a heuristic preprocessor's model-family test resolves for this call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FamilyMatch {
  No,
  Yes,
  /// Stateful RegExps: ask the host each time, as the reference would call `.test`.
  AskHost,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Seg<'a> {
  Key(&'a str),
  Index(usize),
}

type Path<'a> = Vec<Seg<'a>>;

fn decode_segment(s: &str) -> String {
  if s.contains('~') {
    s.replace("~1", "/").replace("~0", "~")
  } else {
    s.to_string()
  }
}

fn get_at<'v>(root: &'v Value, path: &[Seg]) -> Option<&'v Value> {
  let mut cur = root;
  for seg in path {
    cur = match (seg, cur) {
      (Seg::Key(k), Value::Object(o)) => o.get(k)?,
      (Seg::Index(i), Value::Array(a)) => a.get(*i)?,
      _ => return None,
    };
  }
  Some(cur)
}

fn get_at_mut<'v>(root: &'v mut Value, path: &[Seg]) -> Option<&'v mut Value> {
  let mut cur = root;
  for seg in path {
    cur = match (seg, cur) {
      (Seg::Key(k), Value::Object(o)) => o.get_mut(k)?,
      (Seg::Index(i), Value::Array(a)) => a.get_mut(*i)?,
      _ => return None,
    };
  }
  Some(cur)
}

/// Write at a location: the root replaces the value; a record key is assigned (appended when new);
/// an array slot is replaced.
fn set_at(root: &mut Value, path: &[Seg], v: Value) {
  let Some((last, parent_path)) = path.split_last() else {
    *root = v;
    return;
  };
  match (get_at_mut(root, parent_path), last) {
    (Some(Value::Object(o)), Seg::Key(k)) => o.set(*k, v),
    (Some(Value::Array(a)), Seg::Index(i)) => {
      if let Some(slot) = a.get_mut(*i) {
        *slot = v;
      }
    }
    _ => {}
  }
}

/// Resolve a selector to location paths (spec §5.1).
fn locations<'s>(root: &Value, segments: &'s [String]) -> Vec<Path<'s>> {
  let mut locs: Vec<Path<'s>> = vec![vec![]];
  for seg in segments {
    let mut next = Vec::new();
    for loc in &locs {
      let Some(v) = get_at(root, loc) else { continue };
      if seg == "*" {
        if let Value::Array(a) = v {
          for i in 0..a.len() {
            let mut p = loc.clone();
            p.push(Seg::Index(i));
            next.push(p);
          }
        }
        continue;
      }
      if let Value::Object(_) = v {
        let mut p = loc.clone();
        p.push(Seg::Key(seg));
        next.push(p);
      }
    }
    locs = next;
  }
  locs
}

/// Split a selector into decoded segments (`""`/`"/"` → root → no segments).
fn selector_segments(selector: &str) -> Vec<String> {
  if selector.is_empty() || selector == "/" {
    return vec![];
  }
  selector.split('/').skip(1).map(decode_segment).collect()
}

fn accepts(v: &Value, expected: &Option<String>) -> bool {
  match expected.as_deref() {
    None => !v.is_nullish(),
    Some("array") => matches!(v, Value::Array(_)),
    Some("object") => matches!(v, Value::Object(_)),
    Some(t) => v.type_of() == t,
  }
}

fn strip_anchors(s: &str) -> String {
  s.trim_start_matches('^').trim_end_matches('$').to_string()
}

/// Does a string carry a leaked grammar token (what the reference's `GRAMMAR_TOKENS` regex can
/// match): a leading `<arg_key>`/`<arg_value>` or a trailing `</arg_key>`/`</arg_value>`?
pub fn has_grammar_token(s: &str) -> bool {
  s.starts_with("<arg_key>") || s.starts_with("<arg_value>") || s.ends_with("</arg_key>") || s.ends_with("</arg_value>")
}

/// The `grammar-tokens` cleanup of one string, or `None` when it carries no token.
///
/// Deliberate divergence: the reference trims every string it visits, so a token-free
/// `oldText: "    return x\n"` loses its indentation. Here token-free strings are left
/// byte-for-byte; when a token is present the reference's behaviour (strip, then trim) is kept.
pub fn clean_grammar_tokens(s: &str) -> Option<String> {
  if has_grammar_token(s) {
    Some(strip_grammar_tokens(s))
  } else {
    None
  }
}

/// Remove one leading `<arg_key>`/`<arg_value>` and one trailing close tag, then JS-trim.
pub fn strip_grammar_tokens(s: &str) -> String {
  let mut t = s;
  let mut start_removed = 0;
  for tok in ["<arg_key>", "<arg_value>"] {
    if let Some(rest) = t.strip_prefix(tok) {
      t = rest;
      start_removed = tok.len();
      break;
    }
  }
  // The global regex scans the original string: the closing alternative must match at the end and
  // must not overlap the removed opening token.
  for tok in ["</arg_key>", "</arg_value>"] {
    if s.len() >= start_removed + tok.len() && s.ends_with(tok) {
      t = &t[..t.len() - tok.len()];
      break;
    }
  }
  js_trim(t).to_string()
}

fn same_value(a: &Value, b: &Value) -> bool {
  match (a, b) {
    (Value::Number(x), Value::Number(y)) => {
      (x.is_nan() && y.is_nan()) || (x == y && x.is_sign_negative() == y.is_sign_negative())
    }
    (Value::Object(_) | Value::Array(_), _) => false,
    _ => a == b,
  }
}

/// `Object.is(next, current) || JSON.stringify(next) === JSON.stringify(current)`; a BigInt makes
/// `JSON.stringify` throw its TypeError, as in the reference.
fn unchanged(next: &Value, current: &Value) -> Result<bool, RepairError> {
  if same_value(next, current) {
    return Ok(true);
  }
  match (json::stringify(next), json::stringify(current)) {
    (Ok(a), Ok(b)) => Ok(a == b),
    (Err(json::StringifyError::BigInt), _) | (_, Err(json::StringifyError::BigInt)) => {
      Err(RepairError::TypeError("Do not know how to serialize a BigInt".into()))
    }
    _ => Ok(false),
  }
}

/// Does the value hold a BigInt anywhere (`JSON.stringify` would throw)?
fn contains_bigint(v: &Value) -> bool {
  match v {
    Value::Opaque(super::value::Opaque::BigInt(_)) => true,
    Value::Array(a) => a.iter().any(contains_bigint),
    Value::Object(o) => o.values().any(contains_bigint),
    _ => false,
  }
}

pub struct PreprocessOutput {
  pub value: Value,
  pub changes: Vec<Change>,
  pub observations: Vec<String>,
  /// Where the value holds a record the grammar-token cleanup rebuilt: the reference builds those
  /// with `Object.create(null)` (only `preprocessInput`'s direct result can tell). Paths are key or
  /// index segments.
  pub null_prototype: Vec<Vec<String>>,
}

pub struct PreprocessCall<'a> {
  pub tool_name: &'a str,
  pub preprocessors: &'a [Preprocessor],
  /// Per preprocessor index; only consulted for heuristic kinds. Empty = no model id.
  pub family_match: &'a [FamilyMatch],
  pub allow_valid_value_transforms: bool,
}

fn field_next(kind: FieldKind, scalar_type: Option<&str>, current: &Value) -> Option<Value> {
  Some(match (kind, current) {
    (FieldKind::FilesystemPath, Value::String(s)) => match unwrap_markdown_auto_links(s) {
      std::borrow::Cow::Owned(t) => Value::String(t),
      std::borrow::Cow::Borrowed(_) => return None,
    },
    (FieldKind::FilesystemPathArray, Value::Array(a)) => Value::Array(
      a.iter()
        .map(|item| match item {
          Value::String(s) => Value::String(unwrap_markdown_auto_links(s).into_owned()),
          other => other.clone(),
        })
        .collect(),
    ),
    (FieldKind::StringOrArray, Value::String(_)) => Value::Array(vec![current.clone()]),
    (FieldKind::Scalar, _) => match (scalar_type, current) {
      (Some("string"), Value::Number(n)) => Value::String(number_to_string(*n)),
      (Some("string"), Value::Bool(b)) => Value::str(if *b { "true" } else { "false" }),
      (Some("number"), Value::String(s)) if !js_trim(s).is_empty() => {
        let n = string_to_number(s);
        if !n.is_finite() {
          return None;
        }
        Value::Number(n)
      }
      (Some("boolean"), Value::String(s)) if s.eq_ignore_ascii_case("true") || s.eq_ignore_ascii_case("false") => {
        Value::Bool(s.eq_ignore_ascii_case("true"))
      }
      _ => return None,
    },
    (FieldKind::AnchorBleed, Value::String(s)) => Value::String(strip_anchors(s)),
    (FieldKind::GrammarTokens, Value::String(s)) => Value::String(clean_grammar_tokens(s)?),
    (FieldKind::GrammarTokens, Value::Object(o)) => {
      // Nothing carries a token: nothing would change (no record built, nothing serialised).
      let dirty = o
        .iter()
        .any(|(k, item)| has_grammar_token(k) || matches!(item, Value::String(s) if has_grammar_token(s)));
      if !dirty {
        // The reference still serialises its rebuilt record, which throws on a BigInt.
        if o.values().any(contains_bigint) {
          return Some(current.clone());
        }
        return None;
      }
      let mut rec = Obj::new();
      for (k, item) in o.iter() {
        let v = match item {
          Value::String(s) => match clean_grammar_tokens(s) {
            Some(t) => Value::String(t),
            None => item.clone(),
          },
          other => other.clone(),
        };
        rec.set(clean_grammar_tokens(k).unwrap_or_else(|| k.clone()), v);
      }
      Value::Object(rec)
    }
    _ => return None,
  })
}

fn field_note(kind: FieldKind, selector: &str, tool: &str) -> String {
  let at = if selector.is_empty() { "/" } else { selector };
  match kind {
    FieldKind::AnchorBleed => {
      format!("Stripped leaked regex anchors (`^` / `$`) from a configured value for tool \"{tool}\".")
    }
    FieldKind::GrammarTokens => format!(
      "Removed leaked grammar tokens (`<arg_key>`/`<arg_value>`) from configured keys or values for tool \"{tool}\"."
    ),
    FieldKind::FilesystemPath | FieldKind::FilesystemPathArray => format!(
      "Unwrapped a markdown auto-link at {at} for tool \"{tool}\". Send plain filesystem paths, not markdown links."
    ),
    other => format!(
      "Applied configured {} preprocessing at {at} for tool \"{tool}\".",
      other.name()
    ),
  }
}

fn field_rule(kind: FieldKind) -> String {
  match kind {
    FieldKind::AnchorBleed => "stripAnchorBleed".into(),
    FieldKind::GrammarTokens => "stripGrammarTokenLeak".into(),
    other => format!("preprocess.{}", other.name()),
  }
}

/// Run the preprocessors over an already-cloned value (spec §5).
pub fn preprocess(
  mut value: Value,
  call: &PreprocessCall,
  host: &mut dyn Host,
) -> Result<PreprocessOutput, RepairError> {
  let mut changes = Vec::new();
  let mut observations: Vec<String> = Vec::new();
  let mut null_prototype: Vec<Vec<String>> = Vec::new();
  let tool = call.tool_name;
  for (index, pre) in call.preprocessors.iter().enumerate() {
    match pre {
      Preprocessor::Ignored => {}
      Preprocessor::Throw(message) => return Err(RepairError::TypeError(message.clone())),
      Preprocessor::Alias {
        aliases,
        accepts: acc,
        empty_equivalent_to_missing,
        canonical,
        parent_segments,
        ..
      } => {
        let segments = parent_segments;
        for path in locations(&value, segments) {
          let Some(Value::Object(record)) = get_at_mut(&mut value, &path) else {
            continue;
          };
          let canonical_value = record.get(canonical);
          let replace_empty =
            *empty_equivalent_to_missing && matches!(canonical_value, Some(Value::String(s)) if s.is_empty());
          if matches!(canonical_value, Some(v) if !v.is_nullish()) && !replace_empty {
            continue;
          }
          for alias in aliases {
            let Some(v) = record.get(alias) else { continue };
            if !accepts(v, acc) || matches!(v, Value::String(s) if s.is_empty()) {
              continue;
            }
            // `record[canonical] = record[alias]; delete record[alias]`: when both name the same
            // key the net effect is a delete.
            let v = record.remove(alias).unwrap_or(Value::Undefined);
            if alias != canonical {
              record.set(canonical.clone(), v);
            }
            changes.push(Change::new(
              "preprocess.exact-alias",
              Stage::Preprocess,
              format!("Renamed `{alias}` to `{canonical}` for tool \"{tool}\". Use `{canonical}` next time."),
            ));
            break;
          }
        }
      }
      Preprocessor::Structural {
        rule_id, imp, segments, ..
      } => {
        for path in locations(&value, segments) {
          let current = get_at(&value, &path).cloned().unwrap_or(Value::Undefined);
          let container = matches!(current, Value::Object(_) | Value::Array(_));
          let (result, after) = match imp {
            StructuralImpl::FoldFlatEditFields => {
              let mut arg = current;
              let note = match &mut arg {
                Value::Object(o) => fold_flat_edit_fields(o, "edit"),
                _ => None,
              };
              (note.map(|note| (arg.clone(), note)), arg)
            }
            StructuralImpl::Host => {
              let out = host.structural(index, &current)?;
              (out.result, out.argument_after)
            }
          };
          // The function saw the live object: its in-place mutations land in the working value.
          if container {
            set_at(&mut value, &path, after);
          }
          if let Some((v, note)) = result {
            set_at(&mut value, &path, v);
            changes.push(Change::new(rule_id.clone(), Stage::Preprocess, note));
          }
        }
      }
      Preprocessor::Field {
        kind,
        selector,
        scalar_type,
        segments,
      } => {
        let heuristic = kind.is_heuristic();
        if heuristic {
          let m = call.family_match.get(index).copied().unwrap_or(FamilyMatch::No);
          let matched = match m {
            FamilyMatch::No => false,
            FamilyMatch::Yes => true,
            FamilyMatch::AskHost => host.model_matches(index)?,
          };
          if !matched {
            continue;
          }
        }
        for path in locations(&value, segments) {
          let current = get_at(&value, &path).unwrap_or(&Value::Undefined);
          let Some(next) = field_next(*kind, scalar_type.as_deref(), current) else {
            continue;
          };
          if unchanged(&next, current)? {
            continue;
          }
          let rule = field_rule(*kind);
          if heuristic && !call.allow_valid_value_transforms {
            if !observations.contains(&rule) {
              observations.push(rule);
            }
            continue;
          }
          if *kind == FieldKind::GrammarTokens && matches!(next, Value::Object(_)) {
            null_prototype.push(
              path
                .iter()
                .map(|seg| match seg {
                  Seg::Key(k) => k.to_string(),
                  Seg::Index(i) => i.to_string(),
                })
                .collect(),
            );
          }
          set_at(&mut value, &path, next);
          changes.push(Change::new(rule, Stage::Preprocess, field_note(*kind, selector, tool)));
        }
      }
    }
  }
  // Keep the paths that still lead to a record (later preprocessors may have replaced it).
  null_prototype.retain(|p| {
    let mut cur = &value;
    for seg in p {
      cur = match cur {
        Value::Object(o) => match o.get(seg) {
          Some(v) => v,
          None => return false,
        },
        Value::Array(a) => match seg.parse::<usize>().ok().and_then(|i| a.get(i)) {
          Some(v) => v,
          None => return false,
        },
        _ => return false,
      };
    }
    matches!(cur, Value::Object(_))
  });
  null_prototype.dedup();
  Ok(PreprocessOutput {
    value,
    changes,
    observations,
    null_prototype,
  })
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::obj;
  use crate::repair::host::NoHost;

  fn run(input: Value, pres: &[Preprocessor], fam: &[FamilyMatch], allow: bool) -> PreprocessOutput {
    let call = PreprocessCall {
      tool_name: "t",
      preprocessors: pres,
      family_match: fam,
      allow_valid_value_transforms: allow,
    };
    preprocess(input, &call, &mut NoHost).unwrap()
  }

  fn alias(sel: &str, aliases: &[&str], empty: bool) -> Preprocessor {
    Preprocessor::alias(
      sel,
      aliases.iter().map(|s| s.to_string()).collect(),
      Some("string".into()),
      empty,
    )
  }

  #[test]
  fn alias_renames_and_appends_key() {
    let out = run(
      obj! {"file_path" => Value::str("a"), "x" => Value::Null},
      &[alias("/path", &["file_path"], false)],
      &[],
      true,
    );
    assert_eq!(
      json::stringify(&out.value).unwrap().unwrap(),
      r#"{"x":null,"path":"a"}"#
    );
    assert_eq!(
      out.changes[0].note,
      "Renamed `file_path` to `path` for tool \"t\". Use `path` next time."
    );
  }

  #[test]
  fn alias_respects_empty_equivalent() {
    let input = obj! {"path" => Value::str(""), "file_path" => Value::str("b")};
    assert!(run(input.clone(), &[alias("/path", &["file_path"], false)], &[], true)
      .changes
      .is_empty());
    assert_eq!(
      run(input, &[alias("/path", &["file_path"], true)], &[], true)
        .changes
        .len(),
      1
    );
  }

  #[test]
  fn star_selectors_and_escapes() {
    let input = obj! {"edits" => Value::Array(vec![obj!{"old_string" => Value::str("a")}, Value::str("s")])};
    let out = run(input, &[alias("/edits/*/oldText", &["old_string"], false)], &[], true);
    assert_eq!(
      json::stringify(&out.value).unwrap().unwrap(),
      r#"{"edits":[{"oldText":"a"},"s"]}"#
    );
    let input = obj! {"a/b" => Value::str("^x$")};
    let pre = [Preprocessor::field(FieldKind::AnchorBleed, "/a~1b", None)];
    let out = run(input.clone(), &pre, &[FamilyMatch::Yes], true);
    assert_eq!(json::stringify(&out.value).unwrap().unwrap(), r#"{"a/b":"x"}"#);
    let out = run(input.clone(), &pre, &[FamilyMatch::Yes], false);
    assert_eq!(out.observations, ["stripAnchorBleed"]);
    assert!(out.changes.is_empty());
    let out = run(input, &pre, &[FamilyMatch::No], true);
    assert!(out.changes.is_empty() && out.observations.is_empty());
  }

  #[test]
  fn grammar_token_strip() {
    assert_eq!(strip_grammar_tokens("<arg_key>path</arg_key>"), "path");
    assert_eq!(strip_grammar_tokens("<arg_value> a.ts </arg_value>"), "a.ts");
    assert_eq!(strip_grammar_tokens("<arg_key>"), "");
    assert_eq!(strip_grammar_tokens("x</arg_value></arg_value>"), "x</arg_value>");
  }

  #[test]
  fn grammar_tokens_leave_token_free_content_alone() {
    // Deliberate divergence from the reference (which trims every visited string).
    assert_eq!(clean_grammar_tokens("    return x\n"), None);
    assert_eq!(clean_grammar_tokens("<arg_value> a.ts \n").as_deref(), Some("a.ts"));
    assert_eq!(clean_grammar_tokens("x </arg_value>").as_deref(), Some("x"));
    let field = |v: Value| field_next(FieldKind::GrammarTokens, None, &v);
    assert_eq!(field(Value::str("  x  ")), None);
    assert_eq!(field(obj! {" k " => Value::str(" v "), "n" => Value::Number(1.0)}), None);
    let cleaned = field(obj! {"<arg_key>k</arg_key>" => Value::str(" v "), "w" => Value::str("<arg_value>x")}).unwrap();
    assert_eq!(json::stringify(&cleaned).unwrap().unwrap(), r#"{"k":" v ","w":"x"}"#);
    let pre = [Preprocessor::field(FieldKind::GrammarTokens, "", None)];
    let input = obj! {"oldText" => Value::str("    return x\n"), "newText" => Value::str("    return y\n")};
    let out = run(input.clone(), &pre, &[FamilyMatch::Yes], true);
    assert_eq!(out.value, input);
    assert!(out.changes.is_empty() && out.observations.is_empty());
  }

  #[test]
  fn grammar_tokens_bigint_throws_like_json_stringify() {
    let pre = [Preprocessor::field(FieldKind::GrammarTokens, "", None)];
    let input = obj! {"" => Value::Opaque(crate::repair::value::Opaque::BigInt("10".into()))};
    let call = PreprocessCall {
      tool_name: "t",
      preprocessors: &pre,
      family_match: &[FamilyMatch::Yes],
      allow_valid_value_transforms: true,
    };
    assert_eq!(
      preprocess(input, &call, &mut NoHost).err(),
      Some(RepairError::TypeError("Do not know how to serialize a BigInt".into()))
    );
  }

  #[test]
  fn null_entries_throw_when_reached() {
    let pre = [Preprocessor::Throw("Cannot read properties of null (reading 'kind')".into())];
    let call = PreprocessCall {
      tool_name: "t",
      preprocessors: &pre,
      family_match: &[],
      allow_valid_value_transforms: true,
    };
    assert!(matches!(preprocess(Value::Null, &call, &mut NoHost), Err(RepairError::TypeError(_))));
  }

  #[test]
  fn scalar_number_uses_js_number() {
    let pre = [Preprocessor::field(FieldKind::Scalar, "/n", Some("number".into()))];
    let out = run(obj! {"n" => Value::str(" 0x10 ")}, &pre, &[], true);
    assert_eq!(json::stringify(&out.value).unwrap().unwrap(), r#"{"n":16}"#);
    assert_eq!(
      out.changes[0].note,
      "Applied configured scalar preprocessing at /n for tool \"t\"."
    );
  }
}

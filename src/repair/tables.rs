//! Built-in repair tables for pi's seven tools (spec §12) and the edit fold.
//!
//! The tables are kept as one JSON document in the same shape the JS facade sends for caller
//! configurations, so the core, its tests and the `/core` export all read the same data.

use super::value::{Obj, Value};

pub const PATH_ALIASES: [&str; 11] = [
  "file_path",
  "filePath",
  "filepath",
  "absolute_path",
  "absolutePath",
  "pathname",
  "file",
  "filename",
  "fileName",
  "target_file",
  "targetFile",
];
pub const OLD_TEXT_ALIASES: [&str; 12] = [
  "old_string",
  "oldString",
  "old_str",
  "oldStr",
  "old_text",
  "oldValue",
  "old_value",
  "oldContent",
  "old_content",
  "old",
  "from",
  "search",
];
pub const NEW_TEXT_ALIASES: [&str; 12] = [
  "new_string",
  "newString",
  "new_str",
  "newStr",
  "new_text",
  "newValue",
  "new_value",
  "newContent",
  "new_content",
  "new",
  "to",
  "replace",
];
const BASH_ALIASES: [&str; 7] = [
  "cmd",
  "script",
  "shell",
  "bash_command",
  "bashCommand",
  "command_line",
  "commandLine",
];
const CONTENT_ALIASES: [&str; 10] = [
  "text",
  "body",
  "data",
  "contents",
  "file_content",
  "fileContent",
  "file_text",
  "fileText",
  "new_content",
  "newContent",
];
const GREP_ALIASES: [&str; 7] = [
  "query",
  "regex",
  "search",
  "q",
  "expression",
  "search_pattern",
  "searchPattern",
];
const FIND_ALIASES: [&str; 8] = [
  "glob",
  "query",
  "name_pattern",
  "namePattern",
  "file_pattern",
  "filePattern",
  "search",
  "name",
];
const LS_EXTRA_ALIASES: [&str; 5] = ["directory", "dir", "folder", "directory_path", "directoryPath"];
const EDITS_ALIASES: [&str; 4] = ["changes", "replacements", "modifications", "operations"];

pub const BUILTIN_TOOL_NAMES: [&str; 7] = ["read", "bash", "edit", "write", "grep", "find", "ls"];

/// The edit fold (spec §12): move a flat old/new text pair into `edits: [{oldText, newText}]`.
/// Mutates `args` and returns the note, or `None` when it does not apply.
pub fn fold_flat_edit_fields(args: &mut Obj, tool_name: &str) -> Option<String> {
  if matches!(args.get("edits"), Some(Value::Array(a)) if !a.is_empty()) {
    return None;
  }
  let is_str = |k: &&str| matches!(args.get(k), Some(Value::String(_)));
  let old_key = std::iter::once("oldText").chain(OLD_TEXT_ALIASES).find(is_str)?;
  let new_key = std::iter::once("newText").chain(NEW_TEXT_ALIASES).find(is_str)?;
  let old = args.get(old_key).cloned().unwrap_or(Value::Undefined);
  let new = args.get(new_key).cloned().unwrap_or(Value::Undefined);
  let mut edit = Obj::new();
  edit.set("oldText", old);
  edit.set("newText", new);
  for k in ["oldText", "newText"]
    .iter()
    .chain(OLD_TEXT_ALIASES.iter())
    .chain(NEW_TEXT_ALIASES.iter())
  {
    args.remove(k);
  }
  args.set("edits", Value::Array(vec![Value::Object(edit)]));
  Some(format!(
    "Folded flat `{old_key}`/`{new_key}` fields into `edits: [{{oldText, newText}}]` for tool \"{tool_name}\". This tool takes an array of edit objects — send `edits` next time."
  ))
}

fn list(items: &[&str]) -> String {
  let quoted: Vec<String> = items.iter().map(|s| super::json::quote(s)).collect();
  format!("[{}]", quoted.join(","))
}

/// The built-in tables as JSON: `{ tool: { preprocessors: [...], legacyConfig: {...} } }`.
/// Structural entries say `"native": "foldFlatEditFields"`; model families are `{source, flags}`.
pub fn builtin_tables_json() -> String {
  let path = list(&PATH_ALIASES);
  let ls: Vec<&str> = LS_EXTRA_ALIASES.iter().chain(PATH_ALIASES.iter()).copied().collect();
  let ls = list(&ls);
  let anchor_fam =
    r#"[{"source":"kimi-k2","flags":"i"},{"source":"minimax","flags":"i"},{"source":"glm","flags":"i"}]"#;
  let grammar_fam = r#"[{"source":"glm","flags":"i"}]"#;
  let alias = |sel: &str, al: &str, empty: bool, acc: &str| {
    format!(
      r#"{{"kind":"alias","selector":"{sel}","aliases":{al},"accepts":"{acc}","emptyEquivalentToMissing":{empty}}}"#
    )
  };
  let fs = |sel: &str| format!(r#"{{"kind":"filesystem-path","selector":"{sel}"}}"#);
  let anchor = |sel: &str| format!(r#"{{"kind":"anchor-bleed","selector":"{sel}","modelFamilies":{anchor_fam}}}"#);
  let grammar = |sel: &str| format!(r#"{{"kind":"grammar-tokens","selector":"{sel}","modelFamilies":{grammar_fam}}}"#);
  let fold = r#"{"kind":"structural","selector":"","ruleId":"foldFlatEditFields","native":"foldFlatEditFields"}"#;
  let legacy_fold = r#"[{"name":"foldFlatEditFields","native":"foldFlatEditFields"}]"#;
  let entry =
    |pres: Vec<String>, legacy: String| format!(r#"{{"preprocessors":[{}],"legacyConfig":{legacy}}}"#, pres.join(","));
  let read = entry(
    vec![
      alias("/path", &path, true, "string"),
      fs("/path"),
      anchor("/path"),
      grammar(""),
    ],
    format!(r#"{{"fieldAliases":{{"path":{path}}},"rootString":{{"field":"path"}},"pathFields":["path"]}}"#),
  );
  let bash = entry(
    vec![alias("/command", &list(&BASH_ALIASES), false, "string"), grammar("")],
    format!(
      r#"{{"fieldAliases":{{"command":{}}},"rootString":{{"field":"command"}}}}"#,
      list(&BASH_ALIASES)
    ),
  );
  let edit = entry(
    vec![
      alias("/path", &path, true, "string"),
      alias("/edits", &list(&EDITS_ALIASES), false, "array"),
      alias("/edits/*/oldText", &list(&OLD_TEXT_ALIASES), false, "string"),
      alias("/edits/*/newText", &list(&NEW_TEXT_ALIASES), false, "string"),
      fs("/path"),
      anchor("/path"),
      grammar(""),
      grammar("/edits/*"),
      fold.to_string(),
    ],
    format!(
      r#"{{"fieldAliases":{{"path":{path},"edits":{},"oldText":{},"newText":{}}},"pathFields":["path"],"structural":{legacy_fold}}}"#,
      list(&EDITS_ALIASES),
      list(&OLD_TEXT_ALIASES),
      list(&NEW_TEXT_ALIASES)
    ),
  );
  let write = entry(
    vec![
      alias("/path", &path, true, "string"),
      alias("/content", &list(&CONTENT_ALIASES), false, "string"),
      fs("/path"),
      anchor("/path"),
      grammar(""),
    ],
    format!(
      r#"{{"fieldAliases":{{"path":{path},"content":{}}},"pathFields":["path"]}}"#,
      list(&CONTENT_ALIASES)
    ),
  );
  let grep = entry(
    vec![
      alias("/pattern", &list(&GREP_ALIASES), false, "string"),
      fs("/path"),
      anchor("/path"),
      grammar(""),
    ],
    format!(
      r#"{{"fieldAliases":{{"pattern":{}}},"rootString":{{"field":"pattern"}},"pathFields":["path"]}}"#,
      list(&GREP_ALIASES)
    ),
  );
  let find = entry(
    vec![
      alias("/pattern", &list(&FIND_ALIASES), false, "string"),
      fs("/path"),
      anchor("/path"),
      anchor("/pattern"),
      grammar(""),
    ],
    format!(
      r#"{{"fieldAliases":{{"pattern":{}}},"rootString":{{"field":"pattern"}},"pathFields":["path"]}}"#,
      list(&FIND_ALIASES)
    ),
  );
  let ls_entry = entry(
    vec![
      alias("/path", &ls, true, "string"),
      fs("/path"),
      anchor("/path"),
      grammar(""),
    ],
    format!(r#"{{"fieldAliases":{{"path":{ls}}},"rootString":{{"field":"path"}},"pathFields":["path"]}}"#),
  );
  format!(
    r#"{{"read":{read},"bash":{bash},"edit":{edit},"write":{write},"grep":{grep},"find":{find},"ls":{ls_entry}}}"#
  )
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::obj;
  use crate::repair::json;

  #[test]
  fn tables_are_valid_json_for_all_tools() {
    let v = json::parse(&builtin_tables_json()).unwrap();
    for tool in BUILTIN_TOOL_NAMES {
      let entry = v.get_key(tool).unwrap();
      assert!(entry.get_key("preprocessors").unwrap().as_array().unwrap().len() >= 2);
    }
  }

  #[test]
  fn fold_moves_aliased_pair_into_edits() {
    let mut v = obj! {"path" => Value::str("/x"), "old_string" => Value::str("a"), "new_string" => Value::str("b")};
    let note = fold_flat_edit_fields(v.as_obj_mut().unwrap(), "edit").unwrap();
    assert_eq!(
      json::stringify(&v).unwrap().unwrap(),
      r#"{"path":"/x","edits":[{"oldText":"a","newText":"b"}]}"#
    );
    assert!(note.starts_with("Folded flat `old_string`/`new_string` fields"));
    let mut v =
      obj! {"edits" => Value::Array(vec![Value::Null]), "oldText" => Value::str("a"), "newText" => Value::str("b")};
    assert!(fold_flat_edit_fields(v.as_obj_mut().unwrap(), "edit").is_none());
  }
}

//! History hygiene applied before a request is built (spec §2.2 and §2.4).
//!
//! Messages stay `serde_json::Value`s in Blade's `Message` shape so that key order and fields this
//! module does not know about survive untouched. The functions only read `role`, `tool_calls`,
//! `tool_call_id` and `reasoningContent`; kept messages are cloned as they are.
//!
//! JavaScript semantics that matter here and are reproduced on purpose:
//! - "has tool calls" means `tool_calls` is a non-empty array (`tool_calls?.length` is truthy),
//! - call ids are compared like a JS `Set` compares (SameValueZero), so `1` and `1.0` are the same id
//!   and two object-valued ids are never the same,
//! - a result only counts when its `tool_call_id` is truthy (`""`, `0`, `null`, `false` never match),
//! - "blank reasoning" uses the ECMAScript `String.prototype.trim` whitespace set.

use std::collections::HashSet;

use serde_json::Value;

/// Drops tool results that no assistant turn asked for, and assistant tool-call turns whose results
/// are incomplete, duplicated or ambiguous.
///
/// One pass over the list:
/// - a `tool` message that is not part of the run right after an assistant tool-call turn is dropped;
/// - any message that is not an assistant turn with a non-empty `tool_calls` array is kept;
/// - for an assistant tool-call turn, the run of `tool` messages right after it is examined. The
///   turn and the results answering its calls are kept only when the call ids are unique, every call
///   has exactly one answer and no answer is repeated. Otherwise the turn and the whole run go.
///   Results in the run that answer none of the calls are always dropped.
pub fn filter_orphan_tool_messages(messages: &[Value]) -> Vec<Value> {
  filter_orphan_tool_indices(messages)
    .into_iter()
    .map(|i| messages[i].clone())
    .collect()
}

/// The positions [`filter_orphan_tool_messages`] keeps (so callers can keep their own objects).
pub fn filter_orphan_tool_indices(messages: &[Value]) -> Vec<usize> {
  let mut kept = Vec::with_capacity(messages.len());
  let mut index = 0;
  while index < messages.len() {
    let message = &messages[index];
    if has_role(message, "tool") {
      index += 1;
      continue;
    }
    let Some(calls) = assistant_tool_calls(message) else {
      kept.push(index);
      index += 1;
      continue;
    };

    let run_end = messages[index + 1..]
      .iter()
      .position(|m| !has_role(m, "tool"))
      .map_or(messages.len(), |offset| index + 1 + offset);
    let run = &messages[index + 1..run_end];

    let expected: HashSet<IdKey> = calls
      .iter()
      .enumerate()
      .map(|(position, call)| IdKey::of(call.get("id"), position))
      .collect();
    let answers: Vec<(usize, &Value)> = run
      .iter()
      .enumerate()
      .map(|(offset, result)| (index + 1 + offset, result))
      .filter(|(_, result)| {
        let id = result.get("tool_call_id");
        // An object-valued result id can never equal a call id (distinct identities in JS).
        is_truthy(id) && expected.contains(&IdKey::of(id, usize::MAX))
      })
      .collect();
    let answered: HashSet<IdKey> = answers
      .iter()
      .map(|(_, result)| IdKey::of(result.get("tool_call_id"), usize::MAX))
      .collect();

    if expected.len() == calls.len() && answers.len() == expected.len() && answered.len() == expected.len() {
      kept.push(index);
      kept.extend(answers.into_iter().map(|(i, _)| i));
    }
    index = run_end;
  }
  kept
}

/// True when some assistant turn made tool calls without any (non-blank) reasoning. Providers reject
/// a thinking turn that continues such a call, so thinking is switched off for the request (§2.4).
///
/// A `reasoningContent` that is not a string counts as absent.
pub fn has_non_thinking_tool_history(messages: &[Value]) -> bool {
  messages.iter().any(|message| {
    assistant_tool_calls(message).is_some()
      && message
        .get("reasoningContent")
        .and_then(Value::as_str)
        .is_none_or(|text| js_trim(text).is_empty())
  })
}

fn has_role(message: &Value, role: &str) -> bool {
  message.get("role").and_then(Value::as_str) == Some(role)
}

/// The calls of an assistant message, when it has at least one.
fn assistant_tool_calls(message: &Value) -> Option<&Vec<Value>> {
  if !has_role(message, "assistant") {
    return None;
  }
  message
    .get("tool_calls")
    .and_then(Value::as_array)
    .filter(|calls| !calls.is_empty())
}

/// JS truthiness of an optional JSON value (`undefined` when absent).
fn is_truthy(value: Option<&Value>) -> bool {
  match value {
    None | Some(Value::Null) => false,
    Some(Value::Bool(flag)) => *flag,
    Some(Value::Number(number)) => number.as_f64().is_some_and(|n| n != 0.0 && !n.is_nan()),
    Some(Value::String(text)) => !text.is_empty(),
    Some(Value::Array(_)) | Some(Value::Object(_)) => true,
  }
}

/// A call id as a JS `Set` would see it (SameValueZero). Arrays and objects are compared by identity
/// in JS; values read from JSON never share an identity, so each one gets a private key.
#[derive(Hash, PartialEq, Eq)]
enum IdKey<'a> {
  Undefined,
  Null,
  Bool(bool),
  /// Bits of the f64 value, with -0 folded into +0.
  Number(u64),
  String(&'a str),
  Identity(usize),
}

impl<'a> IdKey<'a> {
  /// `identity` distinguishes object/array ids; pass `usize::MAX` for values that are only looked up.
  fn of(value: Option<&'a Value>, identity: usize) -> Self {
    match value {
      None => IdKey::Undefined,
      Some(Value::Null) => IdKey::Null,
      Some(Value::Bool(flag)) => IdKey::Bool(*flag),
      Some(Value::Number(number)) => {
        let n = number.as_f64().unwrap_or(f64::NAN);
        IdKey::Number(if n == 0.0 { 0 } else { n.to_bits() })
      }
      Some(Value::String(text)) => IdKey::String(text),
      Some(Value::Array(_)) | Some(Value::Object(_)) => IdKey::Identity(identity),
    }
  }
}

/// The whitespace set of ECMAScript `String.prototype.trim` (WhiteSpace and LineTerminator).
/// It differs from `char::is_whitespace`: U+FEFF is included, U+0085 is not.
pub(crate) fn is_js_whitespace(c: char) -> bool {
  matches!(
    c,
    '\u{0009}'..='\u{000D}'
      | '\u{0020}'
      | '\u{00A0}'
      | '\u{1680}'
      | '\u{2000}'..='\u{200A}'
      | '\u{2028}'
      | '\u{2029}'
      | '\u{202F}'
      | '\u{205F}'
      | '\u{3000}'
      | '\u{FEFF}'
  )
}

pub(crate) fn js_trim(text: &str) -> &str {
  text.trim_matches(is_js_whitespace)
}

#[cfg(test)]
mod tests {
  use super::*;
  use serde_json::json;

  fn user(text: &str) -> Value {
    json!({ "role": "user", "content": text })
  }

  fn assistant_calls(ids: &[&str]) -> Value {
    let calls: Vec<Value> = ids
      .iter()
      .map(|id| json!({ "id": id, "type": "function", "function": { "name": "read", "arguments": "{}" } }))
      .collect();
    json!({ "role": "assistant", "content": "", "tool_calls": calls })
  }

  fn result(id: &str) -> Value {
    json!({ "role": "tool", "tool_call_id": id, "name": "read", "content": format!("out {id}") })
  }

  #[test]
  fn complete_tool_round_is_kept_verbatim() {
    let history = vec![
      json!({ "role": "system", "content": "sys" }),
      user("hi"),
      assistant_calls(&["a", "b"]),
      result("b"),
      result("a"),
      json!({ "role": "assistant", "content": "done" }),
    ];
    assert_eq!(filter_orphan_tool_messages(&history), history);
  }

  #[test]
  fn empty_history_stays_empty() {
    assert!(filter_orphan_tool_messages(&[]).is_empty());
  }

  #[test]
  fn stray_tool_messages_are_dropped() {
    let history = vec![
      result("x"),
      user("hi"),
      result("y"),
      json!({ "role": "assistant", "content": "ok" }),
      result("z"),
    ];
    assert_eq!(
      filter_orphan_tool_messages(&history),
      vec![user("hi"), json!({ "role": "assistant", "content": "ok" })]
    );
  }

  #[test]
  fn tool_after_plain_assistant_is_dropped() {
    let plain = json!({ "role": "assistant", "content": "no calls", "tool_calls": [] });
    let history = vec![plain.clone(), result("a")];
    assert_eq!(filter_orphan_tool_messages(&history), vec![plain]);
  }

  #[test]
  fn missing_result_drops_turn_and_its_run() {
    let history = vec![user("q"), assistant_calls(&["a", "b"]), result("a"), user("next")];
    assert_eq!(filter_orphan_tool_messages(&history), vec![user("q"), user("next")]);
  }

  #[test]
  fn no_results_at_all_drops_turn() {
    let history = vec![user("q"), assistant_calls(&["a"]), user("again")];
    assert_eq!(filter_orphan_tool_messages(&history), vec![user("q"), user("again")]);
  }

  #[test]
  fn duplicate_call_ids_drop_turn() {
    let history = vec![assistant_calls(&["a", "a"]), result("a"), result("a"), user("u")];
    assert_eq!(filter_orphan_tool_messages(&history), vec![user("u")]);
  }

  #[test]
  fn duplicate_results_drop_turn() {
    let history = vec![assistant_calls(&["a", "b"]), result("a"), result("a"), user("u")];
    assert_eq!(filter_orphan_tool_messages(&history), vec![user("u")]);
    // Every call answered, plus one answer repeated: the counts no longer agree.
    let history = vec![assistant_calls(&["a", "b"]), result("a"), result("b"), result("a")];
    assert!(filter_orphan_tool_messages(&history).is_empty());
  }

  #[test]
  fn non_matching_results_in_run_are_dropped_but_turn_kept() {
    let history = vec![
      assistant_calls(&["a", "b"]),
      result("zz"),
      result("a"),
      result("other"),
      result("b"),
      user("u"),
    ];
    assert_eq!(
      filter_orphan_tool_messages(&history),
      vec![assistant_calls(&["a", "b"]), result("a"), result("b"), user("u")]
    );
  }

  #[test]
  fn results_after_an_interrupting_message_are_strays() {
    let history = vec![assistant_calls(&["a"]), user("interrupt"), result("a")];
    assert_eq!(filter_orphan_tool_messages(&history), vec![user("interrupt")]);
  }

  #[test]
  fn result_without_or_with_falsy_id_never_matches() {
    let no_id = json!({ "role": "tool", "content": "x" });
    let history = vec![assistant_calls(&["a"]), no_id];
    assert!(filter_orphan_tool_messages(&history).is_empty());

    // A call whose id is "" cannot be answered: the result's "" is falsy.
    let history = vec![assistant_calls(&[""]), result("")];
    assert!(filter_orphan_tool_messages(&history).is_empty());

    let zero_call = json!({ "role": "assistant", "tool_calls": [{ "id": 0 }] });
    let zero_result = json!({ "role": "tool", "tool_call_id": 0 });
    assert!(filter_orphan_tool_messages(&[zero_call, zero_result]).is_empty());
  }

  #[test]
  fn ids_compare_like_a_js_set() {
    let call = json!({ "role": "assistant", "tool_calls": [{ "id": 1 }] });
    let float_result = json!({ "role": "tool", "tool_call_id": 1.0 });
    assert_eq!(
      filter_orphan_tool_messages(&[call.clone(), float_result.clone()]),
      vec![call.clone(), float_result]
    );

    let string_result = json!({ "role": "tool", "tool_call_id": "1" });
    assert!(filter_orphan_tool_messages(&[call, string_result]).is_empty());

    // Two calls without ids share the id `undefined`: duplicate ids.
    let anonymous = json!({ "role": "assistant", "tool_calls": [{}, {}] });
    assert!(filter_orphan_tool_messages(&[anonymous]).is_empty());

    // Object ids are distinct identities: unique among calls, but no result can answer them.
    let object_ids = json!({ "role": "assistant", "tool_calls": [{ "id": {} }, { "id": {} }] });
    let object_result = json!({ "role": "tool", "tool_call_id": {} });
    assert!(filter_orphan_tool_messages(&[object_ids, object_result]).is_empty());
  }

  #[test]
  fn consecutive_tool_rounds_are_checked_independently() {
    let history = vec![
      user("q"),
      assistant_calls(&["a"]),
      result("a"),
      assistant_calls(&["b"]),
      result("c"),
      assistant_calls(&["d"]),
      result("d"),
    ];
    assert_eq!(
      filter_orphan_tool_messages(&history),
      vec![
        user("q"),
        assistant_calls(&["a"]),
        result("a"),
        assistant_calls(&["d"]),
        result("d")
      ]
    );
  }

  #[test]
  fn unknown_fields_and_key_order_survive() {
    let message = json!({ "zeta": 1, "role": "user", "alpha": { "nested": [1, 2] }, "content": "x", "id": "m1" });
    let out = filter_orphan_tool_messages(std::slice::from_ref(&message));
    assert_eq!(
      serde_json::to_string(&out[0]).unwrap(),
      serde_json::to_string(&message).unwrap()
    );
  }

  #[test]
  fn non_array_tool_calls_count_as_none() {
    let odd = json!({ "role": "assistant", "content": "x", "tool_calls": null });
    assert_eq!(
      filter_orphan_tool_messages(std::slice::from_ref(&odd)),
      vec![odd.clone()]
    );
    assert!(!has_non_thinking_tool_history(&[odd]));
  }

  #[test]
  fn tool_calls_on_non_assistant_roles_are_ignored() {
    let user_with_calls = json!({ "role": "user", "content": "x", "tool_calls": [{ "id": "a" }] });
    let history = vec![user_with_calls.clone(), result("a")];
    assert_eq!(filter_orphan_tool_messages(&history), vec![user_with_calls.clone()]);
    assert!(!has_non_thinking_tool_history(&[user_with_calls]));
  }

  #[test]
  fn detects_tool_calls_without_reasoning() {
    assert!(has_non_thinking_tool_history(&[assistant_calls(&["a"])]));

    let mut with_reasoning = assistant_calls(&["a"]);
    with_reasoning["reasoningContent"] = json!("thought about it");
    assert!(!has_non_thinking_tool_history(std::slice::from_ref(&with_reasoning)));

    let mut blank = assistant_calls(&["a"]);
    blank["reasoningContent"] = json!(" \n\t\u{00A0}\u{3000}\u{FEFF}");
    assert!(has_non_thinking_tool_history(&[with_reasoning.clone(), blank]));

    let mut null_reasoning = assistant_calls(&["a"]);
    null_reasoning["reasoningContent"] = Value::Null;
    assert!(has_non_thinking_tool_history(&[null_reasoning]));
  }

  #[test]
  fn reasoning_without_tool_calls_is_irrelevant() {
    let history = vec![user("q"), json!({ "role": "assistant", "content": "a" }), result("x")];
    assert!(!has_non_thinking_tool_history(&history));
    assert!(!has_non_thinking_tool_history(&[]));
  }

  #[test]
  fn js_trim_whitespace_set() {
    // U+0085 (NEL) is not ECMAScript whitespace, so it is content.
    assert_eq!(js_trim("\u{0085}"), "\u{0085}");
    let mut nel = assistant_calls(&["a"]);
    nel["reasoningContent"] = json!("\u{0085}");
    assert!(!has_non_thinking_tool_history(&[nel]));
    assert_eq!(js_trim("\u{2028} x \u{205F}"), "x");
  }
}

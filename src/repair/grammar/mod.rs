//! Grammar-leak recovery (the `/grammar` entry point, spec §11).
//!
//! Some open models print a tool call as text in their own chat-template grammar instead of
//! emitting a structured call. This module finds such leaks in ten grammar families, selects
//! non-overlapping ones, strips them from assistant text and, when every gate allows it, promotes
//! them to real `toolCall` content parts.
//!
//! All offsets are JavaScript string (UTF-16) indices: the scanners run over code units, and the
//! regular expressions run on `regress` with the reference's patterns and flags (`scan`). Three
//! patterns that backtrack quadratically on long texts run as equivalent hand-written scanners
//! (`manual`), and lazy `open…close` patterns skip openers that have no closer after them, so a
//! 100 KB message scans in linear time.
//!
//! Where a JS engine's behaviour cannot be mirrored by plain data:
//! * a parameter named `__proto__` in an XML or pythonic grammar is not an own key in JS either
//!   (assignment hits the prototype setter); the JS object would additionally inherit from an
//!   object value, which plain data cannot express;
//! * a non-object `message` yields the unchanged result instead of a `TypeError`;
//! * `now_ms` is used as an integer (the reference passes `Date.now()`).

mod families;
mod manual;
mod scan;
mod values;

use std::collections::HashSet;

use families::{candidates, patterns, Candidate, Enabled};

use crate::repair::text::{from_utf16, to_utf16};
use crate::repair::value::{Obj, Value};

/// Every family name, in the reference's declaration order.
pub const GRAMMAR_NAMES: [&str; 10] = [
  "dsml",
  "invoke",
  "qwen",
  "kimi",
  "mistral",
  "llama",
  "glm",
  "granite",
  "minimax-text",
  "olmo",
];

/// Model-id patterns (each used as a JS RegExp with the `i` flag) for families that leak grammar.
pub const GRAMMAR_RECOVERY_MODELS: [&str; 9] = [
  "glm", "kimi", "minimax", "qwen", "mistral", "llama", "granite", "olmo", "deepseek",
];

/// A grammar family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Grammar {
  Dsml,
  Invoke,
  Qwen,
  Kimi,
  Mistral,
  Llama,
  Glm,
  Granite,
  MinimaxText,
  Olmo,
}

impl Grammar {
  pub const ALL: [Grammar; 10] = [
    Grammar::Dsml,
    Grammar::Invoke,
    Grammar::Qwen,
    Grammar::Kimi,
    Grammar::Mistral,
    Grammar::Llama,
    Grammar::Glm,
    Grammar::Granite,
    Grammar::MinimaxText,
    Grammar::Olmo,
  ];

  pub fn name(self) -> &'static str {
    GRAMMAR_NAMES[self as usize]
  }

  pub fn from_name(name: &str) -> Option<Grammar> {
    GRAMMAR_NAMES.iter().position(|&n| n == name).map(|i| Grammar::ALL[i])
  }
}

fn enabled_from<S: AsRef<str>>(names: Option<&[S]>) -> Enabled {
  match names {
    None => Enabled::all(),
    Some(names) => {
      let mut e = Enabled::default();
      for g in names.iter().filter_map(|n| Grammar::from_name(n.as_ref())) {
        e.insert(g);
      }
      e
    }
  }
}

/// Does the model id look like one of the grammar-leaking open model families?
pub fn model_leaks_grammar(model_id: Option<&str>) -> bool {
  match model_id {
    None | Some("") => false,
    Some(id) => {
      let units = to_utf16(id);
      patterns().models.iter().any(|re| re.test_units(&units))
    }
  }
}

/// A tool call recovered from leaked text.
#[derive(Clone, Debug, PartialEq)]
pub struct RecoveredToolCall {
  pub name: String,
  pub arguments: Obj,
  pub grammar: &'static str,
}

/// Order candidates by start (longer first on ties, otherwise stable) and keep each one that does
/// not overlap an already kept candidate with a different range. Kept ranges are pairwise equal or
/// disjoint, so comparing with the most recently kept range is enough.
fn select(mut list: Vec<Candidate>) -> Vec<Candidate> {
  list.sort_by(|a, b| a.start.cmp(&b.start).then((b.end - b.start).cmp(&(a.end - a.start))));
  let mut kept: Vec<Candidate> = Vec::with_capacity(list.len());
  for c in list {
    let clash = kept.last().is_some_and(|k| {
      let same = k.start == c.start && k.end == c.end;
      !same && k.start < c.end && c.start < k.end
    });
    if !clash {
      kept.push(c);
    }
  }
  kept
}

fn detect(text: &[u16], enabled: Enabled) -> Vec<Candidate> {
  let mut kept = select(candidates(text, enabled));
  for c in &mut kept {
    families::resolve(c, text);
  }
  kept
}

/// Pure parse: the leaked calls in `text` (no stripping, no gates). `grammars` defaults to all;
/// unknown names are ignored.
pub fn parse_tool_grammar_leaks(text: &str, grammars: Option<&[&str]>) -> Vec<RecoveredToolCall> {
  parse_tool_grammar_leaks_utf16(&to_utf16(text), grammars)
}

/// [`parse_tool_grammar_leaks`] over UTF-16 code units (what a JS string is).
pub fn parse_tool_grammar_leaks_utf16(text: &[u16], grammars: Option<&[&str]>) -> Vec<RecoveredToolCall> {
  detect(text, enabled_from(grammars))
    .into_iter()
    .filter(|c| !c.strip_only)
    .map(|c| RecoveredToolCall {
      name: c.name,
      arguments: c.arguments,
      grammar: c.grammar.name(),
    })
    .collect()
}

/// What is left of `text` after removing the ranges (in start order; overlaps handled by a cursor),
/// dropping spaces/tabs before line breaks, collapsing runs of three or more line breaks to two,
/// and trimming — as slices of `text`, in order (their concatenation is the new text). Only line
/// breaks are visited, so a long text with few leaks costs a few `memchr` passes.
pub fn remaining_segments(text: &[u16], ranges: &mut [(usize, usize)]) -> Vec<(usize, usize)> {
  const NL: u16 = b'\n' as u16;
  ranges.sort_by_key(|r| r.0);
  // The blocks that survive the removal (original coordinates) and the text they form.
  let mut blocks: Vec<(usize, usize)> = Vec::with_capacity(ranges.len() + 1);
  let mut cursor = 0;
  for &(start, end) in ranges.iter() {
    if start > cursor {
      blocks.push((cursor, start));
    }
    cursor = cursor.max(end);
  }
  if cursor < text.len() {
    blocks.push((cursor, text.len()));
  }
  let kept: std::borrow::Cow<[u16]> = match blocks.as_slice() {
    [] => std::borrow::Cow::Borrowed(&[][..]),
    [(a, b)] => std::borrow::Cow::Borrowed(&text[*a..*b]),
    _ => {
      let mut k = Vec::with_capacity(text.len());
      for &(a, b) in &blocks {
        k.extend_from_slice(&text[a..b]);
      }
      std::borrow::Cow::Owned(k)
    }
  };
  let blank = |u: u16| u == b' ' as u16 || u == b'\t' as u16;
  // Units to drop (kept coordinates, ascending): blanks before a line break, and the third and
  // later breaks of a run (a run continues across dropped blanks).
  let mut drops: Vec<(usize, usize)> = Vec::new();
  let mut run = 0usize;
  let mut previous: Option<usize> = None;
  let mut at = 0;
  while let Some(q) = scan::find_unit(&kept, at, &[NL]) {
    let mut j = q;
    while j > 0 && blank(kept[j - 1]) {
      j -= 1;
    }
    run = if previous.is_some_and(|p| p + 1 == j) { run + 1 } else { 1 };
    if j < q {
      drops.push((j, q));
    }
    if run >= 3 {
      match drops.last_mut() {
        Some(last) if last.1 == q => last.1 = q + 1,
        _ => drops.push((q, q + 1)),
      }
    }
    previous = Some(q);
    at = q + 1;
  }
  // Dropped units are all white space, so the trimmed bounds are those of the kept text.
  let Some(first) = kept.iter().position(|&u| !scan::is_ws(u)) else {
    return Vec::new();
  };
  let last = kept.iter().rposition(|&u| !scan::is_ws(u)).map_or(first, |i| i + 1);
  let mut retained: Vec<(usize, usize)> = Vec::new();
  let mut from = first;
  for &(a, b) in &drops {
    let (a, b) = (a.max(first), b.min(last));
    if a >= b {
      continue;
    }
    if a > from {
      retained.push((from, a));
    }
    from = from.max(b);
  }
  if from < last {
    retained.push((from, last));
  }
  // Kept coordinates back to the original text, block by block.
  let mut out: Vec<(usize, usize)> = Vec::with_capacity(retained.len());
  let mut block = 0;
  let mut block_kept_start = 0;
  for (a, b) in retained {
    let mut a = a;
    while a < b {
      while block_kept_start + (blocks[block].1 - blocks[block].0) <= a {
        block_kept_start += blocks[block].1 - blocks[block].0;
        block += 1;
      }
      let (orig_start, orig_end) = blocks[block];
      let take = (b - a).min(orig_end - orig_start - (a - block_kept_start));
      let start = orig_start + (a - block_kept_start);
      match out.last_mut() {
        Some(prev) if prev.1 == start => prev.1 = start + take,
        _ => out.push((start, start + take)),
      }
      a += take;
    }
  }
  out
}

/// The text [`remaining_segments`] describes.
#[cfg(test)]
fn remove_ranges(text: &[u16], ranges: &mut [(usize, usize)]) -> String {
  let mut units = Vec::with_capacity(text.len());
  for (a, b) in remaining_segments(text, ranges) {
    units.extend_from_slice(&text[a..b]);
  }
  from_utf16(&units)
}

/// What `recover_grammar_leaks` does with leaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
  Off,
  Observe,
  Strip,
  Recover,
}

impl Mode {
  /// The option's string form. The reference treats any other string like `"strip"` (it only
  /// tests for `"off"`, `"observe"` and `"recover"`); callers should map unknown strings so.
  pub fn from_name(name: &str) -> Option<Mode> {
    match name {
      "off" => Some(Mode::Off),
      "observe" => Some(Mode::Observe),
      "strip" => Some(Mode::Strip),
      "recover" => Some(Mode::Recover),
      _ => None,
    }
  }
}

/// `GrammarRecoveryOptions`.
#[derive(Clone, Debug)]
pub struct RecoveryOptions {
  pub mode: Mode,
  /// Tools a leaked call may name.
  pub known_tools: HashSet<String>,
  /// Families to detect; `None` = all. Unknown names are ignored.
  pub grammars: Option<Vec<String>>,
  /// Only calls naming a known tool are stripped/promoted (default true).
  pub require_known_tool: bool,
  /// `unknownToolText: "strip"`: also strip leaks naming disallowed tools (default false).
  pub unknown_tool_text_strip: bool,
}

impl RecoveryOptions {
  pub fn new(mode: Mode, known_tools: impl IntoIterator<Item = impl Into<String>>) -> RecoveryOptions {
    RecoveryOptions {
      mode,
      known_tools: known_tools.into_iter().map(Into::into).collect(),
      grammars: None,
      require_known_tool: true,
      unknown_tool_text_strip: false,
    }
  }

  fn allows(&self, name: &str) -> bool {
    !self.require_known_tool || (!self.known_tools.is_empty() && self.known_tools.contains(name))
  }
}

/// `GrammarRecoveryResult`. `message` is `None` when the caller's message object is returned
/// unchanged (same identity), `Some(new message)` otherwise.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RecoveryResult {
  pub changed: bool,
  pub recovered_calls: Vec<RecoveredToolCall>,
  pub stripped_grammars: Vec<&'static str>,
  pub stripped_ranges: usize,
  pub promoted: bool,
  pub observed: bool,
  pub detected_grammars: Vec<&'static str>,
  pub detected_ranges: usize,
  pub promoted_call_ids: Vec<String>,
  pub message: Option<Value>,
}

fn str_member<'a>(o: &'a Obj, key: &str) -> Option<&'a str> {
  o.get(key).and_then(Value::as_str)
}

fn is_tool_call(part: &Value) -> bool {
  part
    .as_obj()
    .is_some_and(|o| str_member(o, "type") == Some("toolCall") && str_member(o, "name").is_some())
}

/// The text a content part carries: `text` of a text part, `thinking` of a thinking part.
fn part_text(part: &Value) -> Option<(&'static str, &str)> {
  let o = part.as_obj()?;
  match str_member(o, "type")? {
    "text" => str_member(o, "text").map(|t| ("text", t)),
    "thinking" => str_member(o, "thinking").map(|t| ("thinking", t)),
    _ => None,
  }
}

fn push_unique(list: &mut Vec<&'static str>, g: Grammar) {
  if !list.contains(&g.name()) {
    list.push(g.name());
  }
}

/// JS `Number.prototype.toString(36)` for the integral part of `n`.
fn base36(n: f64) -> String {
  const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
  let mut v = n.abs().trunc() as u128;
  let mut out = Vec::new();
  loop {
    out.push(DIGITS[(v % 36) as usize]);
    v /= 36;
    if v == 0 {
      break;
    }
  }
  if n < 0.0 && n.trunc() != 0.0 {
    out.push(b'-');
  }
  out.reverse();
  String::from_utf8(out).unwrap_or_default()
}

/// `tool_repair_<grammar, non-alphanumerics as _>_<now base 36>_<index>`.
pub fn recovered_call_id(grammar: &str, now_ms: f64, index: usize) -> String {
  let g: String = grammar
    .chars()
    .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
    .collect();
  format!("tool_repair_{g}_{}_{index}", base36(now_ms))
}

/// What recovery reads of one content part.
#[derive(Clone, Copy, Debug)]
pub enum PartIn<'a> {
  /// A text part (`field` = "text") or a thinking part (`field` = "thinking") and its text.
  Text { field: &'static str, units: &'a [u16] },
  /// A `toolCall` part with a string name.
  ToolCall,
  /// Anything else.
  Other,
}

/// [`recover_parts`]'s answer: like [`RecoveryResult`], with each changed part's new text given
/// as slices of its old text, and no message.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PartsRecovery {
  pub changed: bool,
  pub recovered_calls: Vec<RecoveredToolCall>,
  pub stripped_grammars: Vec<&'static str>,
  pub stripped_ranges: usize,
  pub promoted: bool,
  pub observed: bool,
  pub detected_grammars: Vec<&'static str>,
  pub detected_ranges: usize,
  pub promoted_call_ids: Vec<String>,
  /// (part index, the new text as slices of the part's text).
  pub replaced: Vec<(usize, Vec<(usize, usize)>)>,
}

/// The core of [`recover_grammar_leaks`] over an assistant message's parts (`stop_reason`: its
/// `stopReason` when a string).
pub fn recover_parts(parts: &[PartIn], stop_reason: Option<&str>, options: &RecoveryOptions, now_ms: f64) -> PartsRecovery {
  let unchanged = PartsRecovery::default();
  if options.mode == Mode::Off {
    return unchanged;
  }
  let enabled = enabled_from(options.grammars.as_deref());
  let existing_tool_calls = parts.iter().filter(|p| matches!(p, PartIn::ToolCall)).count();
  let mut recovered: Vec<RecoveredToolCall> = Vec::new();
  let mut stripped_grammars = Vec::new();
  let mut detected_grammars = Vec::new();
  let mut detected_ranges = 0;
  let mut stripped_ranges = 0;
  let mut replaced: Vec<(usize, Vec<(usize, usize)>)> = Vec::new();

  for (index, part) in parts.iter().enumerate() {
    let PartIn::Text { units, .. } = *part else {
      continue;
    };
    let detected = detect(units, enabled);
    if detected.is_empty() {
      continue;
    }
    detected_ranges += detected.len();
    for c in &detected {
      push_unique(&mut detected_grammars, c.grammar);
    }
    if options.mode == Mode::Observe {
      continue;
    }

    let chosen: Vec<Candidate> = detected
      .into_iter()
      .filter(|c| c.strip_only || options.allows(&c.name) || options.unknown_tool_text_strip)
      .collect();
    if chosen.is_empty() {
      continue;
    }
    stripped_ranges += chosen.len();
    let mut ranges: Vec<(usize, usize)> = chosen.iter().map(|c| (c.start, c.end)).collect();
    for c in chosen {
      push_unique(&mut stripped_grammars, c.grammar);
      // Empty argument objects are nearly always fragments; they are stripped, never promoted.
      if c.strip_only || !options.allows(&c.name) || c.arguments.is_empty() {
        continue;
      }
      recovered.push(RecoveredToolCall {
        name: c.name,
        arguments: c.arguments,
        grammar: c.grammar.name(),
      });
    }
    replaced.push((index, remaining_segments(units, &mut ranges)));
  }

  let changed = !replaced.is_empty();
  let promote = options.mode == Mode::Recover && existing_tool_calls == 0 && !recovered.is_empty() && stop_reason == Some("stop");

  if !changed && !promote {
    if detected_ranges == 0 {
      return unchanged;
    }
    return PartsRecovery {
      observed: true,
      detected_grammars,
      detected_ranges,
      ..unchanged
    };
  }
  let promoted_call_ids = if promote {
    recovered.iter().enumerate().map(|(i, call)| recovered_call_id(call.grammar, now_ms, i)).collect()
  } else {
    Vec::new()
  };
  PartsRecovery {
    changed: true,
    recovered_calls: if promote { recovered } else { Vec::new() },
    stripped_grammars,
    stripped_ranges,
    promoted: promote,
    observed: detected_ranges > 0,
    detected_grammars,
    detected_ranges,
    promoted_call_ids,
    replaced,
  }
}

/// Detect leaked grammar in an assistant message, strip it from text parts and, in `recover`
/// mode on a `stopReason: "stop"` message without real tool calls, append the recovered calls
/// as `toolCall` parts (ids stamped with `now_ms`) and set `stopReason: "toolUse"`.
pub fn recover_grammar_leaks(message: &Value, options: &RecoveryOptions, now_ms: f64) -> RecoveryResult {
  let unchanged = RecoveryResult::default();
  if options.mode == Mode::Off {
    return unchanged;
  }
  let Some(msg) = message.as_obj() else {
    return unchanged;
  };
  if str_member(msg, "role") != Some("assistant") {
    return unchanged;
  }
  let Some(Value::Array(content)) = msg.get("content") else {
    return unchanged;
  };
  let texts: Vec<Option<(&'static str, Vec<u16>)>> = content
    .iter()
    .map(|p| part_text(p).map(|(field, t)| (field, to_utf16(t))))
    .collect();
  let parts: Vec<PartIn> = content
    .iter()
    .zip(&texts)
    .map(|(p, t)| match t {
      Some((field, units)) => PartIn::Text { field, units },
      None if is_tool_call(p) => PartIn::ToolCall,
      None => PartIn::Other,
    })
    .collect();
  let r = recover_parts(&parts, str_member(msg, "stopReason"), options, now_ms);
  if !r.changed {
    return RecoveryResult {
      observed: r.observed,
      detected_grammars: r.detected_grammars,
      detected_ranges: r.detected_ranges,
      ..unchanged
    };
  }
  let mut next_content = content.clone();
  for (index, segments) in &r.replaced {
    let (Some((field, units)), Some(part)) = (&texts[*index], content[*index].as_obj()) else {
      continue;
    };
    let mut joined = Vec::with_capacity(units.len());
    for &(a, b) in segments {
      joined.extend_from_slice(&units[a..b]);
    }
    let mut next = part.clone();
    next.set(*field, Value::String(from_utf16(&joined)));
    next_content[*index] = Value::Object(next);
  }
  for (call, id) in r.recovered_calls.iter().zip(&r.promoted_call_ids) {
    let mut part = Obj::new();
    part.set("type", Value::str("toolCall"));
    part.set("id", Value::str(id.clone()));
    part.set("name", Value::str(call.name.clone()));
    part.set("arguments", Value::Object(call.arguments.clone()));
    next_content.push(Value::Object(part));
  }
  let mut next_message = msg.clone();
  next_message.set("content", Value::Array(next_content));
  if r.promoted {
    next_message.set("stopReason", Value::str("toolUse"));
  }
  RecoveryResult {
    changed: true,
    recovered_calls: r.recovered_calls,
    stripped_grammars: r.stripped_grammars,
    stripped_ranges: r.stripped_ranges,
    promoted: r.promoted,
    observed: r.observed,
    detected_grammars: r.detected_grammars,
    detected_ranges: r.detected_ranges,
    promoted_call_ids: r.promoted_call_ids,
    message: Some(Value::Object(next_message)),
  }
}

#[cfg(test)]
mod tests;

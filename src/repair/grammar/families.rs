//! The ten grammar-family detectors. Each produces candidates (a call plus the text range that
//! leaked it); candidates are produced in the reference's family order because selection keeps
//! that order among ties.

use std::sync::OnceLock;

use super::manual::{
  malformed_invokes, pythonic_lines, xml_wrappers, BalanceCache, BalancedJson, LiteralIndex, SearchMemo,
};
use super::scan::{
  find_top_level, first_balanced_json, first_token, index_of, is_identifier, neutralise, split_top_level, string, trim,
  trim_start, units, Fences, Hay, Hit, Re,
};
use super::values::{
  call_from_object, calls_from_value, json_or_string, maybe_json, normalize_arguments, parse_json_object,
  parse_json_units, pythonish,
};
use super::Grammar;
use crate::repair::value::{Obj, Value};

/// A detected leak: the call it describes and the range of text that carried it. `strip_only`
/// marks stray markers that are removed from text but never become calls.
#[derive(Clone, Debug)]
pub struct Candidate {
  pub name: String,
  pub arguments: Obj,
  pub grammar: Grammar,
  pub start: usize,
  pub end: usize,
  pub strip_only: bool,
  /// Arguments still to be read from this range of the text as Python keyword arguments
  /// ([`resolve`]): a bare pythonic call's arguments are only read once it survives selection,
  /// since calls nested in one another would otherwise re-read the same text.
  pub keyword_arguments: Option<(usize, usize)>,
}

/// Fill in the arguments of a candidate whose reading was deferred.
pub fn resolve(c: &mut Candidate, text: &[u16]) {
  if let Some((a, b)) = c.keyword_arguments.take() {
    c.arguments = keyword_arguments(&text[a..b]);
  }
}

/// The set of enabled families.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Enabled(u16);

impl Enabled {
  pub fn all() -> Enabled {
    Enabled((1 << Grammar::ALL.len()) - 1)
  }
  pub fn insert(&mut self, g: Grammar) {
    self.0 |= 1 << g as u16;
  }
  pub fn has(self, g: Grammar) -> bool {
    self.0 & (1 << g as u16) != 0
  }
  /// Keep only the enabled families that pass `keep`.
  fn gated(self, keep: impl Fn(Grammar) -> bool) -> Enabled {
    let mut out = Enabled(0);
    for g in Grammar::ALL {
      if self.has(g) && keep(g) {
        out.insert(g);
      }
    }
    out
  }
}

/// DSML's marker prefix: fullwidth bars (one or two) around `DSML`, or ASCII bars with spaces.
const DSML: &str = r"(?:｜{1,2}DSML｜{1,2}|DSML｜|\s*\|\s*DSML\s*\|\s*)";

pub(super) struct Patterns {
  dsml_open: Re,
  dsml_marker: Re,
  dsml_close_tool_calls: Re,
  dsml_close_function_calls: Re,
  dsml_invoke: Re,
  dsml_invoke_close: Re,
  dsml_param: Re,
  kimi_section: Re,
  kimi_call: Re,
  kimi_canonical: Re,
  kimi_relaxed: Re,
  kimi_call_id: Re,
  mistral_v11: Re,
  minimax: Re,
  invoke_wrapped: Re,
  invoke_standalone: Re,
  invoke_body: Re,
  invoke_param: Re,
  invoke_malformed_param: Re,
  xml_open: Re,
  xml_close_tool_call: Re,
  xml_close_tools: Re,
  qwen_bare_function: Re,
  qwen_function: Re,
  qwen_param: Re,
  glm_key: Re,
  glm_value: Re,
  glm_key_open: Re,
  fenced_body: Re,
  bare_object: Re,
  bare_array: Re,
  olmo: Re,
  decimal: Re,
  json_like: Re,
  pub(super) models: Vec<Re>,
}

pub(super) fn patterns() -> &'static Patterns {
  static PATTERNS: OnceLock<Patterns> = OnceLock::new();
  PATTERNS.get_or_init(|| {
    let d = |p: String| Re::new(&p, "iu");
    Patterns {
      dsml_open: d(format!("<{DSML}(?:tool_calls|function_calls)>")),
      dsml_marker: d(format!(
        r"</?{DSML}(?:tool_calls|function_calls|invoke|parameter)(?:\s+[^>\n]*)?>?"
      )),
      dsml_close_tool_calls: d(format!("</{DSML}tool_calls>")),
      dsml_close_function_calls: d(format!("</{DSML}function_calls>")),
      dsml_invoke: d(format!(r#"<{DSML}invoke\s+name=["']([^"']+)["']\s*>"#)),
      dsml_invoke_close: d(format!("</{DSML}invoke>")),
      dsml_param: d(format!(
        r#"<{DSML}parameter\s+name=["']([^"']+)["'](?:\s+string=["'](true|false)["'])?\s*>([\s\S]*?)</{DSML}parameter>"#
      ))
      .tail(&format!("</{DSML}parameter>")),
      kimi_section: Re::new(
        r"<\|tool_calls?_section_begin\|>([\s\S]*?)<\|tool_calls?_section_end\|>",
        "i",
      )
      .tail(r"<\|tool_calls?_section_end\|>"),
      kimi_call: Re::new(
        r"<\|tool_call_begin\|>([^<]*?)<\|tool_call_argument_begin\|>([\s\S]*?)<\|tool_call_end\|>",
        "i",
      )
      .tail(r"<\|tool_call_end\|>"),
      kimi_canonical: Re::new(r"^functions\.([A-Za-z_][\w.-]*):\d+$", ""),
      kimi_relaxed: Re::new(r"^(?:functions\.)?([A-Za-z_][\w.-]*)(?::\d+)?$", ""),
      kimi_call_id: Re::new(r"^call[_-]?\d+$", "i"),
      mistral_v11: Re::new(r"^([A-Za-z_][\w.-]*)\[CALL_ID\]([^\[]*)\[ARGS\]", ""),
      minimax: Re::new(r"<function_call>[\s\S]*?functions\.([A-Za-z_][\w.-]*)\s*\(", "i")
        .tail(r"functions\.[A-Za-z_][\w.-]*\s*\("),
      invoke_wrapped: Re::new(
        r"<(?:[A-Za-z][\w.-]*:)?tool_call>([\s\S]*?)<\/(?:[A-Za-z][\w.-]*:)?tool_call>",
        "i",
      )
      .tail(r"<\/(?:[A-Za-z][\w.-]*:)?tool_call>"),
      invoke_standalone: Re::new(r#"<invoke\s+name=["']([^"']+)["']\s*>[\s\S]*?<\/invoke>"#, "i").tail("</invoke>"),
      invoke_body: Re::new(r#"<invoke\s+name=["']([^"']+)["']\s*>([\s\S]*?)<\/invoke>"#, "i").tail("</invoke>"),
      invoke_param: Re::new(
        r#"<parameter\s+name=["']([^"']+)["'](?:\s+string=["'](true|false)["'])?\s*>([\s\S]*?)<\/parameter>"#,
        "i",
      )
      .tail("</parameter>"),
      invoke_malformed_param: Re::new(r#"parameter\s+name=["']([^"']+)["']\s*>([\s\S]*?)\s*parameter>"#, "i")
        .tail("parameter>"),
      // `<(tool_call|tools)>[\s\S]*?<\/\1>` runs as an opener plus per-tag closers (manual.rs).
      xml_open: Re::new(r"<(tool_call|tools)>", "i"),
      xml_close_tool_call: Re::new(r"<\/tool_call>", "i"),
      xml_close_tools: Re::new(r"<\/tools>", "i"),
      qwen_bare_function: Re::new(r"<function=([A-Za-z_][\w.-]*)>[\s\S]*?<\/function>", "i").tail("</function>"),
      qwen_function: Re::new(r"<function=([A-Za-z_][\w.-]*)>\s*([\s\S]*?)<\/function>", "i").tail("</function>"),
      qwen_param: Re::new(r"<parameter=([^>]+)>([\s\S]*?)<\/parameter>", "i").tail("</parameter>"),
      glm_key: Re::new(r"<arg_key>([\s\S]*?)<\/arg_key>", "i").tail("</arg_key>"),
      glm_value: Re::new(r"<arg_value>([\s\S]*?)<\/arg_value>", "i").tail("</arg_value>"),
      glm_key_open: Re::new(r"<arg_key>", "i"),
      fenced_body: Re::new(r"^```\w*\s*([\s\S]*?)\s*```$", ""),
      bare_object: Re::new(r#"\{\s*"(?:name|function_name|function)""#, ""),
      bare_array: Re::new(r#"\[\s*\{\s*"(?:name|function_name|function)""#, ""),
      olmo: Re::new(r"<function_calls>([\s\S]*?)<\/function_calls>", "i").tail("</function_calls>"),
      decimal: Re::new(r"^[-+]?\d+(?:\.\d+)?$", ""),
      json_like: Re::new(r#"^(?:true|false|null|-?\d|[\[{]|")"#, ""),
      models: super::GRAMMAR_RECOVERY_MODELS.iter().map(|p| Re::new(p, "i")).collect(),
    }
  })
}

/// The text being scanned, with its fence index and the candidates found so far.
struct Scan<'a> {
  text: Hay<'a>,
  fences: Fences,
  out: Vec<Candidate>,
}

impl Scan<'_> {
  fn fenced(&self, p: usize) -> bool {
    self.fences.inside(p)
  }
  fn push(&mut self, name: String, arguments: Obj, grammar: Grammar, start: usize, end: usize) {
    self.out.push(Candidate {
      name,
      arguments,
      grammar,
      start,
      end,
      strip_only: false,
      keyword_arguments: None,
    });
  }
  fn push_calls(&mut self, calls: Vec<(String, Obj)>, grammar: Grammar, start: usize, end: usize) {
    for (name, args) in calls {
      self.push(name, args, grammar, start, end);
    }
  }
}

/// Assign `args[key] = value` with JS assignment semantics on a fresh `{}`: a `__proto__` key
/// hits the prototype setter and never becomes an own property.
fn assign(args: &mut Obj, key: &[u16], value: Value) {
  let key = string(key);
  if key != "__proto__" {
    args.set(key, value);
  }
}

/// Arguments from a JSON object text (normalised), or `{}`.
fn object_arguments(json: &[u16]) -> Obj {
  parse_json_object(json)
    .and_then(|o| normalize_arguments(Value::Object(o)))
    .unwrap_or_default()
}

/// Did the optional `string="…"` group capture exactly `false`?
fn is_false(hit: &Hit, hay: Hay, group: usize) -> bool {
  hit.group(group).is_some() && hit.slice(hay, group).raw == units("false").as_slice()
}

/// Every candidate the enabled families find in `text`, ranges empty ones dropped.
/// Cheap literal gates: a family whose patterns all require some literal is skipped when the text
/// lacks it. `lower` is the text with ASCII letters lower-cased and every non-ASCII unit mapped to
/// a byte no pattern literal contains, so a miss here is a miss for the `i` patterns too (their
/// case folding is ASCII-only; the `iu` DSML patterns also fold U+017F to `s`, checked apart).
/// The literals that start with `<` are all looked for in one pass over the `<`s of the text;
/// case-sensitive literals are found in `lower` and confirmed on the text's own units.
struct Gates<'t> {
  text: &'t [u16],
  lower: Vec<u8>,
  long_s: bool,
  /// Which of `ANGLE` occur.
  angle: [bool; ANGLE.len()],
}

/// Gate literals that start with `<` (lower case).
const ANGLE: [&str; 6] = [
  "<function_call>",
  "<tool_call>",
  "<tools>",
  "<function=",
  "<|python_tag|>",
  "<function_calls>",
];

impl<'t> Gates<'t> {
  fn new(text: &'t [u16]) -> Gates<'t> {
    // One vectorisable pass: ASCII lower-cased, anything else 0xFF.
    // Branch-free so that it vectorises: non-ASCII → 0xFF, 'A'..='Z' → | 0x20.
    let lower: Vec<u8> = text
      .iter()
      .map(|&u| {
        let b = if u < 0x80 { u as u8 } else { 0xFF };
        b | (u8::from(b.wrapping_sub(b'A') < 26) << 5)
      })
      .collect();
    let ascii = !lower.contains(&0xFF);
    let mut angle = [false; ANGLE.len()];
    for at in memchr::memchr_iter(b'<', &lower) {
      let rest = &lower[at..];
      for (seen, lit) in angle.iter_mut().zip(ANGLE) {
        *seen |= rest.starts_with(lit.as_bytes());
      }
      if angle.iter().all(|&a| a) {
        break;
      }
    }
    Gates {
      text,
      long_s: !ascii && text.contains(&0x017F),
      lower,
      angle,
    }
  }
  fn ci(&self, literal: &str) -> bool {
    if let Some(i) = ANGLE.iter().position(|&a| a == literal) {
      return self.angle[i];
    }
    memchr::memmem::find(&self.lower, literal.to_ascii_lowercase().as_bytes()).is_some()
  }
  fn cs(&self, literal: &str) -> bool {
    let lit: Vec<u16> = literal.encode_utf16().collect();
    memchr::memmem::find_iter(&self.lower, literal.to_ascii_lowercase().as_bytes())
      .any(|at| self.text[at..at + lit.len()] == lit[..])
  }
  fn bare_json(&self) -> bool {
    self.cs("\"name\"") || self.cs("\"function")
  }
}

pub fn candidates(text: &[u16], enabled: Enabled) -> Vec<Candidate> {
  super::scan::reset_cut_memo(text);
  let gates = Gates::new(text);
  let enabled = Enabled::gated(enabled, |g| match g {
    Grammar::Dsml => gates.ci("dsml") || gates.long_s,
    Grammar::Kimi => gates.ci("section_begin"),
    Grammar::Mistral => gates.cs("[TOOL_CALLS]") || gates.bare_json(),
    Grammar::MinimaxText => gates.ci("<function_call>"),
    Grammar::Invoke => gates.ci("invoke"),
    Grammar::Qwen | Grammar::Glm => gates.ci("<tool_call>") || gates.ci("<tools>") || gates.ci("<function="),
    Grammar::Llama => gates.ci("<|python_tag|>") || gates.bare_json(),
    Grammar::Olmo => gates.ci("<function_calls>"),
    // Granite's JSON bodies sit in <tool_call>/<tools>; its bare pythonic calls need a `(`.
    Grammar::Granite => gates.cs("(") || gates.ci("<tool_call>") || gates.ci("<tools>"),
  });
  let safe = neutralise(text);
  let mut s = Scan {
    text: Hay::new(text, &safe),
    fences: Fences::new(text),
    out: Vec::new(),
  };
  if enabled.has(Grammar::Dsml) {
    dsml(&mut s);
    dsml_markers(&mut s);
  }
  if enabled.has(Grammar::Kimi) {
    kimi(&mut s);
  }
  if enabled.has(Grammar::Mistral) {
    mistral(&mut s);
    bare_json(&mut s, Grammar::Mistral);
  }
  if enabled.has(Grammar::MinimaxText) {
    minimax_text(&mut s);
  }
  if enabled.has(Grammar::Invoke) {
    invoke_xml(&mut s);
  }
  if enabled.has(Grammar::Qwen) || enabled.has(Grammar::Glm) || enabled.has(Grammar::Granite) {
    tool_call_xml(&mut s, enabled);
  }
  if enabled.has(Grammar::Granite) {
    bare_pythonic(&mut s, Grammar::Granite);
  }
  if enabled.has(Grammar::Llama) {
    llama_python_tag(&mut s);
    bare_json(&mut s, Grammar::Llama);
  }
  if enabled.has(Grammar::Olmo) {
    olmo(&mut s);
  }
  s.out.retain(|c| c.end > c.start);
  s.out
}

// ─── DSML ────────────────────────────────────────────────────────────────────

fn dsml(s: &mut Scan) {
  let p = patterns();
  let text = s.text;
  let mut close_tool_calls = SearchMemo::new(&p.dsml_close_tool_calls);
  let mut close_function_calls = SearchMemo::new(&p.dsml_close_function_calls);
  // Invoke closes cannot overlap (none contains a `<` after its first unit), so the closes
  // found from any offset are the text's closes that start there or later.
  let mut last_invoke_close: Option<Option<Hit>> = None;
  for open in p.dsml_open.all(text) {
    if s.fenced(open.start()) {
      continue;
    }
    let start = open.start();
    let body_start = open.end();
    let close = close_tool_calls
      .first_from(text, body_start)
      .or_else(|| close_function_calls.first_from(text, body_start));
    let (body_end, end) = match close {
      Some(c) => (c.start(), c.end()),
      // Unclosed block: it runs to the end of the last invoke close after the body.
      None => {
        let last = last_invoke_close.get_or_insert_with(|| p.dsml_invoke_close.all(text).pop());
        match last {
          Some(last) if last.start() >= body_start => (last.end(), last.end()),
          _ => continue,
        }
      }
    };
    let calls = dsml_invokes(text.slice(body_start..body_end));
    s.push_calls(calls, Grammar::Dsml, start, end);
  }
}

fn dsml_markers(s: &mut Scan) {
  if index_of(s.text.raw, &units("DSML"), 0).is_none() {
    return;
  }
  for m in patterns().dsml_marker.all(s.text) {
    if s.fenced(m.start()) {
      continue;
    }
    s.out.push(Candidate {
      name: String::new(),
      arguments: Obj::new(),
      grammar: Grammar::Dsml,
      start: m.start(),
      end: m.end(),
      strip_only: true,
      keyword_arguments: None,
    });
  }
}

fn dsml_invokes(body: Hay) -> Vec<(String, Obj)> {
  let p = patterns();
  let mut close = SearchMemo::new(&p.dsml_invoke_close);
  let mut calls = Vec::new();
  for m in p.dsml_invoke.all(body) {
    let name = trim(m.slice(body, 1).raw);
    if name.is_empty() {
      continue;
    }
    // The reference searches `body.slice(end)`; no DSML pattern looks behind, so searching the
    // whole body from `end` finds the same match.
    let Some(c) = close.first_from(body, m.end()) else {
      continue;
    };
    calls.push((string(name), dsml_arguments(body.slice(m.end()..c.start()))));
  }
  calls
}

fn dsml_arguments(body: Hay) -> Obj {
  let mut args = Obj::new();
  for m in patterns().dsml_param.all(body) {
    let key = trim(m.slice(body, 1).raw);
    if key.is_empty() {
      continue;
    }
    let raw = m.slice(body, 3).raw;
    let value = if is_false(&m, body, 2) {
      json_or_string(trim(raw))
    } else {
      Value::String(string(raw))
    };
    assign(&mut args, key, value);
  }
  if !args.is_empty() {
    return args;
  }
  let t = trim(body.raw);
  let json = first_balanced_json(t).map_or(t, |(a, b)| &t[a..b]);
  object_arguments(json)
}

// ─── Kimi ────────────────────────────────────────────────────────────────────

fn kimi(s: &mut Scan) {
  let p = patterns();
  let text = s.text;
  for section in p.kimi_section.all(text) {
    if s.fenced(section.start()) {
      continue;
    }
    let body = section.slice(text, 1);
    for call in p.kimi_call.all(body) {
      let Some(name) = kimi_name(call.slice(body, 1).trim()) else {
        continue;
      };
      let args = parse_json_object(trim(call.slice(body, 2).raw)).unwrap_or_default();
      s.push(name, args, Grammar::Kimi, section.start(), section.end());
    }
  }
}

/// `functions.NAME:N`, else a relaxed `(functions.)?NAME(:N)?` that is not a bare `call_N` id.
fn kimi_name(id: Hay) -> Option<String> {
  let p = patterns();
  if let Some(m) = p.kimi_canonical.first_from(id, 0) {
    return Some(string(m.slice(id, 1).raw));
  }
  let m = p.kimi_relaxed.first_from(id, 0)?;
  let name = m.slice(id, 1);
  if p.kimi_call_id.test(name) {
    None
  } else {
    Some(string(name.raw))
  }
}

// ─── Mistral and bare JSON ───────────────────────────────────────────────────

fn mistral(s: &mut Scan) {
  let text = s.text.raw;
  let marker = units("[TOOL_CALLS]");
  let mut index = index_of(text, &marker, 0);
  let mut json: Option<BalancedJson> = None;
  while let Some(at) = index {
    let next = if s.fenced(at) {
      at + marker.len()
    } else {
      let json = json.get_or_insert_with(|| BalancedJson::new(text));
      mistral_at(s, at, marker.len(), json)
    };
    index = index_of(text, &marker, next);
  }
}

/// Parse one unfenced `[TOOL_CALLS]` at `at`; returns where the marker search resumes.
fn mistral_at(s: &mut Scan, at: usize, marker_len: usize, json: &mut BalancedJson) -> usize {
  let text = s.text;
  let after = at + marker_len;
  let json_start = text.len() - trim_start(&text.raw[after..]).len();
  let rest = text.from(json_start);

  if rest.raw.first() == Some(&(b'[' as u16)) {
    // The bracket at `json_start` is the first of `rest`.
    if let Some((_, end)) = json.first_from(text.raw, json_start) {
      if let Some(Value::Array(items)) = parse_json_units(&text.raw[json_start..end]) {
        for item in &items {
          if let Some((name, args)) = item.as_obj().and_then(call_from_object) {
            s.push(name, args, Grammar::Mistral, at, end);
          }
        }
      }
      return end;
    }
  }

  if let Some(v11) = patterns().mistral_v11.first_from(rest, 0) {
    let name = string(v11.slice(rest, 1).raw);
    let args_start = json_start + v11.end();
    if let Some((a, b)) = json.first_from(text.raw, args_start) {
      let args = object_arguments(&text.raw[a..b]);
      s.push(name, args, Grammar::Mistral, at, b);
      return b;
    }
  }

  at + marker_len
}

/// JSON call objects (`{"name"…`) and arrays of them (`[{"name"…`) anywhere in the text.
fn bare_json(s: &mut Scan, grammar: Grammar) {
  let p = patterns();
  let text = s.text;
  for (re, mut brackets) in [
    (&p.bare_object, BalanceCache::new(b'{', b'}')),
    (&p.bare_array, BalanceCache::new(b'[', b']')),
  ] {
    for m in re.all(text) {
      if s.fenced(m.start()) {
        continue;
      }
      // The match starts with the bracket, so the balanced JSON starts there too.
      let from = m.start();
      let Some(close) = brackets.matching(text.raw, from) else {
        continue;
      };
      let calls = calls_from_value(parse_json_units(&text.raw[from..close + 1]).as_ref());
      s.push_calls(calls, grammar, from, close + 1);
    }
  }
}

// ─── MiniMax text ────────────────────────────────────────────────────────────

fn minimax_text(s: &mut Scan) {
  let text = s.text;
  let mut parens = BalanceCache::new(b'(', b')');
  let mut fences: Option<LiteralIndex> = None;
  for m in patterns().minimax.all(text) {
    if s.fenced(m.start()) {
      continue;
    }
    let name = string(m.slice(text, 1).raw);
    let open = m.end() - 1;
    let Some(close) = parens.matching(text.raw, open) else {
      continue;
    };
    let args = object_arguments(trim(&text.raw[open + 1..close]));
    let fences = fences.get_or_insert_with(|| LiteralIndex::new(text.raw, &units("```")));
    let end = fences.first_from(text.raw, close).map_or(close + 1, |f| f + 3);
    s.push(name, args, Grammar::MinimaxText, m.start(), end);
  }
}

// ─── invoke XML ──────────────────────────────────────────────────────────────

fn invoke_xml(s: &mut Scan) {
  let p = patterns();
  let text = s.text;
  for w in p.invoke_wrapped.all(text) {
    if s.fenced(w.start()) {
      continue;
    }
    let calls = invoke_body(w.slice(text, 1));
    s.push_calls(calls, Grammar::Invoke, w.start(), w.end());
  }
  for m in p.invoke_standalone.all(text) {
    if s.fenced(m.start()) {
      continue;
    }
    let calls = invoke_body(text.slice(m.range.clone()));
    s.push_calls(calls, Grammar::Invoke, m.start(), m.end());
  }
  invoke_malformed(s);
}

fn invoke_body(body: Hay) -> Vec<(String, Obj)> {
  let mut calls = Vec::new();
  for m in patterns().invoke_body.all(body) {
    let name = trim(m.slice(body, 1).raw);
    if name.is_empty() {
      continue;
    }
    calls.push((string(name), invoke_arguments(m.slice(body, 2))));
  }
  calls
}

fn invoke_arguments(body: Hay) -> Obj {
  let p = patterns();
  let mut args = Obj::new();
  for m in p.invoke_param.all(body) {
    let key = trim(m.slice(body, 1).raw);
    if key.is_empty() {
      continue;
    }
    let raw = trim(m.slice(body, 3).raw);
    let value = if is_false(&m, body, 2) {
      json_or_string(raw)
    } else {
      maybe_json(raw, &p.json_like)
    };
    assign(&mut args, key, value);
  }
  if !args.is_empty() {
    return args;
  }
  object_arguments(trim(body.raw))
}

/// MiniMax's broken form: `invoke name="X">` at a line start, `parameter name="k">v parameter>`
/// lines, ended by a `/invoke>` or `invoke>` line or the end of text.
fn invoke_malformed(s: &mut Scan) {
  let p = patterns();
  let text = s.text;
  for m in malformed_invokes(text.raw) {
    if s.fenced(m.start()) {
      continue;
    }
    let start = m.start() + usize::from(text.raw[m.start()] == b'\n' as u16);
    let name = trim(m.slice(text, 2).raw);
    if name.is_empty() {
      continue;
    }
    let body = m.slice(text, 3);
    let mut args = Obj::new();
    for param in p.invoke_malformed_param.all(body) {
      let key = trim(param.slice(body, 1).raw);
      if !key.is_empty() {
        assign(&mut args, key, maybe_json(trim(param.slice(body, 2).raw), &p.json_like));
      }
    }
    s.push(string(name), args, Grammar::Invoke, start, m.end());
  }
}

// ─── <tool_call>/<tools> wrappers: qwen, glm, granite ───────────────────────

fn tool_call_xml(s: &mut Scan, enabled: Enabled) {
  let p = patterns();
  let text = s.text;
  let qwen = enabled.has(Grammar::Qwen);
  let granite = enabled.has(Grammar::Granite);
  for m in xml_wrappers(text, &p.xml_open, &p.xml_close_tool_call, &p.xml_close_tools) {
    if s.fenced(m.start()) {
      continue;
    }
    let tag_len = m.slice(text, 1).len();
    let is_tools = tag_len == "tools".len();
    // `<tag>` + body + `</tag>`, the closing tag as long as the opening one.
    let body = text.slice(m.start() + tag_len + 2..m.end() - (tag_len + 3));
    let (start, end) = (m.start(), m.end());

    if granite || qwen {
      let grammar = if is_tools || !granite {
        Grammar::Qwen
      } else {
        Grammar::Granite
      };
      s.push_calls(tool_call_json_body(body.raw), grammar, start, end);
    }
    if enabled.has(Grammar::Glm) {
      if let Some((name, args)) = glm_body(body) {
        s.push(name, args, Grammar::Glm, start, end);
      }
    }
    if qwen {
      s.push_calls(qwen_function_body(body), Grammar::Qwen, start, end);
    }
  }

  if qwen {
    for m in p.qwen_bare_function.all(text) {
      if s.fenced(m.start()) {
        continue;
      }
      let calls = qwen_function_body(text.slice(m.range.clone()));
      s.push_calls(calls, Grammar::Qwen, m.start(), m.end());
    }
  }
}

fn tool_call_json_body(body: &[u16]) -> Vec<(String, Obj)> {
  let t = trim(body);
  let safe = neutralise(t);
  let hay = Hay::new(t, &safe);
  let t = match patterns().fenced_body.first_from(hay, 0) {
    Some(m) => m.slice(hay, 1).raw,
    None => t,
  };
  let json = first_balanced_json(t).map_or(t, |(a, b)| &t[a..b]);
  calls_from_value(parse_json_units(json).as_ref())
}

fn qwen_function_body(body: Hay) -> Vec<(String, Obj)> {
  let p = patterns();
  let mut calls = Vec::new();
  for m in p.qwen_function.all(body) {
    let name = trim(m.slice(body, 1).raw);
    if name.is_empty() {
      continue;
    }
    let inner = m.slice(body, 2);
    let mut args = Obj::new();
    for param in p.qwen_param.all(inner) {
      let key = trim(param.slice(inner, 1).raw);
      if key.is_empty() {
        continue;
      }
      assign(
        &mut args,
        key,
        maybe_json(trim(param.slice(inner, 2).raw), &p.json_like),
      );
    }
    calls.push((string(name), args));
  }
  calls
}

/// GLM: `NAME <arg_key>k</arg_key><arg_value>v</arg_value>…`, keys and values paired by index.
fn glm_body(body: Hay) -> Option<(String, Obj)> {
  let p = patterns();
  let keys: Vec<&[u16]> = p
    .glm_key
    .all(body)
    .iter()
    .map(|m| trim(m.slice(body, 1).raw))
    .filter(|k| !k.is_empty())
    .collect();
  let values: Vec<&[u16]> = p
    .glm_value
    .all(body)
    .iter()
    .map(|m| trim(m.slice(body, 1).raw))
    .collect();
  let name_end = if keys.is_empty() {
    body.len()
  } else {
    p.glm_key_open.first_from(body, 0).map_or(body.len(), |m| m.start())
  };
  let name = first_token(&body.raw[..name_end]);
  if !is_identifier(name) {
    return None;
  }
  let mut args = Obj::new();
  for (i, key) in keys.iter().enumerate() {
    let value = values.get(i).copied().unwrap_or(&[]);
    assign(&mut args, key, maybe_json(value, &p.json_like));
  }
  Some((string(name), args))
}

// ─── Pythonic calls: granite (bare), llama (python_tag), olmo ───────────────

fn bare_pythonic(s: &mut Scan, grammar: Grammar) {
  let text = s.text;
  let mut parens = BalanceCache::new(b'(', b')');
  for m in pythonic_lines(text.raw) {
    if s.fenced(m.start()) {
      continue;
    }
    let start = m.start() + usize::from(text.raw[m.start()] == b'\n' as u16);
    let open = m.end() - 1;
    let Some(close) = parens.matching(text.raw, open) else {
      continue;
    };
    let line_start = text.raw[..=open]
      .iter()
      .rposition(|&u| u == b'\n' as u16)
      .map_or(0, |i| i + 1);
    if line_start < m.start() && !trim(&text.raw[line_start..m.start()]).is_empty() {
      continue;
    }
    // The first call of `text[start..=close]` is this one: its line starts the slice and its
    // parentheses close at the slice's end.
    // The first call of `text[start..=close]` is this one (its line starts the slice and its
    // parentheses close at the slice's end); its arguments are read after selection.
    if super::scan::plain::on() {
      if let Some((name, args)) = pythonic_calls(text.slice(start..close + 1)).into_iter().next() {
        s.push(name, args, grammar, start, close + 1);
      }
    } else {
      s.push(string(m.slice(text, 1).raw), Obj::new(), grammar, start, close + 1);
      if let Some(c) = s.out.last_mut() {
        c.keyword_arguments = Some((open + 1, close));
      }
    }
  }
}

fn llama_python_tag(s: &mut Scan) {
  let text = s.text;
  let marker = units("<|python_tag|>");
  let mut index = index_of(text.raw, &marker, 0);
  let mut json: Option<BalancedJson> = None;
  while let Some(at) = index {
    let next = if s.fenced(at) {
      at + marker.len()
    } else {
      let body_start = at + marker.len();
      let payload = text.len() - trim_start(&text.raw[body_start..]).len();
      let json = json.get_or_insert_with(|| BalancedJson::new(text.raw));
      if let Some((a, b)) = json.first_from(text.raw, payload) {
        let calls = calls_from_value(parse_json_units(&text.raw[a..b]).as_ref());
        s.push_calls(calls, Grammar::Llama, at, b);
        b
      } else {
        let line_end = index_of(text.raw, &[b'\n' as u16], payload).unwrap_or(text.len());
        let calls = pythonic_calls(text.slice(payload..line_end));
        s.push_calls(calls, Grammar::Llama, at, line_end);
        line_end
      }
    };
    index = index_of(text.raw, &marker, next);
  }
}

fn olmo(s: &mut Scan) {
  let text = s.text;
  for m in patterns().olmo.all(text) {
    if s.fenced(m.start()) {
      continue;
    }
    let calls = pythonic_calls(m.slice(text, 1));
    s.push_calls(calls, Grammar::Olmo, m.start(), m.end());
  }
}

/// `name(key=value, …)` calls that start a line of `text`.
fn pythonic_calls(text: Hay) -> Vec<(String, Obj)> {
  let mut calls = Vec::new();
  let mut parens = BalanceCache::new(b'(', b')');
  for m in pythonic_lines(text.raw) {
    let open = m.end() - 1;
    let Some(close) = parens.matching(text.raw, open) else {
      continue;
    };
    calls.push((
      string(m.slice(text, 1).raw),
      keyword_arguments(&text.raw[open + 1..close]),
    ));
  }
  calls
}

fn keyword_arguments(text: &[u16]) -> Obj {
  let p = patterns();
  let mut args = Obj::new();
  for part in split_top_level(text, b',' as u16) {
    let Some(eq) = find_top_level(part, b'=' as u16) else {
      continue;
    };
    let key = trim(&part[..eq]);
    if !is_identifier(key) {
      continue;
    }
    assign(&mut args, key, pythonish(trim(&part[eq + 1..]), &p.decimal));
  }
  args
}

/// The opener and closers the back-reference wrapper scanner uses.
#[cfg(test)]
pub(super) fn patterns_for_tests() -> (&'static Re, &'static Re, &'static Re) {
  let p = patterns();
  (&p.xml_open, &p.xml_close_tool_call, &p.xml_close_tools)
}

/// Every pattern searched with a tail.
#[cfg(test)]
pub(super) fn tailed_patterns_for_tests() -> Vec<&'static Re> {
  let p = patterns();
  vec![
    &p.dsml_param,
    &p.kimi_section,
    &p.kimi_call,
    &p.minimax,
    &p.invoke_wrapped,
    &p.invoke_standalone,
    &p.invoke_body,
    &p.invoke_param,
    &p.invoke_malformed_param,
    &p.qwen_bare_function,
    &p.qwen_function,
    &p.qwen_param,
    &p.glm_key,
    &p.glm_value,
    &p.olmo,
  ]
}

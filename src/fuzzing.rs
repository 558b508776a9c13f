//! Fuzz-target bodies: one function per parser, taking arbitrary bytes.
//!
//! The cargo-fuzz crate in `fuzz/` (nightly, coverage-guided) calls these, and the stable
//! `tests/fuzz_smoke.rs` replays the committed corpora plus deterministic mutations through them,
//! so CI exercises the same code without nightly. Each body derives its parameters from the first
//! few bytes and the parser input from the rest, drives the public core API and panics only when
//! an invariant breaks; any panic from inside the core is a bug, whatever the input.
//!
//! Not part of the addon's API: nothing here crosses N-API, and the release cdylib drops it.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use crate::chat::catalog::Model;
use crate::chat::sse::{SseDecoder, SseError, SseEvent, DEFAULT_MAX_LINE};
use crate::chat::types::{StreamEvent, StreamParser, WireOptions};
use crate::chat::wire::anthropic::AnthropicStreamParser;
use crate::chat::wire::openai_completions::{detect_compat, CompletionsParser};
use crate::chat::wire::openai_responses::{ResponsesApi, ResponsesParser};
use crate::js::jsnum::{number_to_string, string_to_number};
use crate::js::json;
use crate::js::text::{encode_str, from_utf16, is_js_whitespace, to_utf16, utf16_len};
use crate::js::value::{Obj, Value};
use crate::repair::config::{parse_legacy, parse_preprocessors};
use crate::repair::engine::{LegacyConfig, Outcome};
use crate::repair::envelope::{escape_json_string_control_characters, nesting_depth, recover_envelope, Limits};
use crate::repair::grammar::{
  parse_tool_grammar_leaks_utf16, recover_grammar_leaks, recover_parts, remaining_segments, Mode, PartIn,
  RecoveryOptions, GRAMMAR_NAMES,
};
use crate::repair::host::NoHost;
use crate::repair::pipeline::{run_repair_pipeline, PipelineConfig};
use crate::repair::preprocess::{FamilyMatch, Preprocessor};
use crate::repair::schema::Schema;
use crate::repair::tables::{builtin_tables_json, BUILTIN_TOOL_NAMES};
use crate::repair::RepairError;

/// Every target, by the name of its cargo-fuzz binary and corpus directory.
pub const TARGETS: [(&str, fn(&[u8])); 7] = [
  ("sse", sse),
  ("stream", stream),
  ("json", json),
  ("envelope", envelope),
  ("grammar", grammar),
  ("schema", schema),
  ("pipeline", pipeline),
];

/// Reads parameter bytes off the front of the input; missing bytes read as 0.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
  fn byte(&mut self) -> u8 {
    match self.0.split_first() {
      Some((&b, rest)) => {
        self.0 = rest;
        b
      }
      None => 0,
    }
  }
  fn rest(self) -> &'a [u8] {
    self.0
  }
}

/// Bytes as the JS string a caller would hand over: UTF-8 (lossy), in the crate's encoding.
fn js_text(b: &[u8]) -> String {
  encode_str(&String::from_utf8_lossy(b)).into_owned()
}

/// Bytes as UTF-16 code units (little-endian pairs, an odd last byte dropped): any JS string,
/// lone surrogates included.
fn units_of(b: &[u8]) -> Vec<u16> {
  b.chunks_exact(2).map(|p| u16::from_le_bytes([p[0], p[1]])).collect()
}

/// A small deterministic generator for parameters the input does not spell out.
struct XorShift(u64);

impl XorShift {
  fn new(seed: u64) -> XorShift {
    XorShift(seed | 1)
  }
  fn next(&mut self) -> u64 {
    let mut x = self.0;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    self.0 = x;
    x
  }
  fn below(&mut self, n: usize) -> usize {
    if n == 0 {
      0
    } else {
      (self.next() % n as u64) as usize
    }
  }
}

// ------------------------------------------------------------------------------------------------
// sse
// ------------------------------------------------------------------------------------------------

struct SseRun {
  events: Vec<SseEvent>,
  error: Option<SseError>,
}

fn sse_decode<'a>(chunks: impl IntoIterator<Item = &'a [u8]>, max_line: usize, flushing: bool) -> SseRun {
  let mut d = SseDecoder::new(max_line);
  let mut events = Vec::new();
  for c in chunks {
    if let Err(e) = d.feed(c, &mut events) {
      return SseRun { events, error: Some(e) };
    }
  }
  if flushing {
    d.finish_flushing(&mut events);
  } else {
    d.finish();
  }
  SseRun { events, error: None }
}

/// The event stream rules applied to the whole body at once, written independently of the
/// incremental decoder: what every chunking must produce.
fn sse_oracle(body: &[u8], flushing: bool) -> Vec<SseEvent> {
  let mut lines: Vec<&[u8]> = Vec::new();
  let (mut i, mut start) = (0, 0);
  while i < body.len() {
    match body[i] {
      b'\n' => {
        lines.push(&body[start..i]);
        i += 1;
        start = i;
      }
      b'\r' => {
        lines.push(&body[start..i]);
        i += 1;
        if body.get(i) == Some(&b'\n') {
          i += 1;
        }
        start = i;
      }
      _ => i += 1,
    }
  }
  if flushing {
    if start < body.len() {
      lines.push(&body[start..]);
    }
    lines.push(b"");
  }
  let mut out = Vec::new();
  let (mut event, mut data, mut has_data, mut id) = (String::new(), String::new(), false, None::<String>);
  for (n, line) in lines.into_iter().enumerate() {
    let line = if n == 0 {
      line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
    } else {
      line
    };
    if line.is_empty() {
      if has_data || !event.is_empty() {
        let mut d = std::mem::take(&mut data);
        if d.ends_with('\n') {
          d.pop();
        }
        out.push(SseEvent {
          event: std::mem::take(&mut event),
          data: d,
          id: id.clone(),
        });
      }
      event.clear();
      data.clear();
      has_data = false;
      continue;
    }
    if line[0] == b':' {
      continue;
    }
    let (field, value) = match line.iter().position(|&b| b == b':') {
      Some(c) => (&line[..c], line[c + 1..].strip_prefix(b" ").unwrap_or(&line[c + 1..])),
      None => (line, &b""[..]),
    };
    let value = String::from_utf8_lossy(value);
    match field {
      b"event" => event = value.into_owned(),
      b"data" => {
        data.push_str(&value);
        data.push('\n');
        has_data = true;
      }
      b"id" if !value.contains('\0') => id = Some(value.into_owned()),
      _ => {}
    }
  }
  out
}

/// A chunked run agrees with the one-shot run: the same events, or (bounds) the same error at the
/// same point; the per-event bound is only checked between chunks, so a run stopped by it has
/// seen a prefix of the events.
fn sse_agree(whole: &SseRun, split: &SseRun, what: &str) {
  match (&whole.error, &split.error) {
    (_, Some(SseError::EventTooLarge(_))) => {
      assert!(
        whole.events.starts_with(&split.events),
        "{what}: events before EventTooLarge are not a prefix"
      );
    }
    (None, None) | (Some(SseError::LineTooLong(_)), Some(SseError::LineTooLong(_))) => {
      assert_eq!(
        whole.events, split.events,
        "{what}: events differ from the one-shot decode"
      );
    }
    (a, b) => panic!("{what}: one-shot decode ended with {a:?}, chunked with {b:?}"),
  }
}

/// `sse`: [mode][cut count][cut lengths...][body]. Mode bit 0: flush the unterminated tail;
/// bit 1: a small line bound `1 + 8 * (mode >> 2)`. The body is decoded in one chunk, byte by
/// byte and at the fuzzer's cuts; all must agree, and with the default bound they must match the
/// independent whole-body oracle.
pub fn sse(data: &[u8]) {
  let mut r = Reader(data);
  let mode = r.byte();
  let cuts: Vec<usize> = (0..r.byte() % 32).map(|_| r.byte() as usize).collect();
  let body = r.rest();
  let flushing = mode & 1 != 0;
  let max_line = if mode & 2 != 0 {
    1 + 8 * (mode >> 2) as usize
  } else {
    DEFAULT_MAX_LINE
  };
  let whole = sse_decode([body], max_line, flushing);
  assert!(
    !matches!(whole.error, Some(SseError::EventTooLarge(_))),
    "a single chunk never checks the event bound"
  );
  if max_line == DEFAULT_MAX_LINE && body.len() < max_line {
    assert_eq!(whole.error, None);
    assert_eq!(
      whole.events,
      sse_oracle(body, flushing),
      "decoder disagrees with the oracle"
    );
  }
  let bytes = sse_decode(body.chunks(1), max_line, flushing);
  sse_agree(&whole, &bytes, "byte-by-byte");
  let mut pieces: Vec<&[u8]> = Vec::with_capacity(cuts.len() + 1);
  let mut at = 0;
  for len in cuts {
    let end = (at + len).min(body.len());
    pieces.push(&body[at..end]);
    at = end;
  }
  pieces.push(&body[at..]);
  let chunked = sse_decode(pieces, max_line, flushing);
  sse_agree(&whole, &chunked, "fuzzer-chunked");
}

// ------------------------------------------------------------------------------------------------
// stream
// ------------------------------------------------------------------------------------------------

const STREAM_PROVIDERS: [&str; 8] = [
  "openai",
  "anthropic",
  "deepseek",
  "zai",
  "openrouter",
  "together",
  "xai",
  "ant-ling",
];

/// `stream`: [api + provider][chunk length][body]. The body goes through the SSE decoder (in
/// chunks) into one of the wire stream parsers, then the body ends; nothing may panic.
pub fn stream(data: &[u8]) {
  let mut r = Reader(data);
  let sel = r.byte();
  let chunk = 1 + r.byte() as usize;
  let body = r.rest();
  let provider = STREAM_PROVIDERS[(sel >> 3) as usize % STREAM_PROVIDERS.len()];
  let grammar: HashMap<String, String> = [("apply_patch".to_string(), "patch".to_string())].into();
  let mut parser: Box<dyn StreamParser> = match sel & 7 {
    0 | 5 => Box::new(AnthropicStreamParser::new()),
    1 | 6 | 7 => {
      let model: Model = serde_json::from_value(serde_json::json!({
        "id": if sel & 0x40 != 0 { "anthropic/claude" } else { "gpt-x" },
        "api": "openai-completions",
        "provider": provider,
        "reasoning": sel & 0x80 != 0,
      }))
      .expect("model literal");
      Box::new(CompletionsParser::new(&detect_compat(&model), grammar))
    }
    2 => Box::new(ResponsesParser::new(
      ResponsesApi::OpenAi,
      &WireOptions::default(),
      grammar,
    )),
    3 => Box::new(ResponsesParser::new(
      ResponsesApi::Azure,
      &WireOptions::default(),
      grammar,
    )),
    _ => Box::new(ResponsesParser::new(
      ResponsesApi::Codex,
      &WireOptions::default(),
      grammar,
    )),
  };
  let mut decoder = SseDecoder::default();
  let mut events = Vec::new();
  let mut out: Vec<StreamEvent> = Vec::new();
  for piece in body.chunks(chunk) {
    decoder
      .feed(piece, &mut events)
      .expect("64 KiB bodies stay under the default bounds");
    for e in events.drain(..) {
      parser.on_event(&e, &mut out);
    }
  }
  if parser.flushes_unterminated_event() {
    decoder.finish_flushing(&mut events);
  } else {
    decoder.finish();
  }
  for e in events.drain(..) {
    parser.on_event(&e, &mut out);
  }
  parser.on_end(&mut out);
  // A second end (a transport that reports the close twice) must be harmless too.
  parser.on_end(&mut out);
  // One stream, one outcome: at most one terminal event, and nothing after it.
  if let Some(at) = out.iter().position(StreamEvent::is_terminal) {
    assert_eq!(at + 1, out.len(), "events after the terminal {:?}", out[at]);
  }
}

// ------------------------------------------------------------------------------------------------
// json
// ------------------------------------------------------------------------------------------------

/// Values equal as JS sees them through the wire form: strings and keys compared as UTF-16 code
/// units (two joined lone halves are the pair JS sees), numbers by bits with NaN equal to NaN.
fn same(a: &Value, b: &Value) -> bool {
  match (a, b) {
    (Value::Number(x), Value::Number(y)) => x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
    (Value::String(x), Value::String(y)) => x == y || to_utf16(x) == to_utf16(y),
    (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q)),
    (Value::Object(x), Value::Object(y)) => same_obj(x, y),
    _ => a == b,
  }
}

fn same_obj(x: &Obj, y: &Obj) -> bool {
  let dates = match (x.date_value(), y.date_value()) {
    (None, None) => true,
    (Some(p), Some(q)) => p.to_bits() == q.to_bits() || (p.is_nan() && q.is_nan()),
    _ => false,
  };
  dates
    && x.len() == y.len()
    && x
      .iter()
      .zip(y.iter())
      .all(|((k1, v1), (k2, v2))| (k1 == k2 || to_utf16(k1) == to_utf16(k2)) && same(v1, v2))
}

/// What must hold for any value `JSON.parse` produced.
fn json_round_trips(v: &Value) {
  let text = json::stringify(v)
    .expect("a parsed value stringifies")
    .expect("a parsed value is not undefined");
  let again = json::parse(&text).unwrap_or_else(|e| panic!("stringify output does not parse: {e}"));
  let text2 = json::stringify(&again).expect("stringify").expect("defined");
  assert_eq!(text, text2, "stringify(parse(stringify(v))) != stringify(v)");
  // The binding's wire form carries every value exactly.
  let wire = json::stringify_ext(v);
  let back = json::parse_ext_utf8(&wire).unwrap_or_else(|e| panic!("wire form does not parse: {e}"));
  assert!(same(v, &back), "wire round trip changed the value");
}

/// `json`: the input as JSON text three ways (UTF-8 as the binding encodes it, the extended wire
/// form, and UTF-16 code units with lone surrogates), with the round-trip invariants on every
/// success; plus `String(n)` / `Number(s)` on the input.
pub fn json(data: &[u8]) {
  let text = js_text(data);
  let plain = json::parse(&text);
  assert_eq!(
    plain,
    json::parse_utf8(&String::from_utf8_lossy(data)),
    "parse_utf8 differs from encode + parse"
  );
  if let Ok(v) = &plain {
    json_round_trips(v);
  }
  if let Ok(v) = json::parse_ext(&text) {
    let _ = json::stringify(&v);
    let _ = json::stringify_ext(&v);
  }
  let units = units_of(data);
  let s = from_utf16(&units);
  assert_eq!(to_utf16(&s), units, "UTF-16 round trip");
  assert_eq!(utf16_len(&s), units.len());
  if let Ok(v) = json::parse(&s) {
    json_round_trips(&v);
  }
  // Numbers: Number(s) never panics; String(n) reads back as n for every finite double.
  let _ = string_to_number(&text);
  if let Some(bytes) = data.get(..8) {
    let n = f64::from_le_bytes(bytes.try_into().expect("8 bytes"));
    let printed = number_to_string(n);
    let back = string_to_number(&printed);
    if n.is_nan() {
      assert!(back.is_nan());
    } else {
      assert!(back == n, "Number(String({n:?})) = {back:?} via {printed:?}");
    }
  }
}

// ------------------------------------------------------------------------------------------------
// envelope
// ------------------------------------------------------------------------------------------------

const ENVELOPE_RULES: [&str; 3] = [
  "envelope.decode-json",
  "envelope.escape-control-character",
  "envelope.unwrap-singleton-object-array",
];

/// `envelope`: [flags][limit bytes x4][text]. Flags bits 0-1 pick the limits (defaults without the
/// work clock, small fuzzer-chosen ones, all NaN, or the defaults with the 25 ms clock); bit 2
/// hands the parsed JSON value instead of the string. Checks the limits and shapes of the result.
pub fn envelope(data: &[u8]) {
  let mut r = Reader(data);
  let flags = r.byte();
  let p: [u8; 4] = [r.byte(), r.byte(), r.byte(), r.byte()];
  let text = js_text(r.rest());
  let limits = match flags & 3 {
    0 => Limits {
      max_work_ms: f64::INFINITY,
      ..Limits::default()
    },
    1 => Limits {
      max_input_bytes: p[0] as f64 * 16.0,
      max_nesting_depth: (p[1] % 8) as f64,
      max_decode_attempts: (p[2] % 5) as f64,
      max_candidates: (p[3] % 5) as f64,
      max_work_ms: f64::INFINITY,
      shared_references: p[3] & 0x80 != 0,
    },
    2 => Limits {
      max_input_bytes: f64::NAN,
      max_nesting_depth: f64::NAN,
      max_decode_attempts: f64::NAN,
      max_candidates: f64::NAN,
      max_work_ms: f64::NAN,
      shared_references: false,
    },
    _ => Limits::default(),
  };
  let escaped = escape_json_string_control_characters(&text);
  assert_eq!(
    escape_json_string_control_characters(&escaped),
    escaped,
    "control-character escaping is not idempotent"
  );
  let string_input = Value::String(text.clone());
  let input = if flags & 4 != 0 {
    json::parse(&text).unwrap_or(string_input)
  } else {
    string_input
  };
  let e = recover_envelope(&input, &limits).expect("parsed values are cloneable");
  if e.limited {
    assert!(e.value.is_none() && e.candidates.is_empty() && e.changes.is_empty());
  }
  for c in &e.changes {
    assert!(
      ENVELOPE_RULES.contains(&c.rule_id.as_str()),
      "unknown rule {}",
      c.rule_id
    );
  }
  let decodes = e.changes.iter().filter(|c| c.rule_id == "envelope.decode-json").count();
  if !limits.max_decode_attempts.is_nan() {
    assert!(decodes as f64 <= limits.max_decode_attempts);
  }
  if let (Value::Object(_), false) = (&input, e.limited) {
    assert!(e.changes.is_empty() && e.candidates.is_empty());
    assert_eq!(e.value.as_ref(), Some(&input), "an object envelope is itself");
  }
  if let Some(v) = &e.value {
    assert!(v.is_record(), "the recovered envelope is an object");
    assert!(e.candidates.is_empty());
    if !limits.max_nesting_depth.is_nan() {
      assert!(nesting_depth(v, limits.max_nesting_depth) <= limits.max_nesting_depth);
    }
  }
  if !e.candidates.is_empty() {
    assert!(matches!(&input, Value::String(_)), "candidates only come from text");
    if !limits.max_candidates.is_nan() {
      assert!(e.candidates.len() as f64 <= limits.max_candidates);
    }
    assert!(e.candidates.len() <= 4);
    assert!(e.candidates.iter().all(Value::is_record));
  }
}

// ------------------------------------------------------------------------------------------------
// grammar
// ------------------------------------------------------------------------------------------------

fn check_segments(segments: &[(usize, usize)], len: usize) {
  let mut end = 0;
  for (i, &(a, b)) in segments.iter().enumerate() {
    assert!(a < b && b <= len, "segment {a}..{b} of a {len}-unit text");
    assert!(i == 0 || a > end, "segments overlap or touch: ..{end} then {a}..");
    end = b;
  }
}

fn is_ws_unit(u: u16) -> bool {
  char::from_u32(u as u32).is_some_and(is_js_whitespace)
}

/// `remaining_segments` with arbitrary ranges: the kept text avoids every range, is trimmed, and
/// has no blank before a line break and no run of three line breaks.
fn check_removal(units: &[u16], rng: &mut XorShift) {
  let n = rng.below(5);
  let mut ranges: Vec<(usize, usize)> = (0..n)
    .map(|_| {
      let a = rng.below(units.len() + 1);
      (a, a + rng.below(units.len() - a + 1))
    })
    .collect();
  let removed = ranges.clone();
  let segments = remaining_segments(units, &mut ranges);
  check_segments(&segments, units.len());
  let mut kept = Vec::new();
  for &(a, b) in &segments {
    assert!(
      removed.iter().all(|&(s, e)| s == e || b <= s || e <= a),
      "kept {a}..{b} inside a removed range"
    );
    kept.extend_from_slice(&units[a..b]);
  }
  if let (Some(&first), Some(&last)) = (kept.first(), kept.last()) {
    assert!(!is_ws_unit(first) && !is_ws_unit(last), "kept text is not trimmed");
  }
  const NL: u16 = b'\n' as u16;
  for w in kept.windows(2) {
    assert!(
      !(w[1] == NL && (w[0] == b' ' as u16 || w[0] == b'\t' as u16)),
      "blank before a line break"
    );
  }
  assert!(
    !kept.windows(3).any(|w| w == [NL, NL, NL]),
    "three line breaks in a row"
  );
}

/// `grammar`: [flags][family mask lo][family mask hi][text]. Flags bit 0: the text is UTF-16 code
/// units (lone surrogates), else UTF-8; bits 1-2 the mode; 3 no known tools; 4 restrict recovery
/// to the masked families; 5 `requireKnownTool: false`; 6 `unknownToolText: "strip"`; 7 stop
/// reason "length". Mask hi bit 7 adds a real tool call part, bit 6 splits the text into a text
/// and a thinking part. Parses with all and with the masked families, recovers over parts and
/// over a message (which must agree), and removes arbitrary ranges.
pub fn grammar(data: &[u8]) {
  let mut r = Reader(data);
  let flags = r.byte();
  let lo = r.byte();
  let hi = r.byte();
  let rest = r.rest();
  let units: Vec<u16> = if flags & 1 != 0 {
    units_of(rest)
  } else {
    to_utf16(&String::from_utf8_lossy(rest))
  };
  let mask = lo as u16 | ((hi as u16) << 8);
  let names: Vec<&str> = GRAMMAR_NAMES
    .iter()
    .enumerate()
    .filter(|(i, _)| mask & (1 << i) != 0)
    .map(|(_, n)| *n)
    .collect();

  let all = parse_tool_grammar_leaks_utf16(&units, None);
  let some = parse_tool_grammar_leaks_utf16(&units, Some(&names));
  for c in &some {
    assert!(
      names.contains(&c.grammar),
      "{} leak found with only {names:?} enabled",
      c.grammar
    );
  }
  let none = parse_tool_grammar_leaks_utf16(&units, Some(&["no-such-grammar"]));
  assert!(none.is_empty());

  let mode = [Mode::Off, Mode::Observe, Mode::Strip, Mode::Recover][(flags >> 1) as usize & 3];
  let known: Vec<String> = if flags & 8 != 0 {
    Vec::new()
  } else {
    let mut k: Vec<String> = all.iter().take(3).map(|c| c.name.clone()).collect();
    k.extend(["read".to_string(), "bash".to_string()]);
    k
  };
  let mut options = RecoveryOptions::new(mode, known);
  if flags & 16 != 0 {
    options.grammars = Some(names.iter().map(|n| n.to_string()).collect());
  }
  options.require_known_tool = flags & 32 == 0;
  options.unknown_tool_text_strip = flags & 64 != 0;
  let stop = if flags & 128 != 0 { "length" } else { "stop" };
  let split = if hi & 0x40 != 0 {
    units.len() * (hi & 0x3f) as usize / 64
  } else {
    units.len()
  };
  let texts: Vec<(&'static str, &[u16])> = if split < units.len() {
    vec![("text", &units[..split]), ("thinking", &units[split..])]
  } else {
    vec![("text", &units[..])]
  };
  let tool_call = hi & 0x80 != 0;
  let mut parts: Vec<PartIn> = texts
    .iter()
    .map(|&(field, units)| PartIn::Text { field, units })
    .collect();
  if tool_call {
    parts.push(PartIn::ToolCall);
  }
  let now = 1_700_000_000_000.0 + lo as f64;
  let pr = recover_parts(&parts, Some(stop), &options, now);
  match mode {
    Mode::Off => assert_eq!(pr, Default::default()),
    Mode::Observe => assert!(!pr.changed && pr.replaced.is_empty() && pr.recovered_calls.is_empty()),
    _ => {}
  }
  if pr.promoted {
    assert!(mode == Mode::Recover && stop == "stop" && !tool_call && !pr.recovered_calls.is_empty());
  } else {
    assert!(pr.recovered_calls.is_empty() && pr.promoted_call_ids.is_empty());
  }
  assert_eq!(pr.recovered_calls.len(), pr.promoted_call_ids.len());
  assert_eq!(pr.changed, !pr.replaced.is_empty() || pr.promoted);
  assert!(pr.stripped_ranges <= pr.detected_ranges);
  if options.grammars.is_some() {
    assert!(pr.detected_grammars.iter().all(|g| names.contains(g)));
  }
  for (index, segments) in &pr.replaced {
    let Some(PartIn::Text { units, .. }) = parts.get(*index) else {
      panic!("replaced part {index} is not a text part");
    };
    check_segments(segments, units.len());
  }

  // The same recovery over a message value.
  let mut content: Vec<Value> = texts
    .iter()
    .map(|&(field, units)| {
      let mut part = Obj::new();
      part.set("type", Value::str(field));
      part.set(field, Value::String(from_utf16(units)));
      Value::Object(part)
    })
    .collect();
  if tool_call {
    let mut part = Obj::new();
    part.set("type", Value::str("toolCall"));
    part.set("id", Value::str("real-1"));
    part.set("name", Value::str("bash"));
    part.set("arguments", Value::Object(Obj::new()));
    content.push(Value::Object(part));
  }
  let mut message = Obj::new();
  message.set("role", Value::str("assistant"));
  message.set("content", Value::Array(content));
  message.set("stopReason", Value::str(stop));
  let mr = recover_grammar_leaks(&Value::Object(message), &options, now);
  assert_eq!(
    (
      mr.changed,
      mr.promoted,
      mr.observed,
      mr.detected_ranges,
      mr.stripped_ranges
    ),
    (
      pr.changed,
      pr.promoted,
      pr.observed,
      pr.detected_ranges,
      pr.stripped_ranges
    ),
    "message recovery disagrees with parts recovery"
  );
  assert_eq!(mr.recovered_calls, pr.recovered_calls);
  assert_eq!(mr.message.is_some(), mr.changed);
  if let Some(Value::Object(m)) = &mr.message {
    let Some(Value::Array(content)) = m.get("content") else {
      panic!("recovered message without content");
    };
    assert_eq!(content.len(), parts.len() + mr.recovered_calls.len());
    for (index, segments) in &pr.replaced {
      let (field, units) = texts[*index];
      let mut joined = Vec::new();
      for &(a, b) in segments {
        joined.extend_from_slice(&units[a..b]);
      }
      let got = content[*index].get_key(field).and_then(Value::as_str).map(to_utf16);
      assert_eq!(
        got.as_deref(),
        Some(&joined[..]),
        "message text differs from the segments"
      );
    }
  }

  let seed = u64::from_le_bytes([flags, lo, hi, 0, 0, 0, 0, 0]) ^ (units.len() as u64).rotate_left(32);
  check_removal(&units, &mut XorShift::new(seed));
}

// ------------------------------------------------------------------------------------------------
// schema
// ------------------------------------------------------------------------------------------------

/// Values every schema is also checked against (besides the input's own value and text).
const SCHEMA_PROBES: [&str; 16] = [
  "null",
  "true",
  "0",
  "-1.5",
  "\"\"",
  "\"1\"",
  "\"a.txt\"",
  "[]",
  "[1,\"a\",null]",
  "{}",
  "{\"path\":\"a\",\"limit\":\"5\"}",
  "{\"a\":{\"b\":[{\"c\":1}]}}",
  "\"2024-01-01T00:00:00Z\"",
  "[[[[[[[[1]]]]]]]]",
  "{\"0\":1,\"1\":[],\"__proto__\":{}}",
  "1e400",
];

/// What must hold for a compiled schema and one value.
fn schema_checks(s: &Schema, v: &Value, limit: usize) {
  let ok = s.check(v);
  let tried = s.try_check(v);
  assert_eq!(ok, matches!(tried, Ok(true)), "check and try_check disagree");
  let errors = s.errors(v, limit);
  assert!(errors.len() <= limit, "{} errors with a limit of {limit}", errors.len());
  if let (Ok(valid), Ok(errors)) = (tried, s.try_errors(v, limit)) {
    assert!(errors.len() <= limit);
    if limit > 0 {
      assert_eq!(
        valid,
        errors.is_empty(),
        "Check says {valid} but Errors lists {}",
        errors.len()
      );
    }
  }
  if let Ok(converted) = s.convert(v.clone()) {
    let _ = s.check(&converted);
    let _ = json::stringify_ext(&converted);
  }
}

/// `schema`: [flags][schema JSON] NUL [value JSON]. The schema (any JSON; flags bit 0 makes
/// unparsable text the schema `true`/`false`) is compiled, then checked, listed and converted
/// against the value, the value's raw text as a string, and two fixed probes (flags bits 1-4);
/// `errors` uses the limit `flags >> 5`.
pub fn schema(data: &[u8]) {
  let mut r = Reader(data);
  let flags = r.byte();
  let rest = r.rest();
  let (schema_bytes, value_bytes) = match rest.iter().position(|&b| b == 0) {
    Some(at) => (&rest[..at], Some(&rest[at + 1..])),
    None => (rest, None),
  };
  let schema_value = match json::parse(&js_text(schema_bytes)) {
    Ok(v) => v,
    Err(_) => Value::Bool(flags & 1 != 0),
  };
  let Ok(compiled) = Schema::compile(&schema_value) else {
    return;
  };
  let limit = (flags >> 5) as usize;
  let mut values: Vec<Value> = Vec::new();
  if let Some(vb) = value_bytes {
    let text = js_text(vb);
    if let Ok(v) = json::parse(&text) {
      values.push(v);
    }
    values.push(Value::String(text));
  } else {
    values.push(schema_value.clone());
  }
  for i in [(flags >> 1) & 15, ((flags >> 1) & 15) ^ 15] {
    values.push(json::parse(SCHEMA_PROBES[i as usize]).expect("probe"));
  }
  values.push(Value::Undefined);
  for v in &values {
    schema_checks(&compiled, v, limit);
  }
}

// ------------------------------------------------------------------------------------------------
// pipeline
// ------------------------------------------------------------------------------------------------

/// pi's built-in tool schemas as TypeBox builds them (with its `~kind` / `~optional` markers).
fn builtin_schema_json(tool: &str) -> &'static str {
  match tool {
    "read" => {
      r#"{"~kind":"Object","type":"object","required":["path"],"properties":{"path":{"~kind":"String","type":"string"},"offset":{"~kind":"Number","type":"number","~optional":true},"limit":{"~kind":"Number","type":"number","~optional":true}}}"#
    }
    "bash" => {
      r#"{"~kind":"Object","type":"object","required":["command"],"properties":{"command":{"~kind":"String","type":"string"},"timeout":{"~kind":"Number","type":"number","~optional":true}}}"#
    }
    "edit" => {
      r#"{"~kind":"Object","type":"object","required":["path","edits"],"properties":{"path":{"~kind":"String","type":"string"},"edits":{"~kind":"Array","type":"array","items":{"~kind":"Object","type":"object","required":["oldText","newText"],"properties":{"oldText":{"~kind":"String","type":"string"},"newText":{"~kind":"String","type":"string"}}}}}}"#
    }
    "write" => {
      r#"{"~kind":"Object","type":"object","required":["path","content"],"properties":{"path":{"~kind":"String","type":"string"},"content":{"~kind":"String","type":"string"}}}"#
    }
    "grep" => {
      r#"{"~kind":"Object","type":"object","required":["pattern"],"properties":{"pattern":{"~kind":"String","type":"string"},"path":{"~kind":"String","type":"string","~optional":true},"glob":{"~kind":"String","type":"string","~optional":true},"ignoreCase":{"~kind":"Boolean","type":"boolean","~optional":true},"literal":{"~kind":"Boolean","type":"boolean","~optional":true},"context":{"~kind":"Number","type":"number","~optional":true},"limit":{"~kind":"Number","type":"number","~optional":true}}}"#
    }
    "find" => {
      r#"{"~kind":"Object","type":"object","required":["pattern"],"properties":{"pattern":{"~kind":"String","type":"string"},"path":{"~kind":"String","type":"string","~optional":true},"limit":{"~kind":"Number","type":"number","~optional":true}}}"#
    }
    _ => {
      r#"{"~kind":"Object","type":"object","properties":{"path":{"~kind":"String","type":"string","~optional":true},"limit":{"~kind":"Number","type":"number","~optional":true}}}"#
    }
  }
}

struct BuiltinTool {
  name: &'static str,
  schema: Schema,
  preprocessors: Vec<Preprocessor>,
  legacy: LegacyConfig,
}

fn builtin_tools() -> &'static [BuiltinTool] {
  static TOOLS: OnceLock<Vec<BuiltinTool>> = OnceLock::new();
  TOOLS.get_or_init(|| {
    let tables = json::parse(&builtin_tables_json()).expect("built-in tables");
    BUILTIN_TOOL_NAMES
      .iter()
      .map(|&name| {
        let entry = tables.get_key(name).expect("table entry");
        BuiltinTool {
          name,
          schema: Schema::compile(&json::parse(builtin_schema_json(name)).expect("schema")).expect("compiles"),
          preprocessors: parse_preprocessors(entry.get_key("preprocessors").expect("preprocessors")),
          legacy: parse_legacy(entry.get_key("legacyConfig").expect("legacy")),
        }
      })
      .collect()
  })
}

/// `pipeline`: [flags][tool][input]. Flags bit 0 allows truncated-envelope completion, 1
/// valid-value transforms, 2 declares an owner shim (the host returns its argument), 3 turns the
/// model-family heuristics on, 4 keeps the 25 ms work clock, 5 hands the text as a string even
/// when it is JSON, 6 passes a byte-size hint. Bit 7 reads the rest as `schema NUL preprocessors
/// NUL legacy config NUL input` (a caller's own configuration), else a built-in tool is used. The
/// outcome must agree with its changes and a repaired value must pass the schema.
pub fn pipeline(data: &[u8]) {
  let mut r = Reader(data);
  let flags = r.byte();
  let tool_sel = r.byte();
  let rest = r.rest();
  let tools = builtin_tools();
  let tool = &tools[tool_sel as usize % tools.len()];
  let custom: Option<(Schema, Vec<Preprocessor>, LegacyConfig, &[u8])> = if flags & 0x80 != 0 {
    let mut parts = rest.splitn(4, |&b| b == 0);
    let mut next_json = || parts.next().and_then(|p| json::parse(&js_text(p)).ok());
    let schema_value = next_json().unwrap_or(Value::Bool(true));
    let preprocessors = next_json().map(|v| parse_preprocessors(&v)).unwrap_or_default();
    let legacy = next_json().map(|v| parse_legacy(&v)).unwrap_or_default();
    let Ok(schema) = Schema::compile(&schema_value) else {
      return;
    };
    let input = rest.splitn(4, |&b| b == 0).nth(3).unwrap_or(b"");
    Some((schema, preprocessors, legacy, input))
  } else {
    None
  };
  let (schema, preprocessors, legacy, input_bytes, tool_name) = match &custom {
    Some((s, p, l, i)) => (s, &p[..], l, *i, "custom_tool"),
    None => (&tool.schema, &tool.preprocessors[..], &tool.legacy, rest, tool.name),
  };
  let text = js_text(input_bytes);
  let string_input = Value::String(text.clone());
  let input = if flags & 32 != 0 {
    string_input
  } else {
    json::parse(&text).unwrap_or(string_input)
  };
  let family_match = if flags & 8 != 0 {
    vec![FamilyMatch::Yes; preprocessors.len()]
  } else {
    Vec::new()
  };
  let limits = if flags & 16 != 0 {
    Limits::default()
  } else {
    Limits {
      max_work_ms: f64::INFINITY,
      ..Limits::default()
    }
  };
  let config = PipelineConfig {
    tool_name,
    schema,
    allow_truncated_envelope_completion: flags & 1 != 0,
    allow_valid_value_transforms: flags & 2 != 0,
    preprocessors,
    family_match: &family_match,
    legacy,
    has_owner_shim: flags & 4 != 0,
    limits,
    input_bytes_hint: if flags & 64 != 0 && !matches!(input, Value::String(_)) {
      Some(input_bytes.len() as f64)
    } else {
      None
    },
  };
  let result = match run_repair_pipeline(&input, &config, &mut NoHost) {
    Ok(result) => result,
    // A caller's configuration may name JS callbacks (no host here) or throwing entries, and its
    // schema may hold invalid regular expressions or recurse without end.
    Err(
      RepairError::Config(_) | RepairError::TypeError(_) | RepairError::InvalidRegex(_) | RepairError::RangeError(_),
    ) if custom.is_some() => return,
    Err(e) => panic!("the built-in pipeline failed: {e:?}"),
  };
  match result.outcome {
    Outcome::Valid => assert!(result.changes.is_empty(), "valid with changes"),
    Outcome::Repaired => {
      assert!(!result.changes.is_empty(), "repaired without changes");
      let args = result.args.as_ref().expect("repaired args");
      assert!(schema.check(args), "repaired args fail the schema");
    }
    Outcome::Unrepairable => assert!(result.args.is_none() && result.changes.is_empty()),
  }
  let rules: HashSet<&str> = result.changes.iter().map(|c| c.rule_id.as_str()).collect();
  assert!(rules.iter().all(|r| !r.is_empty()), "a change without a rule id");
}

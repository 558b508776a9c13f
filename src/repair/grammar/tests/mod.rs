//! Tests for grammar-leak recovery. The table-driven cases (cases.rs) pin exact reference results;
//! the rest check offsets, selection, the hand-written scanners against the reference patterns,
//! and that long texts scan in linear time.

mod cases;
mod growth;

use std::time::{Duration, Instant};

use super::families::{candidates, Enabled};
use super::manual;
use super::scan::{neutralise, string, Hay, Re};
use super::*;
use crate::obj;
use crate::repair::json;
use cases::*;

/// 1 700 000 000 123 ms, `loyw3v5n` in base 36.
pub const NOW: f64 = 1_700_000_000_123.0;

pub struct ParseCase {
  pub id: &'static str,
  pub text: &'static str,
  pub grammars: Option<&'static [&'static str]>,
  pub expected: &'static str,
}

pub struct RecoverCase {
  pub id: &'static str,
  pub message: &'static str,
  pub mode: &'static str,
  pub known_tools: &'static [&'static str],
  pub grammars: Option<&'static [&'static str]>,
  pub require_known_tool: bool,
  pub unknown_tool_text_strip: bool,
  pub now_ms: f64,
  pub expected: &'static str,
}

fn calls_value(list: &[RecoveredToolCall]) -> Value {
  Value::Array(
    list
      .iter()
      .map(|c| {
        obj! {
          "name" => Value::str(c.name.clone()),
          "arguments" => Value::Object(c.arguments.clone()),
          "grammar" => Value::str(c.grammar),
        }
      })
      .collect(),
  )
}

fn strings<S: AsRef<str>>(list: &[S]) -> Value {
  Value::Array(list.iter().map(|s| Value::str(s.as_ref())).collect())
}

fn stringify(v: &Value) -> String {
  json::stringify(v).expect("serialisable").expect("not undefined")
}

/// The result as the reference's `GrammarRecoveryResult` serialises, plus whether the returned
/// message is the caller's object.
fn result_json(r: &RecoveryResult, input: &Value) -> String {
  stringify(&obj! {
    "changed" => Value::Bool(r.changed),
    "recoveredCalls" => calls_value(&r.recovered_calls),
    "strippedGrammars" => strings(&r.stripped_grammars),
    "strippedRanges" => Value::Number(r.stripped_ranges as f64),
    "promoted" => Value::Bool(r.promoted),
    "observed" => Value::Bool(r.observed),
    "detectedGrammars" => strings(&r.detected_grammars),
    "detectedRanges" => Value::Number(r.detected_ranges as f64),
    "promotedCallIds" => strings(&r.promoted_call_ids),
    "message" => r.message.clone().unwrap_or_else(|| input.clone()),
    "messageIsInput" => Value::Bool(r.message.is_none()),
  })
}

fn options(c: &RecoverCase) -> RecoveryOptions {
  let mut o = RecoveryOptions::new(Mode::from_name(c.mode).expect("mode"), c.known_tools.iter().copied());
  o.grammars = c.grammars.map(|g| g.iter().map(|s| s.to_string()).collect());
  o.require_known_tool = c.require_known_tool;
  o.unknown_tool_text_strip = c.unknown_tool_text_strip;
  o
}

fn parse_json(c: &ParseCase) -> String {
  stringify(&calls_value(&parse_tool_grammar_leaks(c.text, c.grammars)))
}

fn run_parse(cases: &[ParseCase]) {
  let failures: Vec<String> = cases
    .iter()
    .filter_map(|c| {
      let got = parse_json(c);
      (got != c.expected).then(|| format!("{}:\n  got  {got}\n  want {}", c.id, c.expected))
    })
    .collect();
  assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn run_recover(cases: &[RecoverCase]) {
  let failures: Vec<String> = cases
    .iter()
    .filter_map(|c| {
      let message = json::parse(c.message).expect("message JSON");
      let got = result_json(&recover_grammar_leaks(&message, &options(c), c.now_ms), &message);
      (got != c.expected).then(|| format!("{}:\n  got  {got}\n  want {}", c.id, c.expected))
    })
    .collect();
  assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn parse(text: &str, grammars: Option<&[&str]>) -> String {
  stringify(&calls_value(&parse_tool_grammar_leaks(text, grammars)))
}

// ─── Recorded cases ──────────────────────────────────────────────────────────

#[test]
fn conformance_cases() {
  run_parse(CONFORMANCE_PARSE);
  run_recover(CONFORMANCE_RECOVER);
  assert!(model_leaks_grammar(Some("DeepSeek-V3")));
}

#[test]
fn reference_suite_cases() {
  run_parse(REFERENCE_SUITE_PARSE);
  run_recover(REFERENCE_SUITE_RECOVER);
}

#[test]
fn dsml_family() {
  run_parse(DSML_PARSE);
  run_recover(DSML_RECOVER);
}

#[test]
fn kimi_family() {
  run_parse(KIMI_PARSE);
}

#[test]
fn mistral_family() {
  run_parse(MISTRAL_PARSE);
}

#[test]
fn minimax_text_family() {
  run_parse(MINIMAX_TEXT_PARSE);
  run_recover(MINIMAX_TEXT_RECOVER);
}

#[test]
fn invoke_family() {
  run_parse(INVOKE_PARSE);
}

#[test]
fn qwen_family() {
  run_parse(QWEN_PARSE);
}

#[test]
fn glm_family() {
  run_parse(GLM_PARSE);
}

#[test]
fn granite_family() {
  run_parse(GRANITE_PARSE);
}

#[test]
fn llama_family() {
  run_parse(LLAMA_PARSE);
}

#[test]
fn olmo_family() {
  run_parse(OLMO_PARSE);
}

#[test]
fn every_family_fenced_unfenced_and_after_a_fence() {
  run_parse(FENCES_PARSE);
}

#[test]
fn mixed_families_in_one_text() {
  run_parse(MIXED_PARSE);
}

#[test]
fn promotion_gates() {
  run_recover(GATES_RECOVER);
}

// ─── Case folding and the back-reference wrapper ─────────────────────────────

#[test]
fn case_folding_is_ascii_only_without_u() {
  run_parse(FOLDING_PARSE);
  // `i` without `u`: ASCII letters fold, U+017F / U+212A / U+0131 do not match s / k / i.
  assert!(model_leaks_grammar(Some("DEEPSEEK-R1")));
  assert!(!model_leaks_grammar(Some("deep\u{17f}eek")));
  assert!(!model_leaks_grammar(Some("\u{212a}imi")));
  assert!(!model_leaks_grammar(Some("k\u{131}mi")));
  assert!(!model_leaks_grammar(Some("gpt-4o")));
  assert!(!model_leaks_grammar(Some("")));
  assert!(!model_leaks_grammar(None));
  let upper = r#"<TOOL_CALL>{"name":"read","arguments":{"path":"a"}}</TOOL_CALL>"#;
  assert_eq!(
    parse(upper, Some(&["qwen"])),
    r#"[{"name":"read","arguments":{"path":"a"},"grammar":"qwen"}]"#
  );
  let look_alike = "<tool_ca\u{212a}>{\"name\":\"read\",\"arguments\":{\"path\":\"a\"}}</tool_ca\u{212a}>";
  assert_eq!(parse(look_alike, Some(&["qwen"])), "[]");
}

#[test]
fn dsml_folds_with_unicode_rules() {
  // DSML patterns carry `u`: U+017F folds to s and U+212A to k there.
  let text = "<\u{ff5c}D\u{17f}ML\u{ff5c}tool_calls><\u{ff5c}DSML\u{ff5c}invo\u{212a}e name=\"bash\">\
              <\u{ff5c}DSML\u{ff5c}parameter name=\"command\">pwd</\u{ff5c}DSML\u{ff5c}parameter>\
              </\u{ff5c}DSML\u{ff5c}invoke></\u{ff5c}DSML\u{ff5c}tool_calls>";
  assert_eq!(
    parse(text, Some(&["dsml"])),
    r#"[{"name":"bash","arguments":{"command":"pwd"},"grammar":"dsml"}]"#
  );
}

#[test]
fn back_reference_pairs_same_tag_case_insensitively() {
  let units = to_utf16("a <tools>x</TOOLS> <tool_call>y</tools> z</Tool_Call> <tools>never closed");
  let safe = neutralise(&units);
  let hay = Hay::new(&units, &safe);
  let p = families::patterns_for_tests();
  let spans: Vec<_> = manual::xml_wrappers(hay, p.0, p.1, p.2)
    .iter()
    .map(|h| h.range.clone())
    .collect();
  assert_eq!(spans, [2..18, 19..53]);
}

// ─── Offsets ─────────────────────────────────────────────────────────────────

#[test]
fn offsets_are_utf16_code_units() {
  run_parse(OFFSETS_PARSE);
  run_recover(OFFSETS_RECOVER);
  // Two astral characters (two units each), a space, a BMP letter, a space: the leak starts at 7.
  let leak = r#"<tool_call>{"name":"read","arguments":{"path":"a"}}</tool_call>"#;
  let text = format!("\u{1F600}\u{1F680} \u{e9} {leak} \u{fc}");
  let found = candidates(&to_utf16(&text), Enabled::all());
  let ranges: Vec<(usize, usize)> = found.iter().map(|c| (c.start, c.end)).collect();
  let end = 7 + leak.len();
  // In family order: bare JSON seen by mistral, the wrapper (granite), bare JSON seen by llama.
  assert_eq!(ranges, [(18, end - 12), (7, end), (18, end - 12)]);
  let selected = select(found);
  assert_eq!(selected.len(), 1);
  assert_eq!(
    (selected[0].start, selected[0].end, selected[0].grammar),
    (7, end, Grammar::Granite)
  );
}

// ─── Selection, removal, ids ─────────────────────────────────────────────────

/// A small deterministic generator for the property checks.
struct Lcg(u64);

impl Lcg {
  fn next(&mut self) -> u64 {
    self.0 = self
      .0
      .wrapping_mul(6364136223846793005)
      .wrapping_add(1442695040888963407);
    self.0 >> 33
  }
  fn below(&mut self, n: usize) -> usize {
    (self.next() % n as u64) as usize
  }
}

fn candidate(start: usize, end: usize, tag: usize) -> Candidate {
  Candidate {
    name: tag.to_string(),
    arguments: Obj::new(),
    grammar: Grammar::ALL[tag % 10],
    start,
    end,
    strip_only: false,
    keyword_arguments: None,
  }
}

#[test]
fn selection_matches_its_quadratic_definition() {
  let mut rng = Lcg(7);
  for _ in 0..2000 {
    let n = rng.below(12);
    let list: Vec<Candidate> = (0..n)
      .map(|i| {
        let start = rng.below(30);
        candidate(start, start + 1 + rng.below(10), i)
      })
      .collect();
    // The reference: stable sort, then keep what overlaps no kept candidate with another range.
    let mut sorted = list.clone();
    sorted.sort_by(|a, b| a.start.cmp(&b.start).then((b.end - b.start).cmp(&(a.end - a.start))));
    let mut want: Vec<Candidate> = Vec::new();
    for c in sorted {
      let clash = want
        .iter()
        .any(|k| !(k.start == c.start && k.end == c.end) && k.start < c.end && c.start < k.end);
      if !clash {
        want.push(c);
      }
    }
    let got = select(list);
    let key = |v: &[Candidate]| v.iter().map(|c| (c.start, c.end, c.name.clone())).collect::<Vec<_>>();
    assert_eq!(key(&got), key(&want));
  }
}

#[test]
fn removal_tidies_white_space_and_trims() {
  let text = to_utf16("  keep \t LEAK\nnext  \nline\n\n\n\n\nend\u{3000}");
  let start = 9;
  let mut ranges = [(start, start + 4), (start + 1, start + 2)];
  assert_eq!(remove_ranges(&text, &mut ranges), "keep\nnext\nline\n\nend");
}

#[test]
fn call_ids_use_base36_time_and_sanitised_grammar() {
  assert_eq!(
    recovered_call_id("minimax-text", NOW, 2),
    "tool_repair_minimax_text_loyw3v5n_2"
  );
  assert_eq!(
    recovered_call_id("glm", 1_795_994_808_857.0, 0),
    "tool_repair_glm_mx2gxrmh_0"
  );
  assert_eq!(recovered_call_id("dsml", 0.0, 1), "tool_repair_dsml_0_1");
}

#[test]
fn unchanged_results_keep_the_callers_message() {
  let message = json::parse(r#"{"role":"assistant","stopReason":"stop","content":[{"type":"text","text":"hello"}]}"#)
    .expect("json");
  let r = recover_grammar_leaks(&message, &RecoveryOptions::new(Mode::Recover, ["read"]), NOW);
  assert_eq!(r, RecoveryResult::default());
  let message = json::parse(r#"{"role":"assistant","stopReason":"stop","content":[{"type":"text","text":"<tool_call>read\n<arg_key>path</arg_key><arg_value>a</arg_value></tool_call>"}]}"#)
    .expect("json");
  let r = recover_grammar_leaks(&message, &RecoveryOptions::new(Mode::Observe, ["read"]), NOW);
  assert!(r.observed && r.message.is_none() && !r.changed);
  assert_eq!((r.detected_grammars, r.detected_ranges), (vec!["glm"], 1));
}

// ─── Hand-written scanners and tails against the reference patterns ──────────

const ALPHABET: &[&str] = &[
  "\n",
  "\n",
  " ",
  "\t",
  "\u{3000}",
  "x",
  "read",
  "a_b.c-d",
  "(",
  ")",
  "=",
  "'",
  "\"",
  ">",
  "/",
  "invoke",
  "INVOKE",
  "invo\u{212a}e",
  " name=",
  "name=",
  "parameter>",
  "/invoke>",
  "<tool_call>",
  "</tool_call>",
  "<TOOLS>",
  "<tools>",
  "</tools>",
  "</Tool_Call>",
  "\u{17f}",
  "\u{131}",
  "<function=f>",
  "</function>",
  "<minimax:tool_call>",
  "</minimax:tool_call>",
  "\u{1F600}",
];

fn random_text(rng: &mut Lcg) -> Vec<u16> {
  let n = rng.below(60);
  to_utf16(&(0..n).map(|_| ALPHABET[rng.below(ALPHABET.len())]).collect::<String>())
}

type Span = (std::ops::Range<usize>, Vec<Option<std::ops::Range<usize>>>);

fn spans(hits: &[scan::Hit]) -> Vec<Span> {
  hits
    .iter()
    .map(|h| (h.range.clone(), (1..=3).map(|g| h.group(g)).collect()))
    .collect()
}

#[test]
fn manual_scanners_equal_the_reference_patterns() {
  let pythonic = Re::new(r"(?:^|\n)\s*([A-Za-z_][\w.-]*)\s*\(", "");
  let malformed = Re::new(
    r#"(?:^|\n)(\s*)invoke\s+name=["']([^"']+)["']\s*>([\s\S]*?)(?:\n\s*(?:\/invoke|invoke)>|$)"#,
    "i",
  );
  let wrapper = Re::new(r"<(tool_call|tools)>[\s\S]*?<\/\1>", "i");
  let p = families::patterns_for_tests();
  let mut rng = Lcg(11);
  for _ in 0..4000 {
    let text = random_text(&mut rng);
    let safe = neutralise(&text);
    let hay = Hay::new(&text, &safe);
    assert_eq!(
      spans(&manual::pythonic_lines(&text)),
      spans(&pythonic.all(hay)),
      "{}",
      string(&text)
    );
    // Group 1 (the leading white space) is not used; compare the span, name and body.
    let without_lead = |v: Vec<scan::Hit>| {
      spans(&v)
        .into_iter()
        .map(|(r, g)| (r, g[1].clone(), g[2].clone()))
        .collect::<Vec<_>>()
    };
    assert_eq!(
      without_lead(manual::malformed_invokes(&text)),
      without_lead(malformed.all(hay)),
      "{}",
      string(&text)
    );
    assert_eq!(
      spans(&manual::xml_wrappers(hay, p.0, p.1, p.2)),
      spans(&wrapper.all(hay)),
      "{}",
      string(&text)
    );
  }
}

#[test]
fn shared_bracket_matching_equals_one_scan_per_opener() {
  let alphabet = ["{", "}", "[", "]", "\"", "'", "\\", "x", " ", "{\"name\""];
  let mut rng = Lcg(3);
  for _ in 0..3000 {
    let n = rng.below(40);
    let text = to_utf16(&(0..n).map(|_| alphabet[rng.below(alphabet.len())]).collect::<String>());
    for (open, close) in [(b'{', b'}'), (b'[', b']')] {
      let mut cache = manual::BalanceCache::new(open, close);
      for (i, _) in text.iter().enumerate().filter(|(_, &u)| u == open as u16) {
        let want = scan::find_matching(&text, i, open as u16, close as u16);
        assert_eq!(cache.matching(&text, i), want, "{} at {i}", string(&text));
      }
    }
  }
}

#[test]
fn tails_never_change_matches() {
  let patterns = [
    (
      r"<(?:[A-Za-z][\w.-]*:)?tool_call>([\s\S]*?)<\/(?:[A-Za-z][\w.-]*:)?tool_call>",
      "i",
      r"<\/(?:[A-Za-z][\w.-]*:)?tool_call>",
    ),
    (
      r"<function=([A-Za-z_][\w.-]*)>\s*([\s\S]*?)<\/function>",
      "i",
      "</function>",
    ),
    (
      r#"parameter\s+name=["']([^"']+)["']\s*>([\s\S]*?)\s*parameter>"#,
      "i",
      "parameter>",
    ),
    (
      r"<function_call>[\s\S]*?functions\.([A-Za-z_][\w.-]*)\s*\(",
      "i",
      r"functions\.[A-Za-z_][\w.-]*\s*\(",
    ),
  ];
  let mut rng = Lcg(5);
  let extra = [
    "<function_call>",
    "functions.",
    "functions.f (",
    "parameter name='p'>",
    "<function=g>",
  ];
  for (pattern, flags, tail) in patterns {
    let plain = Re::new(pattern, flags);
    let tailed = Re::new(pattern, flags).tail(tail);
    for _ in 0..1500 {
      let mut text = random_text(&mut rng);
      if rng.below(2) == 0 {
        text.extend(to_utf16(extra[rng.below(extra.len())]));
        text.extend(random_text(&mut rng));
      }
      let safe = neutralise(&text);
      let hay = Hay::new(&text, &safe);
      assert_eq!(
        spans(&tailed.all(hay)),
        spans(&plain.all(hay)),
        "{pattern} on {}",
        string(&text)
      );
    }
  }
}

// ─── Linear time on long texts ───────────────────────────────────────────────

fn repeat_to(unit: &str, size: usize) -> String {
  let mut s = String::with_capacity(size + unit.len());
  while s.len() < size {
    s.push_str(unit);
  }
  s
}

fn timed(label: &str, text: &str, limit: Duration) -> usize {
  let t = Instant::now();
  let n = parse_tool_grammar_leaks(text, None).len();
  let took = t.elapsed();
  assert!(took < limit, "{label}: {took:?}");
  n
}

#[test]
fn hundred_kilobyte_texts_scan_in_linear_time() {
  // Generous bounds for unoptimised test builds; a quadratic scan of 100 KB takes minutes there.
  let limit = Duration::from_secs(15);
  let prose =
    "The quick brown fox (jumps) over the lazy dog; it's a \"test\" with {braces} and [brackets] \u{1F600} \u{e9}.\n";
  assert_eq!(timed("clean prose", &repeat_to(prose, 100_000), limit), 0);

  let leaks = [
    "<tool_call>{\"name\":\"read\",\"arguments\":{\"path\":\"a\"}}</tool_call>\n",
    "<tool_call>\n<function=bash>\n<parameter=command>ls</parameter>\n</function>\n</tool_call>\n",
    "<|python_tag|>{\"name\":\"bash\",\"arguments\":{\"command\":\"x\"}}\n",
    "<function_calls>\nread(path=\"a\")\n</function_calls>\n",
    "<\u{ff5c}DSML\u{ff5c}tool_calls><\u{ff5c}DSML\u{ff5c}invoke name=\"bash\"><\u{ff5c}DSML\u{ff5c}parameter \
     name=\"command\">pwd</\u{ff5c}DSML\u{ff5c}parameter></\u{ff5c}DSML\u{ff5c}invoke></\u{ff5c}DSML\u{ff5c}tool_calls>\n",
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{\"path\":\"a\"}\
     <|tool_call_end|><|tool_calls_section_end|>\n",
    "[TOOL_CALLS] [{\"name\":\"read\",\"arguments\":{\"path\":\"a\"}}]\n",
    "<minimax:tool_call><invoke name=\"read\"><parameter name=\"path\">a</parameter></invoke></minimax:tool_call>\n",
    "<tool_call>read\n<arg_key>path</arg_key>\n<arg_value>a</arg_value>\n</tool_call>\n",
    "Sure.\nread(path=\"a\", limit=5)\n",
    "<function_call>functions.read({\"path\":\"a\"})\n",
  ];
  let mut many = String::new();
  let mut count = 0;
  while many.len() < 100_000 {
    many.push_str(leaks[count % leaks.len()]);
    many.push_str("Some prose between.\n");
    count += 1;
  }
  assert_eq!(timed("many leaks", &many, limit), count);

  // Inputs on which the reference's regular expressions backtrack or rescan quadratically.
  for (label, unit, calls) in [
    ("blank lines", "\n", 0),
    ("indented blank lines", " \n\t", 0),
    ("unclosed tool_call", "<tool_call> x\n", 0),
    ("unclosed function_call", "<function_call> x\n", 0),
    ("tools closed by the wrong tag", "<tools> x</tool_call>\n", 0),
    ("unclosed kimi sections", "<|tool_calls_section_begin|>x", 0),
    ("unclosed invokes", "<invoke name=\"a\">x\n", 0),
    // One malformed invoke whose body runs to the end of the text.
    ("malformed invoke lines", "invoke name=\"a\">\n", 1),
    (
      "unclosed DSML blocks",
      "<\u{ff5c}DSML\u{ff5c}tool_calls><\u{ff5c}DSML\u{ff5c}invoke name=\"a\">",
      0,
    ),
    ("fences", "```\n", 0),
    ("unbalanced call objects", "{\"name\" ", 0),
    ("unbalanced call arrays", "[{\"name\" ", 0),
  ] {
    assert_eq!(timed(label, &repeat_to(unit, 100_000), limit), calls, "{label}");
  }
}

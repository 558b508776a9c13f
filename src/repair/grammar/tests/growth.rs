//! Linear growth on adversarial inputs, pinned by counting work (no clocks): regex tries and the
//! units each may read, and units walked by bracket matching (`scan::work`). Every family gets
//! markers, unclosed openers, argument pairs inside one call, fences, bare JSON and pythonic
//! lines at n = 1,250 and 8n = 10,000 repetitions; linear growth is 8, quadratic 64, and the
//! bound 16 leaves room for n log n. The linear-time helpers are also compared with the plain
//! scans they replace (`scan::plain`) on generated texts.

use super::super::families::{candidates, resolve, tailed_patterns_for_tests, Enabled};
use super::super::scan::{neutralise, plain, string, work, Hay};
use super::super::*;
use super::{spans, Lcg};
use crate::obj;

const F: &str = "\u{ff5c}DSML\u{ff5c}";

/// (family, input) → the text for n repetitions.
fn inputs() -> Vec<(&'static str, &'static str, Box<dyn Fn(usize) -> String>)> {
  let r = |s: &'static str| move |n: usize| s.repeat(n);
  let wrap = |a: String, unit: String, b: String| move |n: usize| format!("{a}{}{b}", unit.repeat(n));
  vec![
    ("mistral", "markers", Box::new(r("[TOOL_CALLS] x "))),
    (
      "mistral",
      "unclosed arrays",
      Box::new(r("[TOOL_CALLS] [{\"name\":\"read\",")),
    ),
    (
      "mistral",
      "unclosed v11 arguments",
      Box::new(r("[TOOL_CALLS]read[CALL_ID]1[ARGS]{")),
    ),
    ("qwen", "unclosed openers", Box::new(r("<tool_call>{\"name\":\"read\""))),
    ("qwen", "bare openers", Box::new(r("<tool_call>"))),
    ("qwen", "unclosed tools", Box::new(r("<tools>"))),
    (
      "qwen",
      "closed JSON calls",
      Box::new(r(
        "<tool_call>{\"name\":\"read\",\"arguments\":{\"path\":\"a\"}}</tool_call>",
      )),
    ),
    (
      "qwen",
      "parameters in one call",
      Box::new(wrap(
        "<tool_call><function=read>".into(),
        "<parameter=k>v</parameter>".into(),
        "</function></tool_call>".into(),
      )),
    ),
    (
      "qwen",
      "unclosed parameters",
      Box::new(wrap(
        "<tool_call><function=read>".into(),
        "<parameter=k>v".into(),
        "</function></tool_call>".into(),
      )),
    ),
    (
      "qwen",
      "unclosed functions",
      Box::new(wrap(
        "<tool_call>".into(),
        "<function=read>".into(),
        "</tool_call>".into(),
      )),
    ),
    (
      "qwen",
      "bare functions",
      Box::new(wrap(String::new(), "<function=read>".into(), "</function>".into())),
    ),
    (
      "glm",
      "argument pairs in one call",
      Box::new(wrap(
        "<tool_call>read".into(),
        "<arg_key>k</arg_key><arg_value>v</arg_value>".into(),
        "</tool_call>".into(),
      )),
    ),
    (
      "glm",
      "unclosed keys",
      Box::new(wrap(
        "<tool_call>read".into(),
        "<arg_key>k".into(),
        "</tool_call>".into(),
      )),
    ),
    (
      "glm",
      "unclosed values",
      Box::new(wrap(
        "<tool_call>read".into(),
        "<arg_value>v".into(),
        "</tool_call>".into(),
      )),
    ),
    (
      "minimax-text",
      "unclosed calls",
      Box::new(r("<function_call>functions.read(")),
    ),
    ("minimax-text", "markers", Box::new(r("<function_call>"))),
    (
      "minimax-text",
      "closed calls without fence",
      Box::new(r("<function_call>functions.read({\"path\":\"a\"})\n")),
    ),
    (
      "minimax-text",
      "one marker, many functions",
      Box::new(wrap("<function_call>".into(), "functions.read(".into(), String::new())),
    ),
    ("kimi", "unclosed sections", Box::new(r("<|tool_calls_section_begin|>"))),
    (
      "kimi",
      "calls in one section",
      Box::new(wrap(
        "<|tool_calls_section_begin|>".into(),
        "<|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{\"path\":\"a\"}<|tool_call_end|>".into(),
        "<|tool_calls_section_end|>".into(),
      )),
    ),
    (
      "kimi",
      "unclosed calls in one section",
      Box::new(wrap(
        "<|tool_calls_section_begin|>".into(),
        "<|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>".into(),
        "<|tool_calls_section_end|>".into(),
      )),
    ),
    (
      "kimi",
      "sections closed by a bare end",
      Box::new(wrap(
        String::new(),
        "<|tool_calls_section_begin|>x".into(),
        "_section_end|>".into(),
      )),
    ),
    (
      "dsml",
      "unclosed blocks",
      Box::new(move |n| format!("<{F}tool_calls>").repeat(n)),
    ),
    (
      "dsml",
      "unclosed blocks with invokes",
      Box::new(move |n| format!("<{F}tool_calls><{F}invoke name=\"a\">").repeat(n)),
    ),
    (
      "dsml",
      "invokes in one block",
      Box::new(move |n| {
        format!(
          "<{F}tool_calls>{}</{F}tool_calls>",
          format!("<{F}invoke name=\"a\">").repeat(n)
        )
      }),
    ),
    (
      "dsml",
      "parameters in one call",
      Box::new(move |n| {
        format!(
          "<{F}tool_calls><{F}invoke name=\"read\">{}</{F}invoke></{F}tool_calls>",
          format!("<{F}parameter name=\"k\" string=\"true\">v</{F}parameter>").repeat(n)
        )
      }),
    ),
    (
      "dsml",
      "unclosed parameters",
      Box::new(move |n| {
        format!(
          "<{F}tool_calls><{F}invoke name=\"read\">{}</{F}invoke></{F}tool_calls>",
          format!("<{F}parameter name=\"k\">v").repeat(n)
        )
      }),
    ),
    (
      "dsml",
      "parameters closed by a bare end",
      Box::new(move |n| {
        format!(
          "<{F}tool_calls><{F}invoke name=\"read\">{}parameter></{F}invoke></{F}tool_calls>",
          format!("<{F}parameter name=\"k\">v").repeat(n)
        )
      }),
    ),
    (
      "dsml",
      "markers",
      Box::new(move |n| format!("<{F}parameter ").repeat(n)),
    ),
    ("olmo", "unclosed blocks", Box::new(r("<function_calls>"))),
    (
      "olmo",
      "lines in one block",
      Box::new(wrap(
        "<function_calls>\n".into(),
        "read(path=\"a\")\n".into(),
        "</function_calls>".into(),
      )),
    ),
    (
      "olmo",
      "unclosed lines in one block",
      Box::new(wrap(
        "<function_calls>\n".into(),
        "read(path=\"a\"\n".into(),
        "</function_calls>".into(),
      )),
    ),
    ("invoke", "unclosed invokes", Box::new(r("<invoke name=\"a\">"))),
    (
      "invoke",
      "parameters in one invoke",
      Box::new(wrap(
        "<invoke name=\"read\">".into(),
        "<parameter name=\"k\">v</parameter>".into(),
        "</invoke>".into(),
      )),
    ),
    (
      "invoke",
      "parameters in one wrapped invoke",
      Box::new(wrap(
        "<minimax:tool_call><invoke name=\"read\">".into(),
        "<parameter name=\"k\">v</parameter>".into(),
        "</invoke></minimax:tool_call>".into(),
      )),
    ),
    (
      "invoke",
      "unclosed parameters",
      Box::new(wrap(
        "<invoke name=\"read\">".into(),
        "<parameter name=\"k\">v".into(),
        "</invoke>".into(),
      )),
    ),
    ("invoke", "malformed invoke lines", Box::new(r("invoke name=\"a\">\n"))),
    (
      "invoke",
      "malformed parameter lines",
      Box::new(wrap(
        "invoke name=\"a\">\n".into(),
        "parameter name=\"k\">v parameter>\n".into(),
        String::new(),
      )),
    ),
    ("llama", "markers", Box::new(r("<|python_tag|>"))),
    (
      "llama",
      "unclosed JSON",
      Box::new(r("<|python_tag|>{\"name\":\"read\",")),
    ),
    (
      "llama",
      "pythonic lines",
      Box::new(r("<|python_tag|>read(path=\"a\")\n")),
    ),
    (
      "mistral+llama",
      "bare JSON objects",
      Box::new(r("{\"name\": \"read\", \"arguments\": {\"path\": \"a\"}} ")),
    ),
    (
      "mistral+llama",
      "unclosed bare JSON objects",
      Box::new(r("{\"name\": \"read\", \"arguments\": {\"path\": \"a\"} ")),
    ),
    (
      "mistral+llama",
      "bare JSON arrays",
      Box::new(r("[{\"name\": \"read\", \"arguments\": {\"path\": \"a\"}} ")),
    ),
    (
      "mistral+llama",
      "nested brackets",
      Box::new(|n| {
        format!(
          "{{\"name\": \"read\", \"arguments\": {}{}}}",
          "[".repeat(n),
          "]".repeat(n)
        )
      }),
    ),
    (
      "mistral+llama",
      "unclosed braces",
      Box::new(|n| format!("{{\"name\": \"read\", \"arguments\": {}", "{".repeat(n))),
    ),
    (
      "mistral+llama",
      "quotes",
      Box::new(|n| format!("{{\"name\": \"read\" {}", "\"".repeat(n))),
    ),
    ("granite", "pythonic lines", Box::new(r("read(path=\"a\")\n"))),
    ("granite", "unclosed pythonic lines", Box::new(r("read(path=\"a\"\n"))),
    (
      "granite",
      "many arguments",
      Box::new(|n| format!("read({})\n", "a=\"b\", ".repeat(n))),
    ),
    (
      "granite",
      "nested parentheses",
      Box::new(|n| format!("read({}{})\n", "(".repeat(n), ")".repeat(n))),
    ),
    (
      "granite",
      "calls nested over lines",
      Box::new(|n| format!("{}{}\n", "f(\n".repeat(n), ")".repeat(n))),
    ),
    (
      "granite",
      "unclosed parentheses",
      Box::new(|n| format!("read({}", "(".repeat(n))),
    ),
    (
      "granite",
      "JSON in <tool_call>",
      Box::new(r(
        "<tool_call>[{\"name\":\"read\",\"arguments\":{\"path\":\"a\"}}]</tool_call>\n",
      )),
    ),
    ("all", "fences", Box::new(r("```"))),
    ("all", "fence lines", Box::new(r("```\n"))),
    (
      "all",
      "fenced leaks",
      Box::new(r(
        "```\n<tool_call>{\"name\":\"read\",\"arguments\":{\"path\":\"a\"}}</tool_call>\n```\n",
      )),
    ),
    ("all", "blank lines", Box::new(r(" \n"))),
  ]
}

/// Work for parsing `text` and for recovering (strip) a message carrying it.
fn work_for(text: &str) -> (u64, u64) {
  work::take();
  std::hint::black_box(parse_tool_grammar_leaks(text, None));
  let parse = work::take();
  let message = obj! {
    "role" => Value::str("assistant"),
    "stopReason" => Value::str("stop"),
    "content" => Value::Array(vec![obj! { "type" => Value::str("text"), "text" => Value::str(text) }]),
  };
  let options = RecoveryOptions::new(Mode::Strip, ["read", "bash", "a"]);
  std::hint::black_box(recover_grammar_leaks(&message, &options, super::NOW));
  (parse, work::take())
}

#[test]
fn every_family_grows_linearly_in_work() {
  const N: usize = 1_250;
  let mut failures = Vec::new();
  let mut table = String::new();
  for (family, input, make) in inputs() {
    let (small, large) = (make(N), make(8 * N));
    let (p1, r1) = work_for(&small);
    let (p8, r8) = work_for(&large);
    for (kind, a, b) in [("parse", p1, p8), ("strip", r1, r8)] {
      // Inputs with (nearly) no regex or bracket work at all are trivially linear.
      let ratio = b as f64 / a.max(N as u64) as f64;
      table.push_str(&format!("{family:14} {input:34} {kind} {a:>10} {b:>11} {ratio:6.1}\n"));
      if ratio > 16.0 {
        failures.push(format!(
          "{family} {input} ({kind}): work {a} at n, {b} at 8n, ratio {ratio:.1}"
        ));
      }
    }
  }
  println!("{table}");
  assert!(failures.is_empty(), "superlinear:\n{}", failures.join("\n"));
}

// ─── The linear-time helpers against the plain scans ─────────────────────────

const FRAGMENTS: &[&str] = &[
  "\n",
  " ",
  "x",
  "read",
  "(",
  ")",
  "=",
  "\"",
  "'",
  ",",
  "{",
  "}",
  "[",
  "]",
  ":",
  "```",
  "\\",
  "path=\"a\"",
  "{\"name\":\"read\"",
  "{\"name\": \"read\", \"arguments\": {\"path\": \"a\"}}",
  "\"arguments\":{\"path\":\"a\"}",
  "[TOOL_CALLS]",
  "[TOOL_CALLS] [",
  "read[CALL_ID]1[ARGS]",
  "<tool_call>",
  "</tool_call>",
  "<tools>",
  "</tools>",
  "<function=read>",
  "</function>",
  "<parameter=k>",
  "</parameter>",
  "<arg_key>",
  "</arg_key>",
  "<arg_value>",
  "</arg_value>",
  "<function_call>",
  "functions.",
  "functions.read(",
  "<|python_tag|>",
  "<function_calls>",
  "</function_calls>",
  "<invoke name=\"a\">",
  "</invoke>",
  "invoke name=\"a\">\n",
  "invoke>",
  "<parameter name=\"k\">",
  "parameter name=\"k\">",
  "parameter>",
  "<minimax:tool_call>",
  "</minimax:tool_call>",
  "<|tool_calls_section_begin|>",
  "<|tool_calls_section_end|>",
  "_section_end|>",
  "<|tool_call_begin|>",
  "functions.read:0",
  "<|tool_call_argument_begin|>",
  "<|tool_call_end|>",
  "<\u{ff5c}DSML\u{ff5c}tool_calls>",
  "</\u{ff5c}DSML\u{ff5c}tool_calls>",
  "<\u{ff5c}DSML\u{ff5c}invoke name=\"a\">",
  "</\u{ff5c}DSML\u{ff5c}invoke>",
  "<\u{ff5c}DSML\u{ff5c}parameter name=\"k\" string=\"false\">",
  "</\u{ff5c}DSML\u{ff5c}parameter>",
  "< | DSML | parameter name=\"k\">",
  "</ | DSML | parameter>",
  "\u{17f}",
  "\u{1F600}",
];

fn fragment_text(rng: &mut Lcg, max: usize) -> String {
  (0..rng.below(max))
    .map(|_| FRAGMENTS[rng.below(FRAGMENTS.len())])
    .collect()
}

fn described(text: &str) -> Vec<String> {
  let units = crate::repair::text::to_utf16(text);
  candidates(&units, Enabled::all())
    .into_iter()
    .map(|mut c| {
      resolve(&mut c, &units);
      c
    })
    .map(|c| {
      format!(
        "{} {:?} {:?} {}..{} {}",
        c.name, c.arguments, c.grammar, c.start, c.end, c.strip_only
      )
    })
    .collect()
}

#[test]
fn linear_helpers_equal_the_plain_scans() {
  let mut rng = Lcg(29);
  for round in 0..6000 {
    let text = fragment_text(&mut rng, if round % 10 == 0 { 200 } else { 40 });
    let fast = described(&text);
    plain::set(true);
    let slow = described(&text);
    plain::set(false);
    assert_eq!(fast, slow, "{text:?}");
  }
}

#[test]
fn every_tailed_pattern_equals_its_plain_search() {
  let mut rng = Lcg(31);
  let tailed = tailed_patterns_for_tests();
  assert!(tailed.len() >= 14);
  let plain_res: Vec<_> = tailed.iter().map(|re| re.untailed()).collect();
  for _ in 0..3000 {
    let units = crate::repair::text::to_utf16(&fragment_text(&mut rng, 40));
    let safe = neutralise(&units);
    let hay = Hay::new(&units, &safe);
    super::super::scan::reset_cut_memo(&units);
    for (re, plain) in tailed.iter().zip(&plain_res) {
      assert!(re.has_tail());
      assert_eq!(spans(&re.all(hay)), spans(&plain.all(hay)), "{}", string(&units));
      let from = rng.below(units.len() + 1);
      assert_eq!(
        spans(&re.first_from(hay, from).into_iter().collect::<Vec<_>>()),
        spans(&plain.first_from(hay, from).into_iter().collect::<Vec<_>>()),
        "from {from} in {}",
        string(&units)
      );
    }
  }
}

#[test]
fn the_work_count_sees_quadratic_scans() {
  // The plain scans (every try reading to the end of the text, one bracket scan per opener)
  // are quadratic on these inputs, and the count shows it.
  for unit in ["<arg_key>k</arg_key><arg_value>v</arg_value>", "read(path=\"a\"\n"] {
    let make = |n: usize| format!("<tool_call>read{}</tool_call>", unit.repeat(n));
    plain::set(true);
    let (a, _) = work_for(&make(200));
    let (b, _) = work_for(&make(1600));
    plain::set(false);
    assert!(b as f64 / a as f64 > 30.0, "{unit}: {a} -> {b}");
  }
}

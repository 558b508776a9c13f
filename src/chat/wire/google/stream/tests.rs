//! The `alt=sse` parser: framing, parts, calls, finish reasons, usage. Expected texts come from
//! the reference (Blade over pi-ai 0.84.2 and `@google/genai` 1.52.0) fed the same bodies.

use serde_json::{json, Value};

use super::*;

const CLOCK_MS: u64 = 1_796_000_000_000;

fn clock() -> u64 {
  CLOCK_MS
}

/// Feed `body` in pieces of `piece` bytes, then end it.
fn run_pieces(body: &[u8], piece: usize) -> Vec<StreamEvent> {
  let mut p = GoogleStreamParser::with_clock(clock);
  let mut out = Vec::new();
  for c in body.chunks(piece.max(1)) {
    p.on_bytes(c, &mut out).unwrap();
  }
  p.on_end(&mut out);
  out
}

fn run(body: &str) -> Vec<StreamEvent> {
  run_pieces(body.as_bytes(), body.len().max(1))
}

fn frame(v: Value) -> String {
  format!("data: {}\r\n\r\n", serde_json::to_string(&v).unwrap())
}

fn resp(parts: Value, finish: Option<&str>, usage: Option<Value>) -> Value {
  let mut c = json!({"content": {"parts": parts, "role": "model"}});
  if let Some(f) = finish {
    c["finishReason"] = json!(f);
  }
  let mut r = json!({"candidates": [c]});
  if let Some(u) = usage {
    r["usageMetadata"] = u;
  }
  r
}

fn usage() -> Value {
  json!({"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15})
}

/// The chunk-relevant events: deltas, tool calls, the terminal event.
fn visible(events: &[StreamEvent]) -> Vec<Value> {
  events
    .iter()
    .filter_map(|e| match e {
      StreamEvent::TextDelta(d) => Some(json!({ "content": d })),
      StreamEvent::ThinkingDelta(d) => Some(json!({ "reasoningContent": d })),
      StreamEvent::ToolCallEnd { id, name, arguments } => Some(json!({"call": [id, name, arguments]})),
      StreamEvent::Done { reason, usage } => Some(json!({"done": reason.as_str(), "usage": [
        usage.input, usage.output, usage.cache_read, usage.total, usage.reasoning]})),
      StreamEvent::Error { message } => Some(json!({ "error": message })),
      _ => None,
    })
    .collect()
}

fn error_of(events: &[StreamEvent]) -> Option<String> {
  events.iter().find_map(|e| match e {
    StreamEvent::Error { message } => Some(message.clone()),
    _ => None,
  })
}

#[test]
fn text_then_stop_with_usage() {
  let body =
    frame(resp(json!([{"text": "a"}]), None, None)) + &frame(resp(json!([{"text": "b"}]), Some("STOP"), Some(usage())));
  assert_eq!(
    visible(&run(&body)),
    vec![
      json!({"content": "a"}),
      json!({"content": "b"}),
      json!({"done": "stop", "usage": [10.0, 5.0, 0.0, 15.0, 0.0]}),
    ]
  );
}

#[test]
fn every_split_of_the_body_gives_the_same_events() {
  let body = frame(resp(json!([{"text": "r", "thought": true}]), None, None))
    + &frame(resp(json!([{"text": "héllo 🦀"}]), None, None))
    + "data: "
    + &serde_json::to_string(&resp(json!([{"text": "x"}]), None, None)).unwrap()
    + "\n\n"
    + "data: "
    + &serde_json::to_string(&resp(json!([{"text": "y"}]), Some("STOP"), Some(usage()))).unwrap()
    + "\r\r";
  let whole = visible(&run(&body));
  assert_eq!(whole.len(), 5);
  for piece in 1..12 {
    assert_eq!(visible(&run_pieces(body.as_bytes(), piece)), whole, "pieces of {piece}");
  }
}

#[test]
fn thought_and_text_parts_switch_blocks_and_empty_text_is_forwarded() {
  let body = frame(resp(
    json!([{"text": "r1", "thought": true}, {"text": "t1"}, {"text": "r2", "thought": true}, {"text": "", "thought": false}]),
    Some("MAX_TOKENS"),
    Some(
      json!({"promptTokenCount": 100, "cachedContentTokenCount": 40, "candidatesTokenCount": 7,
      "thoughtsTokenCount": 3, "totalTokenCount": 110}),
    ),
  ));
  let events = run(&body);
  assert_eq!(
    visible(&events),
    vec![
      json!({"reasoningContent": "r1"}),
      json!({"content": "t1"}),
      json!({"reasoningContent": "r2"}),
      json!({"content": ""}),
      json!({"done": "length", "usage": [60.0, 10.0, 40.0, 110.0, 3.0]}),
    ]
  );
  // Each switch closes the open block.
  let blocks: Vec<&StreamEvent> = events
    .iter()
    .filter(|e| {
      matches!(
        e,
        StreamEvent::TextStart | StreamEvent::TextEnd | StreamEvent::ThinkingStart | StreamEvent::ThinkingEnd
      )
    })
    .collect();
  assert_eq!(
    blocks,
    [
      &StreamEvent::ThinkingStart,
      &StreamEvent::ThinkingEnd,
      &StreamEvent::TextStart,
      &StreamEvent::TextEnd,
      &StreamEvent::ThinkingStart,
      &StreamEvent::ThinkingEnd,
      &StreamEvent::TextStart,
      &StreamEvent::TextEnd,
    ]
  );
}

#[test]
fn calls_arrive_whole_with_provided_or_generated_ids() {
  let before = TOOL_CALL_COUNTER.load(Ordering::Relaxed);
  let body = frame(resp(
    json!([
      {"functionCall": {"name": "f", "args": {"a": 1}, "id": "c1"}},
      {"functionCall": {"name": "g", "args": {}, "id": "c1"}},
      {"functionCall": {"args": {"x": [1]}}},
      {"functionCall": {"name": "h", "id": ""}},
      {"functionCall": {"name": "i", "args": [1, 2]}},
    ]),
    Some("STOP"),
    Some(usage()),
  ));
  let events = visible(&run(&body));
  let calls: Vec<&Value> = events.iter().filter_map(|e| e.get("call")).collect();
  assert_eq!(calls[0], &json!(["c1", "f", {"a": 1}]));
  // A repeated, missing or empty id is generated: <name>_<epoch ms>_<counter> (the raw name,
  // so a missing one reads `undefined`, while the call's name is "").
  let generated: Vec<(String, String)> = calls[1..]
    .iter()
    .map(|c| (c[0].as_str().unwrap().to_string(), c[1].as_str().unwrap().to_string()))
    .collect();
  let prefixes = ["g", "undefined", "h", "i"];
  let mut last = before;
  for ((id, name), prefix) in generated.iter().zip(prefixes) {
    let rest = id
      .strip_prefix(&format!("{prefix}_{CLOCK_MS}_"))
      .unwrap_or_else(|| panic!("{id}"));
    let n: u64 = rest.parse().unwrap();
    assert!(n > last, "counter increases: {id}");
    last = n;
    assert_eq!(name, if prefix == "undefined" { "" } else { prefix });
  }
  // Non-object arguments read as `{}`.
  assert_eq!(calls[4][2], json!({}));
  assert_eq!(events.last().unwrap()["done"], json!("toolUse"));
}

#[test]
fn a_part_with_text_and_a_call_gives_both() {
  let body = frame(resp(
    json!([{"text": "t", "functionCall": {"name": "f", "args": {}, "id": "k"}}]),
    Some("STOP"),
    None,
  ));
  assert_eq!(
    visible(&run(&body)),
    vec![
      json!({"content": "t"}),
      json!({"call": ["k", "f", {}]}),
      json!({"done": "toolUse", "usage": [0.0, 0.0, 0.0, 0.0, null]}),
    ]
  );
}

#[test]
fn failing_finish_reasons_end_the_turn_when_the_body_ends() {
  let body = frame(resp(json!([{"text": "a"}]), None, None))
    + &frame(resp(json!([{"text": "b"}]), Some("SAFETY"), Some(usage())));
  assert_eq!(
    visible(&run(&body)),
    vec![
      json!({"content": "a"}),
      json!({"content": "b"}),
      json!({"error": "Provider stopped with: SAFETY"}),
    ]
  );
  for reason in [
    "RECITATION",
    "MALFORMED_FUNCTION_CALL",
    "OTHER",
    "FINISH_REASON_UNSPECIFIED",
    "NO_IMAGE",
  ] {
    let body = frame(resp(json!([]), Some(reason), None));
    assert_eq!(error_of(&run(&body)), Some(format!("Provider stopped with: {reason}")));
  }
  // A later finish reason replaces an earlier one.
  let body = frame(resp(json!([{"text": "a"}]), Some("SAFETY"), None)) + &frame(resp(json!([]), Some("STOP"), None));
  assert_eq!(error_of(&run(&body)), None);
}

#[test]
fn unknown_finish_reasons_fail_at_once() {
  let body = frame(resp(json!([{"text": "a"}]), Some("WEIRD"), Some(usage())))
    + &frame(resp(json!([{"text": "b"}]), None, None));
  assert_eq!(
    visible(&run(&body)),
    vec![
      json!({"content": "a"}),
      json!({"error": "Unhandled stop reason: WEIRD"})
    ]
  );
  let body = frame(json!({"candidates": [{"finishReason": 3}]}));
  assert_eq!(error_of(&run(&body)).as_deref(), Some("Unhandled stop reason: 3"));
  // Falsy reasons are no reasons.
  let body = frame(json!({"candidates": [{"content": {"parts": [{"text": "a"}]}, "finishReason": ""}]}));
  assert_eq!(
    error_of(&run(&body)).as_deref(),
    Some("Google stream ended without a finish reason")
  );
}

#[test]
fn truncated_streams() {
  assert_eq!(
    error_of(&run("")).as_deref(),
    Some("Google stream ended without a finish reason")
  );
  let unterminated = format!(
    "data: {}",
    serde_json::to_string(&resp(json!([{"text": "a"}]), Some("STOP"), None)).unwrap()
  );
  assert_eq!(
    visible(&run(&unterminated)),
    vec![json!({"error": "Incomplete JSON segment at the end"})]
  );
  // A blank remainder is fine.
  let blank_tail = frame(resp(json!([{"text": "a"}]), Some("STOP"), None)) + "\n";
  assert_eq!(error_of(&run(&blank_tail)), None);
}

#[test]
fn only_data_segments_count() {
  let a = serde_json::to_string(&resp(json!([{"text": "a"}]), None, None)).unwrap();
  // An `event:` line hides the whole segment; comments are skipped; `data: null` carries nothing.
  let body = format!("event: message\ndata: {a}\n\n: keep-alive\n\ndata: null\r\n\r\n")
    + &frame(resp(json!([{"text": "b"}]), Some("STOP"), None));
  assert_eq!(
    visible(&run(&body)),
    vec![
      json!({"content": "b"}),
      json!({"done": "stop", "usage": [0.0, 0.0, 0.0, 0.0, null]})
    ]
  );
}

#[test]
fn bad_payloads_fail_with_the_json_parser_text() {
  let a = serde_json::to_string(&resp(json!([{"text": "a"}]), None, None)).unwrap();
  // The position of the second line's `d`.
  let position = a.len() + 1;
  assert_eq!(
    error_of(&run(&format!("data: {a}\ndata: {{}}\n\n"))),
    Some(format!(
      "Unexpected non-whitespace character after JSON at position {position} (line 2 column 1)"
    ))
  );
  assert_eq!(
    error_of(&run("data: {bad\r\n\r\n")).as_deref(),
    Some("Expected property name or '}' in JSON at position 1 (line 1 column 2)")
  );
  assert_eq!(
    error_of(&run("data:\r\n\r\n")).as_deref(),
    Some("Unexpected end of JSON input")
  );
}

#[test]
fn a_raw_json_error_chunk_ends_the_stream() {
  let events = run(r#"{"error":{"code":500,"message":"boom","status":"INTERNAL"}}"#);
  assert_eq!(
    error_of(&events).as_deref(),
    Some(r#"got status: INTERNAL. {"error":{"code":500,"message":"boom","status":"INTERNAL"}}"#)
  );
  // The code is compared the JS way ("503" counts); a missing status prints `undefined`.
  assert_eq!(
    error_of(&run(r#"{"error":{"code":"503","message":"boom"}}"#)).as_deref(),
    Some(r#"got status: undefined. {"error":{"code":"503","message":"boom"}}"#)
  );
  // After a complete event too; never from inside a pending one.
  let ok = frame(resp(json!([{"text": "a"}]), None, None));
  let mut p = GoogleStreamParser::new();
  let mut out = Vec::new();
  p.on_bytes(ok.as_bytes(), &mut out).unwrap();
  p.on_bytes(br#"{"error":{"code":503,"status":"UNAVAILABLE"}}"#, &mut out)
    .unwrap();
  assert_eq!(
    error_of(&out).as_deref(),
    Some(r#"got status: UNAVAILABLE. {"error":{"code":503,"status":"UNAVAILABLE"}}"#)
  );
  let mut p = GoogleStreamParser::new();
  let mut out = Vec::new();
  p.on_bytes(
    br#"data: {"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":"#,
    &mut out,
  )
  .unwrap();
  p.on_bytes(br#"{"error":{"code":500}}"#, &mut out).unwrap();
  p.on_bytes(
    b"}}]}}]}

",
    &mut out,
  )
  .unwrap();
  assert_eq!(error_of(&out), None);
  assert!(matches!(out.last(), Some(StreamEvent::ToolCallEnd { .. })));
  // Codes outside 400–599 are not errors: the unframed text is then an incomplete segment.
  assert_eq!(
    error_of(&run(r#"{"error":{"code":300,"message":"boom"}}"#)).as_deref(),
    Some("Incomplete JSON segment at the end")
  );
}

#[test]
fn malformed_candidates_fail_or_are_skipped_like_the_reference() {
  let ok = frame(resp(json!([{"text": "b"}]), Some("STOP"), None));
  for skipped in [
    json!({"candidates": []}),
    json!({"candidates": [null]}),
    json!({"candidates": {"0": 1}}),
    json!(5),
  ] {
    let events = visible(&run(&(frame(skipped.clone()) + &ok)));
    assert_eq!(events[0], json!({"content": "b"}), "{skipped}");
  }
  assert_eq!(
    error_of(&run(&frame(json!({"candidates": [{"content": {"parts": {}}}]})))).as_deref(),
    Some("candidate.content.parts is not iterable")
  );
  assert_eq!(
    error_of(&run(&frame(json!({"candidates": [{"content": {"parts": 5}}]})))).as_deref(),
    Some("candidate.content.parts is not iterable")
  );
  assert_eq!(
    error_of(&run(&frame(json!({"candidates": [{"content": {"parts": [null]}}]})))).as_deref(),
    Some("Cannot read properties of null (reading 'text')")
  );
  // A string iterates characters: nothing, and no error.
  let body = frame(json!({"candidates": [{"content": {"parts": "ab"}, "finishReason": "STOP"}]}));
  assert_eq!(error_of(&run(&body)), None);
}

#[test]
fn each_usage_report_replaces_the_last() {
  let body = frame(resp(
    json!([{"text": "a"}]),
    None,
    Some(json!({"promptTokenCount": 999, "totalTokenCount": 999, "thoughtsTokenCount": 5})),
  )) + &frame(resp(
    json!([{"text": "b"}]),
    Some("STOP"),
    Some(json!({"promptTokenCount": 10, "totalTokenCount": 12})),
  ));
  assert_eq!(
    visible(&run(&body)).last().unwrap(),
    &json!({"done": "stop", "usage": [10.0, 0.0, 0.0, 12.0, 0.0]})
  );
  // No report: zero usage and no reasoning count; an empty one: zeros with reasoning 0.
  let none = frame(resp(json!([]), Some("STOP"), None));
  assert_eq!(
    visible(&run(&none))[0],
    json!({"done": "stop", "usage": [0.0, 0.0, 0.0, 0.0, null]})
  );
  let empty = frame(resp(json!([]), Some("STOP"), Some(json!({}))));
  assert_eq!(
    visible(&run(&empty))[0],
    json!({"done": "stop", "usage": [0.0, 0.0, 0.0, 0.0, 0.0]})
  );
}

#[test]
fn a_segment_beyond_the_bound_is_refused() {
  let mut p = GoogleStreamParser::new();
  let mut out = Vec::new();
  let big = vec![b'x'; DEFAULT_MAX_LINE / 2 + 1];
  assert!(p.on_bytes(&big, &mut out).is_ok());
  assert_eq!(p.on_bytes(&big, &mut out), Err(SseError::LineTooLong(DEFAULT_MAX_LINE)));
}

#[test]
fn nothing_after_the_terminal_event() {
  let mut p = GoogleStreamParser::new();
  let mut out = Vec::new();
  p.on_bytes(b"data: {bad\n\n", &mut out).unwrap();
  p.on_bytes(
    frame(resp(json!([{"text": "late"}]), Some("STOP"), None)).as_bytes(),
    &mut out,
  )
  .unwrap();
  p.on_end(&mut out);
  assert_eq!(out.len(), 1);
  assert!(matches!(out[0], StreamEvent::Error { .. }));
}

//! The Gemini API request (URL, headers, Mldev body) and the recorded reference runs.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use super::*;
use crate::chat::catalog::{cost_usd, Catalog, Resolver};
use crate::chat::context::{build_context, check_images, check_required_tool, thinking_forced_off};
use crate::chat::history::filter_orphan_tool_messages;
use crate::chat::request::{resolve_model, wire_options};
use crate::chat::types::{AssistantBlock, CtxMessage, StreamEvent, UserBlock, UserContent};
use crate::chat::wire::transform::js_number;

const BASE: &str = "http://127.0.0.1:4010";

const FIXTURES: [&str; 3] = ["google-generative-ai", "no-thinking-goog", "required-tool-goog"];

fn fixture(name: &str) -> Value {
  let text = match name {
    "google-generative-ai" => include_str!("../../../../../__test__/fixtures/chat/google-generative-ai.json"),
    "no-thinking-goog" => include_str!("../../../../../__test__/fixtures/chat/no-thinking-goog.json"),
    "required-tool-goog" => include_str!("../../../../../__test__/fixtures/chat/required-tool-goog.json"),
    other => panic!("no fixture {other}"),
  };
  serde_json::from_str(text).unwrap()
}

/// Model, context and options for a fixture case, built the way the chat core does (§2, §3).
fn prepare(case: &Value) -> (Model, Context, WireOptions) {
  let mut config = case["config"].clone();
  config["provider"] = case["model"]["provider"].clone();
  config["model"] = case["model"]["id"].clone();
  config["baseUrl"] = json!(case["model"]["baseUrl"].as_str().unwrap().replace("@BASE@", BASE));
  let resolver = Resolver {
    custom: &[],
    catalog: Catalog::embedded(),
  };
  let model = resolve_model(&resolver, &config).unwrap();
  let messages = filter_orphan_tool_messages(case["messages"].as_array().unwrap());
  let tools = case["tools"].as_array().cloned().unwrap_or_default();
  let request_options = case.get("requestOptions").cloned().unwrap_or(json!({}));
  let required = request_options["toolChoice"]["toolName"].as_str();
  check_required_tool(&tools, required).unwrap();
  check_images(&messages, &model).unwrap();
  let off = thinking_forced_off(&messages, required);
  let context = build_context(&messages, &model, &tools, required, &HashMap::new(), &mut |_| {}).unwrap();
  let options = wire_options(&config, &model, &request_options, off).unwrap();
  (model, context, options)
}

fn model(id: &str) -> Model {
  Catalog::embedded().get("google", id).unwrap().clone()
}

fn user_context(text: &str) -> Context {
  Context {
    system_prompt: None,
    messages: vec![CtxMessage::User(UserContent::Text(text.into()))],
    tools: None,
  }
}

fn keyed(headers: Map<String, Value>) -> WireOptions {
  WireOptions {
    api_key: Some("sk-test".into()),
    headers,
    ..WireOptions::default()
  }
}

#[test]
fn fixture_requests_match_exactly() {
  for name in FIXTURES {
    let fx = fixture(name);
    let (model, context, options) = prepare(&fx["case"]);
    let req = GoogleGenerativeAi.build_request(&model, &context, &options).unwrap();
    let expected = &fx["expectedRequests"][0];
    let query: Vec<String> = expected["query"]
      .as_object()
      .unwrap()
      .iter()
      .map(|(k, v)| format!("{k}={}", v.as_str().unwrap()))
      .collect();
    assert_eq!(
      req.url,
      format!("{BASE}{}?{}", expected["path"].as_str().unwrap(), query.join("&")),
      "{name}"
    );
    // Serialised comparison: key order counts.
    assert_eq!(
      serde_json::to_string(&req.body).unwrap(),
      serde_json::to_string(&expected["body"]).unwrap(),
      "{name}"
    );
    // Every recorded contract header but fetch's own `accept`, in the recorded order.
    let want: Vec<(String, String)> = expected["headers"]
      .as_object()
      .unwrap()
      .iter()
      .filter(|(k, _)| *k != "accept")
      .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
      .collect();
    assert_eq!(req.headers, want, "{name}");
    assert!(!req.zstd);
  }
}

#[test]
fn the_url_follows_the_sdk() {
  assert_eq!(
    request_url("", "models/gemini-2.5-pro").unwrap(),
    "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
  );
  assert_eq!(
    request_url("http://h:1/v1/", "models/m").unwrap(),
    "http://h:1/v1/models/m:streamGenerateContent?alt=sse"
  );
  assert_eq!(model_resource("gemini-2.5-pro").unwrap(), "models/gemini-2.5-pro");
  assert_eq!(model_resource("models/x").unwrap(), "models/x");
  assert_eq!(model_resource("tunedModels/t").unwrap(), "tunedModels/t");
  for bad in ["a..b", "a?b", "a&b"] {
    assert_eq!(model_resource(bad).unwrap_err(), "invalid model parameter");
  }
  assert_eq!(
    model_resource("").unwrap_err(),
    "model is required and must be a string"
  );
  // `new URL` rules: spaces are escaped, a fragment moves `alt` out of the query.
  assert_eq!(
    request_url("http://h/v1beta", "models/my model").unwrap(),
    "http://h/v1beta/models/my%20model:streamGenerateContent?alt=sse"
  );
  assert_eq!(
    request_url("http://h/v1beta", "models/a#b").unwrap(),
    "http://h/v1beta/models/a?alt=sse"
  );
  assert_eq!(request_url("not a url", "models/m").unwrap_err(), "Invalid URL");
}

#[test]
fn request_errors_come_in_the_reference_order() {
  let m = model("gemini-2.5-flash");
  for key in [None, Some("")] {
    let o = WireOptions {
      api_key: key.map(String::from),
      ..WireOptions::default()
    };
    assert_eq!(
      build_request(&m, &user_context("q"), &o).unwrap_err(),
      "No API key for provider: google"
    );
  }
  // Only a system prompt: no contents.
  let ctx = Context {
    system_prompt: Some("s".into()),
    messages: vec![],
    tools: None,
  };
  assert_eq!(
    build_request(&m, &ctx, &keyed(Map::new())).unwrap_err(),
    "contents are required"
  );
  let mut odd = m.clone();
  odd.id = "x?y".into();
  assert_eq!(
    build_request(&odd, &ctx, &keyed(Map::new())).unwrap_err(),
    "invalid model parameter"
  );
  let mut o = keyed(Map::new());
  o.api_key = Some("auth_tokens/abc".into());
  assert_eq!(
    build_request(&m, &user_context("q"), &o).unwrap_err(),
    "Ephemeral tokens are only supported by the live API."
  );
}

#[test]
fn headers_merge_like_fetch_headers() {
  let mut m = model("gemini-2.5-flash");
  m.headers = Some(json!({"X-Model": "m", "x-both": "model"}).as_object().unwrap().clone());
  let caller = json!({
    "x-both": "caller",
    "content-type": "application/json; charset=utf-8",
    "x-gone": null,
    "X-Num": 5,
    "x-pad": "  v \t",
  });
  let req = build_request(&m, &user_context("q"), &keyed(caller.as_object().unwrap().clone())).unwrap();
  assert_eq!(
    req.headers,
    vec![
      // A differently-spelled content-type is appended to the SDK's value.
      (
        "content-type".to_string(),
        "application/json, application/json; charset=utf-8".to_string()
      ),
      ("x-model".into(), "m".into()),
      ("x-both".into(), "caller".into()),
      ("x-num".into(), "5".into()),
      ("x-pad".into(), "v".into()),
      ("x-goog-api-key".into(), "sk-test".into()),
    ]
  );
  // The exact SDK spelling replaces it; a caller key header wins over the API key.
  let caller = json!({"Content-Type": "text/plain", "X-Goog-Api-Key": "from-caller"});
  let req = build_request(&m, &user_context("q"), &keyed(caller.as_object().unwrap().clone())).unwrap();
  assert_eq!(
    req.headers,
    vec![
      ("content-type".to_string(), "text/plain".to_string()),
      ("x-model".into(), "m".into()),
      ("x-both".into(), "model".into()),
      ("x-goog-api-key".into(), "from-caller".into()),
    ]
  );
  // A null cannot remove the SDK's own header.
  let caller = json!({"Content-Type": null});
  let req = build_request(&m, &user_context("q"), &keyed(caller.as_object().unwrap().clone())).unwrap();
  assert_eq!(
    req.headers[0],
    ("content-type".to_string(), "application/json".to_string())
  );
}

#[test]
fn debug_output_never_shows_the_key() {
  let req = build_request(&model("gemini-2.5-flash"), &user_context("q"), &keyed(Map::new())).unwrap();
  let shown = format!("{req:?}");
  assert!(!shown.contains("sk-test"), "{shown}");
  assert!(shown.contains("x-goog-api-key"));
  assert!(!req.url.contains("sk-test"));
}

#[test]
fn the_mldev_body_orders_fields_like_the_sdk() {
  let m = model("gemini-3-flash-preview");
  let ctx = Context {
    system_prompt: Some("sys".into()),
    messages: vec![
      CtxMessage::User(UserContent::Blocks(vec![UserBlock::Image {
        mime_type: "image/jpeg".into(),
        data: "/9j/".into(),
      }])),
      CtxMessage::Assistant {
        blocks: vec![
          AssistantBlock::Thinking {
            text: "t".into(),
            signature: None,
          },
          AssistantBlock::ToolCall {
            id: "c1".into(),
            name: "f".into(),
            arguments: Map::new(),
          },
        ],
        api: m.api.clone(),
        provider: m.provider.clone(),
        model: m.id.clone(),
        stop_reason: "toolUse".into(),
      },
      CtxMessage::ToolResult {
        tool_call_id: "c1".into(),
        tool_name: "f".into(),
        content: vec![UserBlock::Image {
          mime_type: "image/png".into(),
          data: "AAAA".into(),
        }],
        is_error: false,
      },
    ],
    tools: None,
  };
  let o = WireOptions {
    api_key: Some("k".into()),
    temperature: Some(0.0),
    thinking: Some("low".into()),
    ..WireOptions::default()
  };
  let req = build_request(&m, &ctx, &o).unwrap();
  assert_eq!(
    serde_json::to_string(&req.body).unwrap(),
    serde_json::to_string(&json!({
      "contents": [
        {"parts": [{"inlineData": {"data": "/9j/", "mimeType": "image/jpeg"}}], "role": "user"},
        {"parts": [{"text": "t", "thought": true}, {"functionCall": {"id": "c1", "args": {}, "name": "f"}}], "role": "model"},
        // functionResponse is passed through as pi-ai built it (its nested images too).
        {"parts": [{"functionResponse": {"name": "f", "response": {"output": "(see attached image)"},
          "parts": [{"inlineData": {"mimeType": "image/png", "data": "AAAA"}}], "id": "c1"}}], "role": "user"},
      ],
      "systemInstruction": {"parts": [{"text": "sys"}], "role": "user"},
      "generationConfig": {"temperature": 0, "thinkingConfig": {"includeThoughts": true, "thinkingLevel": "LOW"}},
    }))
    .unwrap()
  );
  // Without generation options the config is still sent (empty).
  let req = build_request(&model("gemini-2.5-flash"), &user_context("q"), &keyed(Map::new())).unwrap();
  assert_eq!(
    req.body["generationConfig"],
    json!({"thinkingConfig": {"thinkingBudget": 0}})
  );
}

// --- the loopback mock's Google streams (`__test__/chat/mock-provider.mjs`, googleScript)

fn mock_stream(body: &str) -> String {
  let response = |parts: Value, extra: Value, usage: Value| {
    let mut candidate = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
    for (k, v) in extra.as_object().unwrap() {
      candidate[k] = v.clone();
    }
    json!({"candidates": [candidate], "usageMetadata": usage, "modelVersion": "gemini-mock", "responseId": "mock-response-1"})
  };
  let running = json!({"promptTokenCount": 1200, "totalTokenCount": 1200});
  let mut frames = Vec::new();
  if body == "full" {
    for t in ["The user wants the file. ", "I should call read_file."] {
      frames.push(response(
        json!([{"text": t, "thought": true}]),
        json!({}),
        running.clone(),
      ));
    }
  }
  for t in ["I'll read ", "the file now."] {
    frames.push(response(json!([{"text": t}]), json!({}), running.clone()));
  }
  if body == "full" {
    frames.push(response(
      json!([{"functionCall": {"name": "read_file", "args": {"path": "src/main.rs", "limit": 20}},
        "thoughtSignature": "bW9jay10aG91Z2h0LXNpZ25hdHVyZQ=="}]),
      json!({}),
      running.clone(),
    ));
  }
  frames.push(response(
    json!([{"text": ""}]),
    json!({"finishReason": if body == "length" { "MAX_TOKENS" } else { "STOP" }}),
    json!({"promptTokenCount": 1200, "candidatesTokenCount": 55, "totalTokenCount": 1285,
      "cachedContentTokenCount": 1024, "thoughtsTokenCount": 30}),
  ));
  frames
    .iter()
    .map(|f| format!("data: {}\n\n", serde_json::to_string(f).unwrap()))
    .collect()
}

fn run(body: &str, model: &Model) -> Vec<StreamEvent> {
  let mut parser = GoogleGenerativeAi.parser(model, &WireOptions::default());
  assert!(parser.frames_raw_body());
  let mut out = Vec::new();
  for piece in body.as_bytes().chunks(7) {
    parser.on_bytes(piece, &mut out).unwrap();
  }
  parser.on_end(&mut out);
  out
}

/// Blade's projection (§5.2) with `UsageInfo` and cost (§1.6, §5.10).
fn project(events: &[StreamEvent], model: &Model) -> Vec<Value> {
  let mut chunks = Vec::new();
  let mut calls = 0;
  for e in events {
    match e {
      StreamEvent::TextDelta(d) => chunks.push(json!({ "content": d })),
      StreamEvent::ThinkingDelta(d) => chunks.push(json!({ "reasoningContent": d })),
      StreamEvent::ToolCallEnd { id, name, arguments } => {
        chunks.push(json!({"toolCalls": [{"index": calls, "id": id, "type": "function",
          "function": {"name": name, "arguments": serde_json::to_string(arguments).unwrap()}}]}));
        calls += 1;
      }
      StreamEvent::Done { reason, usage } => {
        let cost = cost_usd(
          &model.cost,
          usage.input,
          usage.output,
          usage.cache_read,
          usage.cache_write,
          0.0,
        );
        let mut u = Map::new();
        u.insert(
          "promptTokens".into(),
          js_number(usage.input + usage.cache_read + usage.cache_write),
        );
        u.insert("completionTokens".into(), js_number(usage.output));
        u.insert("totalTokens".into(), js_number(usage.total));
        u.insert("costUsd".into(), js_number(cost.total));
        if let Some(r) = usage.reasoning {
          u.insert("reasoningTokens".into(), js_number(r));
        }
        if usage.cache_read > 0.0 {
          u.insert("cacheReadInputTokens".into(), js_number(usage.cache_read));
        }
        chunks.push(json!({"finishReason": reason.as_str(), "usage": u}));
      }
      StreamEvent::Error { message } => panic!("stream failed: {message}"),
      _ => {}
    }
  }
  chunks
}

#[test]
fn fixture_streams_project_to_the_recorded_chunks() {
  for name in FIXTURES {
    let fx = fixture(name);
    let (model, _, _) = prepare(&fx["case"]);
    let scenario = fx["scenario"].as_str().unwrap();
    let mut chunks = project(&run(&mock_stream(scenario), &model), &model);
    let want = fx["expectedChunks"].as_array().unwrap();
    // Generated ids are checked by the fixture's pattern, then taken from the recording.
    for rule in fx["volatile"].as_array().unwrap() {
      assert_eq!(rule["rule"], "pattern");
      let i = rule["chunk"].as_u64().unwrap() as usize;
      let got = chunks[i]["toolCalls"][0]["id"].as_str().unwrap().to_string();
      let (prefix, rest) = got.split_at(got.find(char::is_numeric).unwrap());
      assert_eq!(prefix, "read_file_", "{name}: {got}");
      let (ms, counter) = rest.split_once('_').unwrap();
      assert!(ms.len() == 13 && ms.bytes().all(|b| b.is_ascii_digit()), "{got}");
      assert!(counter.parse::<u64>().is_ok(), "{got}");
      chunks[i]["toolCalls"][0]["id"] = want[i]["toolCalls"][0]["id"].clone();
    }
    assert_eq!(chunks.len(), want.len(), "{name}");
    for (g, w) in chunks.iter().zip(want) {
      let (mut g, mut w) = (g.clone(), w.clone());
      if let (Some(gc), Some(wc)) = (
        g.pointer("/usage/costUsd").cloned(),
        w.pointer("/usage/costUsd").cloned(),
      ) {
        assert!(
          (gc.as_f64().unwrap() - wc.as_f64().unwrap()).abs() < 1e-12,
          "{name}: {gc} vs {wc}"
        );
        g["usage"]["costUsd"] = json!(0);
        w["usage"]["costUsd"] = json!(0);
      }
      assert_eq!(
        serde_json::to_string(&g).unwrap(),
        serde_json::to_string(&w).unwrap(),
        "{name}"
      );
    }
  }
}

#[test]
fn the_length_stream_ends_with_length() {
  let m = model("gemini-2.5-flash");
  let chunks = project(&run(&mock_stream("length"), &m), &m);
  assert_eq!(chunks.last().unwrap()["finishReason"], "length");
}

//! The shared Gemini rules: model families, thinking, contents, tools, HTTP error texts.

use serde_json::{json, Map, Value};

use super::*;
use crate::chat::catalog::Catalog;
use crate::chat::types::{AssistantBlock, Context, CtxMessage, ToolDef, UserBlock, UserContent, WireOptions};

fn model(id: &str) -> Model {
  Catalog::embedded()
    .get("google", id)
    .unwrap_or_else(|| panic!("no google/{id}"))
    .clone()
}

fn custom(id: &str, input: &[&str]) -> Model {
  let mut m = model("gemini-2.5-flash");
  m.id = id.into();
  m.input = input.iter().map(|s| s.to_string()).collect();
  m
}

fn assistant(m: &Model, blocks: Vec<AssistantBlock>) -> CtxMessage {
  CtxMessage::Assistant {
    blocks,
    api: m.api.clone(),
    provider: m.provider.clone(),
    model: m.id.clone(),
    stop_reason: "toolUse".into(),
  }
}

fn call(id: &str, name: &str, args: Value) -> AssistantBlock {
  AssistantBlock::ToolCall {
    id: id.into(),
    name: name.into(),
    arguments: args.as_object().cloned().unwrap_or_default(),
  }
}

fn result(id: &str, name: &str, content: Vec<UserBlock>, is_error: bool) -> CtxMessage {
  CtxMessage::ToolResult {
    tool_call_id: id.into(),
    tool_name: name.into(),
    content,
    is_error,
  }
}

fn text(t: &str) -> UserBlock {
  UserBlock::Text(t.into())
}

fn image() -> UserBlock {
  UserBlock::Image {
    mime_type: "image/png".into(),
    data: "iVBORw0KGgo=".into(),
  }
}

fn tool(name: &str, constrained: Option<Value>) -> ToolDef {
  ToolDef {
    name: name.into(),
    description: format!("{name} tool"),
    parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    constrained_sampling: constrained,
  }
}

#[test]
fn gemini_versions_are_read_from_the_id_start() {
  assert_eq!(gemini_major_version("gemini-2.5-pro"), Some(2));
  assert_eq!(gemini_major_version("gemini-3-flash-preview"), Some(3));
  assert_eq!(gemini_major_version("GEMINI-3.1-pro-preview"), Some(3));
  assert_eq!(gemini_major_version("gemini-live-2.5-flash"), Some(2));
  assert_eq!(gemini_major_version("gemini-live-x"), None);
  assert_eq!(gemini_major_version("gemini-flash-latest"), None);
  assert_eq!(gemini_major_version("models/gemini-3-pro"), None);
  assert_eq!(gemini_major_version("gemma-4-31b-it"), None);
  assert_eq!(gemini_major_version("gemini-99999999999999999999999"), Some(u64::MAX));
}

#[test]
fn ids_and_multimodal_results_follow_the_family() {
  for id in [
    "gemini-3-flash-preview",
    "gemini-3.1-pro-preview",
    "claude-sonnet-4-5",
    "gpt-oss-120b",
  ] {
    assert!(requires_tool_call_id(id), "{id}");
  }
  for id in ["gemini-2.5-pro", "gemini-flash-latest", "gemma-4-31b-it", "Claude-x"] {
    assert!(!requires_tool_call_id(id), "{id}");
  }
  assert!(!supports_multimodal_function_response("gemini-2.5-flash"));
  assert!(supports_multimodal_function_response("gemini-3-flash-preview"));
  assert!(supports_multimodal_function_response("gemma-4-31b-it"));
  assert!(supports_multimodal_function_response("gemini-flash-latest"));
  assert!(supports_strict_tool_sampling("gemini-3.5-flash"));
  assert!(!supports_strict_tool_sampling("gemini-2.5-pro"));
  assert!(!supports_strict_tool_sampling("gemini-flash-latest"));
}

#[test]
fn gemini3_and_gemma4_families_match_anywhere_in_the_id() {
  assert!(is_gemini3_pro("gemini-3-pro-preview"));
  assert!(is_gemini3_pro("gemini-3.1-pro-preview-customtools"));
  assert!(is_gemini3_pro("vendor/Gemini-3.1-Pro"));
  assert!(!is_gemini3_pro("gemini-30-pro"));
  assert!(!is_gemini3_pro("gemini-3.-pro"));
  assert!(!is_gemini3_pro("gemini-3-flash-preview"));
  assert!(is_gemini3_flash("gemini-3-flash-preview"));
  assert!(is_gemini3_flash("gemini-3.7-flash"));
  assert!(is_gemini3_flash("gemini-3.1-flash-lite"));
  assert!(is_gemini3_flash("gemini-flash-latest"));
  assert!(is_gemini3_flash("gemini-flash-lite-latest"));
  assert!(!is_gemini3_flash("gemini-2.5-flash"));
  assert!(is_gemma4("gemma-4-31b-it"));
  assert!(is_gemma4("gemma4-e2b"));
  assert!(!is_gemma4("gemma-3-27b"));
}

#[test]
fn blade_maps_levels_without_clamping() {
  assert_eq!(google_thinking_level("minimal"), "MINIMAL");
  assert_eq!(google_thinking_level("low"), "LOW");
  assert_eq!(google_thinking_level("medium"), "MEDIUM");
  for l in ["high", "xhigh", "max", "auto", ""] {
    assert_eq!(google_thinking_level(l), "HIGH", "{l}");
  }
}

#[test]
fn thinking_on_sends_a_level_for_every_family() {
  // Gemini 2.5 gets a level too (quirk 4); no clamping to the model's level map.
  for (id, level, want) in [
    ("gemini-2.5-pro", "medium", "MEDIUM"),
    ("gemini-2.5-flash", "minimal", "MINIMAL"),
    ("gemini-3.1-pro-preview", "medium", "MEDIUM"),
    ("gemini-3-flash-preview", "xhigh", "HIGH"),
    ("gemma-4-31b-it", "low", "LOW"),
  ] {
    assert_eq!(
      thinking_config(&model(id), Some(level)),
      Some(json!({"includeThoughts": true, "thinkingLevel": want})),
      "{id}"
    );
  }
}

#[test]
fn thinking_off_depends_on_the_family() {
  for (id, want) in [
    ("gemini-2.5-pro", json!({"thinkingBudget": 0})),
    ("gemini-2.5-flash-lite", json!({"thinkingBudget": 0})),
    ("gemini-3.1-pro-preview", json!({"thinkingLevel": "LOW"})),
    ("gemini-3-flash-preview", json!({"thinkingLevel": "MINIMAL"})),
    ("gemini-3.1-flash-lite", json!({"thinkingLevel": "MINIMAL"})),
    ("gemini-flash-latest", json!({"thinkingLevel": "MINIMAL"})),
    ("gemma-4-31b-it", json!({"thinkingLevel": "MINIMAL"})),
    ("deep-research-preview-04-2026", json!({"thinkingBudget": 0})),
  ] {
    assert_eq!(thinking_config(&model(id), None), Some(want), "{id}");
  }
  let mut plain = model("gemini-2.5-flash");
  plain.reasoning = false;
  assert_eq!(thinking_config(&plain, Some("high")), None);
  assert_eq!(thinking_config(&plain, None), None);
}

#[test]
fn user_turns_keep_strings_and_map_blocks() {
  let m = model("gemini-2.5-flash");
  let contents = convert_messages(
    &m,
    &[
      CtxMessage::User(UserContent::Text("".into())),
      CtxMessage::User(UserContent::Blocks(vec![text("look"), image()])),
      CtxMessage::User(UserContent::Blocks(vec![])),
    ],
  );
  assert_eq!(
    Value::Array(contents),
    json!([
      {"role": "user", "parts": [{"text": ""}]},
      {"role": "user", "parts": [{"text": "look"}, {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]},
    ])
  );
}

#[test]
fn images_for_a_text_only_model_become_placeholders() {
  let m = custom("gemini-2.5-flash", &["text"]);
  let contents = convert_messages(
    &m,
    &[CtxMessage::User(UserContent::Blocks(vec![image(), image(), text("x")]))],
  );
  assert_eq!(
    contents[0]["parts"],
    json!([{"text": "(image omitted: model does not support images)"}, {"text": "x"}])
  );
}

#[test]
fn assistant_turns_replay_thought_text_and_calls_in_order() {
  let m = model("gemini-2.5-pro");
  let contents = convert_messages(
    &m,
    &[
      CtxMessage::User(UserContent::Text("q".into())),
      assistant(
        &m,
        vec![
          AssistantBlock::Thinking {
            text: "plan".into(),
            signature: None,
          },
          AssistantBlock::Text {
            text: "doing".into(),
            signature: None,
          },
          call("call_1", "list_dir", json!({"path": "."})),
        ],
      ),
      result("call_1", "list_dir", vec![text("a\nb")], false),
    ],
  );
  // Gemini 2.5: no ids in the call or the response.
  assert_eq!(
    Value::Array(contents),
    json!([
      {"role": "user", "parts": [{"text": "q"}]},
      {"role": "model", "parts": [
        {"thought": true, "text": "plan"},
        {"text": "doing"},
        {"functionCall": {"name": "list_dir", "args": {"path": "."}}},
      ]},
      {"role": "user", "parts": [{"functionResponse": {"name": "list_dir", "response": {"output": "a\nb"}}}]},
    ])
  );
}

#[test]
fn blank_blocks_are_dropped_unless_signed() {
  let m = model("gemini-2.5-pro");
  let sig = "c2lnbmF0dXJl"; // valid base64, length 12
  let contents = convert_messages(
    &m,
    &[assistant(
      &m,
      vec![
        AssistantBlock::Thinking {
          text: " \n".into(),
          signature: None,
        },
        AssistantBlock::Text {
          text: "".into(),
          signature: None,
        },
        AssistantBlock::Text {
          text: " ".into(),
          signature: Some(sig.into()),
        },
        AssistantBlock::Thinking {
          text: "r".into(),
          signature: Some("not base64!".into()),
        },
        AssistantBlock::Text {
          text: "t".into(),
          signature: Some("abc".into()),
        },
      ],
    )],
  );
  assert_eq!(
    contents[0]["parts"],
    json!([
      {"text": " ", "thoughtSignature": sig},
      {"thought": true, "text": "r"},
      {"text": "t"},
    ])
  );
  // A turn with nothing left is skipped.
  let empty = convert_messages(
    &m,
    &[assistant(
      &m,
      vec![AssistantBlock::Text {
        text: "".into(),
        signature: None,
      }],
    )],
  );
  assert!(empty.is_empty());
}

#[test]
fn thought_signatures_must_be_base64() {
  assert!(is_valid_thought_signature("abcd"));
  assert!(is_valid_thought_signature("ab+/cd=="));
  assert!(is_valid_thought_signature("abc="));
  assert!(!is_valid_thought_signature(""));
  assert!(!is_valid_thought_signature("abc"));
  assert!(!is_valid_thought_signature("ab=c"));
  assert!(!is_valid_thought_signature("a==="));
  assert!(!is_valid_thought_signature("===="));
  assert!(!is_valid_thought_signature("ab-_"));
  // Only echoed for the same model.
  assert_eq!(resolve_thought_signature(false, Some("abcd")), None);
  assert_eq!(resolve_thought_signature(true, Some("abcd")).as_deref(), Some("abcd"));
}

#[test]
fn gemini3_echoes_ids_and_nests_result_images() {
  let m = model("gemini-3-flash-preview");
  let contents = convert_messages(
    &m,
    &[
      assistant(&m, vec![call("c|1", "shot", json!({})), call("c2", "read", json!({}))]),
      result("c|1", "shot", vec![image()], false),
      result("c2", "read", vec![text("boom")], true),
    ],
  );
  assert_eq!(
    Value::Array(contents),
    json!([
      {"role": "model", "parts": [
        {"functionCall": {"name": "shot", "args": {}, "id": "c|1"}},
        {"functionCall": {"name": "read", "args": {}, "id": "c2"}},
      ]},
      {"role": "user", "parts": [
        {"functionResponse": {"name": "shot", "response": {"output": "(see attached image)"},
          "parts": [{"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}], "id": "c|1"}},
        {"functionResponse": {"name": "read", "response": {"error": "boom"}, "id": "c2"}},
      ]},
    ])
  );
}

#[test]
fn gemini2_sends_result_images_in_their_own_user_turn() {
  let m = model("gemini-2.5-flash");
  let contents = convert_messages(
    &m,
    &[
      assistant(&m, vec![call("a", "shot", json!({})), call("b", "shot", json!({}))]),
      result("a", "shot", vec![text("see"), image()], false),
      result("b", "shot", vec![], false),
    ],
  );
  assert_eq!(
    Value::Array(contents),
    json!([
      {"role": "model", "parts": [
        {"functionCall": {"name": "shot", "args": {}}},
        {"functionCall": {"name": "shot", "args": {}}},
      ]},
      {"role": "user", "parts": [{"functionResponse": {"name": "shot", "response": {"output": "see"}}}]},
      {"role": "user", "parts": [{"text": "Tool result image:"},
        {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]},
      // The image turn holds no results, so the next result opens a new turn.
      {"role": "user", "parts": [{"functionResponse": {"name": "shot", "response": {"output": ""}}}]},
    ])
  );
}

#[test]
fn results_after_a_plain_user_turn_open_a_new_turn() {
  let m = model("gemini-2.5-flash");
  let contents = convert_messages(
    &m,
    &[
      assistant(&m, vec![call("a", "f", json!({}))]),
      result("a", "f", vec![text("1")], false),
      CtxMessage::User(UserContent::Text("next".into())),
      assistant(&m, vec![call("b", "f", json!({}))]),
      result("b", "f", vec![text("2")], false),
    ],
  );
  let roles: Vec<&str> = contents.iter().map(|c| c["role"].as_str().unwrap()).collect();
  assert_eq!(roles, ["model", "user", "user", "model", "user"]);
  assert_eq!(contents[2]["parts"], json!([{"text": "next"}]));
}

#[test]
fn turns_of_another_model_lose_thinking_and_get_clean_ids() {
  let m = model("gemini-3-flash-preview");
  let other = CtxMessage::Assistant {
    blocks: vec![
      AssistantBlock::Thinking {
        text: "why".into(),
        signature: Some("abcd".into()),
      },
      AssistantBlock::Text {
        text: "ok".into(),
        signature: Some("abcd".into()),
      },
      call("call_1|fc_2", "f", json!({"a": 1})),
    ],
    api: "openai-responses".into(),
    provider: "openai".into(),
    model: "gpt-5".into(),
    stop_reason: "toolUse".into(),
  };
  let contents = convert_messages(&m, &[other, result("call_1|fc_2", "f", vec![text("r")], false)]);
  assert_eq!(
    Value::Array(contents),
    json!([
      {"role": "model", "parts": [
        {"text": "why"},
        {"text": "ok"},
        {"functionCall": {"name": "f", "args": {"a": 1}, "id": "call_1_fc_2"}},
      ]},
      {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"output": "r"}, "id": "call_1_fc_2"}}]},
    ])
  );
  // Models that never send ids keep them as they are.
  assert_eq!(normalize_tool_call_id("gemini-2.5-pro", "a|b"), "a|b");
  assert_eq!(normalize_tool_call_id("gemini-3-pro-preview", "a|b😀"), "a_b__");
  assert_eq!(
    normalize_tool_call_id("gemini-3-pro-preview", &"x".repeat(80)).len(),
    64
  );
}

#[test]
fn text_is_sanitised_of_lone_surrogates() {
  let m = model("gemini-2.5-flash");
  let lone = crate::repair::text::lone_surrogate(0xd800);
  let contents = convert_messages(&m, &[CtxMessage::User(UserContent::Text(format!("a{lone}b")))]);
  assert_eq!(contents[0]["parts"][0]["text"], json!("ab"));
  let ctx = Context {
    system_prompt: Some(format!("s{lone}")),
    messages: vec![CtxMessage::User(UserContent::Text("q".into()))],
    tools: None,
  };
  let params = build_params(&m, &ctx, &WireOptions::default()).unwrap();
  assert_eq!(params.system_instruction.as_deref(), Some("s"));
}

#[test]
fn declarations_carry_the_json_schema_and_modes_follow_the_choice() {
  let m2 = model("gemini-2.5-flash");
  let m3 = model("gemini-3-flash-preview");
  let strict = Some(json!({"type": "json_schema", "strict": "prefer"}));
  let ctx = |tools: Vec<ToolDef>| Context {
    system_prompt: None,
    messages: vec![CtxMessage::User(UserContent::Text("q".into()))],
    tools: Some(tools),
  };
  let opts = |required: Option<&str>| WireOptions {
    required_tool: required.map(String::from),
    ..WireOptions::default()
  };

  let p = build_params(&m2, &ctx(vec![tool("a", None), tool("b", strict.clone())]), &opts(None)).unwrap();
  assert_eq!(p.function_calling_mode, None);
  assert_eq!(
    p.tools.unwrap(),
    vec![json!({"functionDeclarations": [
      {"name": "a", "description": "a tool", "parametersJsonSchema":
        {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
      {"name": "b", "description": "b tool", "parametersJsonSchema":
        {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
    ]})]
  );

  // Gemini 3 validates strict tools: the strict schema and mode VALIDATED.
  let p = build_params(&m3, &ctx(vec![tool("a", None), tool("b", strict.clone())]), &opts(None)).unwrap();
  assert_eq!(p.function_calling_mode, Some("VALIDATED"));
  assert_eq!(
    p.tools.unwrap()[0]["functionDeclarations"][1]["parametersJsonSchema"],
    json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"], "additionalProperties": false})
  );

  // A required tool wins over strictness.
  let p = build_params(&m3, &ctx(vec![tool("b", strict)]), &opts(Some("b"))).unwrap();
  assert_eq!(p.function_calling_mode, Some("ANY"));
  let p = build_params(&m2, &ctx(vec![tool("a", None)]), &opts(Some("a"))).unwrap();
  assert_eq!(p.function_calling_mode, Some("ANY"));

  // No tools: no declarations, no mode (even with a required tool).
  let p = build_params(&m2, &ctx(vec![]), &opts(Some("a"))).unwrap();
  assert_eq!((p.tools, p.function_calling_mode), (None, None));
}

#[test]
fn required_strict_sampling_fails_like_pi_ai() {
  let must = Some(json!({"type": "json_schema", "strict": "require"}));
  let ctx = Context {
    system_prompt: None,
    messages: vec![],
    tools: Some(vec![tool("a", None), tool("must", must.clone())]),
  };
  assert_eq!(
    build_params(&model("gemini-2.5-flash"), &ctx, &WireOptions::default()).unwrap_err(),
    "Tool \"must\" requires JSON-schema constrained sampling, but strict tools are unsupported."
  );
  let mut bad = tool("bad", must);
  bad.parameters = json!({"type": "object", "properties": {"x": {"$ref": "#/a"}}});
  let ctx = Context {
    tools: Some(vec![bad]),
    ..ctx
  };
  assert_eq!(
    build_params(&model("gemini-3-flash-preview"), &ctx, &WireOptions::default()).unwrap_err(),
    "Tool \"bad\" requires JSON-schema constrained sampling, but $ref schemas are unsupported."
  );
}

#[test]
fn generation_options_pass_through() {
  let ctx = Context {
    system_prompt: Some(String::new()),
    messages: vec![CtxMessage::User(UserContent::Text("q".into()))],
    tools: None,
  };
  let o = WireOptions {
    temperature: Some(0.2),
    max_tokens: Some(2048),
    thinking: Some("low".into()),
    ..WireOptions::default()
  };
  let p = build_params(&model("gemini-2.5-flash"), &ctx, &o).unwrap();
  assert_eq!(p.system_instruction, None);
  assert_eq!((p.temperature, p.max_output_tokens), (Some(0.2), Some(2048)));
  assert_eq!(
    p.thinking_config,
    Some(json!({"includeThoughts": true, "thinkingLevel": "LOW"}))
  );
  let _ = Map::<String, Value>::new();
}

#[test]
fn http_errors_are_the_sdk_api_error_text() {
  // A JSON body (by content-type) re-serialised compactly; pi-ai adds no status prefix.
  let body = "{\n  \"error\": {\n    \"code\": 429,\n    \"message\": \"Resource has been exhausted (e.g. check quota).\",\n    \"status\": \"RESOURCE_EXHAUSTED\"\n  }\n}\n";
  assert_eq!(
    http_error_message(429, Some("application/json; charset=UTF-8"), body),
    r#"{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}"#
  );
  // Anything else is wrapped with the status text.
  assert_eq!(
    http_error_message(502, Some("text/html"), "<html>bad gateway</html>"),
    r#"{"error":{"message":"<html>bad gateway</html>","code":502,"status":"Bad Gateway"}}"#
  );
  assert_eq!(
    http_error_message(500, Some("text/plain"), ""),
    r#"{"error":{"message":"","code":500,"status":"Internal Server Error"}}"#
  );
  assert_eq!(
    http_error_message(404, None, "\u{feff}Not Found"),
    r#"{"error":{"message":"Not Found","code":404,"status":"Not Found"}}"#
  );
  // A body that claims JSON and is not: the JSON parser's error.
  assert_eq!(
    http_error_message(400, Some("application/json"), "{oops"),
    "Expected property name or '}' in JSON at position 1 (line 1 column 2)"
  );
  assert_eq!(
    http_error_message(400, Some("application/json"), ""),
    "Unexpected end of JSON input"
  );
}

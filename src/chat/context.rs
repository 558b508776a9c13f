//! Blade's adapter rules that turn its chat history into the provider-neutral context
//! (spec §2.1–§2.6): required-tool and image prechecks, thinking-off rules, context projection,
//! images and tool sorting. Orphan filtering lives in `history`.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::catalog::Model;
use super::history::has_non_thinking_tool_history;
use super::types::{AssistantBlock, Context, CtxMessage, ToolDef, UserBlock, UserContent};

/// A downloaded image (or the failure text to throw).
pub type FetchedImage = Result<(String, String), String>;

fn role(m: &Value) -> &str {
  m.get("role").and_then(Value::as_str).unwrap_or("")
}

/// Text of a string or an array of parts (text parts joined by `\n`).
pub fn text_content(content: Option<&Value>) -> String {
  match content {
    Some(Value::String(s)) => s.clone(),
    Some(Value::Array(parts)) => parts
      .iter()
      .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
      .map(|p| p.get("text").and_then(Value::as_str).unwrap_or(""))
      .collect::<Vec<_>>()
      .join("\n"),
    _ => String::new(),
  }
}

fn image_url(part: &Value) -> Option<&str> {
  if part.get("type").and_then(Value::as_str) != Some("image_url") {
    return None;
  }
  part.get("image_url").and_then(|i| i.get("url")).and_then(Value::as_str)
}

/// `Required tool is unavailable: <name>` when the required tool is not among the tools (§2.1).
pub fn check_required_tool(tools: &[Value], required: Option<&str>) -> Result<(), String> {
  match required {
    Some(name)
      if !tools
        .iter()
        .any(|t| t.get("name").and_then(Value::as_str) == Some(name)) =>
    {
      Err(format!("Required tool is unavailable: {name}"))
    }
    _ => Ok(()),
  }
}

/// `<model name> does not support image input` when a user message carries an image and the model
/// takes text only (§2.3).
pub fn check_images(messages: &[Value], model: &Model) -> Result<(), String> {
  if model.supports_images() {
    return Ok(());
  }
  let has_image = messages
    .iter()
    .filter(|m| role(m) == "user")
    .any(|m| match m.get("content") {
      Some(Value::Array(parts)) => parts
        .iter()
        .any(|p| p.get("type").and_then(Value::as_str) == Some("image_url")),
      _ => false,
    });
  if has_image {
    Err(format!("{} does not support image input", model.name))
  } else {
    Ok(())
  }
}

/// Thinking is forced off by a required tool or a tool call made without reasoning (§2.4).
pub fn thinking_forced_off(messages: &[Value], required_tool: Option<&str>) -> bool {
  required_tool.is_some() || has_non_thinking_tool_history(messages)
}

/// `data:<mime>;base64,<data>` (the data may span lines).
pub fn parse_data_url(url: &str) -> Option<(String, String)> {
  let rest = url.strip_prefix("data:")?;
  let semi = rest.find([';', ','])?;
  if semi == 0 || !rest[semi..].starts_with(";base64,") {
    return None;
  }
  let data = &rest[semi + ";base64,".len()..];
  if data.is_empty() {
    return None;
  }
  Some((rest[..semi].to_string(), data.to_string()))
}

fn is_http_url(url: &str) -> bool {
  let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
  lower.starts_with("http://") || lower.starts_with("https://")
}

/// The http(s) image URLs the context needs downloaded, in order (only for image-capable models).
pub fn remote_image_urls(messages: &[Value], model: &Model) -> Vec<String> {
  if !model.supports_images() {
    return vec![];
  }
  let mut out = Vec::new();
  for m in messages.iter().filter(|m| role(m) == "user") {
    if let Some(Value::Array(parts)) = m.get("content") {
      for url in parts.iter().filter_map(image_url) {
        if parse_data_url(url).is_none() && is_http_url(url) && !out.iter().any(|u| u == url) {
          out.push(url.to_string());
        }
      }
    }
  }
  out
}

/// Historical tool-call arguments: `{}` unless the JSON string holds an object. Invalid JSON is
/// reported through `warn` (Blade logs `Invalid historical tool arguments`).
fn parse_arguments(value: Option<&str>, warn: &mut dyn FnMut(&str)) -> Map<String, Value> {
  let Some(text) = value.filter(|s| !s.is_empty()) else {
    return Map::new();
  };
  // JSON.parse semantics: JS key order (integer-like keys first), JS number handling.
  match super::wire::transform::js_json_parse(text) {
    Ok(Value::Object(o)) => o,
    Ok(_) => Map::new(),
    Err(_) => {
      warn(text);
      Map::new()
    }
  }
}

/// Build the context (§2.5–§2.6). `images` holds the downloads of [`remote_image_urls`].
pub fn build_context(
  messages: &[Value],
  model: &Model,
  tools: &[Value],
  required_tool: Option<&str>,
  images: &HashMap<String, FetchedImage>,
  warn: &mut dyn FnMut(&str),
) -> Result<Context, String> {
  let system: Vec<String> = messages
    .iter()
    .filter(|m| role(m) == "system")
    .map(|m| text_content(m.get("content")))
    .filter(|t| !t.is_empty())
    .collect();
  let mut out = Vec::new();
  for m in messages {
    match role(m) {
      "system" => {}
      "user" => {
        let content = match m.get("content") {
          Some(Value::Array(parts)) => {
            let mut blocks = Vec::with_capacity(parts.len());
            for part in parts {
              if part.get("type").and_then(Value::as_str) == Some("text") {
                blocks.push(UserBlock::Text(
                  part.get("text").and_then(Value::as_str).unwrap_or("").to_string(),
                ));
                continue;
              }
              let url = image_url(part).unwrap_or("");
              if !model.supports_images() {
                blocks.push(UserBlock::Text(
                  "[Image omitted: current model does not support image input]".into(),
                ));
              } else if let Some((mime_type, data)) = parse_data_url(url) {
                blocks.push(UserBlock::Image { mime_type, data });
              } else if is_http_url(url) {
                match images.get(url) {
                  Some(Ok((mime_type, data))) => blocks.push(UserBlock::Image {
                    mime_type: mime_type.clone(),
                    data: data.clone(),
                  }),
                  Some(Err(e)) => return Err(e.clone()),
                  None => return Err(format!("Failed to load image {url}: not fetched")),
                }
              } else {
                blocks.push(UserBlock::Text(format!("[Unsupported image source: {url}]")));
              }
            }
            UserContent::Blocks(blocks)
          }
          other => UserContent::Text(text_content(other)),
        };
        out.push(CtxMessage::User(content));
      }
      "assistant" => {
        let mut blocks = Vec::new();
        if let Some(r) = m.get("reasoningContent").and_then(Value::as_str) {
          if !r.trim().is_empty() {
            blocks.push(AssistantBlock::Thinking {
              text: r.to_string(),
              signature: None,
            });
          }
        }
        let text = text_content(m.get("content"));
        if !text.is_empty() {
          blocks.push(AssistantBlock::Text { text, signature: None });
        }
        let calls = m.get("tool_calls").and_then(Value::as_array);
        for call in calls.into_iter().flatten() {
          let Some(function) = call.get("function") else { continue };
          blocks.push(AssistantBlock::ToolCall {
            id: call.get("id").and_then(Value::as_str).unwrap_or("").to_string(),
            name: function.get("name").and_then(Value::as_str).unwrap_or("").to_string(),
            arguments: parse_arguments(function.get("arguments").and_then(Value::as_str), warn),
          });
        }
        let has_calls = calls.is_some_and(|c| !c.is_empty());
        out.push(CtxMessage::Assistant {
          blocks,
          api: model.api.clone(),
          provider: model.provider.clone(),
          model: model.id.clone(),
          stop_reason: if has_calls { "toolUse" } else { "stop" }.into(),
        });
      }
      _ => out.push(CtxMessage::ToolResult {
        tool_call_id: m.get("tool_call_id").and_then(Value::as_str).unwrap_or("").to_string(),
        tool_name: m.get("name").and_then(Value::as_str).unwrap_or("unknown").to_string(),
        content: vec![UserBlock::Text(text_content(m.get("content")))],
        is_error: false,
      }),
    }
  }
  let mut defs: Vec<ToolDef> = tools
    .iter()
    .filter(|t| required_tool.is_none_or(|r| t.get("name").and_then(Value::as_str) == Some(r)))
    .map(|t| ToolDef {
      name: t.get("name").and_then(Value::as_str).unwrap_or("").to_string(),
      description: t.get("description").and_then(Value::as_str).unwrap_or("").to_string(),
      parameters: t.get("parameters").cloned().unwrap_or(Value::Null),
      constrained_sampling: t.get("constrainedSampling").cloned(),
    })
    .collect();
  defs.sort_by(|a, b| crate::repair::text::cmp_utf16(&a.name, &b.name));
  Ok(Context {
    system_prompt: if system.is_empty() {
      None
    } else {
      Some(system.join("\n\n"))
    },
    messages: out,
    tools: if defs.is_empty() { None } else { Some(defs) },
  })
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::chat::catalog::Catalog;
  use serde_json::json;

  fn model(provider: &str, id: &str) -> Model {
    Catalog::embedded().get(provider, id).unwrap().clone()
  }

  #[test]
  fn system_prompts_join_and_assistant_blocks_keep_order() {
    let messages = vec![
      json!({"role": "system", "content": "A"}),
      json!({"role": "system", "content": [{"type": "text", "text": "B"}, {"type": "text", "text": "C"}]}),
      json!({"role": "system", "content": ""}),
      json!({"role": "user", "content": "hi", "id": "u1", "metadata": {"x": 1}}),
      json!({"role": "assistant", "content": "ok", "reasoningContent": "think",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{bad"}},
                       {"id": "c2", "type": "function", "function": {"name": "t", "arguments": "[1]"}}]}),
      json!({"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "r"}]}),
    ];
    let mut warned = vec![];
    let ctx = build_context(
      &messages,
      &model("openai", "gpt-5"),
      &[],
      None,
      &HashMap::new(),
      &mut |w| warned.push(w.to_string()),
    )
    .unwrap();
    assert_eq!(ctx.system_prompt.as_deref(), Some("A\n\nB\nC"));
    assert_eq!(warned, ["{bad"]);
    assert_eq!(ctx.messages.len(), 3);
    match &ctx.messages[1] {
      CtxMessage::Assistant {
        blocks,
        stop_reason,
        model,
        ..
      } => {
        assert_eq!(stop_reason, "toolUse");
        assert_eq!(model, "gpt-5");
        assert!(matches!(&blocks[0], AssistantBlock::Thinking { text, .. } if text == "think"));
        assert!(matches!(&blocks[1], AssistantBlock::Text { text, .. } if text == "ok"));
        assert!(matches!(&blocks[2], AssistantBlock::ToolCall { arguments, .. } if arguments.is_empty()));
      }
      other => panic!("{other:?}"),
    }
    assert!(matches!(&ctx.messages[2], CtxMessage::ToolResult { tool_name, .. } if tool_name == "unknown"));
    assert!(ctx.tools.is_none());
  }

  #[test]
  fn images_and_prechecks() {
    let text_only = model("deepseek", "deepseek-v4-flash");
    let msgs = vec![
      json!({"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AAA"}}]}),
    ];
    assert_eq!(
      check_images(&msgs, &text_only).unwrap_err(),
      format!("{} does not support image input", text_only.name)
    );
    let vision = model("openai", "gpt-5");
    assert!(check_images(&msgs, &vision).is_ok());
    let msgs = vec![json!({"role": "user", "content": [
      {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAA"}},
      {"type": "image_url", "image_url": {"url": "HTTPS://x/y.png"}},
      {"type": "image_url", "image_url": {"url": "ftp://x"}}]})];
    assert_eq!(remote_image_urls(&msgs, &vision), ["HTTPS://x/y.png"]);
    let mut images = HashMap::new();
    images.insert(
      "HTTPS://x/y.png".to_string(),
      Ok(("image/jpeg".to_string(), "QQ==".to_string())),
    );
    let ctx = build_context(&msgs, &vision, &[], None, &images, &mut |_| {}).unwrap();
    let CtxMessage::User(UserContent::Blocks(blocks)) = &ctx.messages[0] else {
      panic!()
    };
    assert_eq!(
      blocks[0],
      UserBlock::Image {
        mime_type: "image/png".into(),
        data: "AAA".into()
      }
    );
    assert_eq!(
      blocks[1],
      UserBlock::Image {
        mime_type: "image/jpeg".into(),
        data: "QQ==".into()
      }
    );
    assert_eq!(blocks[2], UserBlock::Text("[Unsupported image source: ftp://x]".into()));
    images.insert(
      "HTTPS://x/y.png".to_string(),
      Err("Failed to load image HTTPS://x/y.png: HTTP 404".into()),
    );
    assert_eq!(
      build_context(&msgs, &vision, &[], None, &images, &mut |_| {}).unwrap_err(),
      "Failed to load image HTTPS://x/y.png: HTTP 404"
    );
  }

  #[test]
  fn tools_are_filtered_and_sorted() {
    let tools = vec![
      json!({"name": "b", "description": "", "parameters": {}}),
      json!({"name": "a", "parameters": {}}),
    ];
    assert_eq!(
      check_required_tool(&tools, Some("c")).unwrap_err(),
      "Required tool is unavailable: c"
    );
    let ctx = build_context(
      &[],
      &model("openai", "gpt-5"),
      &tools,
      None,
      &HashMap::new(),
      &mut |_| {},
    )
    .unwrap();
    let names: Vec<_> = ctx.tools.unwrap().iter().map(|t| t.name.clone()).collect();
    assert_eq!(names, ["a", "b"]);
    let ctx = build_context(
      &[],
      &model("openai", "gpt-5"),
      &tools,
      Some("b"),
      &HashMap::new(),
      &mut |_| {},
    )
    .unwrap();
    assert_eq!(ctx.tools.unwrap().len(), 1);
  }
}

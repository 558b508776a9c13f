//! Shared helpers for the wire adapters.
//!
//! * The cross-model history transform every adapter applies before serialising (spec §2.7,
//!   pi-ai's `transformMessages`): image placeholders for text-only models, error/aborted turns
//!   dropped, synthetic results for unanswered calls, thinking-block rules, tool-call id
//!   normalisation with results following the renamed ids.
//! * pi-ai's output-budget clamp (`clampMaxTokensToContext`, applied by every `streamSimple`).
//! * Lone-surrogate removal (`sanitizeSurrogates`) over the crate's stand-in representation.
//! * JavaScript-faithful JSON: `JSON.parse`, `JSON.stringify` and pi-ai's tolerant streaming
//!   parser for tool arguments (`parseStreamingJson`: repair + the `partial-json` package).

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Number, Value};

use crate::chat::catalog::Model;
use crate::chat::types::{AssistantBlock, Context, CtxMessage, ToolDef, UserBlock, UserContent};
use crate::js::text::{cp_at, drop_lone_surrogates, from_utf16, is_js_whitespace, js_trim, utf16_len, ESC};

/// A code point as UTF-16 code units (a lone surrogate as itself).
fn push_units(units: &mut Vec<u16>, cp: u32) {
  match char::from_u32(cp) {
    Some(c) => {
      let mut buf = [0u16; 2];
      units.extend_from_slice(c.encode_utf16(&mut buf));
    }
    None => units.push(cp as u16),
  }
}
use crate::repair::jsnum::number_to_string;

// ---------------------------------------------------------------------------------------------
// Cross-model transform (§2.7)

/// Placeholder for a run of user images sent to a text-only model.
pub const USER_IMAGE_PLACEHOLDER: &str = "(image omitted: model does not support images)";
/// Placeholder for a run of tool-result images sent to a text-only model.
pub const TOOL_IMAGE_PLACEHOLDER: &str = "(tool image omitted: model does not support images)";
/// Text of the synthetic result inserted for a tool call nobody answered.
pub const NO_RESULT_TEXT: &str = "No result provided";

/// The assistant turn a tool call comes from (pi-ai passes it to id normalisers; the Responses
/// adapter needs it to tell foreign calls apart).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolCallSource<'a> {
  pub provider: &'a str,
  pub api: &'a str,
  pub model: &'a str,
}

/// pi-ai's `transformMessages` with an id normaliser that only looks at the id.
///
/// The normaliser runs only for tool calls of turns stamped with a *different* model
/// (provider + api + id); Blade stamps history with the current model, so for a primary attempt
/// ids pass through unchanged and only fallback attempts rename them.
pub fn transform_messages(
  messages: &[CtxMessage],
  model: &Model,
  normalize_tool_call_id: &dyn Fn(&str) -> String,
) -> Vec<CtxMessage> {
  transform_messages_with_source(messages, model, &|id, _| normalize_tool_call_id(id))
}

/// [`transform_messages`] with a normaliser that also sees the turn the call comes from.
pub fn transform_messages_with_source(
  messages: &[CtxMessage],
  model: &Model,
  normalize_tool_call_id: &dyn Fn(&str, &ToolCallSource) -> String,
) -> Vec<CtxMessage> {
  let text_only = !model.supports_images();
  // Original id -> renamed id, filled while walking the history in order.
  let mut renamed: HashMap<String, String> = HashMap::new();
  let mut first_pass = Vec::with_capacity(messages.len());
  for message in messages {
    let out = match message {
      CtxMessage::User(UserContent::Blocks(blocks)) if text_only => {
        CtxMessage::User(UserContent::Blocks(replace_images(blocks, USER_IMAGE_PLACEHOLDER)))
      }
      CtxMessage::User(_) => message.clone(),
      CtxMessage::ToolResult {
        tool_call_id,
        tool_name,
        content,
        is_error,
      } => {
        let content = if text_only {
          replace_images(content, TOOL_IMAGE_PLACEHOLDER)
        } else {
          content.clone()
        };
        let id = match renamed.get(tool_call_id) {
          Some(new_id) if !new_id.is_empty() && new_id != tool_call_id => new_id.clone(),
          _ => tool_call_id.clone(),
        };
        CtxMessage::ToolResult {
          tool_call_id: id,
          tool_name: tool_name.clone(),
          content,
          is_error: *is_error,
        }
      }
      CtxMessage::Assistant {
        blocks,
        api,
        provider,
        model: source_model,
        stop_reason,
      } => {
        let same_model = *provider == model.provider && *api == model.api && *source_model == model.id;
        let source = ToolCallSource {
          provider,
          api,
          model: source_model,
        };
        let mut out_blocks = Vec::with_capacity(blocks.len());
        for block in blocks {
          match block {
            AssistantBlock::Thinking { text, signature } => {
              let signed = signature.as_deref().is_some_and(|s| !s.is_empty());
              if same_model && signed {
                out_blocks.push(block.clone());
              } else if js_trim(text).is_empty() {
                // blank reasoning is never replayed
              } else if same_model {
                out_blocks.push(block.clone());
              } else {
                out_blocks.push(AssistantBlock::Text {
                  text: text.clone(),
                  signature: None,
                });
              }
            }
            AssistantBlock::Text { text, .. } => {
              if same_model {
                out_blocks.push(block.clone());
              } else {
                out_blocks.push(AssistantBlock::Text {
                  text: text.clone(),
                  signature: None,
                });
              }
            }
            AssistantBlock::ToolCall { id, name, arguments } => {
              let mut new_id = id.clone();
              if !same_model {
                let normalized = normalize_tool_call_id(id, &source);
                if normalized != *id {
                  renamed.insert(id.clone(), normalized.clone());
                  new_id = normalized;
                }
              }
              out_blocks.push(AssistantBlock::ToolCall {
                id: new_id,
                name: name.clone(),
                arguments: arguments.clone(),
              });
            }
          }
        }
        CtxMessage::Assistant {
          blocks: out_blocks,
          api: api.clone(),
          provider: provider.clone(),
          model: source_model.clone(),
          stop_reason: stop_reason.clone(),
        }
      }
    };
    first_pass.push(out);
  }

  // Second pass: drop failed turns and answer calls that never got a result.
  let mut result = Vec::with_capacity(first_pass.len());
  let mut pending: Vec<(String, String)> = Vec::new();
  let mut answered: HashSet<String> = HashSet::new();
  fn flush(result: &mut Vec<CtxMessage>, pending: &mut Vec<(String, String)>, answered: &mut HashSet<String>) {
    if pending.is_empty() {
      return;
    }
    for (id, name) in pending.drain(..) {
      if !answered.contains(&id) {
        result.push(CtxMessage::ToolResult {
          tool_call_id: id,
          tool_name: name,
          content: vec![UserBlock::Text(NO_RESULT_TEXT.into())],
          is_error: true,
        });
      }
    }
    answered.clear();
  }
  for message in first_pass {
    match &message {
      CtxMessage::Assistant {
        blocks, stop_reason, ..
      } => {
        flush(&mut result, &mut pending, &mut answered);
        if stop_reason == "error" || stop_reason == "aborted" {
          continue;
        }
        let calls: Vec<(String, String)> = blocks
          .iter()
          .filter_map(|b| match b {
            AssistantBlock::ToolCall { id, name, .. } => Some((id.clone(), name.clone())),
            _ => None,
          })
          .collect();
        if !calls.is_empty() {
          pending = calls;
          answered.clear();
        }
        result.push(message);
      }
      CtxMessage::ToolResult { tool_call_id, .. } => {
        answered.insert(tool_call_id.clone());
        result.push(message);
      }
      CtxMessage::User(_) => {
        flush(&mut result, &mut pending, &mut answered);
        result.push(message);
      }
    }
  }
  flush(&mut result, &mut pending, &mut answered);
  result
}

/// One placeholder per run of images; a text block equal to the placeholder also counts as one.
fn replace_images(blocks: &[UserBlock], placeholder: &str) -> Vec<UserBlock> {
  let mut out = Vec::with_capacity(blocks.len());
  let mut previous_was_placeholder = false;
  for block in blocks {
    match block {
      UserBlock::Image { .. } => {
        if !previous_was_placeholder {
          out.push(UserBlock::Text(placeholder.to_string()));
        }
        previous_was_placeholder = true;
      }
      UserBlock::Text(text) => {
        previous_was_placeholder = text == placeholder;
        out.push(block.clone());
      }
    }
  }
  out
}

// ---------------------------------------------------------------------------------------------
// Output budget (pi-ai `buildBaseOptions` → `clampMaxTokensToContext`)

const CONTEXT_SAFETY_TOKENS: i64 = 4096;
const CHARS_PER_TOKEN: usize = 4;
const ESTIMATED_IMAGE_CHARS: usize = 4800;

/// The `maxTokens` every pi-ai `streamSimple` sends: the requested value (default: the model's
/// `maxTokens`), capped so that the estimated prompt plus 4096 safety tokens fits the context
/// window, never below 1.
pub fn resolve_max_tokens(model: &Model, context: &Context, requested: Option<u64>) -> u64 {
  let max_tokens = requested.unwrap_or(model.max_tokens);
  if model.context_window == 0 {
    return max_tokens.max(1);
  }
  let available = model.context_window as i64 - estimate_context_tokens(context) as i64 - CONTEXT_SAFETY_TOKENS;
  max_tokens.min(available.max(1) as u64)
}

/// pi-ai's rough prompt estimate (4 UTF-16 units per token, 4800 characters per image; Blade's
/// history carries no usage, so the estimate is always the character count).
pub fn estimate_context_tokens(context: &Context) -> u64 {
  let messages: usize = context.messages.iter().map(estimate_message_tokens).sum();
  let system = context
    .system_prompt
    .as_deref()
    .map_or(0, |s| utf16_len(s).div_ceil(CHARS_PER_TOKEN));
  let tools = match &context.tools {
    Some(tools) if !tools.is_empty() => utf16_len(&js_stringify(&tools_as_json(tools))).div_ceil(CHARS_PER_TOKEN),
    _ => 0,
  };
  (messages + system + tools) as u64
}

fn estimate_message_tokens(message: &CtxMessage) -> usize {
  let blocks_chars = |blocks: &[UserBlock]| -> usize {
    blocks
      .iter()
      .map(|b| match b {
        UserBlock::Text(t) => utf16_len(t),
        UserBlock::Image { .. } => ESTIMATED_IMAGE_CHARS,
      })
      .sum()
  };
  let chars = match message {
    CtxMessage::User(UserContent::Text(t)) => utf16_len(t),
    CtxMessage::User(UserContent::Blocks(blocks)) => blocks_chars(blocks),
    CtxMessage::ToolResult { content, .. } => blocks_chars(content),
    CtxMessage::Assistant { blocks, .. } => blocks
      .iter()
      .map(|b| match b {
        AssistantBlock::Text { text, .. } | AssistantBlock::Thinking { text, .. } => utf16_len(text),
        AssistantBlock::ToolCall { name, arguments, .. } => {
          utf16_len(name) + utf16_len(&js_stringify(&Value::Object(arguments.clone())))
        }
      })
      .sum(),
  };
  chars.div_ceil(CHARS_PER_TOKEN)
}

/// The tools the way pi-ai holds them (`{name, description, parameters, constrainedSampling?}`).
fn tools_as_json(tools: &[ToolDef]) -> Value {
  Value::Array(
    tools
      .iter()
      .map(|t| {
        let mut o = Map::new();
        o.insert("name".into(), Value::String(t.name.clone()));
        o.insert("description".into(), Value::String(t.description.clone()));
        o.insert("parameters".into(), t.parameters.clone());
        if let Some(cs) = &t.constrained_sampling {
          o.insert("constrainedSampling".into(), cs.clone());
        }
        Value::Object(o)
      })
      .collect(),
  )
}

// ---------------------------------------------------------------------------------------------
// Lone surrogates

/// pi-ai's `sanitizeSurrogates`: drops lone UTF-16 surrogates (escaped in the crate's string
/// encoding, see `js::text`); paired surrogates are ordinary chars and stay.
pub fn sanitize_surrogates(text: &str) -> String {
  drop_lone_surrogates(text).into_owned()
}

// ---------------------------------------------------------------------------------------------
// JavaScript JSON

/// A JS number as a JSON value: integral values inside the safe range become integers (so that
/// `0` stays `0`, not `0.0`), non-finite values become `null` (what `JSON.stringify` writes).
pub fn js_number(n: f64) -> Value {
  if !n.is_finite() {
    return Value::Null;
  }
  if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
    return Value::Number(Number::from(n as i64));
  }
  Number::from_f64(n).map_or(Value::Null, Value::Number)
}

/// `JSON.stringify(value)` (compact): JS number formatting, JS property order (array-index keys
/// first, ascending), lone-surrogate stand-ins written as `\udxxx` escapes.
pub fn js_stringify(value: &Value) -> String {
  let mut out = String::new();
  write_js(&mut out, value);
  out
}

fn write_js(out: &mut String, value: &Value) {
  match value {
    Value::Null => out.push_str("null"),
    Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
    Value::Number(n) => {
      let f = n.as_f64().unwrap_or(0.0);
      if f.is_finite() {
        out.push_str(&number_to_string(f));
      } else {
        out.push_str("null");
      }
    }
    Value::String(s) => write_js_string(out, s),
    Value::Array(items) => {
      out.push('[');
      for (i, item) in items.iter().enumerate() {
        if i > 0 {
          out.push(',');
        }
        write_js(out, item);
      }
      out.push(']');
    }
    Value::Object(map) => {
      out.push('{');
      for (i, (k, v)) in js_key_order(map).into_iter().enumerate() {
        if i > 0 {
          out.push(',');
        }
        write_js_string(out, k);
        out.push(':');
        write_js(out, v);
      }
      out.push('}');
    }
  }
}

/// A JSON string literal as `JSON.stringify` writes it.
pub fn write_js_string(out: &mut String, s: &str) {
  crate::js::json::write_string(out, s);
}

/// A canonical array index (`"0"`, `"42"`, below 2^32 − 1): JS lists such keys first.
fn array_index(key: &str) -> Option<u32> {
  let b = key.as_bytes();
  if b.is_empty() || b.len() > 10 || (b.len() > 1 && b[0] == b'0') || !b.iter().all(u8::is_ascii_digit) {
    return None;
  }
  key
    .parse::<u64>()
    .ok()
    .filter(|n| *n < u32::MAX as u64)
    .map(|n| n as u32)
}

fn js_key_order(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
  let mut entries: Vec<(&String, &Value)> = map.iter().collect();
  if entries.iter().any(|(k, _)| array_index(k).is_some()) {
    // Stable: index keys ascending ahead of the others, which keep insertion order.
    entries.sort_by_key(|(k, _)| match array_index(k) {
      Some(i) => (0u8, i),
      None => (1u8, 0),
    });
  }
  entries
}

/// Rebuilds an object (recursively) in JS property order.
pub fn js_ordered(value: Value) -> Value {
  match value {
    Value::Object(map) => {
      let needs = map.keys().any(|k| array_index(k).is_some());
      let mut entries: Vec<(String, Value)> = map.into_iter().map(|(k, v)| (k, js_ordered(v))).collect();
      if needs {
        entries.sort_by_key(|(k, _)| match array_index(k) {
          Some(i) => (0u8, i),
          None => (1u8, 0),
        });
      }
      Value::Object(entries.into_iter().collect())
    }
    Value::Array(items) => Value::Array(items.into_iter().map(js_ordered).collect()),
    other => other,
  }
}

/// A JSON value as JS holds it while parsing: numbers may be non-finite (the partial parser
/// accepts `NaN` / `Infinity`), objects keep JS assignment semantics.
#[derive(Clone, Debug)]
enum JsVal {
  Null,
  Bool(bool),
  Num(f64),
  Str(String),
  Arr(Vec<JsVal>),
  Obj(Vec<(String, JsVal)>),
}

impl JsVal {
  fn set(entries: &mut Vec<(String, JsVal)>, key: String, value: JsVal) {
    match entries.iter_mut().find(|(k, _)| *k == key) {
      Some(slot) => slot.1 = value,
      None => entries.push((key, value)),
    }
  }

  fn into_value(self) -> Value {
    match self {
      JsVal::Null => Value::Null,
      JsVal::Bool(b) => Value::Bool(b),
      JsVal::Num(n) => js_number(n),
      JsVal::Str(s) => Value::String(s),
      JsVal::Arr(items) => Value::Array(items.into_iter().map(JsVal::into_value).collect()),
      JsVal::Obj(entries) => js_ordered(Value::Object(
        entries.into_iter().map(|(k, v)| (k, v.into_value())).collect(),
      )),
    }
  }
}

/// Why `JSON.parse` failed, worded the way V8 (Node 22) words it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonSyntaxError(pub String);

/// `JSON.parse(text)`: strict JSON (JSON whitespace only), `\ud800`-style lone surrogates kept
/// as stand-ins, numbers as doubles, later duplicate keys overwrite in place.
pub fn js_json_parse(text: &str) -> Result<Value, JsonSyntaxError> {
  // The byte parser gives the same value as the char parser whenever the text is valid; any
  // failure (or an input it does not take) goes to the char parser, which words the error.
  if let Ok(v) = fast_parse(text) {
    return Ok(v);
  }
  let chars: Vec<char> = text.chars().collect();
  strict_parse(&chars).map(JsVal::into_value)
}

/// Which members of a parsed object are built: `All`, or only the listed keys (each with its own
/// projection; an array's elements take the array's projection). Other members are checked and
/// skipped, so a text parses (or fails) exactly as with [`js_json_parse`].
pub enum Keep {
  All,
  Keys(&'static [(&'static str, Keep)]),
}

/// [`js_json_parse`] keeping only what `keep` lists: the same value for every kept member, the
/// same result (and error) for every text. For stream events of which a parser reads a few
/// fields.
pub fn js_json_parse_kept(text: &str, keep: &Keep) -> Result<Value, JsonSyntaxError> {
  let mut p = Fast {
    text,
    s: text.as_bytes(),
    i: 0,
    depth: 0,
  };
  p.ws();
  if let Ok(v) = p.value(keep) {
    p.ws();
    if p.i == p.s.len() {
      return Ok(v);
    }
  }
  let chars: Vec<char> = text.chars().collect();
  strict_parse(&chars).map(|v| kept(v.into_value(), keep))
}

/// A full parse reduced to `keep` (only for the rare texts the byte parser hands over).
fn kept(v: Value, keep: &Keep) -> Value {
  match (v, keep) {
    (v, Keep::All) => v,
    (Value::Array(items), keep) => Value::Array(items.into_iter().map(|i| kept(i, keep)).collect()),
    (Value::Object(map), Keep::Keys(keys)) => Value::Object(
      map
        .into_iter()
        .filter_map(|(k, v)| {
          let (_, sub) = keys.iter().find(|(name, _)| *name == k)?;
          Some((k, kept(v, sub)))
        })
        .collect(),
    ),
    (v, _) => v,
  }
}

/// [`js_json_parse`] over bytes, building `Value`s directly: the same grammar, duplicate keys
/// overwriting in place, array-index keys moved first per object, numbers through `js_number`.
/// `Err(())` means "ask the char parser".
fn fast_parse(text: &str) -> Result<Value, ()> {
  let mut p = Fast {
    text,
    s: text.as_bytes(),
    i: 0,
    depth: 0,
  };
  p.ws();
  let v = p.value(&Keep::All)?;
  p.ws();
  if p.i == p.s.len() {
    Ok(v)
  } else {
    Err(())
  }
}

struct Fast<'a> {
  text: &'a str,
  s: &'a [u8],
  i: usize,
  depth: usize,
}

impl<'a> Fast<'a> {
  #[inline]
  fn ws(&mut self) {
    while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
      self.i += 1;
    }
  }

  #[inline]
  fn peek(&self) -> Option<u8> {
    self.s.get(self.i).copied()
  }

  fn literal(&mut self, word: &[u8], v: Value) -> Result<Value, ()> {
    if self.s[self.i..].starts_with(word) {
      self.i += word.len();
      Ok(v)
    } else {
      Err(())
    }
  }

  /// Check and pass over one value without building it.
  fn skip(&mut self) -> Result<(), ()> {
    match self.peek().ok_or(())? {
      b'{' => {
        self.enter()?;
        self.i += 1;
        self.ws();
        if self.peek() == Some(b'}') {
          self.i += 1;
          self.depth -= 1;
          return Ok(());
        }
        loop {
          self.ws();
          if self.peek() != Some(b'"') {
            return Err(());
          }
          self.skip_string()?;
          self.ws();
          if self.peek() != Some(b':') {
            return Err(());
          }
          self.i += 1;
          self.ws();
          self.skip()?;
          self.ws();
          match self.peek() {
            Some(b',') => self.i += 1,
            Some(b'}') => {
              self.i += 1;
              self.depth -= 1;
              return Ok(());
            }
            _ => return Err(()),
          }
        }
      }
      b'[' => {
        self.enter()?;
        self.i += 1;
        self.ws();
        if self.peek() == Some(b']') {
          self.i += 1;
          self.depth -= 1;
          return Ok(());
        }
        loop {
          self.ws();
          self.skip()?;
          self.ws();
          match self.peek() {
            Some(b',') => self.i += 1,
            Some(b']') => {
              self.i += 1;
              self.depth -= 1;
              return Ok(());
            }
            _ => return Err(()),
          }
        }
      }
      b'"' => self.skip_string(),
      b't' => self.literal(b"true", Value::Null).map(drop),
      b'f' => self.literal(b"false", Value::Null).map(drop),
      b'n' => self.literal(b"null", Value::Null).map(drop),
      c if c == b'-' || c.is_ascii_digit() => self.number_span().map(drop),
      _ => Err(()),
    }
  }

  /// Check a string literal (escapes, control characters) without building it.
  fn skip_string(&mut self) -> Result<(), ()> {
    self.i += 1;
    loop {
      let b = *self.s.get(self.i).ok_or(())?;
      self.i += 1;
      match b {
        b'"' => return Ok(()),
        b'\\' => match *self.s.get(self.i).ok_or(())? {
          b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.i += 1,
          b'u' => {
            let hex = self.s.get(self.i + 1..self.i + 5).ok_or(())?;
            if !hex.iter().all(u8::is_ascii_hexdigit) {
              return Err(());
            }
            self.i += 5;
          }
          _ => return Err(()),
        },
        b if b < 0x20 => return Err(()),
        _ => {}
      }
    }
  }

  fn value(&mut self, keep: &Keep) -> Result<Value, ()> {
    match self.peek().ok_or(())? {
      b'{' => {
        self.enter()?;
        self.i += 1;
        self.ws();
        if self.peek() == Some(b'}') {
          self.i += 1;
          self.depth -= 1;
          return Ok(Value::Object(Map::new()));
        }
        // A projection knows how many members it can keep: no regrowth.
        let mut map = match keep {
          Keep::All => Map::new(),
          Keep::Keys(keys) => Map::with_capacity(keys.len()),
        };
        let mut index_keys = false;
        loop {
          self.ws();
          if self.peek() != Some(b'"') {
            return Err(());
          }
          let key = self.key()?;
          self.ws();
          if self.peek() != Some(b':') {
            return Err(());
          }
          self.i += 1;
          self.ws();
          let sub = match keep {
            Keep::All => Some(&Keep::All),
            Keep::Keys(keys) => keys.iter().find(|(name, _)| *name == key).map(|(_, sub)| sub),
          };
          if let Some(sub) = sub {
            let v = self.value(sub)?;
            index_keys |= key.as_bytes().first().is_some_and(u8::is_ascii_digit) && array_index(&key).is_some();
            // IndexMap keeps a re-assigned key where it first was, as a JS object does.
            map.insert(key.into_owned(), v);
          } else {
            self.skip()?;
          }
          self.ws();
          match self.peek() {
            Some(b',') => self.i += 1,
            Some(b'}') => {
              self.i += 1;
              self.depth -= 1;
              if index_keys {
                let mut entries: Vec<(String, Value)> = map.into_iter().collect();
                entries.sort_by_key(|(k, _)| match array_index(k) {
                  Some(i) => (0u8, i),
                  None => (1u8, 0),
                });
                map = entries.into_iter().collect();
              }
              return Ok(Value::Object(map));
            }
            _ => return Err(()),
          }
        }
      }
      b'[' => {
        self.enter()?;
        self.i += 1;
        let mut items = Vec::new();
        self.ws();
        if self.peek() == Some(b']') {
          self.i += 1;
          self.depth -= 1;
          return Ok(Value::Array(items));
        }
        loop {
          self.ws();
          items.push(self.value(keep)?);
          self.ws();
          match self.peek() {
            Some(b',') => self.i += 1,
            Some(b']') => {
              self.i += 1;
              self.depth -= 1;
              return Ok(Value::Array(items));
            }
            _ => return Err(()),
          }
        }
      }
      b'"' => self.string().map(Value::String),
      b't' => self.literal(b"true", Value::Bool(true)),
      b'f' => self.literal(b"false", Value::Bool(false)),
      b'n' => self.literal(b"null", Value::Null),
      c if c == b'-' || c.is_ascii_digit() => self.number(),
      _ => Err(()),
    }
  }

  fn enter(&mut self) -> Result<(), ()> {
    self.depth += 1;
    if self.depth > 2000 {
      return Err(());
    }
    Ok(())
  }

  fn digits(&mut self) {
    while self.peek().is_some_and(|c| c.is_ascii_digit()) {
      self.i += 1;
    }
  }

  fn number(&mut self) -> Result<Value, ()> {
    let (start, end) = self.number_span()?;
    Ok(js_number(self.text[start..end].parse::<f64>().unwrap_or(f64::NAN)))
  }

  /// Check a number's grammar; its text span.
  fn number_span(&mut self) -> Result<(usize, usize), ()> {
    let start = self.i;
    if self.peek() == Some(b'-') {
      self.i += 1;
    }
    match self.peek() {
      Some(b'0') => self.i += 1,
      Some(c) if c.is_ascii_digit() => self.digits(),
      _ => return Err(()),
    }
    if self.peek() == Some(b'.') {
      self.i += 1;
      if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
        return Err(());
      }
      self.digits();
    }
    if matches!(self.peek(), Some(b'e' | b'E')) {
      self.i += 1;
      if matches!(self.peek(), Some(b'+' | b'-')) {
        self.i += 1;
      }
      if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
        return Err(());
      }
      self.digits();
    }
    Ok((start, self.i))
  }

  /// A property name: borrowed from the text when it needs no decoding.
  fn key(&mut self) -> Result<std::borrow::Cow<'a, str>, ()> {
    let start = self.i + 1;
    let text = self.text;
    let s = self.s;
    let mut j = start;
    while let Some(&b) = s.get(j) {
      match b {
        b'"' => {
          self.i = j + 1;
          return Ok(std::borrow::Cow::Borrowed(&text[start..j]));
        }
        b'\\' | 0xF4 => break,
        b if b < 0x20 => return Err(()),
        _ => j += 1,
      }
    }
    self.string().map(std::borrow::Cow::Owned)
  }

  /// A string literal starting at the opening quote. A run without escapes and without 0xF4
  /// bytes (which lead U+10FFFF, the `js::text` escape) is copied as it is; others are decoded
  /// through UTF-16 units exactly like the char parser.
  fn string(&mut self) -> Result<String, ()> {
    self.i += 1;
    let start = self.i;
    while let Some(&b) = self.s.get(self.i) {
      match b {
        b'"' => {
          let out = self.text[start..self.i].to_string();
          self.i += 1;
          return Ok(out);
        }
        b'\\' | 0xF4 => break,
        b if b < 0x20 => return Err(()),
        _ => self.i += 1,
      }
    }
    if self.i >= self.s.len() {
      return Err(());
    }
    // The general case, from the start of the literal.
    let mut units: Vec<u16> = Vec::new();
    let mut chars = self.text[start..].char_indices();
    loop {
      let Some((at, c)) = chars.next() else {
        return Err(());
      };
      match c {
        '"' => {
          self.i = start + at + 1;
          break;
        }
        '\\' => {
          let unit = match chars.next().map(|(_, c)| c) {
            Some('"') => '"' as u16,
            Some('\\') => '\\' as u16,
            Some('/') => '/' as u16,
            Some('b') => 8,
            Some('f') => 12,
            Some('n') => 10,
            Some('r') => 13,
            Some('t') => 9,
            Some('u') => {
              let mut unit = 0u16;
              for _ in 0..4 {
                match chars.next().and_then(|(_, h)| h.to_digit(16)) {
                  Some(d) => unit = unit * 16 + d as u16,
                  None => return Err(()),
                }
              }
              unit
            }
            _ => return Err(()),
          };
          units.push(unit);
        }
        c if (c as u32) < 0x20 => return Err(()),
        // Text in the crate's string encoding (wire text is well-formed, so the same): an escape
        // holds a lone surrogate or U+10FFFF; every other raw character is itself.
        ESC => {
          let (cp, n) = cp_at(self.text, start + at);
          if n > ESC.len_utf8() {
            chars.next();
          }
          push_units(&mut units, cp);
        }
        c => {
          let mut buf = [0u16; 2];
          units.extend_from_slice(c.encode_utf16(&mut buf));
        }
      }
    }
    Ok(crate::js::text::from_utf16(&units))
  }
}

fn strict_parse(chars: &[char]) -> Result<JsVal, JsonSyntaxError> {
  let mut p = Strict {
    s: chars,
    i: 0,
    depth: 0,
  };
  p.ws();
  let v = p.value()?;
  p.ws();
  match p.peek() {
    None => Ok(v),
    Some(c) if c == '-' || c.is_ascii_digit() => Err(p.at_position("Unexpected number")),
    Some('"') => Err(p.at_position("Unexpected string")),
    Some(_) => Err(p.located("Unexpected non-whitespace character after JSON")),
  }
}

struct Strict<'a> {
  s: &'a [char],
  i: usize,
  depth: usize,
}

impl Strict<'_> {
  /// `<what> in JSON at position <utf-16 index> (line <l> column <c>)` (Node 22's wording).
  fn at_position(&self, what: &str) -> JsonSyntaxError {
    self.located(&format!("{what} in JSON"))
  }

  /// `<what> at position <utf-16 index> (line <l> column <c>)`.
  fn located(&self, what: &str) -> JsonSyntaxError {
    let upto = &self.s[..self.i.min(self.s.len())];
    let position: usize = upto.iter().map(|c| c.len_utf16()).sum();
    let line = 1 + upto.iter().filter(|c| **c == '\n').count();
    let line_start = upto.iter().rposition(|c| *c == '\n').map_or(0, |p| p + 1);
    let column = 1 + upto[line_start..].iter().map(|c| c.len_utf16()).sum::<usize>();
    JsonSyntaxError(format!("{what} at position {position} (line {line} column {column})"))
  }

  /// A value was expected here but the character cannot start one.
  fn unexpected(&self) -> JsonSyntaxError {
    let Some(c) = self.peek() else {
      return JsonSyntaxError("Unexpected end of JSON input".into());
    };
    // V8 quotes the whole source when short, else 10 characters either side.
    let units: Vec<u16> = self
      .s
      .iter()
      .flat_map(|c| c.encode_utf16(&mut [0; 2]).to_vec())
      .collect();
    let pos: usize = self.s[..self.i].iter().map(|c| c.len_utf16()).sum();
    let context = if units.len() <= 20 {
      format!("\"{}\"", String::from_utf16_lossy(&units))
    } else {
      let from = pos.saturating_sub(10);
      let to = (pos + 10).min(units.len());
      format!(
        "{}\"{}\"{}",
        if from > 0 { "..." } else { "" },
        String::from_utf16_lossy(&units[from..to]),
        if to < units.len() { "..." } else { "" }
      )
    };
    JsonSyntaxError(format!("Unexpected token '{c}', {context} is not valid JSON"))
  }

  fn ws(&mut self) {
    while self.i < self.s.len() && matches!(self.s[self.i], ' ' | '\t' | '\n' | '\r') {
      self.i += 1;
    }
  }

  fn peek(&self) -> Option<char> {
    self.s.get(self.i).copied()
  }

  fn literal(&mut self, word: &str, v: JsVal) -> Result<JsVal, JsonSyntaxError> {
    for expected in word.chars() {
      if self.peek() != Some(expected) {
        return Err(self.unexpected());
      }
      self.i += 1;
    }
    Ok(v)
  }

  fn value(&mut self) -> Result<JsVal, JsonSyntaxError> {
    match self.peek() {
      Some('{') => {
        self.enter()?;
        self.i += 1;
        let mut entries = Vec::new();
        self.ws();
        if self.peek() == Some('}') {
          self.i += 1;
          self.depth -= 1;
          return Ok(JsVal::Obj(entries));
        }
        let mut first = true;
        loop {
          self.ws();
          if self.peek() != Some('"') {
            return Err(self.at_position(if first {
              "Expected property name or '}'"
            } else {
              "Expected double-quoted property name"
            }));
          }
          first = false;
          let key = self.string()?;
          self.ws();
          if self.peek() != Some(':') {
            return Err(self.at_position("Expected ':' after property name"));
          }
          self.i += 1;
          self.ws();
          let v = self.value()?;
          JsVal::set(&mut entries, key, v);
          self.ws();
          match self.peek() {
            Some(',') => self.i += 1,
            Some('}') => {
              self.i += 1;
              self.depth -= 1;
              return Ok(JsVal::Obj(entries));
            }
            _ => return Err(self.at_position("Expected ',' or '}' after property value")),
          }
        }
      }
      Some('[') => {
        self.enter()?;
        self.i += 1;
        let mut items = Vec::new();
        self.ws();
        if self.peek() == Some(']') {
          self.i += 1;
          self.depth -= 1;
          return Ok(JsVal::Arr(items));
        }
        loop {
          self.ws();
          items.push(self.value()?);
          self.ws();
          match self.peek() {
            Some(',') => self.i += 1,
            Some(']') => {
              self.i += 1;
              self.depth -= 1;
              return Ok(JsVal::Arr(items));
            }
            _ => return Err(self.at_position("Expected ',' or ']' after array element")),
          }
        }
      }
      Some('"') => self.string().map(JsVal::Str),
      Some('t') => self.literal("true", JsVal::Bool(true)),
      Some('f') => self.literal("false", JsVal::Bool(false)),
      Some('n') => self.literal("null", JsVal::Null),
      Some(c) if c == '-' || c.is_ascii_digit() => self.number(),
      _ => Err(self.unexpected()),
    }
  }

  /// Nesting guard: far deeper than any real payload, shallow enough for the native stack.
  fn enter(&mut self) -> Result<(), JsonSyntaxError> {
    self.depth += 1;
    if self.depth > 2000 {
      return Err(JsonSyntaxError("Maximum call stack size exceeded".into()));
    }
    Ok(())
  }

  fn digits(&mut self) {
    while self.peek().is_some_and(|c| c.is_ascii_digit()) {
      self.i += 1;
    }
  }

  fn number(&mut self) -> Result<JsVal, JsonSyntaxError> {
    let start = self.i;
    if self.peek() == Some('-') {
      self.i += 1;
    }
    match self.peek() {
      Some('0') => self.i += 1,
      Some(c) if c.is_ascii_digit() => self.digits(),
      _ => return Err(self.at_position("No number after minus sign")),
    }
    if self.peek() == Some('.') {
      self.i += 1;
      if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
        return Err(self.at_position("Unterminated fractional number"));
      }
      self.digits();
    }
    if matches!(self.peek(), Some('e' | 'E')) {
      self.i += 1;
      if matches!(self.peek(), Some('+' | '-')) {
        self.i += 1;
      }
      if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
        return Err(self.at_position("Exponent part is missing a number"));
      }
      self.digits();
    }
    let text: String = self.s[start..self.i].iter().collect();
    Ok(JsVal::Num(text.parse::<f64>().unwrap_or(f64::NAN)))
  }

  /// A string literal starting at the opening quote.
  fn string(&mut self) -> Result<String, JsonSyntaxError> {
    self.i += 1;
    let mut units: Vec<u16> = Vec::new();
    loop {
      let Some(c) = self.peek() else {
        return Err(self.at_position("Unterminated string"));
      };
      match c {
        '"' => {
          self.i += 1;
          break;
        }
        '\\' => {
          self.i += 1;
          let unit = match self.peek() {
            Some('"') => '"' as u16,
            Some('\\') => '\\' as u16,
            Some('/') => '/' as u16,
            Some('b') => 8,
            Some('f') => 12,
            Some('n') => 10,
            Some('r') => 13,
            Some('t') => 9,
            Some('u') => {
              let mut unit = 0u16;
              for _ in 0..4 {
                self.i += 1;
                match self.peek().and_then(|h| h.to_digit(16)) {
                  Some(d) => unit = unit * 16 + d as u16,
                  None => return Err(self.at_position("Bad Unicode escape")),
                }
              }
              unit
            }
            None => return Err(self.at_position("Unterminated string")),
            Some(_) => return Err(self.at_position("Bad escaped character")),
          };
          self.i += 1;
          units.push(unit);
        }
        c if (c as u32) < 0x20 => return Err(self.at_position("Bad control character in string literal")),
        // The source is in `js::text`'s encoding (wire text is well-formed, so the same): an escape
        // holds a lone surrogate or U+10FFFF.
        ESC => {
          self.i += 1;
          match self.peek() {
            Some(ESC) => {
              self.i += 1;
              push_units(&mut units, 0x10FFFF);
            }
            Some(n) if (0x10F000..0x10F800).contains(&(n as u32)) => {
              self.i += 1;
              units.push((n as u32 - 0x10F000 + 0xD800) as u16);
            }
            _ => push_units(&mut units, 0x10FFFF),
          }
        }
        c => {
          self.i += 1;
          let mut buf = [0u16; 2];
          units.extend_from_slice(c.encode_utf16(&mut buf));
        }
      }
    }
    Ok(from_utf16(&units))
  }
}

/// pi-ai's `parseStreamingJson` for tool-call arguments: `{}` for blank input; else `JSON.parse`,
/// then `JSON.parse` of the repaired text (raw control characters escaped, invalid escapes
/// doubled), then the `partial-json` parser on the text and on the repaired text, then `{}`.
///
/// pi-ai keeps whatever value comes out; a tool call's arguments are an object here, so a
/// non-object result (array, number, `null`…) reads as `{}`.
pub fn parse_streaming_json(partial: &str) -> Map<String, Value> {
  match parse_streaming_json_value(partial) {
    Value::Object(map) => map,
    _ => Map::new(),
  }
}

/// [`parse_streaming_json`] without the object restriction.
pub fn parse_streaming_json_value(partial: &str) -> Value {
  if js_trim(partial).is_empty() {
    return Value::Object(Map::new());
  }
  let chars: Vec<char> = partial.chars().collect();
  if let Ok(v) = strict_parse(&chars) {
    return v.into_value();
  }
  let repaired = repair_json(&chars);
  if repaired != chars {
    if let Ok(v) = strict_parse(&repaired) {
      return v.into_value();
    }
  }
  for attempt in [&chars, &repaired] {
    match partial_parse(attempt) {
      Ok(JsVal::Null) => return Value::Object(Map::new()),
      Ok(v) => return v.into_value(),
      Err(()) => continue,
    }
  }
  Value::Object(Map::new())
}

/// pi-ai's `repairJson`: inside string literals, raw control characters become escapes and a
/// backslash that does not start a valid escape is doubled.
/// pi-ai's `repairJson` over a whole text: inside strings, raw control characters are escaped and
/// a backslash that starts no valid escape is doubled.
pub fn repair_json_text(json: &str) -> String {
  let chars: Vec<char> = json.chars().collect();
  repair_json(&chars).into_iter().collect()
}

fn repair_json(chars: &[char]) -> Vec<char> {
  let mut out = Vec::with_capacity(chars.len() + 8);
  let mut in_string = false;
  let mut i = 0;
  while i < chars.len() {
    let c = chars[i];
    if !in_string {
      out.push(c);
      if c == '"' {
        in_string = true;
      }
      i += 1;
      continue;
    }
    if c == '"' {
      out.push(c);
      in_string = false;
      i += 1;
      continue;
    }
    if c == '\\' {
      match chars.get(i + 1) {
        None => {
          out.extend(['\\', '\\']);
          i += 1;
          continue;
        }
        Some('u') => {
          let digits = chars.get(i + 2..i + 6);
          if digits.is_some_and(|d| d.iter().all(|h| h.is_ascii_hexdigit())) {
            out.extend_from_slice(&chars[i..i + 6]);
            i += 6;
            continue;
          }
        }
        _ => {}
      }
      let next = chars[i + 1];
      if matches!(next, '"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't' | 'u') {
        out.extend(['\\', next]);
        i += 2;
        continue;
      }
      out.extend(['\\', '\\']);
      i += 1;
      continue;
    }
    if (c as u32) <= 0x1f {
      let esc = match c {
        '\u{8}' => "\\b".to_string(),
        '\u{c}' => "\\f".to_string(),
        '\n' => "\\n".to_string(),
        '\r' => "\\r".to_string(),
        '\t' => "\\t".to_string(),
        _ => format!("\\u{:04x}", c as u32),
      };
      out.extend(esc.chars());
    } else {
      out.push(c);
    }
    i += 1;
  }
  out
}

/// `partial-json` 0.1.7 `parse(text, Allow.ALL)`: completes truncated strings, numbers,
/// literals, objects and arrays; anything it cannot make sense of inside a container ends that
/// container. `Err` when the top level itself is unusable.
fn partial_parse(chars: &[char]) -> Result<JsVal, ()> {
  let start = chars.iter().position(|c| !is_js_whitespace(*c)).unwrap_or(chars.len());
  let end = chars
    .iter()
    .rposition(|c| !is_js_whitespace(*c))
    .map_or(start, |e| e + 1);
  if start >= end {
    return Err(());
  }
  let mut p = Partial {
    s: &chars[start..end],
    i: 0,
    depth: 0,
  };
  p.any()
}

struct Partial<'a> {
  s: &'a [char],
  i: usize,
  depth: usize,
}

/// JS `substring(a, b)`: clamped to the string, arguments swapped when reversed.
fn js_substring(s: &[char], a: isize, b: isize) -> &[char] {
  let len = s.len() as isize;
  let a = a.clamp(0, len) as usize;
  let b = b.clamp(0, len) as usize;
  if a <= b {
    &s[a..b]
  } else {
    &s[b..a]
  }
}

fn last_index_of(s: &[char], c: char) -> isize {
  s.iter().rposition(|x| *x == c).map_or(-1, |i| i as isize)
}

impl Partial<'_> {
  fn at(&self, i: usize) -> Option<char> {
    self.s.get(i).copied()
  }

  fn skip_blank(&mut self) {
    while self.i < self.s.len() && matches!(self.s[self.i], ' ' | '\n' | '\r' | '\t') {
      self.i += 1;
    }
  }

  /// `substring(i, i + n) === word`, or (partial) the rest is a non-empty prefix of `word`.
  fn literal(&self, word: &str, min_rest: usize) -> bool {
    let w: Vec<char> = word.chars().collect();
    let rest = &self.s[self.i..];
    if rest.len() >= w.len() && rest[..w.len()] == w[..] {
      return true;
    }
    rest.len() < w.len() && rest.len() > min_rest && w.starts_with(rest)
  }

  fn any(&mut self) -> Result<JsVal, ()> {
    self.skip_blank();
    let Some(c) = self.at(self.i) else {
      return Err(());
    };
    match c {
      '"' => return self.string().map(JsVal::Str),
      '{' => return self.object(),
      '[' => return self.array(),
      _ => {}
    }
    for (word, value, min_rest) in [
      ("null", JsVal::Null, 0),
      ("true", JsVal::Bool(true), 0),
      ("false", JsVal::Bool(false), 0),
      ("Infinity", JsVal::Num(f64::INFINITY), 0),
      ("-Infinity", JsVal::Num(f64::NEG_INFINITY), 1),
      ("NaN", JsVal::Num(f64::NAN), 0),
    ] {
      if self.literal(word, min_rest) {
        self.i += word.chars().count();
        return Ok(value);
      }
    }
    self.number()
  }

  fn string(&mut self) -> Result<String, ()> {
    let start = self.i;
    let mut escape = false;
    self.i += 1;
    while self.i < self.s.len() && (self.s[self.i] != '"' || (escape && self.s[self.i - 1] == '\\')) {
      escape = if self.s[self.i] == '\\' { !escape } else { false };
      self.i += 1;
    }
    if self.at(self.i) == Some('"') {
      self.i += 1;
      return match strict_parse(&self.s[start..self.i]) {
        Ok(JsVal::Str(s)) => Ok(s),
        _ => Err(()),
      };
    }
    // Unterminated: close it (dropping a dangling backslash), else cut at the last backslash.
    let mut text = self.s[start..self.i - usize::from(escape)].to_vec();
    text.push('"');
    if let Ok(JsVal::Str(s)) = strict_parse(&text) {
      return Ok(s);
    }
    let mut text = js_substring(self.s, start as isize, last_index_of(self.s, '\\')).to_vec();
    text.push('"');
    match strict_parse(&text) {
      Ok(JsVal::Str(s)) => Ok(s),
      _ => Err(()),
    }
  }

  fn object(&mut self) -> Result<JsVal, ()> {
    self.depth += 1;
    if self.depth > 2000 {
      return Err(());
    }
    self.i += 1;
    self.skip_blank();
    let mut entries = Vec::new();
    while self.at(self.i) != Some('}') {
      self.skip_blank();
      if self.i >= self.s.len() {
        return Ok(JsVal::Obj(entries));
      }
      let before = self.i;
      let Ok(key) = self.string() else {
        return Ok(JsVal::Obj(entries));
      };
      self.skip_blank();
      self.i += 1; // the colon, whatever it is
      match self.any() {
        Ok(v) => JsVal::set(&mut entries, key, v),
        Err(()) => return Ok(JsVal::Obj(entries)),
      }
      self.skip_blank();
      if self.at(self.i) == Some(',') {
        self.i += 1;
      } else if self.i == before {
        // No progress: partial-json would spin here; stop instead.
        return Ok(JsVal::Obj(entries));
      }
    }
    self.i += 1;
    self.depth -= 1;
    Ok(JsVal::Obj(entries))
  }

  fn array(&mut self) -> Result<JsVal, ()> {
    self.depth += 1;
    if self.depth > 2000 {
      return Err(());
    }
    self.i += 1;
    let mut items = Vec::new();
    while self.at(self.i) != Some(']') {
      let before = self.i;
      match self.any() {
        Ok(v) => items.push(v),
        Err(()) => return Ok(JsVal::Arr(items)),
      }
      self.skip_blank();
      if self.at(self.i) == Some(',') {
        self.i += 1;
      } else if self.i == before {
        // No progress: partial-json would spin here; stop instead.
        return Ok(JsVal::Arr(items));
      }
    }
    self.i += 1;
    self.depth -= 1;
    Ok(JsVal::Arr(items))
  }

  fn number(&mut self) -> Result<JsVal, ()> {
    let parse = |text: &[char]| match strict_parse(text) {
      Ok(v) => Ok(v),
      Err(_) => Err(()),
    };
    if self.i == 0 {
      if self.s == ['-'] {
        return Err(());
      }
      return parse(self.s)
        .or_else(|_| parse(js_substring(self.s, 0, last_index_of(self.s, 'e'))))
        .map_err(|_| ());
    }
    let start = self.i;
    if self.at(self.i) == Some('-') {
      self.i += 1;
    }
    while let Some(c) = self.at(self.i) {
      if matches!(c, ',' | ']' | '}') {
        break;
      }
      self.i += 1;
    }
    let text = &self.s[start..self.i];
    if let Ok(v) = parse(text) {
      return Ok(v);
    }
    if text == ['-'] {
      return Err(());
    }
    parse(js_substring(self.s, start as isize, last_index_of(self.s, 'e')))
  }
}

/// pi-ai's `shortHash` (two 32-bit multiplicative hashes over UTF-16 units, base 36).
pub fn short_hash(text: &str) -> String {
  let mut h1: u32 = 0xdeadbeef;
  let mut h2: u32 = 0x41c6ce57;
  for unit in crate::repair::text::to_utf16(text) {
    let ch = unit as u32;
    h1 = (h1 ^ ch).wrapping_mul(2654435761);
    h2 = (h2 ^ ch).wrapping_mul(1597334677);
  }
  h1 = (h1 ^ (h1 >> 16)).wrapping_mul(2246822507) ^ (h2 ^ (h2 >> 13)).wrapping_mul(3266489909);
  h2 = (h2 ^ (h2 >> 16)).wrapping_mul(2246822507) ^ (h1 ^ (h1 >> 13)).wrapping_mul(3266489909);
  format!("{}{}", radix36(h2), radix36(h1))
}

fn radix36(mut n: u32) -> String {
  const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
  if n == 0 {
    return "0".into();
  }
  let mut out = Vec::new();
  while n > 0 {
    out.push(DIGITS[(n % 36) as usize]);
    n /= 36;
  }
  out.reverse();
  String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
  use serde_json::json;

  use super::*;
  use crate::chat::catalog::Cost;

  fn model(provider: &str, id: &str, images: bool) -> Model {
    Model {
      id: id.into(),
      name: id.into(),
      api: "openai-completions".into(),
      provider: provider.into(),
      base_url: String::new(),
      reasoning: true,
      input: if images {
        vec!["text".into(), "image".into()]
      } else {
        vec!["text".into()]
      },
      cost: Cost::default(),
      context_window: 128_000,
      max_tokens: 32_768,
      thinking_level_map: None,
      headers: None,
      compat: None,
      extra: Map::new(),
    }
  }

  fn turn(m: &Model, blocks: Vec<AssistantBlock>, stop: &str) -> CtxMessage {
    CtxMessage::Assistant {
      blocks,
      api: m.api.clone(),
      provider: m.provider.clone(),
      model: m.id.clone(),
      stop_reason: stop.into(),
    }
  }

  fn call(id: &str) -> AssistantBlock {
    AssistantBlock::ToolCall {
      id: id.into(),
      name: "t".into(),
      arguments: Map::new(),
    }
  }

  fn result(id: &str) -> CtxMessage {
    CtxMessage::ToolResult {
      tool_call_id: id.into(),
      tool_name: "t".into(),
      content: vec![UserBlock::Text("r".into())],
      is_error: false,
    }
  }

  fn thinking(text: &str, signature: Option<&str>) -> AssistantBlock {
    AssistantBlock::Thinking {
      text: text.into(),
      signature: signature.map(String::from),
    }
  }

  fn text(t: &str) -> AssistantBlock {
    AssistantBlock::Text {
      text: t.into(),
      signature: Some("sig".into()),
    }
  }

  #[test]
  fn images_become_one_placeholder_per_run_for_text_only_models() {
    let img = UserBlock::Image {
      mime_type: "image/png".into(),
      data: "A".into(),
    };
    let t = |s: &str| UserBlock::Text(s.into());
    let messages = vec![
      CtxMessage::User(UserContent::Blocks(vec![
        img.clone(),
        img.clone(),
        t("x"),
        t(USER_IMAGE_PLACEHOLDER),
        img.clone(),
      ])),
      CtxMessage::User(UserContent::Text("plain".into())),
      CtxMessage::ToolResult {
        tool_call_id: "c".into(),
        tool_name: "t".into(),
        content: vec![t("out"), img.clone()],
        is_error: false,
      },
    ];
    let out = transform_messages(&messages, &model("p", "m", false), &|id| id.to_string());
    assert_eq!(
      out[0],
      CtxMessage::User(UserContent::Blocks(vec![
        t(USER_IMAGE_PLACEHOLDER),
        t("x"),
        t(USER_IMAGE_PLACEHOLDER)
      ]))
    );
    assert_eq!(out[1], messages[1]);
    assert!(matches!(&out[2], CtxMessage::ToolResult { content, .. } if content[1] == t(TOOL_IMAGE_PLACEHOLDER)));
    // Vision models keep them.
    assert_eq!(
      transform_messages(&messages, &model("p", "m", true), &|id| id.to_string()),
      messages
    );
  }

  #[test]
  fn thinking_blocks_follow_the_same_model_and_signature_rules() {
    let target = model("p", "m", true);
    let other = model("q", "n", true);
    let blocks = vec![
      thinking("signed", Some("s")),
      thinking("  ", Some("")),
      thinking("unsigned", None),
      thinking("", Some("opaque")),
      text("t"),
    ];
    let out = transform_messages(&[turn(&target, blocks.clone(), "stop")], &target, &|id| id.to_string());
    let CtxMessage::Assistant { blocks: same, .. } = &out[0] else {
      panic!()
    };
    assert_eq!(
      *same,
      vec![
        thinking("signed", Some("s")),
        thinking("unsigned", None),
        thinking("", Some("opaque")),
        text("t")
      ]
    );
    let out = transform_messages(&[turn(&other, blocks, "stop")], &target, &|id| id.to_string());
    let CtxMessage::Assistant { blocks: foreign, .. } = &out[0] else {
      panic!()
    };
    let plain = |s: &str| AssistantBlock::Text {
      text: s.into(),
      signature: None,
    };
    assert_eq!(*foreign, vec![plain("signed"), plain("unsigned"), plain("t")]);
  }

  #[test]
  fn failed_turns_are_dropped_and_unanswered_calls_get_results() {
    let m = model("p", "m", true);
    let messages = vec![
      CtxMessage::User(UserContent::Text("q".into())),
      turn(&m, vec![call("a"), call("b")], "toolUse"),
      result("b"),
      turn(&m, vec![text("partial"), call("x")], "error"),
      turn(&m, vec![call("c")], "aborted"),
      CtxMessage::User(UserContent::Text("again".into())),
      turn(&m, vec![call("d")], "toolUse"),
    ];
    let out = transform_messages(&messages, &m, &|id| id.to_string());
    let synthetic = |id: &str| CtxMessage::ToolResult {
      tool_call_id: id.into(),
      tool_name: "t".into(),
      content: vec![UserBlock::Text(NO_RESULT_TEXT.into())],
      is_error: true,
    };
    assert_eq!(
      out,
      vec![
        messages[0].clone(),
        messages[1].clone(),
        result("b"),
        synthetic("a"),
        messages[5].clone(),
        messages[6].clone(),
        synthetic("d"),
      ]
    );
  }

  #[test]
  fn tool_call_ids_are_normalised_for_other_models_and_results_follow() {
    let target = model("p", "m", true);
    let other = model("q", "n", true);
    let messages = vec![
      result("a|1"),
      turn(&other, vec![call("a|1"), call("keep")], "toolUse"),
      result("a|1"),
      result("keep"),
      turn(&target, vec![call("b|2")], "toolUse"),
      result("b|2"),
    ];
    let seen = std::cell::RefCell::new(Vec::new());
    let normalize = |id: &str, source: &ToolCallSource| {
      seen.borrow_mut().push((id.to_string(), source.provider.to_string()));
      id.replace('|', "_")
    };
    let out = transform_messages_with_source(&messages, &target, &normalize);
    let ids: Vec<String> = out
      .iter()
      .flat_map(|m| match m {
        CtxMessage::ToolResult { tool_call_id, .. } => vec![tool_call_id.clone()],
        CtxMessage::Assistant { blocks, .. } => blocks
          .iter()
          .filter_map(|b| match b {
            AssistantBlock::ToolCall { id, .. } => Some(id.clone()),
            _ => None,
          })
          .collect(),
        _ => vec![],
      })
      .collect();
    // A result before its call is not renamed; the same model's ids are never normalised.
    assert_eq!(ids, ["a|1", "a_1", "keep", "a_1", "keep", "b|2", "b|2"]);
    assert_eq!(
      *seen.borrow(),
      [
        ("a|1".to_string(), "q".to_string()),
        ("keep".to_string(), "q".to_string())
      ]
    );
  }

  #[test]
  fn max_tokens_are_clamped_to_the_estimated_context() {
    let mut m = model("p", "m", true);
    m.context_window = 20_000;
    let ctx = Context {
      system_prompt: Some("s".repeat(9)),
      messages: vec![
        CtxMessage::User(UserContent::Blocks(vec![
          UserBlock::Text("é".repeat(3)),
          UserBlock::Image {
            mime_type: "image/png".into(),
            data: String::new(),
          },
        ])),
        turn(
          &m,
          vec![
            thinking("abcd", None),
            AssistantBlock::ToolCall {
              id: "c".into(),
              name: "read".into(),
              arguments: json!({ "n": 1.0 }).as_object().unwrap().clone(),
            },
          ],
          "toolUse",
        ),
      ],
      tools: Some(vec![ToolDef {
        name: "read".into(),
        description: "d".into(),
        parameters: json!({}),
        constrained_sampling: None,
      }]),
    };
    // user ceil(4803/4)=1201, assistant ceil((4+4+7)/4)=4, system 3,
    // tools ceil(len([{"name":"read","description":"d","parameters":{}}])/4)=13
    assert_eq!(estimate_context_tokens(&ctx), 1201 + 4 + 3 + 13);
    assert_eq!(resolve_max_tokens(&m, &ctx, None), 20_000 - 1221 - 4096);
    assert_eq!(resolve_max_tokens(&m, &ctx, Some(100)), 100);
    m.context_window = 10;
    assert_eq!(resolve_max_tokens(&m, &ctx, Some(100)), 1);
    m.context_window = 0;
    assert_eq!(resolve_max_tokens(&m, &ctx, Some(0)), 1);
  }

  #[test]
  fn js_json_round_trips() {
    let v =
      js_json_parse(r#"{"b":1.0,"2":[1e21,1e-7,-0,12345678901234567890],"1":"\ud800x\n\u0001","a":{"b":1,"b":2}}"#)
        .unwrap();
    assert_eq!(
      js_stringify(&v),
      r#"{"1":"\ud800x\n\u0001","2":[1e+21,1e-7,0,12345678901234567000],"b":1,"a":{"b":2}}"#
    );
    let lone = v["1"].as_str().unwrap();
    assert_eq!(sanitize_surrogates(lone), "x\n\u{1}");
    assert_eq!(sanitize_surrogates("ok 🦀"), "ok 🦀");
    assert_eq!(js_number(0.0), json!(0));
    assert_eq!(js_number(0.25), json!(0.25));
    assert_eq!(js_number(f64::NAN), Value::Null);
    for (text, message) in [
      ("", "Unexpected end of JSON input"),
      (
        "{",
        "Expected property name or '}' in JSON at position 1 (line 1 column 2)",
      ),
      ("xyz", "Unexpected token 'x', \"xyz\" is not valid JSON"),
      (
        "x0123456789012345678901234567890",
        "Unexpected token 'x', \"x012345678\"... is not valid JSON",
      ),
      (
        "{\"a\":1}x",
        "Unexpected non-whitespace character after JSON at position 7 (line 1 column 8)",
      ),
      (
        "[1 2]",
        "Expected ',' or ']' after array element in JSON at position 3 (line 1 column 4)",
      ),
      (
        "\"\\x\"",
        "Bad escaped character in JSON at position 2 (line 1 column 3)",
      ),
      ("\"abc", "Unterminated string in JSON at position 4 (line 1 column 5)"),
      (
        "{\n\"a\":1,}",
        "Expected double-quoted property name in JSON at position 8 (line 2 column 7)",
      ),
    ] {
      assert_eq!(js_json_parse(text).unwrap_err().0, message, "{text:?}");
    }
  }

  #[test]
  fn byte_parser_agrees_with_the_char_parser() {
    // U+10FFFF is the string encoding's escape; U+10F800 and U+10FFFE plain plane-16 characters.
    let stand_in = "\u{10FFFF}".to_string();
    let low = "\u{10F800}\u{10FFFE}".to_string();
    let texts = [
      r#"{"b":1.0,"2":[1e21,1e-7,-0,12345678901234567890],"1":"\ud800x\n\u0001","a":{"b":1,"b":2}}"#.to_string(),
      r#"{"id":"c","choices":[{"index":0,"delta":{"content":"héllo 🦀 \"q\"\\"},"finish_reason":null}],"usage":null}"#
        .to_string(),
      r#"{"10":1,"x":2,"9":3,"01":4,"4294967295":5,"4294967294":6,"x":7}"#.to_string(),
      r#"{"s":"\ud83e\udd80 \ud83e x \udd80 \u00e9\/\b\f\r\t"}"#.to_string(),
      format!(r#"{{"s":"{stand_in}{low} {stand_in}\udd80 {low}"}}"#),
      " [ true , false , null , -1.5e-3 , 0 , \"\" , {} , [] ] ".to_string(),
      "\"plain\"".to_string(),
      "12".to_string(),
      "[[[[[[1]]]]]]".to_string(),
    ];
    for text in &texts {
      let slow = strict_parse(&text.chars().collect::<Vec<_>>())
        .map(JsVal::into_value)
        .unwrap();
      assert_eq!(fast_parse(text), Ok(slow.clone()), "{text}");
      assert_eq!(
        js_stringify(&js_json_parse(text).unwrap()),
        js_stringify(&slow),
        "{text}"
      );
    }
    // Whatever the byte parser refuses, the char parser words.
    for text in [
      "",
      "{",
      "[1,]",
      "{\"a\" 1}",
      "\"a\\u12\"",
      "\"\u{1}\"",
      "tru",
      "-",
      "1.",
      "1e",
      "01",
      "\"x",
      "{}x",
    ] {
      assert!(fast_parse(text).is_err(), "{text:?}");
      assert!(js_json_parse(text).is_err(), "{text:?}");
    }
    static KEEP: Keep = Keep::Keys(&[("a", Keep::All), ("c", Keep::Keys(&[("d", Keep::All)]))]);
    for text in [
      r#"{"x":{"a":[1,{"q":"\u00e9"}]},"a":{"z":1,"2":2,"1":1},"b":"skip \"me\" \ud800","c":[{"d":1,"e":2},{"e":[true,false,null]},3],"a":5}"#,
      r#"{"c":{"d":{"d":1},"e":"x"},"a":null}"#,
      r#"[{"a":1,"b":2},{"c":{"d":0,"f":-1.5e3}}]"#,
      r#""plain""#,
    ] {
      let full = js_json_parse(text).unwrap();
      assert_eq!(js_json_parse_kept(text, &KEEP).unwrap(), kept(full, &KEEP), "{text}");
    }
    for text in [
      r#"{"b":"\x"}"#,
      r#"{"b":"\u12g4"}"#,
      "{\"b\":\"\u{1}\"}",
      r#"{"b":[1,]}"#,
      r#"{"b":01}"#,
      r#"{"b":tru}"#,
      r#"{"a":1}x"#,
      r#"{"b":{"#,
    ] {
      assert_eq!(js_json_parse_kept(text, &KEEP), js_json_parse(text), "{text}");
      assert!(js_json_parse(text).is_err(), "{text}");
    }
    let deep = "[".repeat(2001) + &"]".repeat(2001);
    assert_eq!(js_json_parse(&deep).unwrap_err().0, "Maximum call stack size exceeded");
  }

  #[test]
  fn streaming_json_matches_pi_ai() {
    // Expected values produced by pi-ai 0.84.2's parseStreamingJson (partial-json 0.1.7).
    for (input, want) in [
      ("", "{}"),
      ("  ", "{}"),
      ("{\"path\":", "{}"),
      ("{\"path\":\"src/ma", "{\"path\":\"src/ma\"}"),
      ("{\"a\":1,\"b\":tr", "{\"a\":1,\"b\":true}"),
      ("{\"a\":[1,2,{\"c\":\"d", "{\"a\":[1,2,{\"c\":\"d\"}]}"),
      ("{\"a\":1.5e", "{\"a\":1.5}"),
      ("{\"temperature\": 1.", "{}"),
      ("{\"a\":\"line\nbreak\"}", "{\"a\":\"line\\nbreak\"}"),
      ("{\"a\":\"bad \\q escape\"}", "{\"a\":\"bad \\\\q escape\"}"),
      ("{\"a\":\"x\\", "{\"a\":\"x\"}"),
      ("{\"a\":\"\\u12", "{\"a\":\"\"}"),
      ("{\"a\": nul", "{\"a\":null}"),
      ("{\"a\": -", "{}"),
      ("{\"a\": -Inf", "{\"a\":null}"),
      ("{\"a\": NaN, \"b\": 2}", "{\"a\":null,\"b\":2}"),
      ("[1,2", "[1,2]"),
      ("\"str", "\"str\""),
      ("42", "42"),
      ("null", "null"),
      ("{\"2\":\"b\",\"1\":\"a\",\"x\":0}", "{\"1\":\"a\",\"2\":\"b\",\"x\":0}"),
      ("{\"a\":1, }", "{\"a\":1}"),
      ("{\"a\":1 \"b\":2}", "{}"),
      ("{a:1}", "{}"),
      ("{\"a\":{\"b\":1, }, \"c\":2}", "{\"a\":{\"b\":1}}"),
      ("{\"a\":\"\\ud83d\"}", "{\"a\":\"\\ud83d\"}"),
      ("{\"e\": 12x}", "{}"),
      ("{\"k\":\"v\"} trailing", "{\"k\":\"v\"}"),
      ("{\"a\":1}{\"b\":2}", "{\"a\":1}"),
      (
        "{\"big\":12345678901234567890,\"f\":1.0,\"neg\":-0,\"exp\":1e21,\"small\":1e-7}",
        "{\"big\":12345678901234567000,\"f\":1,\"neg\":0,\"exp\":1e+21,\"small\":1e-7}",
      ),
      ("{\"a\":[1 2]}", "{\"a\":[]}"),
      ("{\"a\":\"tab\there\"}", "{\"a\":\"tab\\there\"}"),
      ("{\"dup\":1,\"dup\":2}", "{\"dup\":2}"),
      ("{\"a\":true,\"b\":fals", "{\"a\":true,\"b\":false}"),
      ("{\"a\":\"é🦀\"", "{\"a\":\"é🦀\"}"),
      ("  {\"x\": [ ] , \"y\" : { } }  ", "{\"x\":[],\"y\":{}}"),
    ] {
      assert_eq!(js_stringify(&parse_streaming_json_value(input)), want, "{input:?}");
    }
    // Tool-call arguments are objects: anything else reads as {}.
    assert!(parse_streaming_json("[1,2").is_empty());
    assert_eq!(parse_streaming_json("{\"p\":\"a").get("p"), Some(&json!("a")));
  }
}

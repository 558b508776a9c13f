//! Google's streamed responses (`…:streamGenerateContent?alt=sse`, spec §5.6, §5.10), the same for
//! the Gemini API and Vertex.
//!
//! Framing is the SDK's own, not the WHATWG SSE rules: the body is cut at the first of `\n\n`,
//! `\r\r`, `\r\n\r\n`; a segment whose trimmed text starts with `data:` carries one JSON
//! `GenerateContentResponse` (the rest of the segment, trimmed); other segments (comments,
//! `event:` lines) are skipped; a non-blank remainder when the body ends is the SDK's
//! `Incomplete JSON segment at the end`. A network read that is by itself a JSON object with an
//! `error` whose `code` is 400–599 ends the stream with the SDK's `got status: …` text (checked for
//! reads that start at a segment boundary).
//!
//! Events follow pi-ai: parts with `thought: true` are thinking, other text parts are text (each
//! switch ends the open block; empty text deltas are forwarded, spec §8 quirk 8, kept as the
//! recordings show it); a `functionCall` part arrives whole and becomes one finished tool call
//! at once, with the provided id unless it is missing or repeated (then
//! `<name>_<epoch ms>_<process-wide counter>`). The finish reason of the last chunk that has
//! one decides the outcome when the body ends; each `usageMetadata` replaces the usage.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value};

use super::{js_string, js_truthy};
use crate::chat::sse::{SseError, SseEvent, DEFAULT_MAX_LINE};
use crate::chat::types::{StopReason, StreamEvent, StreamParser, Usage};
use crate::chat::wire::transform::{js_json_parse, js_json_parse_kept, js_stringify, Keep};
use crate::repair::jsnum::string_to_number;
use crate::repair::text::js_trim;

/// pi-ai's module-level counter for generated tool-call ids (shared by every stream of the process).
static TOOL_CALL_COUNTER: AtomicU64 = AtomicU64::new(0);

/// The members of a response chunk pi-ai reads.
static CHUNK_FIELDS: Keep = Keep::Keys(&[
  (
    "candidates",
    Keep::Keys(&[
      (
        "content",
        Keep::Keys(&[(
          "parts",
          Keep::Keys(&[("text", Keep::All), ("thought", Keep::All), ("functionCall", Keep::All)]),
        )]),
      ),
      ("finishReason", Keep::All),
    ]),
  ),
  ("usageMetadata", Keep::All),
]);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Block {
  Text,
  Thinking,
}

#[derive(Clone, Debug, PartialEq)]
enum Outcome {
  Pending,
  Done(StopReason),
  /// A known non-success finish reason, as received.
  Failed(String),
}

/// Parser for one Google response stream. It frames the raw body itself
/// ([`StreamParser::frames_raw_body`]).
#[derive(Debug)]
pub struct GoogleStreamParser {
  /// Bytes not yet cut into segments.
  buffer: Vec<u8>,
  /// Where the delimiter search resumes in `buffer`.
  scan_from: usize,
  finished: bool,
  block: Option<Block>,
  /// Ids of the tool calls of this response so far.
  tool_ids: Vec<String>,
  outcome: Outcome,
  usage: Usage,
  /// Epoch milliseconds for generated ids (a fixed clock in tests).
  clock: fn() -> u64,
}

impl Default for GoogleStreamParser {
  fn default() -> Self {
    GoogleStreamParser::new()
  }
}

fn epoch_ms() -> u64 {
  std::time::SystemTime::now()
    .duration_since(std::time::UNIX_EPOCH)
    .map(|d| d.as_millis() as u64)
    .unwrap_or(0)
}

impl GoogleStreamParser {
  pub fn new() -> Self {
    GoogleStreamParser {
      buffer: Vec::new(),
      scan_from: 0,
      finished: false,
      block: None,
      tool_ids: Vec::new(),
      outcome: Outcome::Pending,
      usage: Usage::default(),
      clock: epoch_ms,
    }
  }

  /// A parser whose generated tool-call ids use `clock` for the time part.
  pub fn with_clock(clock: fn() -> u64) -> Self {
    GoogleStreamParser {
      clock,
      ..GoogleStreamParser::new()
    }
  }

  /// Usage as reported so far.
  pub fn usage(&self) -> &Usage {
    &self.usage
  }

  fn fail(&mut self, message: String, out: &mut Vec<StreamEvent>) {
    self.finished = true;
    out.push(StreamEvent::Error { message });
  }

  fn end_block(&mut self, out: &mut Vec<StreamEvent>) {
    match self.block.take() {
      Some(Block::Text) => out.push(StreamEvent::TextEnd),
      Some(Block::Thinking) => out.push(StreamEvent::ThinkingEnd),
      None => {}
    }
  }

  /// The SDK's check of every network chunk: a chunk that is a JSON object with an `error` whose
  /// `code` is an HTTP error status ends the stream.
  fn check_error_chunk(&mut self, bytes: &[u8], out: &mut Vec<StreamEvent>) {
    let text = match std::str::from_utf8(bytes) {
      Ok(t) => std::borrow::Cow::Borrowed(t),
      // The streaming decoder holds back an incomplete sequence at the end.
      Err(e) if e.error_len().is_none() => String::from_utf8_lossy(&bytes[..e.valid_up_to()]),
      Err(_) => String::from_utf8_lossy(bytes),
    };
    if !js_trim(&text).starts_with('{') {
      return;
    }
    let Ok(chunk) = js_json_parse(&text) else {
      return;
    };
    let Some(Value::Object(error)) = chunk.get("error") else {
      // `null` throws a TypeError (swallowed), primitives have no code: nothing happens.
      return;
    };
    let code = match error.get("code") {
      Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
      Some(Value::String(s)) => string_to_number(s),
      Some(Value::Bool(b)) => f64::from(u8::from(*b)),
      Some(Value::Null) => 0.0,
      _ => f64::NAN,
    };
    if (400.0..600.0).contains(&code) {
      let message = format!(
        "got status: {}. {}",
        js_string(error.get("status")),
        js_stringify(&chunk)
      );
      self.fail(message, out);
    }
  }

  /// Cut complete segments off the buffer and handle them.
  fn drain_segments(&mut self, out: &mut Vec<StreamEvent>) {
    let mut start = 0;
    let mut i = self.scan_from;
    while !self.finished {
      let Some(pos) = memchr::memchr2(b'\n', b'\r', &self.buffer[i..]).map(|p| p + i) else {
        i = self.buffer.len();
        break;
      };
      let rest = &self.buffer[pos..];
      let delimiter = match rest {
        [b'\n', b'\n', ..] | [b'\r', b'\r', ..] => Some(2),
        [b'\r', b'\n', b'\r', b'\n', ..] => Some(4),
        // Undecidable until more bytes arrive: a later match could not be earlier.
        [b'\n'] | [b'\r'] | [b'\r', b'\n'] | [b'\r', b'\n', b'\r'] => {
          i = pos;
          break;
        }
        _ => None,
      };
      match delimiter {
        Some(len) => {
          let segment = String::from_utf8_lossy(&self.buffer[start..pos]).into_owned();
          start = pos + len;
          i = start;
          self.handle_segment(&segment, out);
        }
        None => i = pos + 1,
      }
    }
    self.buffer.drain(..start);
    self.scan_from = i.saturating_sub(start);
  }

  fn handle_segment(&mut self, segment: &str, out: &mut Vec<StreamEvent>) {
    let trimmed = js_trim(segment);
    let Some(data) = trimmed.strip_prefix("data:") else {
      return;
    };
    match js_json_parse_kept(js_trim(data), &CHUNK_FIELDS) {
      Ok(chunk) => {
        if let Err(message) = self.handle_chunk(&chunk, out) {
          self.fail(message, out);
        }
      }
      Err(e) => self.fail(e.0, out),
    }
  }

  /// One `GenerateContentResponse` (pi-ai's loop body).
  fn handle_chunk(&mut self, chunk: &Value, out: &mut Vec<StreamEvent>) -> Result<(), String> {
    // The SDK copies `candidates` as given; pi-ai reads `candidates?.[0]`.
    let candidate = match chunk.get("candidates") {
      Some(Value::Array(items)) => items.first(),
      _ => None,
    };
    let parts = candidate
      .and_then(|c| c.get("content"))
      .and_then(|c| c.get("parts"))
      .filter(|p| js_truthy(p));
    match parts {
      Some(Value::Array(parts)) => {
        for part in parts {
          self.handle_part(part, out)?;
        }
      }
      // A string iterates its characters, which carry neither text nor calls.
      Some(Value::String(_)) | None => {}
      Some(_) => return Err("candidate.content.parts is not iterable".into()),
    }
    if let Some(reason) = candidate.and_then(|c| c.get("finishReason")).filter(|r| js_truthy(r)) {
      self.outcome = map_finish_reason(reason)?;
      if self.outcome == Outcome::Done(StopReason::Stop) && !self.tool_ids.is_empty() {
        self.outcome = Outcome::Done(StopReason::ToolUse);
      }
    }
    if let Some(meta) = chunk.get("usageMetadata").filter(|u| js_truthy(u)) {
      let field = |key: &str| {
        meta
          .get(key)
          .and_then(Value::as_f64)
          .filter(|n| *n != 0.0 && !n.is_nan())
          .unwrap_or(0.0)
      };
      let prompt = field("promptTokenCount");
      let cached = field("cachedContentTokenCount");
      let thoughts = field("thoughtsTokenCount");
      self.usage = Usage {
        input: prompt - cached,
        output: field("candidatesTokenCount") + thoughts,
        cache_read: cached,
        cache_write: 0.0,
        cache_write_1h: 0.0,
        total: field("totalTokenCount"),
        reasoning: Some(thoughts),
        service_tier: None,
      };
    }
    Ok(())
  }

  fn handle_part(&mut self, part: &Value, out: &mut Vec<StreamEvent>) -> Result<(), String> {
    let part = match part {
      Value::Null => return Err("Cannot read properties of null (reading 'text')".into()),
      Value::Object(o) => o,
      // Primitives have neither `text` nor `functionCall`.
      _ => return Ok(()),
    };
    if let Some(text) = part.get("text") {
      let thinking = part.get("thought") == Some(&Value::Bool(true));
      let kind = if thinking { Block::Thinking } else { Block::Text };
      if self.block != Some(kind) {
        self.end_block(out);
        self.block = Some(kind);
        out.push(if thinking {
          StreamEvent::ThinkingStart
        } else {
          StreamEvent::TextStart
        });
      }
      // A non-string text is appended the JS way (`"" + x`).
      let delta = match text {
        Value::String(s) => s.clone(),
        other => js_string(Some(other)),
      };
      out.push(if thinking {
        StreamEvent::ThinkingDelta(delta)
      } else {
        StreamEvent::TextDelta(delta)
      });
    }
    if let Some(call) = part.get("functionCall").filter(|c| js_truthy(c)) {
      self.end_block(out);
      let field = |key: &str| match call {
        Value::Object(o) => o.get(key),
        _ => None,
      };
      let provided = field("id").filter(|id| js_truthy(id)).map(|id| js_string(Some(id)));
      let id = match provided {
        Some(id) if !self.tool_ids.contains(&id) => id,
        _ => {
          let n = TOOL_CALL_COUNTER.fetch_add(1, Ordering::Relaxed) + 1;
          format!("{}_{}_{}", js_string(field("name")), (self.clock)(), n)
        }
      };
      let name = field("name")
        .filter(|n| js_truthy(n))
        .map(|n| js_string(Some(n)))
        .unwrap_or_default();
      // pi-ai keeps any value; a call's arguments are an object here, so others read as `{}`.
      let arguments = match field("args") {
        Some(Value::Object(args)) => args.clone(),
        _ => Map::new(),
      };
      self.tool_ids.push(id.clone());
      out.push(StreamEvent::ToolCallStart);
      out.push(StreamEvent::ToolCallDelta);
      out.push(StreamEvent::ToolCallEnd { id, name, arguments });
    }
    Ok(())
  }
}

/// pi-ai's `mapStopReason`: `STOP`/`MAX_TOKENS` end normally, the SDK's other finish reasons
/// fail the turn when the body ends, anything else fails it at once.
fn map_finish_reason(reason: &Value) -> Result<Outcome, String> {
  const FAILURES: [&str; 15] = [
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "SAFETY",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
    "IMAGE_RECITATION",
    "IMAGE_OTHER",
    "RECITATION",
    "FINISH_REASON_UNSPECIFIED",
    "OTHER",
    "LANGUAGE",
    "MALFORMED_FUNCTION_CALL",
    "UNEXPECTED_TOOL_CALL",
    "NO_IMAGE",
  ];
  match reason.as_str() {
    Some("STOP") => Ok(Outcome::Done(StopReason::Stop)),
    Some("MAX_TOKENS") => Ok(Outcome::Done(StopReason::Length)),
    Some(r) if FAILURES.contains(&r) => Ok(Outcome::Failed(r.to_string())),
    _ => Err(format!("Unhandled stop reason: {}", js_string(Some(reason)))),
  }
}

impl StreamParser for GoogleStreamParser {
  fn frames_raw_body(&self) -> bool {
    true
  }

  fn on_bytes(&mut self, bytes: &[u8], out: &mut Vec<StreamEvent>) -> Result<(), SseError> {
    if self.finished || bytes.is_empty() {
      return Ok(());
    }
    // The SDK checks every network read; here a read may arrive in slices, so only a piece that
    // starts where no segment is pending is checked (a slice from inside an event never is).
    if self.buffer.is_empty() {
      self.check_error_chunk(bytes, out);
      if self.finished {
        return Ok(());
      }
    }
    self.buffer.extend_from_slice(bytes);
    self.drain_segments(out);
    // One segment is one JSON event: bounded like an SSE line.
    if self.buffer.len() > DEFAULT_MAX_LINE {
      return Err(SseError::LineTooLong(DEFAULT_MAX_LINE));
    }
    Ok(())
  }

  fn on_event(&mut self, event: &SseEvent, out: &mut Vec<StreamEvent>) {
    // Only reached when a transport hands over decoded SSE: treat it as one `data:` segment.
    if !self.finished {
      self.handle_segment(&format!("data: {}", event.data), out);
    }
  }

  fn on_end(&mut self, out: &mut Vec<StreamEvent>) {
    if self.finished {
      return;
    }
    if !js_trim(&String::from_utf8_lossy(&self.buffer)).is_empty() {
      return self.fail("Incomplete JSON segment at the end".into(), out);
    }
    self.end_block(out);
    match self.outcome.clone() {
      Outcome::Pending => self.fail("Google stream ended without a finish reason".into(), out),
      Outcome::Failed(raw) => self.fail(format!("Provider stopped with: {raw}"), out),
      Outcome::Done(reason) => {
        self.finished = true;
        out.push(StreamEvent::Done {
          reason,
          usage: self.usage.clone(),
        });
      }
    }
  }
}

#[cfg(test)]
mod tests;

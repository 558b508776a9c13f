//! The provider-neutral conversation model the wire adapters serialise (pi-ai's `Context`), the
//! per-request options they honour, the HTTP request they produce, and the semantic stream events
//! they parse responses into (spec §2, §3, §5.1).

use serde_json::{Map, Value};

use super::catalog::Model;

/// A content block of a user message or tool result.
#[derive(Clone, Debug, PartialEq)]
pub enum UserBlock {
  Text(String),
  Image { mime_type: String, data: String },
}

/// A content block of an assistant message, in the order it was produced.
#[derive(Clone, Debug, PartialEq)]
pub enum AssistantBlock {
  Thinking {
    text: String,
    signature: Option<String>,
  },
  Text {
    text: String,
    signature: Option<String>,
  },
  ToolCall {
    id: String,
    name: String,
    arguments: Map<String, Value>,
  },
}

#[derive(Clone, Debug, PartialEq)]
pub enum UserContent {
  Text(String),
  Blocks(Vec<UserBlock>),
}

#[derive(Clone, Debug, PartialEq)]
pub enum CtxMessage {
  User(UserContent),
  /// A historical assistant turn, stamped with the model that (supposedly) produced it.
  Assistant {
    blocks: Vec<AssistantBlock>,
    api: String,
    provider: String,
    model: String,
    /// `"toolUse"` when it has tool calls, else `"stop"` (Blade's stamping); `error`/`aborted`
    /// turns are dropped by the cross-model transform.
    stop_reason: String,
  },
  ToolResult {
    tool_call_id: String,
    tool_name: String,
    content: Vec<UserBlock>,
    is_error: bool,
  },
}

/// A tool the model may call (`constrainedSampling` kept verbatim).
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDef {
  pub name: String,
  pub description: String,
  pub parameters: Value,
  pub constrained_sampling: Option<Value>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Context {
  pub system_prompt: Option<String>,
  pub messages: Vec<CtxMessage>,
  /// `None` when the list is empty (the field is then omitted).
  pub tools: Option<Vec<ToolDef>>,
}

/// Prompt-cache retention (spec §3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retention {
  None,
  Short,
  Long,
}

/// Everything a wire adapter needs besides the model and the context (spec §2.8, §3). Its
/// `Debug` output never shows the API key.
#[derive(Clone, Default, PartialEq)]
pub struct WireOptions {
  pub api_key: Option<String>,
  pub temperature: Option<f64>,
  pub max_tokens: Option<u64>,
  pub timeout_ms: Option<u64>,
  /// Caller headers (already merged with provider defaults and the fast-mode beta); a JSON null
  /// value removes a default header.
  pub headers: Map<String, Value>,
  pub session_id: Option<String>,
  pub retention: Option<Retention>,
  /// `Some(level)` when thinking is on for this request, `None` when it is off.
  pub thinking: Option<String>,
  /// Required tool name (tool choice), when set.
  pub required_tool: Option<String>,
  /// Provider service-tier value (already resolved), e.g. `priority`, `flex`, `fast`.
  pub service_tier: Option<String>,
  /// Response verbosity, when set (validity already checked).
  pub verbosity: Option<String>,
  /// Azure `api-version`.
  pub api_version: Option<String>,
}

/// The assembled request: everything the transport sends. Its `Debug` output masks credential
/// headers.
#[derive(Clone, PartialEq)]
pub struct HttpRequest {
  pub url: String,
  /// Header names as sent (lower-case unless a caller header keeps its spelling), in order.
  pub headers: Vec<(String, String)>,
  pub body: Value,
  /// Compress the body with zstd (`content-encoding: zstd` is then among the headers).
  pub zstd: bool,
}

impl std::fmt::Debug for WireOptions {
  fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    f.debug_struct("WireOptions")
      .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
      .field("temperature", &self.temperature)
      .field("max_tokens", &self.max_tokens)
      .field("timeout_ms", &self.timeout_ms)
      .field("headers", &self.headers.keys().collect::<Vec<_>>())
      .field("session_id", &self.session_id)
      .field("retention", &self.retention)
      .field("thinking", &self.thinking)
      .field("required_tool", &self.required_tool)
      .field("service_tier", &self.service_tier)
      .field("verbosity", &self.verbosity)
      .field("api_version", &self.api_version)
      .finish()
  }
}

/// Header names whose values are credentials.
pub fn is_credential_header(name: &str) -> bool {
  matches!(
    name.to_ascii_lowercase().as_str(),
    "authorization" | "api-key" | "x-api-key" | "x-goog-api-key" | "cookie" | "proxy-authorization"
  )
}

impl std::fmt::Debug for HttpRequest {
  fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    let headers: Vec<(&str, &str)> = self
      .headers
      .iter()
      .map(|(k, v)| {
        (
          k.as_str(),
          if is_credential_header(k) {
            "[redacted]"
          } else {
            v.as_str()
          },
        )
      })
      .collect();
    f.debug_struct("HttpRequest")
      .field("url", &self.url)
      .field("headers", &headers)
      .field("body", &self.body)
      .field("zstd", &self.zstd)
      .finish()
  }
}

/// Why a stream ended normally.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
  Stop,
  Length,
  ToolUse,
}

impl StopReason {
  pub fn as_str(self) -> &'static str {
    match self {
      StopReason::Stop => "stop",
      StopReason::Length => "length",
      StopReason::ToolUse => "toolUse",
    }
  }
}

/// Token usage as the wire reported it (spec §5.10), before cost.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Usage {
  pub input: f64,
  pub output: f64,
  pub cache_read: f64,
  pub cache_write: f64,
  pub cache_write_1h: f64,
  pub total: f64,
  /// `Some` when the API reported a reasoning-token count (even 0).
  pub reasoning: Option<f64>,
  /// The service tier the response reports (responses family), for price multipliers.
  pub service_tier: Option<String>,
}

/// pi-ai's semantic stream events (spec §5.1). Every non-terminal event resets the idle watchdog.
#[derive(Clone, Debug, PartialEq)]
pub enum StreamEvent {
  Start,
  TextStart,
  TextDelta(String),
  TextEnd,
  ThinkingStart,
  ThinkingDelta(String),
  ThinkingEnd,
  ToolCallStart,
  ToolCallDelta,
  ToolCallEnd {
    id: String,
    name: String,
    arguments: Map<String, Value>,
  },
  Done {
    reason: StopReason,
    usage: Usage,
  },
  Error {
    message: String,
  },
}

impl StreamEvent {
  pub fn is_terminal(&self) -> bool {
    matches!(self, StreamEvent::Done { .. } | StreamEvent::Error { .. })
  }
}

/// A wire adapter: request building and response parsing for one API family.
pub trait WireAdapter {
  /// Build the HTTP request (errors such as "No API key for provider: x" are returned as text).
  fn build_request(&self, model: &Model, context: &Context, options: &WireOptions) -> Result<HttpRequest, String>;
  /// A fresh parser for one response stream.
  fn parser(&self, model: &Model, options: &WireOptions) -> Box<dyn StreamParser + Send>;
}

/// Turns SSE events of one response into semantic events.
pub trait StreamParser {
  /// One SSE event (`event` name may be empty).
  fn on_event(&mut self, event: &super::sse::SseEvent, out: &mut Vec<StreamEvent>);
  /// The body ended. Emits the terminal event when the parser can decide one (e.g. a truncation
  /// error such as "Stream ended without finish_reason"); emits nothing when the stream already
  /// terminated.
  fn on_end(&mut self, out: &mut Vec<StreamEvent>);
  /// Whether an event left unterminated at the end of the body is still dispatched (the
  /// reference's Anthropic decoder does; the OpenAI SDK's does not).
  fn flushes_unterminated_event(&self) -> bool {
    false
  }
  /// Whether the parser cuts the raw body into events itself (the Google SDK has its own
  /// framing): the transport then calls [`StreamParser::on_bytes`] instead of decoding SSE.
  fn frames_raw_body(&self) -> bool {
    false
  }
  /// Body bytes as read, for parsers that frame the body themselves; an event beyond the
  /// parser's bound is an error.
  fn on_bytes(&mut self, _bytes: &[u8], _out: &mut Vec<StreamEvent>) -> Result<(), super::sse::SseError> {
    Ok(())
  }
}

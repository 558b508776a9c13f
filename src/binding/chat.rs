//! N-API entry points of the chat core: a stream handle drained in batches (one promise per
//! batch, never per chunk), cancellation, model resolution and Blade's pure helpers.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use napi::{Error, Result, Status};
use napi_derive::napi;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::chat::catalog::{Catalog, Model, Resolver};
use crate::chat::history::{filter_orphan_tool_indices, has_non_thinking_tool_history};
use crate::chat::options::{
  resolve_reasoning_effort, resolve_response_verbosity, resolve_service_tier, resolve_stream_stall_warning_ms,
  supported_response_verbosities, supported_service_tiers, ModelInfo,
};
use crate::chat::request::resolve_model;
use crate::chat::retry::{
  classify_provider_retry, compute_provider_retry_delay, provider_retry_after_ms, ErrorInfo, ResponseMeta,
  RetryDelayOptions,
};
use crate::chat::service::{run_chat, ChatError, ChatRequest, Outbox};

// Chunks cross in batches: each `nextBatch` takes everything buffered (at most
// `OUTBOX_CAPACITY` chunks; the provider stream pauses when the consumer falls that far behind).

/// The chat core's runtime: one tokio worker. A stream's tasks (the HTTP connection, the decoder,
/// the batch hand-over) then wake each other on one thread instead of parking and unparking a
/// second worker on every read; one worker decodes far more events per second than any set of
/// concurrent chat streams delivers. (Only the chat pillar runs on napi's tokio runtime.)
#[cfg(not(test))]
#[napi_derive::module_init]
fn chat_runtime() {
  if let Ok(rt) = tokio::runtime::Builder::new_multi_thread()
    .worker_threads(1)
    .thread_name("pi-native-chat")
    .enable_all()
    .build()
  {
    napi::bindgen_prelude::create_custom_tokio_runtime(rt);
  }
}

fn invalid(msg: impl std::fmt::Display) -> Error {
  Error::new(Status::InvalidArg, msg.to_string())
}

/// Redirects are followed only within the origin of the request (at most 10 hops): credentials
/// (`authorization`, `x-api-key`, `api-key`, custom headers) and the conversation itself must never
/// reach another origin, and reqwest's default policy strips only `Authorization`. A redirect to
/// another origin ends the request with an error naming the status and the target origin.
fn same_origin_redirects() -> reqwest::redirect::Policy {
  reqwest::redirect::Policy::custom(|attempt| {
    let origin = |u: &reqwest::Url| u.origin().ascii_serialization();
    let first = attempt.previous().first().map(origin).unwrap_or_default();
    let target = origin(attempt.url());
    if attempt.previous().len() > 10 {
      let message = format!("pi-native: too many redirects (last {} to {target})", attempt.status().as_u16());
      attempt.error(message)
    } else if target != first {
      let message = format!(
        "pi-native: the provider answered {} with a redirect to another origin ({target}); not followed, so no credentials or conversation leave {first}",
        attempt.status().as_u16()
      );
      attempt.error(message)
    } else {
      attempt.follow()
    }
  })
}

/// The process-wide HTTP client, or why it could not be built (for example no system CA store in
/// a minimal container: reqwest's `Client::new()` would panic there, so it is never called).
fn client() -> Result<&'static reqwest::Client> {
  static CLIENT: OnceLock<std::result::Result<reqwest::Client, String>> = OnceLock::new();
  CLIENT
    .get_or_init(|| {
      reqwest::Client::builder()
        .redirect(same_origin_redirects())
        // Idle keep-alive connections are closed after 4 s, as Node's fetch (undici) does without
        // a server hint: Node servers close theirs after 5 s, and reusing one as it closes fails.
        .pool_idle_timeout(std::time::Duration::from_secs(4))
        .build()
        .map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(|e| Error::new(Status::GenericFailure, format!("pi-native: could not set up the HTTP client ({e})")))
}

fn parse_models(v: Option<&Value>) -> Result<Vec<Model>> {
  match v {
    Some(Value::Array(items)) => items
      .iter()
      .map(|m| {
        serde_json::from_value::<Model>(m.clone()).map_err(|e| invalid(format!("invalid model definition: {e}")))
      })
      .collect(),
    _ => Ok(vec![]),
  }
}

/// Deepest JSON nesting a chat request may have (tool schemas can be deep; the parser recurses).
const MAX_REQUEST_DEPTH: usize = 2_000;

/// Parse the request without serde's 128-level recursion limit, after a cheap depth check.
fn parse_request(text: &str) -> Result<Value> {
  let (mut depth, mut max, mut in_string, mut escaped) = (0usize, 0usize, false, false);
  for &b in text.as_bytes() {
    if in_string {
      match (escaped, b) {
        (true, _) => escaped = false,
        (false, b'\\') => escaped = true,
        (false, b'"') => in_string = false,
        _ => {}
      }
      continue;
    }
    match b {
      b'"' => in_string = true,
      b'{' | b'[' => {
        depth += 1;
        max = max.max(depth);
      }
      b'}' | b']' => depth = depth.saturating_sub(1),
      _ => {}
    }
  }
  if max > MAX_REQUEST_DEPTH {
    return Err(invalid(format!(
      "pi-native: chat request nested deeper than {MAX_REQUEST_DEPTH} levels"
    )));
  }
  // Lone surrogates (legal in a JS string, refused by serde_json) are read in the crate's string
  // encoding, which the wire writer turns back into JSON.stringify's escapes.
  let text = crate::js::json::encode_json_text(text);
  let mut de = serde_json::Deserializer::from_str(&text);
  de.disable_recursion_limit();
  let v = <Value as serde::Deserialize>::deserialize(&mut de).map_err(invalid)?;
  de.end().map_err(invalid)?;
  Ok(v)
}

/// Live native state, for `chatNativeStats()`: stream handles JS still holds, request tasks still
/// running, outboxes (stream buffers) still allocated.
static LIVE_HANDLES: AtomicUsize = AtomicUsize::new(0);
static LIVE_TASKS: AtomicUsize = AtomicUsize::new(0);

/// Counts one live request task for as long as it exists.
struct TaskGuard;

impl TaskGuard {
  fn new() -> TaskGuard {
    LIVE_TASKS.fetch_add(1, Ordering::Relaxed);
    TaskGuard
  }
}

impl Drop for TaskGuard {
  fn drop(&mut self) {
    LIVE_TASKS.fetch_sub(1, Ordering::Relaxed);
  }
}

/// One running `streamChat` call.
#[napi]
pub struct ChatStream {
  outbox: Arc<Outbox>,
  cancel: CancellationToken,
}

impl Drop for ChatStream {
  fn drop(&mut self) {
    self.cancel.cancel();
    self.outbox.cancel();
    LIVE_HANDLES.fetch_sub(1, Ordering::Relaxed);
  }
}

/// JSON `{"handles": n, "tasks": n, "outboxes": n}`: the chat core's live native state (a leak
/// check: all three return to 0 once every stream has ended and its handle was collected).
#[napi(catch_unwind)]
pub fn chat_native_stats() -> String {
  format!(
    "{{\"handles\":{},\"tasks\":{},\"outboxes\":{}}}",
    LIVE_HANDLES.load(Ordering::Relaxed),
    LIVE_TASKS.load(Ordering::Relaxed),
    crate::chat::service::live_outboxes()
  )
}

/// Start streaming. The request JSON is `{config, models?, messages, tools?, options?}`.
#[napi(catch_unwind)]
pub fn chat_start(request_json: String) -> Result<ChatStream> {
  let v = parse_request(&request_json)?;
  let req = ChatRequest {
    record: v.get("record").and_then(Value::as_str).filter(|d| !d.is_empty()).map(String::from),
    config: v.get("config").cloned().unwrap_or(Value::Null),
    models: Arc::new(parse_models(v.get("models"))?),
    messages: v.get("messages").and_then(Value::as_array).cloned().unwrap_or_default(),
    tools: v.get("tools").and_then(Value::as_array).cloned().unwrap_or_default(),
    options: v.get("options").cloned().unwrap_or(Value::Null),
  };
  let http = client()?.clone();
  let outbox = Arc::new(Outbox::default());
  let cancel = CancellationToken::new();
  let task_cancel = cancel.clone();
  let task_outbox = outbox.clone();
  let guard = TaskGuard::new();
  napi::bindgen_prelude::spawn(async move {
    let _guard = guard;
    let run = std::panic::AssertUnwindSafe(run_chat(http, req, &task_outbox, task_cancel));
    // A panic in the core ends the stream with an error instead of a silently closed stream.
    if futures_util::FutureExt::catch_unwind(run).await.is_err() {
      task_outbox.close(Some(ChatError::plain("pi-native: internal error in the chat core")));
    }
  });
  LIVE_HANDLES.fetch_add(1, Ordering::Relaxed);
  Ok(ChatStream { outbox, cancel })
}

#[napi]
impl ChatStream {
  /// Everything ready now (waiting for at least one item): JSON `{"c": [chunks], "e"?: error,
  /// "d": done}`.
  #[napi]
  pub async fn next_batch(&self) -> Result<String> {
    let taken = self.outbox.take().await;
    let mut out = String::with_capacity(taken.json.len() + 32);
    out.push_str("{\"c\":[");
    out.push_str(&taken.json);
    out.push_str("],\"d\":");
    out.push_str(if taken.done { "true" } else { "false" });
    if let Some(e) = taken.error {
      out.push_str(",\"e\":");
      out.push_str(&e.to_json().to_string());
    }
    out.push('}');
    Ok(out)
  }

  /// Stop the request (idempotent): the provider connection is closed.
  #[napi(catch_unwind)]
  pub fn cancel(&self) {
    self.cancel.cancel();
    self.outbox.cancel();
  }
}

/// Resolve the configured model (throws `Unknown pi-ai model: <provider>/<id>`): model JSON.
#[napi(catch_unwind)]
pub fn chat_resolve_model(config_json: String, models_json: String) -> Result<String> {
  let config: Value = serde_json::from_str(&config_json).map_err(invalid)?;
  let models: Value = serde_json::from_str(&models_json).map_err(invalid)?;
  let custom = parse_models(Some(&models))?;
  let resolver = Resolver {
    custom: &custom,
    catalog: Catalog::embedded(),
  };
  let model = resolve_model(&resolver, &config).map_err(|e| Error::new(Status::GenericFailure, e))?;
  serde_json::to_string(&model).map_err(invalid)
}

fn model_info(v: &Value) -> ModelInfo<'_> {
  ModelInfo::from_json(v)
}

fn arg(args: &[Value], i: usize) -> &Value {
  args.get(i).unwrap_or(&Value::Null)
}

fn response_meta(v: &Value) -> Option<ResponseMeta> {
  if v.is_object() {
    serde_json::from_value(v.clone()).ok()
  } else {
    None
  }
}

/// Blade's pure helpers, by name, over JSON arguments; returns JSON (`null` for undefined).
/// Errors thrown by the helper come back as `{"error": message}`.
#[napi(catch_unwind)]
pub fn chat_helper(name: String, args_json: String) -> Result<String> {
  let args: Vec<Value> = serde_json::from_str(&args_json).map_err(invalid)?;
  let out: Value = match name.as_str() {
    "filterOrphanToolMessageIndices" => json!(filter_orphan_tool_indices(
      arg(&args, 0).as_array().map_or(&[][..], |v| v)
    )),
    "hasNonThinkingToolHistory" => json!(has_non_thinking_tool_history(
      arg(&args, 0).as_array().map_or(&[][..], |v| v)
    )),
    "classifyProviderRetry" => {
      // args: [{message, name?, code?, status?}, response?]
      let e = arg(&args, 0);
      let mut info = ErrorInfo::new(e.get("message").and_then(Value::as_str).unwrap_or(""));
      if let Some(n) = e.get("name").and_then(Value::as_str) {
        info = info.with_name(n);
      }
      if let Some(c) = e.get("code").and_then(Value::as_str) {
        info = info.with_code(c);
      }
      if let Some(s) = e.get("status").and_then(Value::as_u64).filter(|s| *s <= 65_535) {
        info = info.with_status(s as u16);
      }
      serde_json::to_value(classify_provider_retry(&info, response_meta(arg(&args, 1)).as_ref())).map_err(invalid)?
    }
    "computeProviderRetryDelay" => {
      // args: [attempt, response?, {now, random, maxDelayMs?, maxExponentialDelayMs?}]
      let o = arg(&args, 2);
      let mut opts = RetryDelayOptions::new(
        crate::chat::retry::RetryMode::Standard,
        o.get("now").and_then(Value::as_f64).unwrap_or(0.0),
        o.get("random").and_then(Value::as_f64).unwrap_or(0.0),
      );
      if let Some(m) = o.get("maxDelayMs").and_then(Value::as_f64) {
        opts.max_delay_ms = m.max(0.0) as u64;
      }
      if let Some(m) = o.get("maxExponentialDelayMs").and_then(Value::as_f64) {
        opts.max_exponential_delay_ms = m.max(0.0) as u64;
      }
      let attempt = arg(&args, 0).as_f64().unwrap_or(1.0).max(0.0) as u32;
      json!(compute_provider_retry_delay(
        attempt,
        response_meta(arg(&args, 1)).as_ref(),
        &opts
      ))
    }
    "getProviderRetryAfterMs" => {
      let now = arg(&args, 1).as_f64().unwrap_or(0.0);
      match provider_retry_after_ms(response_meta(arg(&args, 0)).as_ref(), now) {
        Some(ms) => json!(ms),
        None => Value::Null,
      }
    }
    "resolveReasoningEffort" => helper_result(resolve_reasoning_effort(
      &model_info(arg(&args, 0)),
      arg(&args, 1).as_str().unwrap_or(""),
    )),
    "resolveServiceTier" => helper_result(resolve_service_tier(
      &model_info(arg(&args, 0)),
      arg(&args, 1).as_str().unwrap_or(""),
    )),
    "resolveResponseVerbosity" => helper_result(resolve_response_verbosity(
      &model_info(arg(&args, 0)),
      arg(&args, 1).as_str().unwrap_or(""),
    )),
    "getSupportedServiceTiers" => {
      let m = arg(&args, 0);
      let tiers = supported_service_tiers(
        m.get("api").and_then(Value::as_str).unwrap_or(""),
        m.get("id").and_then(Value::as_str).unwrap_or(""),
      );
      json!(tiers.iter().map(|t| t.as_str()).collect::<Vec<_>>())
    }
    "getSupportedResponseVerbosities" => {
      let m = arg(&args, 0);
      let v = supported_response_verbosities(
        m.get("api").and_then(Value::as_str).unwrap_or(""),
        m.get("id").and_then(Value::as_str).unwrap_or(""),
      );
      json!(v.iter().map(|t| t.as_str()).collect::<Vec<_>>())
    }
    "resolveStreamStallWarningMs" => {
      let idle = arg(&args, 0).as_f64().unwrap_or(0.0).max(0.0) as u64;
      let configured = arg(&args, 1).as_f64().map(|v| v as i64);
      match resolve_stream_stall_warning_ms(idle, configured) {
        Some(ms) => json!(ms),
        None => Value::Null,
      }
    }
    other => return Err(invalid(format!("unknown chat helper {other}"))),
  };
  Ok(out.to_string())
}

fn helper_result<T: serde::Serialize, E: std::fmt::Display>(r: std::result::Result<T, E>) -> Value {
  match r {
    Ok(v) => serde_json::to_value(v).unwrap_or(Value::Null),
    Err(e) => json!({ "error": e.to_string() }),
  }
}

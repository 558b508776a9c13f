//! The streaming chat orchestration (spec §2, §5.2, §6.1–§6.9): prechecks, context, physical
//! attempts over HTTP/SSE with an idle watchdog and hard deadlines, projection of semantic events to
//! `StreamChunk`s, retry classification with backoff and lifecycle events, the replay boundary,
//! fallback models and bounded foreground recovery. Chunks and the final error go into a channel
//! that the binding drains in batches.

#![allow(clippy::result_large_err)] // errors are rare and carry the JS-facing fields inline

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures_util::StreamExt;
use serde_json::{json, Map, Value};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::catalog::{apply_service_tier_pricing, cost_usd, Catalog, Model, Resolver};
use super::context::{build_context, check_images, check_required_tool, remote_image_urls, thinking_forced_off};
use super::history::filter_orphan_tool_messages;
use super::options::resolve_stream_stall_warning_ms;
use super::request::{fallback_config, num_field, resolve_model, str_field, wire_options};
use super::retry::{
  classify_provider_retry, compute_provider_retry_delay, ErrorInfo, ResponseMeta, RetryDelayOptions, RetryMode,
  PROVIDER_RECOVERY_BUDGET_EXCEEDED, PROVIDER_REQUEST_DEADLINE_EXCEEDED, PROVIDER_STREAM_CLOSED, STREAM_IDLE_TIMEOUT,
};
use super::record::Recorder;
use super::sse::{SseDecoder, SseError};
use super::types::{Context, StreamEvent, StreamParser, Usage};
use super::wire;

pub const DEFAULT_STREAM_IDLE_TIMEOUT_MS: u64 = 300_000;
/// Code of the error for a response part beyond our bounds.
pub const PROVIDER_RESPONSE_TOO_LARGE: &str = "PROVIDER_RESPONSE_TOO_LARGE";
const DEFAULT_FOREGROUND_MAX_RETRIES: u32 = 12;
const RECOVERY_HEARTBEAT_MS: u64 = 15_000;
const MIN_RECOVERY_BUDGET_MS: f64 = 30_000.0;
const MAX_RECOVERY_BUDGET_MS: f64 = 3_600_000.0;
/// Bytes decoded per step of a large read.
const DECODE_SLICE: usize = 8 * 1024;
/// Largest image downloaded for a request.
const MAX_IMAGE_BYTES: usize = 50 * 1024 * 1024;
/// Largest error body read from a failed response.
const MAX_ERROR_BODY: usize = 1 << 20;
/// Longest provider error text put into an error message (longer ones are cut and marked).
pub const MAX_ERROR_MESSAGE: usize = 16 * 1024;
/// Largest response body (after content decoding) one attempt reads: far above any real stream,
/// it ends a decompression bomb or an endless body with a typed error.
pub const MAX_BODY_BYTES: u64 = 1 << 30;
/// Largest single chunk (its JSON): a V8 string must hold a whole batch.
pub const MAX_CHUNK_BYTES: usize = 64 * 1024 * 1024;
/// A batch holds whole chunks; once this many bytes are buffered the provider stream pauses until
/// the consumer takes them (a batch is at most this plus one chunk).
pub const OUTBOX_BYTES: usize = 4 * 1024 * 1024;

/// An error as JS will see it: `name`, `code`, `message`, extra fields, the replay marker.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatError {
  pub name: String,
  pub code: Option<String>,
  pub message: String,
  pub extra: Map<String, Value>,
  pub replay_boundary_crossed: bool,
  /// HTTP status when the failure was an HTTP response (for classification only).
  pub status: Option<u16>,
}

impl ChatError {
  pub fn plain(message: impl Into<String>) -> ChatError {
    ChatError {
      name: "Error".into(),
      code: None,
      message: message.into(),
      extra: Map::new(),
      replay_boundary_crossed: false,
      status: None,
    }
  }
  fn coded(name: &str, code: &str, message: String, extra: Map<String, Value>) -> ChatError {
    ChatError {
      name: name.into(),
      code: Some(code.into()),
      message,
      extra,
      replay_boundary_crossed: false,
      status: None,
    }
  }
  pub fn abort() -> ChatError {
    ChatError {
      name: "AbortError".into(),
      ..ChatError::plain("Aborted")
    }
  }
  pub fn idle_timeout(ms: u64) -> ChatError {
    let mut extra = Map::new();
    extra.insert("timeoutMs".into(), json!(ms));
    ChatError::coded(
      "StreamIdleTimeoutError",
      STREAM_IDLE_TIMEOUT,
      format!("Provider stream idle timeout after {ms}ms without an event"),
      extra,
    )
  }
  pub fn stream_closed() -> ChatError {
    ChatError::coded(
      "ProviderStreamClosedError",
      PROVIDER_STREAM_CLOSED,
      "Provider stream closed before completion".into(),
      Map::new(),
    )
  }
  pub fn deadline(ms: u64) -> ChatError {
    let mut extra = Map::new();
    extra.insert("timeoutMs".into(), json!(ms));
    ChatError::coded(
      "ProviderRequestDeadlineExceededError",
      PROVIDER_REQUEST_DEADLINE_EXCEEDED,
      format!("Provider request deadline exceeded after {ms}ms"),
      extra,
    )
  }
  pub fn budget(budget_ms: u64, elapsed_ms: u64) -> ChatError {
    let mut extra = Map::new();
    extra.insert("budgetMs".into(), json!(budget_ms));
    extra.insert("elapsedMs".into(), json!(elapsed_ms));
    ChatError::coded(
      "ProviderRecoveryBudgetExceededError",
      PROVIDER_RECOVERY_BUDGET_EXCEEDED,
      format!("Provider recovery budget exhausted after {budget_ms}ms"),
      extra,
    )
  }
  /// A response part beyond our bounds (`what`: "event", "chunk" or "body").
  pub fn too_large(what: &str, limit: u64) -> ChatError {
    let mut extra = Map::new();
    extra.insert("limitBytes".into(), json!(limit));
    extra.insert("part".into(), json!(what));
    let subject = match what {
      "body" => "Provider response body",
      "chunk" => "Provider stream chunk",
      _ => "Provider stream event",
    };
    ChatError::coded(
      "ProviderResponseTooLargeError",
      PROVIDER_RESPONSE_TOO_LARGE,
      format!("{subject} larger than {limit} bytes"),
      extra,
    )
  }
  fn is_too_large(&self) -> bool {
    self.code.as_deref() == Some(PROVIDER_RESPONSE_TOO_LARGE)
  }
  fn is_abort(&self) -> bool {
    self.name == "AbortError"
  }
  fn is_idle_timeout(&self) -> bool {
    self.code.as_deref() == Some(STREAM_IDLE_TIMEOUT)
  }
  fn is_budget(&self) -> bool {
    self.code.as_deref() == Some(PROVIDER_RECOVERY_BUDGET_EXCEEDED)
  }
  fn info(&self) -> ErrorInfo {
    let mut info = ErrorInfo::new(self.message.clone()).with_name(self.name.clone());
    if let Some(c) = &self.code {
      info = info.with_code(c.clone());
    }
    if let Some(s) = self.status {
      info = info.with_status(s);
    }
    info
  }
  /// JSON for the binding: `{name, code?, message, replayBoundaryCrossed, ...extra}`.
  pub fn to_json(&self) -> Value {
    let mut o = Map::new();
    o.insert("name".into(), json!(self.name));
    if let Some(c) = &self.code {
      o.insert("code".into(), json!(c));
    }
    o.insert("message".into(), json!(self.message));
    o.insert("replayBoundaryCrossed".into(), json!(self.replay_boundary_crossed));
    for (k, v) in &self.extra {
      o.insert(k.clone(), v.clone());
    }
    Value::Object(o)
  }
}

/// Chunks buffered before the producer waits for the consumer (the provider stream then pauses;
/// [`OUTBOX_BYTES`] bounds the same buffer in bytes).
pub const OUTBOX_CAPACITY: usize = 8192;

/// The stream's output: chunks serialised straight into one comma-separated JSON buffer that the
/// consumer takes whole, then the final error or the end. One lock per chunk, no per-chunk
/// allocation or channel node; the consumer is woken only when it waits.
pub struct Outbox {
  /// The consumer cancelled (a cheaper check per chunk than the token's).
  cancelled: std::sync::atomic::AtomicBool,
  state: std::sync::Mutex<OutState>,
  ready: Notify,
  space: Notify,
}

#[derive(Default)]
struct OutState {
  /// Chunks, comma-separated JSON.
  json: String,
  count: usize,
  error: Option<ChatError>,
  closed: bool,
  /// The consumer is waiting for a chunk.
  waiting: bool,
  /// The first chunk has been handed over.
  first_out: bool,
}

/// What one take gives: the chunks (comma-separated JSON), the final error, whether it ended.
pub struct Taken {
  pub json: String,
  pub count: usize,
  pub error: Option<ChatError>,
  pub done: bool,
}

static LIVE_OUTBOXES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Outboxes (stream buffers) currently allocated.
pub fn live_outboxes() -> usize {
  LIVE_OUTBOXES.load(std::sync::atomic::Ordering::Relaxed)
}

impl Default for Outbox {
  fn default() -> Outbox {
    LIVE_OUTBOXES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Outbox {
      cancelled: Default::default(),
      state: Default::default(),
      ready: Notify::new(),
      space: Notify::new(),
    }
  }
}

impl Drop for Outbox {
  fn drop(&mut self) {
    LIVE_OUTBOXES.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
  }
}

impl Outbox {
  fn lock(&self) -> std::sync::MutexGuard<'_, OutState> {
    self.state.lock().unwrap_or_else(|p| p.into_inner())
  }

  /// The consumer cancelled: every later push fails with the abort error.
  pub fn cancel(&self) {
    self.cancelled.store(true, std::sync::atomic::Ordering::Release);
  }

  /// Append one chunk written by `write`, waiting while the buffer is full.
  async fn push(&self, cancel: &CancellationToken, write: impl Fn(&mut String)) -> Result<(), ChatError> {
    loop {
      if self.cancelled.load(std::sync::atomic::Ordering::Acquire) {
        return Err(ChatError::abort());
      }
      // Some((consumer was waiting, this is its first chunk)) once the chunk is in, None when
      // the buffer is full.
      let pushed = {
        let mut st = self.lock();
        if st.closed {
          return Err(ChatError::abort());
        }
        if st.count < OUTBOX_CAPACITY && st.json.len() < OUTBOX_BYTES {
          let before = st.json.len();
          if st.count > 0 {
            st.json.push(',');
          }
          write(&mut st.json);
          if st.json.len() - before > MAX_CHUNK_BYTES {
            st.json.truncate(before);
            return Err(ChatError::too_large("chunk", MAX_CHUNK_BYTES as u64));
          }
          st.count += 1;
          let first = st.waiting && !st.first_out;
          st.first_out |= st.waiting;
          Some((std::mem::take(&mut st.waiting), first))
        } else {
          None
        }
      };
      match pushed {
        Some((waiting, first)) => {
          if waiting {
            self.ready.notify_one();
          }
          if first {
            // The woken consumer sits in this worker's next-task slot until this task yields:
            // let it hand the first chunk over now rather than after everything already read
            // is decoded. Later batches wait for that (larger batches, fewer crossings).
            tokio::task::yield_now().await;
          }
          return Ok(());
        }
        None => tokio::select! {
          _ = self.space.notified() => {}
          _ = cancel.cancelled() => return Err(ChatError::abort()),
        },
      }
    }
  }

  /// The stream ended, with `error` when it failed (idempotent: the first end counts).
  pub fn close(&self, error: Option<ChatError>) {
    let mut st = self.lock();
    if !st.closed {
      st.closed = true;
      st.error = error;
    }
    drop(st);
    self.ready.notify_one();
  }

  /// Everything buffered, waiting until there is at least one chunk or the end.
  pub async fn take(&self) -> Taken {
    loop {
      {
        let mut st = self.lock();
        if st.count > 0 || st.closed {
          let taken = Taken {
            json: std::mem::take(&mut st.json),
            count: std::mem::take(&mut st.count),
            error: st.error.take(),
            done: st.closed,
          };
          drop(st);
          if taken.count > 0 {
            self.space.notify_one();
          }
          return taken;
        }
        st.waiting = true;
      }
      self.ready.notified().await;
    }
  }
}

/// A request to stream: the service configuration and the call's arguments.
pub struct ChatRequest {
  /// Directory to record each attempt's exchange in (see `record`), if any.
  pub record: Option<String>,
  pub config: Value,
  pub models: Arc<Vec<Model>>,
  pub messages: Vec<Value>,
  pub tools: Vec<Value>,
  pub options: Value,
}

fn now_ms() -> f64 {
  SystemTime::now()
    .duration_since(UNIX_EPOCH)
    .map(|d| d.as_secs_f64() * 1000.0)
    .unwrap_or(0.0)
}

/// A small jitter source (xorshift seeded from the clock); quality is irrelevant here.
fn random_unit() -> f64 {
  use std::cell::Cell;
  thread_local!(static STATE: Cell<u64> = const { Cell::new(0) });
  STATE.with(|s| {
    let mut x = s.get();
    if x == 0 {
      x = (now_ms() as u64) ^ 0x9E37_79B9_7F4A_7C15;
    }
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s.set(x);
    (x >> 11) as f64 / (1u64 << 53) as f64
  })
}

/// Sends chunks; a cancelled token (the caller aborted or the consumer went away) ends the stream.
struct Out<'a> {
  outbox: &'a Outbox,
  cancel: &'a CancellationToken,
}

impl Out<'_> {
  async fn send(&self, chunk: Value) -> Result<(), ChatError> {
    if self.cancel.is_cancelled() {
      return Err(ChatError::abort());
    }
    let text = chunk.to_string();
    self.outbox.push(self.cancel, |buf| buf.push_str(&text)).await
  }

  /// Send `{"<key>":"<text>"}`, written straight into the outbox.
  async fn send_text(&self, key: &str, text: &str) -> Result<(), ChatError> {
    // The outbox refuses chunks once the consumer cancelled (the binding marks both).
    self
      .outbox
      .push(self.cancel, |buf| write_text_chunk(buf, key, text))
      .await
  }

  async fn sleep(&self, ms: u64) -> Result<(), ChatError> {
    tokio::select! {
      _ = tokio::time::sleep(Duration::from_millis(ms)) => Ok(()),
      _ = self.cancel.cancelled() => Err(ChatError::abort()),
    }
  }
}

/// Bounded foreground recovery state (§6.9).
struct Recovery {
  budget_ms: u64,
  started: Option<Instant>,
}

impl Recovery {
  fn elapsed_ms(&self) -> u64 {
    match self.started {
      None => 0,
      Some(t) => (t.elapsed().as_millis() as u64).min(self.budget_ms),
    }
  }
  fn remaining_ms(&self) -> u64 {
    self.budget_ms.saturating_sub(self.elapsed_ms())
  }
}

/// State shared by every candidate of one `streamChat` call.
struct Run<'a> {
  client: &'a reqwest::Client,
  record: Option<&'a str>,
  out: Out<'a>,
  options: &'a Value,
  context: Context,
  disable_thinking: bool,
  recovery: Option<Recovery>,
  mode: RetryMode,
  max_retries: u32,
  shared_attempt_limit: bool,
  logical_attempts: u32,
  response: Option<ResponseMeta>,
}

impl Run<'_> {
  fn has_capacity(&self) -> bool {
    !self.shared_attempt_limit || self.logical_attempts < self.max_retries + 1
  }

  fn recovery_fields(&self, o: &mut Map<String, Value>) {
    o.insert("mode".into(), json!(self.mode.as_str()));
    if let Some(r) = &self.recovery {
      o.insert("recoveryBudgetMs".into(), json!(r.budget_ms));
      o.insert("recoveryElapsedMs".into(), json!(r.elapsed_ms()));
      o.insert("recoveryRemainingMs".into(), json!(r.remaining_ms()));
    }
  }

  fn retry_event(&self, phase: &str, attempt: u32, reason: &str, status: Option<u16>) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("phase".into(), json!(phase));
    o.insert("attempt".into(), json!(attempt));
    o.insert("maxRetries".into(), json!(self.max_retries));
    o.insert("reason".into(), json!(reason));
    if let Some(s) = status {
      o.insert("statusCode".into(), json!(s));
    }
    o
  }

  fn budget_error(&self) -> ChatError {
    match &self.recovery {
      Some(r) => ChatError::budget(r.budget_ms, r.elapsed_ms()),
      None => ChatError::budget(0, 0),
    }
  }

  fn begin_recovery(&mut self) {
    if let Some(r) = &mut self.recovery {
      if r.started.is_none() {
        r.started = Some(Instant::now());
      }
    }
  }

  fn reported_attempt(&self, attempt: u32) -> u32 {
    if self.shared_attempt_limit {
      self.logical_attempts.saturating_sub(1)
    } else {
      attempt
    }
  }

  async fn exhausted(
    &self,
    attempt: u32,
    reason: &str,
    status: Option<u16>,
    by: Option<&str>,
  ) -> Result<(), ChatError> {
    let mut e = self.retry_event("exhausted", attempt, reason, status);
    self.recovery_fields(&mut e);
    if let Some(by) = by {
      e.insert("exhaustedBy".into(), json!(by));
    }
    self.out.send(json!({ "providerRetry": e })).await
  }

  /// One candidate with its own retry loop (Blade's `streamWithRetries`).
  async fn stream_with_retries(
    &mut self,
    model: &Model,
    config: &Value,
    max_retries: u32,
    terminal: bool,
    emitted: &mut bool,
  ) -> Result<(), ChatError> {
    let mut last_error: Option<ChatError> = None;
    let mut retry_reason: Option<&'static str> = None;
    let mut retry_status: Option<u16> = None;
    let mut attempt = 0u32;
    while attempt <= max_retries {
      if !self.has_capacity() {
        break;
      }
      let recovered_attempt = if self.shared_attempt_limit {
        self.logical_attempts
      } else {
        attempt
      };
      let recovered = match retry_reason {
        Some(reason) if recovered_attempt > 0 => {
          let mut e = self.retry_event("recovered", recovered_attempt, reason, retry_status);
          self.recovery_fields(&mut e);
          Some(json!({ "providerRetry": e }))
        }
        _ => None,
      };
      let result = self.attempt(model, config, recovered, emitted).await;
      let error = match result {
        Ok(()) => return Ok(()),
        Err(e) => e,
      };
      if self.out.cancel.is_cancelled() {
        return Err(ChatError::abort());
      }
      let mut error = error;
      if error.is_budget() {
        if *emitted {
          error.replay_boundary_crossed = true;
          return Err(error);
        }
        self
          .exhausted(
            self.reported_attempt(attempt),
            retry_reason.unwrap_or("timeout"),
            retry_status,
            Some("recovery_budget"),
          )
          .await?;
        return Err(error);
      }
      let classification = classify_provider_retry(&error.info(), self.response.as_ref());
      if *emitted {
        error.replay_boundary_crossed = true;
        return Err(error);
      }
      let reason = match (classification.retryable, classification.reason) {
        (true, Some(r)) => r.as_str(),
        _ => {
          if attempt > 0 {
            if let Some(r) = retry_reason {
              self
                .exhausted(self.reported_attempt(attempt), r, retry_status, None)
                .await?;
            }
          }
          return Err(error);
        }
      };
      retry_reason = Some(reason);
      retry_status = classification.status_code;
      let can_retry = attempt < max_retries && self.has_capacity();
      if can_retry {
        self.begin_recovery();
        let retry_attempt = if self.shared_attempt_limit {
          self.logical_attempts
        } else {
          attempt + 1
        };
        let requested = compute_provider_retry_delay(
          retry_attempt,
          self.response.as_ref(),
          &RetryDelayOptions::new(self.mode, now_ms(), random_unit()),
        );
        let delay = match &self.recovery {
          Some(r) => requested.min(r.remaining_ms()),
          None => requested,
        };
        let mut scheduled = self.retry_event("scheduled", retry_attempt, reason, classification.status_code);
        scheduled.insert("delayMs".into(), json!(delay));
        scheduled.insert("nextRetryAt".into(), json!((now_ms() + delay as f64) as u64));
        self.recovery_fields(&mut scheduled);
        self.out.send(json!({ "providerRetry": scheduled })).await?;
        if self.recovery.is_some() {
          let mut remaining = delay;
          while remaining > 0 {
            let step = remaining.min(RECOVERY_HEARTBEAT_MS);
            self.out.sleep(step).await?;
            remaining -= step;
            if self.recovery.as_ref().is_some_and(|r| r.remaining_ms() == 0) {
              let mut e = self.retry_event("exhausted", retry_attempt, reason, classification.status_code);
              self.recovery_fields(&mut e);
              e.insert("exhaustedBy".into(), json!("recovery_budget"));
              self.out.send(json!({ "providerRetry": e })).await?;
              return Err(self.budget_error());
            }
            if remaining > 0 {
              let mut w = self.retry_event("waiting", retry_attempt, reason, classification.status_code);
              w.insert("delayMs".into(), json!(delay));
              w.insert("nextRetryAt".into(), json!((now_ms() + remaining as f64) as u64));
              self.recovery_fields(&mut w);
              self.out.send(json!({ "providerRetry": w })).await?;
            }
          }
        } else {
          self.out.sleep(delay).await?;
        }
        let mut a = self.retry_event("attempt", retry_attempt, reason, classification.status_code);
        self.recovery_fields(&mut a);
        self.out.send(json!({ "providerRetry": a })).await?;
      } else {
        let by = if self.recovery.is_some() && (terminal || !self.has_capacity()) {
          Some("attempt_limit")
        } else {
          None
        };
        self
          .exhausted(self.reported_attempt(attempt), reason, classification.status_code, by)
          .await?;
      }
      last_error = Some(error);
      attempt += 1;
    }
    Err(last_error.unwrap_or_else(|| self.budget_error()))
  }

  /// One physical attempt (Blade's `streamFrom` + `streamPiModel`).
  async fn attempt(
    &mut self,
    model: &Model,
    config: &Value,
    mut recovered: Option<Value>,
    emitted: &mut bool,
  ) -> Result<(), ChatError> {
    if !self.has_capacity() {
      return Err(self.budget_error());
    }
    if self.shared_attempt_limit {
      self.logical_attempts += 1;
    }
    self.response = None;
    let request_timeout = num_field(config, "timeout")
      .filter(|t| t.is_finite() && *t > 0.0)
      .map(|t| (t.floor() as u64).max(1));
    let recovery_deadline = match &self.recovery {
      Some(r) if r.started.is_some() => {
        let remaining = r.remaining_ms();
        if remaining == 0 {
          return Err(self.budget_error());
        }
        Some((remaining, ChatError::budget(r.budget_ms, r.budget_ms)))
      }
      _ => None,
    };
    let deadline = match (request_timeout, &recovery_deadline) {
      (Some(t), Some((remaining, _))) if t < *remaining => Some((t, ChatError::deadline(t))),
      (Some(t), None) => Some((t, ChatError::deadline(t))),
      _ => None,
    };
    let idle_ms = num_field(config, "streamIdleTimeout")
      .filter(|t| *t > 0.0)
      .map(|t| t as u64)
      .unwrap_or(DEFAULT_STREAM_IDLE_TIMEOUT_MS);
    let timers = async {
      let first = deadline.as_ref().map(|(ms, e)| (*ms, e.clone()));
      let second = recovery_deadline.as_ref().map(|(ms, e)| (*ms, e.clone()));
      let wait = |t: Option<(u64, ChatError)>| async move {
        match t {
          Some((ms, e)) => {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            e
          }
          None => std::future::pending().await,
        }
      };
      tokio::select! {
        e = wait(first) => e,
        e = wait(second) => e,
      }
    };
    let client = self.client;
    let record = self.record;
    let options = self.options;
    let disable_thinking = self.disable_thinking;
    let context = &self.context;
    let out = &self.out;
    let response = &mut self.response;
    let stream = async {
      let wire_opts = wire_options(config, model, options, disable_thinking).map_err(ChatError::plain)?;
      let adapter = wire::adapter_for(&model.api)
        .ok_or_else(|| ChatError::plain(format!("No API provider registered for api: {}", model.api)))?;
      let request = adapter
        .build_request(model, context, &wire_opts)
        .map_err(ChatError::plain)?;
      // A wire's own bound on the whole request when no `timeout` is set (Mistral: 60 s); with a
      // `timeout`, the attempt deadline above ends the request first.
      let bound = request_timeout
        .is_none()
        .then(|| wire::default_request_bound(&model.api))
        .flatten();
      let recorder = record.and_then(|dir| Recorder::start(dir, model, &request));
      let mut source = EventSource::new(client, &model.api, request, recorder).with_bound(bound);
      let mut parser = adapter.parser(model, &wire_opts);
      let warning = resolve_stream_stall_warning_ms(idle_ms, None);
      let mut stall_count = 0u32;
      let mut output_started = false;
      let mut tool_index = 0u32;
      loop {
        // Events decoded from bytes already read need no watchdog (nothing is awaited).
        let event = match source.ready_event(parser.as_mut())? {
          Some(event) => Some(event),
          None => {
            next_with_watchdog(
              &mut source,
              parser.as_mut(),
              response,
              idle_ms,
              warning,
              &mut stall_count,
              output_started,
              out,
            )
            .await?
          }
        };
        let Some(event) = event else {
          return Err(ChatError::stream_closed());
        };
        // A text or thinking delta, or any other chunk as a value.
        let (text, chunk) = match event {
          StreamEvent::TextDelta(d) => (Some(("content", d)), Value::Null),
          StreamEvent::ThinkingDelta(d) => (Some(("reasoningContent", d)), Value::Null),
          StreamEvent::ToolCallEnd { id, name, arguments } => {
            let index = tool_index;
            tool_index += 1;
            let chunk = json!({ "toolCalls": [{ "index": index, "id": id, "type": "function",
              "function": { "name": name, "arguments": wire::transform::js_stringify(&Value::Object(arguments)) } }] });
            (None, chunk)
          }
          StreamEvent::Done { reason, usage } => {
            let chunk = json!({ "finishReason": reason.as_str(), "usage": usage_info(model, &usage) });
            if let Some(r) = recovered.take() {
              out.send(r).await?;
            }
            let before = *emitted;
            *emitted = true;
            // A chunk refused as too large never reached the caller.
            out.send(chunk).await.inspect_err(|e| {
              if e.is_too_large() {
                *emitted = before;
              }
            })?;
            return Ok(());
          }
          StreamEvent::Error { message } => return Err(ChatError::plain(message)),
          _ => continue,
        };
        output_started = true;
        if let Some(r) = recovered.take() {
          out.send(r).await?;
        }
        let before = *emitted;
        *emitted = true;
        let sent = match text {
          Some((key, d)) => out.send_text(key, &d).await,
          None => out.send(chunk).await,
        };
        if let Err(e) = sent {
          // A chunk refused as too large never reached the caller.
          if e.is_too_large() {
            *emitted = before;
          }
          return Err(e);
        }
      }
    };
    tokio::select! {
      r = stream => r,
      e = timers => Err(e),
      _ = self.out.cancel.cancelled() => Err(ChatError::abort()),
    }
  }
}

/// Append `{"<key>":"<text>"}` exactly as `json!({key: text}).to_string()` writes it.
fn write_text_chunk(buf: &mut String, key: &str, text: &str) {
  buf.push_str("{\"");
  buf.push_str(key);
  buf.push_str("\":\"");
  // serde_json's escaping: `"`, `\\`, \b \t \n \f \r, other controls as \u00xx, the rest as is.
  let mut run = 0;
  for (i, b) in text.bytes().enumerate() {
    let escape = match b {
      b'"' => "\\\"",
      b'\\' => "\\\\",
      0x08 => "\\b",
      0x09 => "\\t",
      0x0A => "\\n",
      0x0C => "\\f",
      0x0D => "\\r",
      0x00..=0x1F => "",
      _ => continue,
    };
    buf.push_str(&text[run..i]);
    if escape.is_empty() {
      const HEX: &[u8; 16] = b"0123456789abcdef";
      buf.push_str("\\u00");
      buf.push(HEX[(b >> 4) as usize] as char);
      buf.push(HEX[(b & 15) as usize] as char);
    } else {
      buf.push_str(escape);
    }
    run = i + 1;
  }
  buf.push_str(&text[run..]);
  buf.push_str("\"}");
}

/// `UsageInfo` with cost (spec §1.6, §5.10).
fn usage_info(model: &Model, usage: &Usage) -> Value {
  let mut cost = cost_usd(
    &model.cost,
    usage.input,
    usage.output,
    usage.cache_read,
    usage.cache_write,
    usage.cache_write_1h,
  );
  // The Responses parsers report the tier to price with (none for Azure, which pi-ai never
  // reprices); other APIs have no tier pricing.
  if matches!(model.api.as_str(), "openai-responses" | "openai-codex-responses") {
    apply_service_tier_pricing(&mut cost, &model.id, usage.service_tier.as_deref());
  }
  let mut o = Map::new();
  o.insert(
    "promptTokens".into(),
    num(usage.input + usage.cache_read + usage.cache_write),
  );
  o.insert("completionTokens".into(), num(usage.output));
  o.insert("totalTokens".into(), num(usage.total));
  o.insert("costUsd".into(), num(cost.total));
  if let Some(r) = usage.reasoning {
    o.insert("reasoningTokens".into(), num(r));
  }
  if usage.cache_write > 0.0 {
    o.insert("cacheCreationInputTokens".into(), num(usage.cache_write));
  }
  if usage.cache_read > 0.0 {
    o.insert("cacheReadInputTokens".into(), num(usage.cache_read));
  }
  Value::Object(o)
}

/// A JSON number that prints integers without a fraction (as JS would).
fn num(x: f64) -> Value {
  if x.fract() == 0.0 && x.abs() < 9.0e15 {
    json!(x as i64)
  } else {
    json!(x)
  }
}

/// The response of one attempt as semantic events. The request is sent on the first read, so the
/// idle watchdog also covers connecting, waiting for headers and reading an error body.
struct EventSource {
  client: reqwest::Client,
  api: String,
  request: Option<super::types::HttpRequest>,
  body: Option<futures_util::stream::BoxStream<'static, Result<bytes::Bytes, reqwest::Error>>>,
  /// Bytes read but not yet decoded: a large read is decoded a slice at a time so the first
  /// events reach the caller before the whole burst is parsed.
  pending: bytes::Bytes,
  decoder: SseDecoder,
  queue: VecDeque<StreamEvent>,
  ended: bool,
  /// Body bytes read so far (after content decoding), bounded by [`MAX_BODY_BYTES`].
  body_bytes: u64,
  recorder: Option<Recorder>,
  /// The wire's own bound on the whole request: once it passes, the pending read fails with the
  /// wire's text (as the reference's aborted fetch or body read does).
  bound: Option<(tokio::time::Instant, &'static str)>,
}

/// True when a URL carries `user[:password]@` (sent as Basic auth, replacing the API key).
fn url_has_credentials(url: &str) -> bool {
  reqwest::Url::parse(url).is_ok_and(|u| !u.username().is_empty() || u.password().is_some())
}

/// A provider error text cut to [`MAX_ERROR_MESSAGE`] bytes (at a character boundary) and marked,
/// so a huge error body never becomes a huge message. `body_cut`: only the first part of the body
/// was read.
pub fn bounded_error_message(message: String, body_cut: bool) -> String {
  if message.len() <= MAX_ERROR_MESSAGE {
    return message;
  }
  let mut end = message.len().min(MAX_ERROR_MESSAGE);
  while !message.is_char_boundary(end) {
    end -= 1;
  }
  let total = if body_cut {
    format!("more than {MAX_ERROR_BODY} bytes of error body")
  } else {
    format!("{} bytes", message.len())
  };
  format!("{}… [truncated by pi-native: first {end} of {total}]", &message[..end])
}

/// The request failed because the connection closed (FIN, RST) after it was sent and before any
/// response byte: the signature of a keep-alive connection the server dropped as it was reused.
/// Connect failures and timeouts are not.
fn closed_before_response(e: &reqwest::Error) -> bool {
  if e.is_connect() || e.is_timeout() || e.is_builder() || e.is_redirect() || e.is_status() {
    return false;
  }
  let mut source = std::error::Error::source(e);
  while let Some(s) = source {
    if let Some(io) = s.downcast_ref::<std::io::Error>() {
      use std::io::ErrorKind::*;
      if matches!(io.kind(), ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof) {
        return true;
      }
    }
    let text = s.to_string();
    if text.contains("connection closed before message completed") || text.contains("connection reset") {
      return true;
    }
    source = s.source();
  }
  false
}

/// A failed transport as the JS SDKs report it (`Connection error.`, `terminated`, ...), with what
/// went wrong underneath as `cause` (the error chain below reqwest's own text, which would name
/// the URL: `connection closed before message completed`, `Connection reset by peer`, ...).
fn transport_error(api: &str, e: &reqwest::Error) -> ChatError {
  let mut error = ChatError::plain(wire_transport_message(api, e));
  let mut parts: Vec<String> = Vec::new();
  let mut source = std::error::Error::source(e);
  while let Some(s) = source {
    let text = s.to_string();
    if !text.is_empty() && !parts.iter().any(|p| p.contains(&text)) {
      parts.push(text);
    }
    source = s.source();
  }
  if !parts.is_empty() {
    error.extra.insert("cause".into(), json!(parts.join(": ")));
  }
  error
}

/// [`transport_message`] in the words of the wire's client (`fetch failed` for plain fetch).
fn wire_transport_message(api: &str, e: &reqwest::Error) -> String {
  let message = transport_message(e);
  if message == "Connection error." {
    wire::connection_error_message(api).to_string()
  } else {
    message
  }
}

/// Text a failed transport reports (what the JS SDKs surface for connection failures).
fn transport_message(e: &reqwest::Error) -> String {
  if e.is_timeout() {
    "Request timed out.".into()
  } else if e.is_builder() {
    // A request that could not even be built (e.g. a header value with a line break): say so,
    // without echoing the offending value.
    "Invalid request: a URL or header value is malformed".into()
  } else if e.is_redirect() {
    // Our redirect policy's own words (status and target origin, never the URL's path or query).
    std::error::Error::source(e)
      .map(|s| s.to_string())
      .filter(|m| m.starts_with("pi-native:"))
      .unwrap_or_else(|| "pi-native: a redirect was not followed".into())
  } else {
    "Connection error.".into()
  }
}

impl EventSource {
  fn new(
    client: &reqwest::Client,
    api: &str,
    request: super::types::HttpRequest,
    recorder: Option<Recorder>,
  ) -> EventSource {
    EventSource {
      client: client.clone(),
      api: api.to_string(),
      request: Some(request),
      body: None,
      pending: bytes::Bytes::new(),
      decoder: SseDecoder::default(),
      queue: VecDeque::new(),
      ended: false,
      body_bytes: 0,
      recorder,
      bound: None,
    }
  }

  /// Bound the whole request to `ms` from now (see [`wire::default_request_bound`]).
  fn with_bound(mut self, bound: Option<(u64, &'static str)>) -> EventSource {
    self.bound = bound.map(|(ms, message)| (tokio::time::Instant::now() + Duration::from_millis(ms), message));
    self
  }

  /// Send the request; a non-2xx response becomes the error its wire adapter would report.
  async fn open(
    client: &reqwest::Client,
    api: &str,
    request: super::types::HttpRequest,
    response_meta: &mut Option<ResponseMeta>,
    recorder: &mut Option<Recorder>,
  ) -> Result<futures_util::stream::BoxStream<'static, Result<bytes::Bytes, reqwest::Error>>, ChatError> {
    // JSON.stringify's text (key order, numbers, lone surrogates as escapes), as pi-ai sends it.
    let mut body = wire::transform::js_stringify(&request.body).into_bytes();
    if request.zstd {
      body = zstd::bulk::compress(&body, 3).map_err(|e| ChatError::plain(e.to_string()))?;
    }
    if url_has_credentials(&request.url) {
      return Err(ChatError::plain(
        "pi-native: the provider URL embeds credentials (user:password@host); pass the key as apiKey instead",
      ));
    }
    let mut builder = client.post(&request.url).body(body);
    for (k, v) in &request.headers {
      builder = builder.header(k.as_str(), v.as_str());
    }
    // A pooled keep-alive connection the server closes just as the request arrives fails before
    // any response byte (or gets Node's 408 for it); the server never handled the request. It is
    // sent again once, at once, on a fresh connection: not a retry attempt.
    let mut resent = false;
    let response = loop {
      let Some(this) = builder.try_clone() else {
        break builder.send().await.map_err(|e| transport_error(api, &e))?;
      };
      match this.send().await {
        Ok(r) if r.status().as_u16() == 408 && !resent => resent = true,
        Ok(r) => break r,
        Err(e) if !resent && closed_before_response(&e) => resent = true,
        Err(e) => return Err(transport_error(api, &e)),
      }
    };
    let status = response.status().as_u16();
    let headers: Vec<(String, String)> = response
      .headers()
      .iter()
      .map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or("").to_string()))
      .collect();
    if let Some(r) = recorder.as_mut() {
      r.response(status, &headers);
    }
    *response_meta = Some(ResponseMeta::from_headers(
      status,
      headers.iter().map(|(k, v)| (k.as_str(), v.as_str())),
    ));
    if !(200..300).contains(&status) {
      let mut text = Vec::new();
      let mut stream = response.bytes_stream();
      while let Some(chunk) = stream.next().await {
        match chunk {
          Ok(b) => {
            if let Some(r) = recorder.as_mut() {
              r.body(&b);
            }
            text.extend_from_slice(&b);
            if text.len() > MAX_ERROR_BODY {
              break;
            }
          }
          Err(_) => break,
        }
      }
      let cut = text.len() > MAX_ERROR_BODY;
      let message = bounded_error_message(
        wire::http_error_text(api, status, &headers, &String::from_utf8_lossy(&text)),
        cut,
      );
      let mut e = ChatError::plain(message);
      e.status = Some(status);
      return Err(e);
    }
    Ok(response.bytes_stream().boxed())
  }

  /// An event available without waiting: queued, or decoded from bytes already read.
  fn ready_event(&mut self, parser: &mut (dyn StreamParser + Send)) -> Result<Option<StreamEvent>, ChatError> {
    loop {
      if let Some(e) = self.queue.pop_front() {
        return Ok(Some(e));
      }
      if self.request.is_some() || self.pending.is_empty() {
        return Ok(None);
      }
      let slice = self.pending.split_to(self.pending.len().min(DECODE_SLICE));
      self.decode(&slice, parser)?;
    }
  }

  /// The next semantic event; `None` when the body ended without one.
  async fn next_event(
    &mut self,
    parser: &mut (dyn StreamParser + Send),
    meta: &mut Option<ResponseMeta>,
  ) -> Result<Option<StreamEvent>, ChatError> {
    match self.bound {
      Some((at, message)) => tokio::time::timeout_at(at, self.next_event_unbounded(parser, meta))
        .await
        .unwrap_or_else(|_| Err(ChatError::plain(message))),
      None => self.next_event_unbounded(parser, meta).await,
    }
  }

  async fn next_event_unbounded(
    &mut self,
    parser: &mut (dyn StreamParser + Send),
    meta: &mut Option<ResponseMeta>,
  ) -> Result<Option<StreamEvent>, ChatError> {
    loop {
      if let Some(e) = self.queue.pop_front() {
        return Ok(Some(e));
      }
      if let Some(request) = self.request.take() {
        self.body = Some(EventSource::open(&self.client, &self.api, request, meta, &mut self.recorder).await?);
        self.queue.push_back(StreamEvent::Start);
        continue;
      }
      if !self.pending.is_empty() {
        let slice = self.pending.split_to(self.pending.len().min(DECODE_SLICE));
        self.decode(&slice, parser)?;
        continue;
      }
      if self.ended {
        return Ok(None);
      }
      let Some(body) = self.body.as_mut() else {
        return Ok(None);
      };
      match body.next().await {
        Some(Ok(bytes)) => {
          self.body_bytes += bytes.len() as u64;
          if let Some(r) = self.recorder.as_mut() {
            r.body(&bytes);
          }
          if self.body_bytes > MAX_BODY_BYTES {
            return Err(ChatError::too_large("body", MAX_BODY_BYTES));
          }
          self.pending = bytes
        }
        Some(Err(e)) => {
          let mut error = transport_error(&self.api, &e);
          if e.is_decode() || e.is_body() {
            error.message = "terminated".to_string();
          }
          return Err(error);
        }
        None => {
          self.ended = true;
          let mut events = Vec::new();
          if parser.frames_raw_body() {
            // The parser holds the unframed rest itself.
          } else if parser.flushes_unterminated_event() {
            self.decoder.finish_flushing(&mut events);
          } else {
            self.decoder.finish();
          }
          let mut out = Vec::new();
          for ev in &events {
            parser.on_event(ev, &mut out);
          }
          parser.on_end(&mut out);
          self.queue.extend(out);
        }
      }
    }
  }

  fn decode(&mut self, bytes: &[u8], parser: &mut (dyn StreamParser + Send)) -> Result<(), ChatError> {
    let too_large = |e: SseError| match e {
      SseError::LineTooLong(n) | SseError::EventTooLarge(n) => ChatError::too_large("event", n as u64),
    };
    let mut out = Vec::new();
    if parser.frames_raw_body() {
      parser.on_bytes(bytes, &mut out).map_err(too_large)?;
      self.queue.extend(out);
      return Ok(());
    }
    let mut events = Vec::new();
    self.decoder.feed(bytes, &mut events).map_err(too_large)?;
    for ev in &events {
      parser.on_event(ev, &mut out);
    }
    self.queue.extend(out);
    Ok(())
  }
}

/// Wait for the next semantic event with the idle watchdog of §6.1: one pending read; a stall
/// warning after `warning` ms (detected, then recovered on the same read), the idle error at
/// `idle` ms.
#[allow(clippy::too_many_arguments)]
async fn next_with_watchdog(
  source: &mut EventSource,
  parser: &mut (dyn StreamParser + Send),
  meta: &mut Option<ResponseMeta>,
  idle: u64,
  warning: Option<u64>,
  stall_count: &mut u32,
  output_started: bool,
  out: &Out<'_>,
) -> Result<Option<StreamEvent>, ChatError> {
  let started = Instant::now();
  let next = source.next_event(parser, meta);
  tokio::pin!(next);
  let mut stall: Option<Map<String, Value>> = None;
  loop {
    let limit = if stall.is_some() { idle } else { warning.unwrap_or(idle) };
    let remaining = Duration::from_millis(limit).saturating_sub(started.elapsed());
    tokio::select! {
      r = &mut next => {
        if let Some(mut s) = stall {
          let waited = started.elapsed().as_millis() as u64;
          let detected = s.get("durationMs").and_then(Value::as_u64).unwrap_or(0);
          s.insert("phase".into(), json!("recovered"));
          s.insert("durationMs".into(), json!(detected.max(waited)));
          out.send(json!({ "providerStall": s })).await?;
        }
        return r;
      }
      _ = tokio::time::sleep(remaining) => {
        if let (None, Some(w)) = (&stall, warning) {
          *stall_count += 1;
          let mut s = Map::new();
          s.insert("phase".into(), json!("detected"));
          s.insert("stallCount".into(), json!(*stall_count));
          s.insert("durationMs".into(), json!(w));
          s.insert("warningAfterMs".into(), json!(w));
          s.insert("timeoutMs".into(), json!(idle));
          s.insert("outputStarted".into(), json!(output_started));
          out.send(json!({ "providerStall": s.clone() })).await?;
          stall = Some(s);
          continue;
        }
        return Err(ChatError::idle_timeout(idle));
      }
      _ = out.cancel.cancelled() => return Err(ChatError::abort()),
    }
  }
}

fn valid_recovery_budget(budget: f64) -> bool {
  budget == 0.0 || (budget.fract() == 0.0 && (MIN_RECOVERY_BUDGET_MS..=MAX_RECOVERY_BUDGET_MS).contains(&budget))
}

/// Download the http(s) images of the context with the caller's cancellation.
async fn fetch_images(
  client: &reqwest::Client,
  urls: Vec<String>,
  timeout_ms: u64,
  cancel: &CancellationToken,
) -> Result<HashMap<String, super::context::FetchedImage>, ChatError> {
  use base64::Engine;
  let mut out = HashMap::new();
  for url in urls {
    let fetched = async {
      let response = client.get(&url).send().await.map_err(|e| transport_message(&e))?;
      let status = response.status();
      if !status.is_success() {
        return Err(format!("Failed to load image {url}: HTTP {}", status.as_u16()));
      }
      let mime = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or("").to_string())
        .unwrap_or_else(|| "image/png".into());
      if response.content_length().is_some_and(|n| n > MAX_IMAGE_BYTES as u64) {
        return Err(format!(
          "Failed to load image {url}: larger than {MAX_IMAGE_BYTES} bytes"
        ));
      }
      let mut bytes = Vec::new();
      let mut stream = response.bytes_stream();
      while let Some(chunk) = stream.next().await {
        bytes.extend_from_slice(&chunk.map_err(|e| transport_message(&e))?);
        if bytes.len() > MAX_IMAGE_BYTES {
          return Err(format!(
            "Failed to load image {url}: larger than {MAX_IMAGE_BYTES} bytes"
          ));
        }
      }
      Ok((mime, base64::engine::general_purpose::STANDARD.encode(&bytes)))
    };
    let r = tokio::select! {
      r = fetched => r,
      _ = tokio::time::sleep(Duration::from_millis(timeout_ms)) => {
        Err(format!("Failed to load image {url}: no response within {timeout_ms}ms"))
      }
      _ = cancel.cancelled() => return Err(ChatError::abort()),
    };
    if let Err(e) = &r {
      return Err(ChatError::plain(e.clone()));
    }
    out.insert(url, r);
  }
  Ok(out)
}

/// The credentials of a request (API keys and credential headers of the primary config and the
/// fallback channels), for redaction.
fn secrets(config: &Value) -> Vec<String> {
  let mut found: Vec<String> = Vec::new();
  let mut collect = |scope: Option<&Value>| {
    let Some(scope) = scope else { return };
    if let Some(k) = str_field(scope, "apiKey") {
      found.push(k.to_string());
    }
    for (name, value) in scope
      .get("customHeaders")
      .and_then(Value::as_object)
      .into_iter()
      .flatten()
    {
      if let (true, Some(v)) = (super::types::is_credential_header(name), value.as_str()) {
        found.push(v.to_string());
        if let Some(token) = v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")) {
          found.push(token.trim().to_string());
        }
      }
    }
  };
  collect(Some(config));
  for f in config
    .get("fallbackModels")
    .and_then(Value::as_array)
    .into_iter()
    .flatten()
  {
    collect(f.get("channel"));
  }
  found.retain(|k| k.len() >= 4);
  found.sort_by_key(|k| std::cmp::Reverse(k.len()));
  found
}

/// Remove every configured API key from a text that may reach the caller (a provider may echo
/// the key in an error body).
pub fn redact(text: &str, keys: &[String]) -> String {
  let mut out = text.to_string();
  for k in keys {
    if out.contains(k.as_str()) {
      out = out.replace(k.as_str(), "[redacted]");
    }
  }
  out
}

/// Run one `streamChat` call to completion, sending chunks and then (on failure) the error.
pub async fn run_chat(client: reqwest::Client, req: ChatRequest, outbox: &Outbox, cancel: CancellationToken) {
  let result = stream_chat(&client, &req, outbox, &cancel).await;
  match result {
    Ok(()) => outbox.close(None),
    Err(mut e) => {
      if cancel.is_cancelled() && !e.is_abort() {
        e = ChatError::abort();
      }
      let keys = secrets(&req.config);
      e.message = redact(&e.message, &keys);
      if let Some(Value::String(cause)) = e.extra.get_mut("cause") {
        *cause = redact(cause, &keys);
      }
      outbox.close(Some(e));
    }
  }
}

async fn stream_chat(
  client: &reqwest::Client,
  req: &ChatRequest,
  outbox: &Outbox,
  cancel: &CancellationToken,
) -> Result<(), ChatError> {
  let required = req
    .options
    .get("toolChoice")
    .and_then(|c| c.get("toolName"))
    .and_then(Value::as_str)
    .map(String::from);
  check_required_tool(&req.tools, required.as_deref()).map_err(ChatError::plain)?;
  let resolver = Resolver {
    custom: &req.models,
    catalog: Catalog::embedded(),
  };
  let model = resolve_model(&resolver, &req.config).map_err(ChatError::plain)?;
  let filtered = filter_orphan_tool_messages(&req.messages);
  check_images(&filtered, &model).map_err(ChatError::plain)?;
  let disable_thinking = thinking_forced_off(&filtered, required.as_deref());
  let idle_ms = num_field(&req.config, "streamIdleTimeout")
    .filter(|t| *t > 0.0)
    .map(|t| t as u64)
    .unwrap_or(DEFAULT_STREAM_IDLE_TIMEOUT_MS);
  let images = fetch_images(client, remote_image_urls(&filtered, &model), idle_ms, cancel).await?;
  let context = build_context(&filtered, &model, &req.tools, required.as_deref(), &images, &mut |_| {})
    .map_err(ChatError::plain)?;

  let recovery = match req.options.get("providerRecovery") {
    Some(r) if r.is_object() => {
      let budget = num_field(r, "budgetMs").unwrap_or(f64::NAN);
      if !valid_recovery_budget(budget) {
        return Err(ChatError::plain("Invalid bounded foreground Provider recovery budget"));
      }
      if str_field(r, "mode") == Some("bounded_foreground") && budget > 0.0 {
        Some(Recovery {
          budget_ms: budget as u64,
          started: None,
        })
      } else {
        None
      }
    }
    _ => None,
  };
  let configured_retries = num_field(&req.config, "maxRetries").map(|n| n.max(0.0) as u32);
  let standard_max = configured_retries.unwrap_or(2);
  let bounded = recovery.is_some();
  let max_retries = configured_retries.unwrap_or(if bounded { DEFAULT_FOREGROUND_MAX_RETRIES } else { 2 });
  let fallbacks: Vec<Value> = req
    .config
    .get("fallbackModels")
    .and_then(Value::as_array)
    .cloned()
    .unwrap_or_default();
  let mut run = Run {
    client,
    record: req.record.as_deref(),
    out: Out { outbox, cancel },
    options: &req.options,
    context,
    disable_thinking,
    recovery,
    mode: if bounded {
      RetryMode::BoundedForeground
    } else {
      RetryMode::Standard
    },
    max_retries,
    shared_attempt_limit: bounded && configured_retries.is_none(),
    logical_attempts: 0,
    response: None,
  };
  let fallbackable = |run: &Run, e: &ChatError| {
    e.is_idle_timeout() || classify_provider_retry(&e.info(), run.response.as_ref()).retryable
  };
  let primary_limit = if bounded && !fallbacks.is_empty() {
    standard_max.min(max_retries)
  } else {
    max_retries
  };
  let mut emitted = false;
  let mut last_error = match run
    .stream_with_retries(&model, &req.config, primary_limit, fallbacks.is_empty(), &mut emitted)
    .await
  {
    Ok(()) => return Ok(()),
    Err(e) => {
      if emitted || e.is_abort() || !fallbackable(&run, &e) {
        return Err(e);
      }
      e
    }
  };
  for (index, fallback) in fallbacks.iter().enumerate() {
    if !run.has_capacity() {
      break;
    }
    run.out.send(json!({ "modelFallback": true })).await?;
    let mut emitted = false;
    let config = fallback_config(&req.config, fallback);
    let terminal = index == fallbacks.len() - 1;
    let limit = if bounded && !terminal {
      standard_max.min(max_retries)
    } else {
      max_retries
    };
    let result = match resolve_model(&resolver, &config) {
      Ok(fallback_model) => {
        run
          .stream_with_retries(&fallback_model, &config, limit, terminal, &mut emitted)
          .await
      }
      Err(message) => Err(ChatError::plain(message)),
    };
    match result {
      Ok(()) => return Ok(()),
      Err(e) => {
        if emitted || e.is_abort() || !fallbackable(&run, &e) {
          return Err(e);
        }
        last_error = e;
      }
    }
  }
  Err(last_error)
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn error_messages_are_cut_at_a_character_boundary_and_marked() {
    assert_eq!(bounded_error_message("400: short".into(), false), "400: short");
    let long = format!("500: {}", "é".repeat(MAX_ERROR_MESSAGE));
    let cut = bounded_error_message(long.clone(), false);
    let (kept, marker) = cut.split_once('…').unwrap();
    assert!(kept.len() <= MAX_ERROR_MESSAGE && kept.len() > MAX_ERROR_MESSAGE - 4);
    assert!(long.starts_with(kept));
    assert_eq!(marker, format!(" [truncated by pi-native: first {} of {} bytes]", kept.len(), long.len()));
    let partial = bounded_error_message("x".repeat(MAX_ERROR_MESSAGE + 1), true);
    assert!(partial.ends_with(&format!("of more than {MAX_ERROR_BODY} bytes of error body]")));
  }

  #[test]
  fn credentials_in_urls_are_recognised() {
    assert!(url_has_credentials("http://user:pw@127.0.0.1/v1"));
    assert!(url_has_credentials("https://user@example.com/"));
    assert!(url_has_credentials("https://:pw@example.com/"));
    assert!(!url_has_credentials("https://example.com/v1?key=a@b"));
    assert!(!url_has_credentials("not a url"));
  }

  #[tokio::test]
  async fn the_outbox_is_bounded_in_bytes_and_refuses_a_giant_chunk() {
    let outbox = Arc::new(Outbox::default());
    let cancel = CancellationToken::new();
    let piece = "p".repeat(1024 * 1024);
    // The producer fills the buffer up to the byte bound, then waits for the consumer.
    let producer = {
      let (outbox, cancel, piece) = (outbox.clone(), cancel.clone(), piece.clone());
      tokio::spawn(async move {
        for _ in 0..12 {
          outbox.push(&cancel, |b| b.push_str(&piece)).await.unwrap();
        }
      })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    let first = outbox.take().await;
    assert_eq!(first.count, OUTBOX_BYTES / piece.len());
    assert!(first.json.len() <= OUTBOX_BYTES + piece.len());
    let mut total = first.count;
    while total < 12 {
      let t = outbox.take().await;
      assert!(t.json.len() <= OUTBOX_BYTES + piece.len());
      total += t.count;
    }
    producer.await.unwrap();
    // One chunk beyond the chunk bound is refused whole; the buffer keeps what it had.
    outbox.push(&cancel, |b| b.push_str("ok")).await.unwrap();
    let giant = outbox.push(&cancel, |b| b.push_str(&"g".repeat(MAX_CHUNK_BYTES + 1))).await;
    let e = giant.unwrap_err();
    assert_eq!(e.code.as_deref(), Some(PROVIDER_RESPONSE_TOO_LARGE));
    assert_eq!(e.extra["part"], json!("chunk"));
    assert_eq!(outbox.take().await.json, "ok");
  }

  #[test]
  fn keys_are_redacted_from_error_texts() {
    let config = json!({"apiKey": "sk-secret-123", "customHeaders": {"Authorization": "Bearer hdr-secret-1"},
      "fallbackModels": [{"channel": {"apiKey": "fb-key-999", "customHeaders": {"x-api-key": "fb-hdr-2"}}}]});
    let keys = secrets(&config);
    assert_eq!(
      redact(
        "401: bad sk-secret-123 / fb-key-999 / Bearer hdr-secret-1 / fb-hdr-2",
        &keys
      ),
      "401: bad [redacted] / [redacted] / [redacted] / [redacted]"
    );
  }

  #[test]
  fn debug_output_masks_credentials() {
    let o = crate::chat::types::WireOptions {
      api_key: Some("sk-secret-123".into()),
      ..Default::default()
    };
    assert!(!format!("{o:?}").contains("sk-secret"));
    let r = crate::chat::types::HttpRequest {
      url: "http://x".into(),
      headers: vec![
        ("Authorization".into(), "Bearer sk-secret-123".into()),
        ("x-api-key".into(), "sk-secret-123".into()),
      ],
      body: Value::Null,
      zstd: false,
    };
    assert!(!format!("{r:?}").contains("sk-secret"));
  }

  #[test]
  fn text_chunks_are_written_as_serde_writes_them() {
    let lone = crate::js::text::from_utf16(&[0x78, 0xD800]);
    let controls: String = (0u8..0x20).map(char::from).collect();
    for text in ["", "t1 ", "q\"\\\n\u{1}\u{7f}é🦀\u{2028}", &lone, &controls, "\"\\"] {
      for key in ["content", "reasoningContent"] {
        let mut buf = String::from("[");
        write_text_chunk(&mut buf, key, text);
        assert_eq!(buf, format!("[{}", json!({ key: text })));
      }
    }
  }

  #[test]
  fn recovery_budgets_follow_blade() {
    assert!(valid_recovery_budget(0.0));
    assert!(valid_recovery_budget(30_000.0) && valid_recovery_budget(3_600_000.0));
    assert!(!valid_recovery_budget(29_999.0) && !valid_recovery_budget(30_000.5) && !valid_recovery_budget(f64::NAN));
  }
}

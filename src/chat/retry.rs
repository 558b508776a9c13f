//! Retry classification and backoff for provider failures (spec §6.5, §6.6).
//!
//! Pure functions: the caller supplies the error's observable parts, the HTTP response metadata
//! captured for the attempt (§3.7), the clock and the random number. String parsing follows the
//! JavaScript built-ins Blade relies on (`toLowerCase`, `parseFloat`, V8's `Date.parse`).

use serde::{Deserialize, Serialize};

use super::history::is_js_whitespace;

/// `code` of the idle-watchdog error (`StreamIdleTimeoutError`).
pub const STREAM_IDLE_TIMEOUT: &str = "STREAM_IDLE_TIMEOUT";
/// `code` of the truncated-stream error (`ProviderStreamClosedError`).
pub const PROVIDER_STREAM_CLOSED: &str = "PROVIDER_STREAM_CLOSED";
/// `code` of the per-attempt deadline error (`ProviderRequestDeadlineExceededError`).
pub const PROVIDER_REQUEST_DEADLINE_EXCEEDED: &str = "PROVIDER_REQUEST_DEADLINE_EXCEEDED";
/// `code` of the bounded-recovery budget error (`ProviderRecoveryBudgetExceededError`).
pub const PROVIDER_RECOVERY_BUDGET_EXCEEDED: &str = "PROVIDER_RECOVERY_BUDGET_EXCEEDED";

/// Ceiling of any single retry wait, server directed or not.
pub const MAX_PROVIDER_RETRY_DELAY_MS: u64 = 60_000;
/// First exponential step.
pub const BASE_PROVIDER_RETRY_DELAY_MS: u64 = 500;
/// Ceiling of the exponential curve in standard mode.
pub const MAX_EXPONENTIAL_RETRY_DELAY_MS: u64 = 8_000;
/// Ceiling of both the wait and the curve in bounded foreground recovery.
pub const MAX_FOREGROUND_PROVIDER_RETRY_DELAY_MS: u64 = 60_000;

/// Why a failure may be retried. Serialises to the strings Blade uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetryReason {
  RateLimit,
  ServerError,
  Timeout,
  Transport,
  StreamClosed,
}

impl RetryReason {
  pub fn as_str(self) -> &'static str {
    match self {
      RetryReason::RateLimit => "rate_limit",
      RetryReason::ServerError => "server_error",
      RetryReason::Timeout => "timeout",
      RetryReason::Transport => "transport",
      RetryReason::StreamClosed => "stream_closed",
    }
  }
}

/// Blade's `{ retryable, reason?, statusCode? }`; absent fields are skipped when serialised.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RetryClassification {
  pub retryable: bool,
  #[serde(default, skip_serializing_if = "Option::is_none")]
  pub reason: Option<RetryReason>,
  #[serde(default, skip_serializing_if = "Option::is_none")]
  pub status_code: Option<u16>,
}

impl RetryClassification {
  fn terminal() -> Self {
    RetryClassification::default()
  }

  fn retry(reason: RetryReason, status_code: Option<u16>) -> Self {
    RetryClassification {
      retryable: true,
      reason: Some(reason),
      status_code,
    }
  }
}

/// The parts of a thrown error the classifier looks at.
///
/// For a JS `Error`: `message`, `name`, `code` when it is a string, and `status` from `status` or,
/// failing that, `statusCode` when it is an integer. For anything else thrown: `message` is
/// `String(value)` and the other fields are absent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ErrorInfo {
  pub message: String,
  pub name: Option<String>,
  pub code: Option<String>,
  pub status: Option<u16>,
}

impl ErrorInfo {
  pub fn new(message: impl Into<String>) -> Self {
    ErrorInfo {
      message: message.into(),
      ..ErrorInfo::default()
    }
  }

  pub fn with_name(mut self, name: impl Into<String>) -> Self {
    self.name = Some(name.into());
    self
  }

  pub fn with_code(mut self, code: impl Into<String>) -> Self {
    self.code = Some(code.into());
    self
  }

  pub fn with_status(mut self, status: u16) -> Self {
    self.status = Some(status);
    self
  }
}

/// Blade's `ProviderResponseMetadata`: the HTTP status and retry headers of an attempt's response,
/// error responses included. `should_retry` holds `x-should-retry` only when it is exactly `true` or
/// `false`; JSON form is `{ statusCode, retryAfter?, retryAfterMs?, shouldRetry?: "true"|"false" }`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResponseMeta {
  #[serde(default, skip_serializing_if = "Option::is_none")]
  pub status_code: Option<u16>,
  #[serde(default, skip_serializing_if = "Option::is_none")]
  pub retry_after: Option<String>,
  #[serde(default, skip_serializing_if = "Option::is_none")]
  pub retry_after_ms: Option<String>,
  #[serde(default, skip_serializing_if = "Option::is_none", with = "should_retry_text")]
  pub should_retry: Option<bool>,
}

impl ResponseMeta {
  /// Projects a response the way Blade's response observer does. Header names match
  /// case-insensitively; repeated headers are joined with `", "` (as `Headers.get` does); values are
  /// trimmed of HTTP whitespace; `x-should-retry` counts only when it is exactly `true` or `false`.
  pub fn from_headers<'h, I>(status_code: u16, headers: I) -> Self
  where
    I: IntoIterator<Item = (&'h str, &'h str)>,
  {
    let mut retry_after: Option<String> = None;
    let mut retry_after_ms: Option<String> = None;
    let mut should_retry: Option<String> = None;
    for (name, value) in headers {
      let slot = if name.eq_ignore_ascii_case("retry-after") {
        &mut retry_after
      } else if name.eq_ignore_ascii_case("retry-after-ms") {
        &mut retry_after_ms
      } else if name.eq_ignore_ascii_case("x-should-retry") {
        &mut should_retry
      } else {
        continue;
      };
      let value = value.trim_matches([' ', '\t', '\r', '\n']);
      match slot {
        Some(joined) => {
          joined.push_str(", ");
          joined.push_str(value);
        }
        None => *slot = Some(value.to_owned()),
      }
    }
    ResponseMeta {
      status_code: Some(status_code),
      retry_after,
      retry_after_ms,
      should_retry: match should_retry.as_deref() {
        Some("true") => Some(true),
        Some("false") => Some(false),
        _ => None,
      },
    }
  }
}

mod should_retry_text {
  use serde::{Deserialize, Deserializer, Serializer};

  pub fn serialize<S: Serializer>(value: &Option<bool>, serializer: S) -> Result<S::Ok, S::Error> {
    match value {
      Some(true) => serializer.serialize_str("true"),
      Some(false) => serializer.serialize_str("false"),
      None => serializer.serialize_none(),
    }
  }

  /// Anything but the two exact strings (or a JSON boolean) is treated as absent, as in Blade.
  pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<bool>, D::Error> {
    let raw = Option::<serde_json::Value>::deserialize(deserializer)?;
    Ok(match raw {
      Some(serde_json::Value::String(text)) if text == "true" => Some(true),
      Some(serde_json::Value::String(text)) if text == "false" => Some(false),
      Some(serde_json::Value::Bool(flag)) => Some(flag),
      _ => None,
    })
  }
}

/// Quota and billing failures: retrying cannot help.
pub const NON_RETRYABLE_LIMIT_MARKERS: [&str; 8] = [
  "gousagelimiterror",
  "freeusagelimiterror",
  "monthly usage limit reached",
  "available balance",
  "insufficient_quota",
  "out of budget",
  "quota exceeded",
  "billing",
];

/// Context-window overflow: the same request fails again anywhere.
pub const NON_RETRYABLE_CONTEXT_MARKERS: [&str; 6] = [
  "prompt_too_long",
  "prompt is too long",
  "maximum context length",
  "context length exceeded",
  "context_length_exceeded",
  "request too large",
];

/// Connection-level failures.
pub const TRANSPORT_MARKERS: [&str; 18] = [
  "econnreset",
  "econnrefused",
  "enotfound",
  "eai_again",
  "etimedout",
  "fetch failed",
  "network error",
  "connection error",
  "connection refused",
  "connection lost",
  "other side closed",
  "socket hang up",
  "socket connection was closed",
  "upstream connect",
  "reset before headers",
  "websocket closed",
  "websocket error",
  "http2 request did not get a response",
];

/// Truncated streams (our own error and the wire adapters' "ended without …" family).
pub const STREAM_CLOSED_MARKERS: [&str; 3] = [
  "stream closed before completion",
  "ended without",
  "stream ended before",
];

/// Transient wording in messages that carry no usable status.
pub const TRANSIENT_MESSAGE_MARKERS: [&str; 12] = [
  "timeout",
  "timed out",
  "temporarily unavailable",
  "upstream_error",
  "overloaded",
  "rate limit",
  "too many requests",
  "service unavailable",
  "server error",
  "internal error",
  "please retry",
  "try your request again",
];

/// True when the message names a context-window overflow (Blade's `isProviderContextLimitError`).
pub fn is_provider_context_limit_error(message: &str) -> bool {
  let message = message.to_lowercase();
  NON_RETRYABLE_CONTEXT_MARKERS
    .iter()
    .any(|marker| message.contains(marker))
}

/// Decides whether a failed attempt may be retried (or handed to a fallback model), and why.
/// First matching rule wins; see the table in spec §6.5.
pub fn classify_provider_retry(error: &ErrorInfo, response: Option<&ResponseMeta>) -> RetryClassification {
  let message = error.message.to_lowercase();
  let code = error.code.as_deref();
  let contains_any = |markers: &[&str]| markers.iter().any(|marker| message.contains(marker));

  if code == Some(STREAM_IDLE_TIMEOUT)
    || code == Some(PROVIDER_RECOVERY_BUDGET_EXCEEDED)
    || error.name.as_deref() == Some("AbortError")
    || message.contains("request aborted")
    || message == "aborted"
  {
    return RetryClassification::terminal();
  }
  if contains_any(&NON_RETRYABLE_LIMIT_MARKERS) || contains_any(&NON_RETRYABLE_CONTEXT_MARKERS) {
    return RetryClassification::terminal();
  }
  let should_retry = response.and_then(|meta| meta.should_retry);
  if should_retry == Some(false) {
    return RetryClassification {
      retryable: false,
      reason: None,
      status_code: response.and_then(|m| m.status_code),
    };
  }
  if code == Some(PROVIDER_REQUEST_DEADLINE_EXCEEDED) {
    return RetryClassification::retry(RetryReason::Timeout, None);
  }

  let status = response
    .and_then(|meta| meta.status_code)
    .or(error.status)
    .or_else(|| status_from_message(&message));
  if should_retry == Some(true) {
    let reason = match status {
      Some(429) => RetryReason::RateLimit,
      Some(408 | 409) => RetryReason::Timeout,
      _ => RetryReason::ServerError,
    };
    return RetryClassification::retry(reason, status);
  }
  match status {
    Some(429) => return RetryClassification::retry(RetryReason::RateLimit, status),
    Some(408 | 409) => return RetryClassification::retry(RetryReason::Timeout, status),
    Some(500..=599) => return RetryClassification::retry(RetryReason::ServerError, status),
    _ => {}
  }
  if code == Some(PROVIDER_STREAM_CLOSED) || contains_any(&STREAM_CLOSED_MARKERS) {
    return RetryClassification::retry(RetryReason::StreamClosed, status);
  }
  if contains_any(&TRANSPORT_MARKERS) {
    return RetryClassification::retry(RetryReason::Transport, status);
  }
  if contains_any(&TRANSIENT_MESSAGE_MARKERS) {
    let reason = if message.contains("rate") || message.contains("too many") {
      RetryReason::RateLimit
    } else if message.contains("timeout") || message.contains("timed out") {
      RetryReason::Timeout
    } else {
      RetryReason::ServerError
    };
    return RetryClassification::retry(reason, status);
  }
  RetryClassification {
    retryable: false,
    reason: None,
    status_code: status,
  }
}

/// A 3-digit status in an (already lower-cased) error message: leading (`503: …`, `error: 429 …`),
/// else the first `status NNN` / `status code NNN` / `http NNN` (separated by spaces or colons).
/// Digits must not be followed by a word character.
fn status_from_message(message: &str) -> Option<u16> {
  leading_status(message).or_else(|| labeled_status(message))
}

fn leading_status(message: &str) -> Option<u16> {
  if let Some(status) = three_digits_at(message, 0) {
    return Some(status);
  }
  let rest = message.strip_prefix("error:")?;
  let skipped = rest.len() - rest.trim_start_matches(is_js_whitespace).len();
  three_digits_at(message, "error:".len() + skipped)
}

fn labeled_status(message: &str) -> Option<u16> {
  let bytes = message.as_bytes();
  for (start, _) in message.char_indices() {
    // The label must begin at a word boundary; its first letter is a word character.
    if start > 0 && is_word_byte(bytes[start - 1]) {
      continue;
    }
    let tail = &message[start..];
    let mut label_ends = Vec::with_capacity(2);
    if let Some(after) = tail.strip_prefix("status") {
      // Longest alternative first, as the regex would try it.
      let spaced = after.trim_start_matches(is_js_whitespace);
      if spaced.len() < after.len() {
        if let Some(after_code) = spaced.strip_prefix("code") {
          label_ends.push(message.len() - after_code.len());
        }
      }
      label_ends.push(message.len() - after.len());
    } else if let Some(after) = tail.strip_prefix("http") {
      label_ends.push(message.len() - after.len());
    }
    for end in label_ends {
      let rest = &message[end..];
      let separators = rest.trim_start_matches(|c: char| c == ':' || is_js_whitespace(c));
      if separators.len() == rest.len() {
        continue;
      }
      if let Some(status) = three_digits_at(message, message.len() - separators.len()) {
        return Some(status);
      }
    }
  }
  None
}

/// Exactly three ASCII digits at `at`, not followed by a word character.
fn three_digits_at(text: &str, at: usize) -> Option<u16> {
  let bytes = text.as_bytes();
  let digits = bytes.get(at..at + 3)?;
  if !digits.iter().all(u8::is_ascii_digit) {
    return None;
  }
  if bytes.get(at + 3).is_some_and(|&b| is_word_byte(b)) {
    return None;
  }
  digits
    .iter()
    .try_fold(0u16, |acc, d| Some(acc * 10 + u16::from(d - b'0')))
}

/// `\w` of a non-unicode JS regex.
fn is_word_byte(b: u8) -> bool {
  b.is_ascii_alphanumeric() || b == b'_'
}

/// The server's requested wait in milliseconds, from `retry-after-ms` (a float), else `retry-after`
/// as seconds (a float), else `retry-after` as a date minus `now_ms`. Negative waits become 0.
/// Values that do not parse are ignored; `None` when there is no usable directive.
///
/// Numbers are read like JS `parseFloat` (leading number prefix, so `"2.5s"` is 2.5 and an ISO date
/// reads as its year); dates like V8's `Date.parse` legacy syntax, with zone-less dates taken as UTC.
pub fn provider_retry_after_ms(response: Option<&ResponseMeta>, now_ms: f64) -> Option<f64> {
  let response = response?;
  if let Some(value) = response.retry_after_ms.as_deref().and_then(js_parse_float) {
    if value.is_finite() {
      return Some(value.max(0.0));
    }
  }
  let retry_after = response.retry_after.as_deref()?;
  if let Some(seconds) = js_parse_float(retry_after) {
    if seconds.is_finite() {
      return Some((seconds * 1_000.0).max(0.0));
    }
  }
  js_date_parse(retry_after).map(|timestamp| (timestamp - now_ms).max(0.0))
}

/// Which ceilings a retry delay obeys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetryMode {
  /// Ordinary retries: waits up to 60 s, exponential curve capped at 8 s.
  Standard,
  /// Bounded foreground recovery (§6.9): waits and curve both capped at 60 s.
  BoundedForeground,
}

impl RetryMode {
  pub fn as_str(self) -> &'static str {
    match self {
      RetryMode::Standard => "standard",
      RetryMode::BoundedForeground => "bounded_foreground",
    }
  }

  pub fn max_delay_ms(self) -> u64 {
    match self {
      RetryMode::Standard => MAX_PROVIDER_RETRY_DELAY_MS,
      RetryMode::BoundedForeground => MAX_FOREGROUND_PROVIDER_RETRY_DELAY_MS,
    }
  }

  pub fn max_exponential_delay_ms(self) -> u64 {
    match self {
      RetryMode::Standard => MAX_EXPONENTIAL_RETRY_DELAY_MS,
      RetryMode::BoundedForeground => MAX_FOREGROUND_PROVIDER_RETRY_DELAY_MS,
    }
  }
}

/// Inputs of [`compute_provider_retry_delay`] besides the attempt and the response; mirrors Blade's
/// options object, with the clock and the random number made explicit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryDelayOptions {
  pub now_ms: f64,
  /// In `[0, 1]`; values outside are clamped, NaN counts as 0.
  pub random: f64,
  pub max_delay_ms: u64,
  pub max_exponential_delay_ms: u64,
}

impl RetryDelayOptions {
  pub fn new(mode: RetryMode, now_ms: f64, random: f64) -> Self {
    RetryDelayOptions {
      now_ms,
      random,
      max_delay_ms: mode.max_delay_ms(),
      max_exponential_delay_ms: mode.max_exponential_delay_ms(),
    }
  }
}

/// The wait before retry number `attempt` (1-based; 0 is treated as 1).
///
/// A server directive (see [`provider_retry_after_ms`]) wins: rounded up, capped at
/// `max_delay_ms`. Otherwise `min(500 · 2^(attempt−1), max_exponential_delay_ms)` scaled by
/// `0.75 + 0.25·random`, rounded half up, capped at `max_delay_ms`.
pub fn compute_provider_retry_delay(attempt: u32, response: Option<&ResponseMeta>, options: &RetryDelayOptions) -> u64 {
  let server_delay = provider_retry_after_ms(response, options.now_ms);
  backoff_delay_ms(
    attempt,
    server_delay,
    options.random,
    options.max_delay_ms,
    options.max_exponential_delay_ms,
  )
}

/// [`compute_provider_retry_delay`] for a server delay that was already extracted.
pub fn compute_retry_delay_for_mode(attempt: u32, server_delay_ms: Option<f64>, mode: RetryMode, random: f64) -> u64 {
  backoff_delay_ms(
    attempt,
    server_delay_ms,
    random,
    mode.max_delay_ms(),
    mode.max_exponential_delay_ms(),
  )
}

fn backoff_delay_ms(
  attempt: u32,
  server_delay_ms: Option<f64>,
  random: f64,
  max_delay_ms: u64,
  max_exponential_delay_ms: u64,
) -> u64 {
  let max_delay = max_delay_ms as f64;
  if let Some(server_delay) = server_delay_ms.filter(|delay| !delay.is_nan()) {
    return server_delay.max(0.0).ceil().min(max_delay) as u64;
  }
  let retry_index = attempt.saturating_sub(1);
  // 2^1023 is the largest finite power; beyond that JS yields Infinity and the cap applies anyway.
  let exponential = (BASE_PROVIDER_RETRY_DELAY_MS as f64 * 2f64.powi(retry_index.min(1_100) as i32))
    .min(max_exponential_delay_ms as f64);
  let random = if random.is_nan() { 0.0 } else { random.clamp(0.0, 1.0) };
  let jittered = exponential * (0.75 + random * 0.25);
  js_round(jittered).min(max_delay) as u64
}

/// `Math.round`: halves round towards +∞.
fn js_round(value: f64) -> f64 {
  let floor = value.floor();
  if value - floor >= 0.5 {
    floor + 1.0
  } else {
    floor
  }
}

/// JS `parseFloat`: skips leading ECMAScript whitespace and reads the longest decimal prefix
/// (`[+-]` then `Infinity`, or digits with an optional fraction and exponent). `None` is NaN.
pub fn js_parse_float(text: &str) -> Option<f64> {
  let text = text.trim_start_matches(is_js_whitespace);
  let bytes = text.as_bytes();
  let mut end = 0;
  if matches!(bytes.first(), Some(b'+' | b'-')) {
    end = 1;
  }
  if text[end..].starts_with("Infinity") {
    return Some(if bytes[0] == b'-' {
      f64::NEG_INFINITY
    } else {
      f64::INFINITY
    });
  }
  let digits_from = |from: usize| bytes[from..].iter().take_while(|b| b.is_ascii_digit()).count();
  let integer_digits = digits_from(end);
  end += integer_digits;
  let mut fraction_digits = 0;
  if bytes.get(end) == Some(&b'.') {
    fraction_digits = digits_from(end + 1);
    if integer_digits > 0 || fraction_digits > 0 {
      end += 1 + fraction_digits;
    }
  }
  if integer_digits == 0 && fraction_digits == 0 {
    return None;
  }
  if matches!(bytes.get(end), Some(b'e' | b'E')) {
    let mut exponent_end = end + 1;
    if matches!(bytes.get(exponent_end), Some(b'+' | b'-')) {
      exponent_end += 1;
    }
    let exponent_digits = digits_from(exponent_end);
    if exponent_digits > 0 {
      end = exponent_end + exponent_digits;
    }
  }
  text[..end].parse::<f64>().ok()
}

/// V8's `Date.parse` for the legacy (non-ISO) syntax, which is what an HTTP `Retry-After` date
/// reaches (anything starting with a number is consumed by `parseFloat` first). Accepts the three
/// HTTP-date forms (`Sun, 06 Nov 1994 08:49:37 GMT`, `Sunday, 06-Nov-94 08:49:37 GMT`,
/// `Sun Nov  6 08:49:37 1994`) and V8's other leniencies: words before the first number are ignored,
/// month names by their first three letters, `am`/`pm`, zone names (`GMT`, `UTC`, `UT`, `Z`, US
/// zones) and `+hhmm` / `+hh:mm` / `GMT-8` offsets, parenthesised comments. A date without a zone
/// is read as UTC (V8 would use the process's local zone). Returns epoch milliseconds.
pub fn js_date_parse(text: &str) -> Option<f64> {
  let fields = legacy_date::parse(text)?;
  let day = days_from_civil(fields.year, fields.month, 1) + fields.day - 1;
  let time = ((fields.hour * 60 + fields.minute) * 60 + fields.second) * 1_000 + fields.millisecond;
  let local = day as f64 * 86_400_000.0 + time as f64;
  let utc = local - fields.offset_seconds.unwrap_or(0) as f64 * 1_000.0;
  // TimeClip: the representable range of a JS Date.
  (utc.abs() <= 8.64e15).then_some(utc)
}

/// Days from 1970-01-01 to the first `day` of `month` (1-based) in proleptic Gregorian `year`.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
  let year = if month <= 2 { year - 1 } else { year };
  let era = year.div_euclid(400);
  let year_of_era = year - era * 400;
  let shifted_month = (month + 9) % 12;
  let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
  let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  era * 146_097 + day_of_era - 719_468
}

mod legacy_date {
  //! Tokeniser and composers modelled on V8's legacy date grammar.

  use super::is_js_whitespace;

  /// Numbers keep at most this many leading digits (V8 drops the rest).
  const MAX_SIGNIFICANT_DIGITS: usize = 9;

  pub(super) struct Fields {
    pub year: i64,
    pub month: i64,
    pub day: i64,
    pub hour: i64,
    pub minute: i64,
    pub second: i64,
    pub millisecond: i64,
    pub offset_seconds: Option<i64>,
  }

  #[derive(Clone, Copy, PartialEq, Eq)]
  enum Keyword {
    Month(i64),
    AmPm(i64),
    /// Zone offset in whole hours.
    Zone(i64),
    TimeSeparator,
    Unknown,
  }

  #[derive(Clone, Copy, PartialEq, Eq)]
  enum Token {
    Number { value: i64, length: usize },
    Word { keyword: Keyword, length: usize },
    Symbol(char),
    Space,
    Other,
    End,
  }

  impl Token {
    fn is_number(self) -> bool {
      matches!(self, Token::Number { .. })
    }

    fn is_sign(self) -> bool {
      matches!(self, Token::Symbol('+' | '-'))
    }

    fn is_z(self) -> bool {
      matches!(
        self,
        Token::Word {
          keyword: Keyword::Zone(0),
          length: 1
        }
      )
    }
  }

  fn keyword(prefix: &[char], length: usize) -> Keyword {
    const MONTHS: [&str; 12] = [
      "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let key: String = prefix.iter().collect();
    if let Some(index) = MONTHS.iter().position(|month| *month == key) {
      // Month names may be longer than their prefix ("September").
      return Keyword::Month(index as i64 + 1);
    }
    if length > 3 {
      return Keyword::Unknown;
    }
    match key.as_str() {
      "am" => Keyword::AmPm(0),
      "pm" => Keyword::AmPm(12),
      "ut" | "utc" | "z" | "gmt" => Keyword::Zone(0),
      "cdt" => Keyword::Zone(-5),
      "cst" => Keyword::Zone(-6),
      "edt" => Keyword::Zone(-4),
      "est" => Keyword::Zone(-5),
      "mdt" => Keyword::Zone(-6),
      "mst" => Keyword::Zone(-7),
      "pdt" => Keyword::Zone(-7),
      "pst" => Keyword::Zone(-8),
      "t" => Keyword::TimeSeparator,
      _ => Keyword::Unknown,
    }
  }

  struct Scanner {
    chars: Vec<char>,
    position: usize,
    peeked: Option<Token>,
  }

  impl Scanner {
    fn next(&mut self) -> Token {
      match self.peeked.take() {
        Some(token) => token,
        None => self.scan(),
      }
    }

    fn peek(&mut self) -> Token {
      if self.peeked.is_none() {
        self.peeked = Some(self.scan());
      }
      self.peeked.unwrap_or(Token::End)
    }

    fn skip_symbol(&mut self, symbol: char) -> bool {
      if self.peek() == Token::Symbol(symbol) {
        self.next();
        true
      } else {
        false
      }
    }

    fn scan(&mut self) -> Token {
      let Some(&c) = self.chars.get(self.position) else {
        return Token::End;
      };
      if c.is_ascii_digit() {
        let start = self.position;
        while self.chars.get(self.position) == Some(&'0') {
          self.position += 1;
        }
        // Significant digits start after the leading zeros; the length still counts them.
        let mut value = 0i64;
        let mut significant = 0;
        while let Some(d) = self.chars.get(self.position).and_then(|c| c.to_digit(10)) {
          if significant < MAX_SIGNIFICANT_DIGITS {
            value = value * 10 + i64::from(d);
          }
          significant += 1;
          self.position += 1;
        }
        return Token::Number {
          value,
          length: self.position - start,
        };
      }
      if matches!(c, ':' | '-' | '+' | '.' | ')') {
        self.position += 1;
        return Token::Symbol(c);
      }
      if is_word_char(c) {
        let mut prefix = Vec::with_capacity(3);
        let mut length = 0;
        while let Some(&w) = self.chars.get(self.position) {
          if !is_word_char(w) {
            break;
          }
          if prefix.len() < 3 {
            // V8 lower-cases by setting the 0x20 bit, letters or not.
            prefix.push(char::from_u32(u32::from(w) | 0x20).unwrap_or(w));
          }
          length += 1;
          self.position += 1;
        }
        return Token::Word {
          keyword: keyword(&prefix, length),
          length,
        };
      }
      if is_js_whitespace(c) {
        self.position += 1;
        return Token::Space;
      }
      if c == '(' {
        let mut depth = 0;
        loop {
          match self.chars.get(self.position) {
            Some('(') => depth += 1,
            Some(')') => depth -= 1,
            Some(_) => {}
            None => break,
          }
          self.position += 1;
          if depth <= 0 {
            break;
          }
        }
        return Token::Other;
      }
      self.position += 1;
      Token::Other
    }
  }

  /// Word characters are everything from `A` up except WhiteSpace; the line terminators U+2028 and
  /// U+2029 therefore belong to words.
  fn is_word_char(c: char) -> bool {
    c >= 'A' && (matches!(c, '\u{2028}' | '\u{2029}') || !is_js_whitespace(c))
  }

  const NONE: i64 = i64::MIN;

  fn between(x: i64, low: i64, high: i64) -> bool {
    (low..=high).contains(&x)
  }

  #[derive(Default)]
  struct Day {
    components: Vec<i64>,
    named_month: Option<i64>,
  }

  impl Day {
    fn add(&mut self, n: i64) -> bool {
      if self.components.len() < 3 {
        self.components.push(n);
        true
      } else {
        false
      }
    }

    fn write(mut self) -> Option<(i64, i64, i64)> {
      if self.components.is_empty() {
        return None;
      }
      self.components.resize(3, 1);
      let c = &self.components;
      let (mut year, month, day) = match self.named_month {
        None if !between(c[0], 1, 31) => (c[0], c[1], c[2]),
        None => (c[2], c[0], c[1]),
        Some(month) if !between(c[0], 1, 31) => (c[0], month, c[1]),
        Some(month) => (c[1], month, c[0]),
      };
      if between(year, 0, 49) {
        year += 2000;
      } else if between(year, 50, 99) {
        year += 1900;
      }
      (between(month, 1, 12) && between(day, 1, 31)).then_some((year, month, day))
    }
  }

  #[derive(Default)]
  struct Time {
    components: Vec<i64>,
    hour_offset: Option<i64>,
  }

  impl Time {
    fn is_empty(&self) -> bool {
      self.components.is_empty()
    }

    fn is_expecting(&self, n: i64) -> bool {
      match self.components.len() {
        1 | 2 => between(n, 0, 59),
        3 => between(n, 0, 999),
        _ => false,
      }
    }

    fn add(&mut self, n: i64) -> bool {
      if self.components.len() < 4 {
        self.components.push(n);
        true
      } else {
        false
      }
    }

    fn add_final(&mut self, n: i64) -> bool {
      if !self.add(n) {
        return false;
      }
      self.components.resize(4, 0);
      true
    }

    fn write(mut self) -> Option<(i64, i64, i64, i64)> {
      self.components.resize(4, 0);
      let (mut hour, minute, second, millisecond) = (
        self.components[0],
        self.components[1],
        self.components[2],
        self.components[3],
      );
      if let Some(offset) = self.hour_offset {
        if !between(hour, 0, 12) {
          return None;
        }
        hour = hour % 12 + offset;
      }
      let valid =
        between(hour, 0, 23) && between(minute, 0, 59) && between(second, 0, 59) && between(millisecond, 0, 999);
      if !valid && (hour != 24 || minute != 0 || second != 0 || millisecond != 0) {
        return None;
      }
      Some((hour, minute, second, millisecond))
    }
  }

  struct Zone {
    sign: i64,
    hour: i64,
    minute: i64,
  }

  impl Zone {
    fn set(&mut self, offset_hours: i64) {
      self.sign = if offset_hours < 0 { -1 } else { 1 };
      self.hour = offset_hours.abs();
      self.minute = 0;
    }

    fn is_expecting(&self, n: i64) -> bool {
      self.hour != NONE && self.minute == NONE && between(n, 0, 59)
    }

    fn is_utc(&self) -> bool {
      self.hour == 0 && self.minute == 0
    }

    fn write(self) -> Option<Option<i64>> {
      if self.sign == NONE {
        return Some(None);
      }
      let hour = if self.hour == NONE { 0 } else { self.hour };
      let minute = if self.minute == NONE { 0 } else { self.minute };
      let total = hour * 3_600 + minute * 60;
      if total > i64::from(i32::MAX) {
        return None;
      }
      Some(Some(total * self.sign))
    }
  }

  /// Milliseconds from a digit run: its first three significant digits, scaled by its length.
  fn milliseconds(value: i64, length: usize) -> i64 {
    match length {
      1 => value * 100,
      2 => value * 10,
      3 => value,
      _ => value / 10i64.pow((length.min(MAX_SIGNIFICANT_DIGITS) - 3) as u32),
    }
  }

  pub(super) fn parse(text: &str) -> Option<Fields> {
    let mut scanner = Scanner {
      chars: text.chars().collect(),
      position: 0,
      peeked: None,
    };
    let mut day = Day::default();
    let mut time = Time::default();
    let mut zone = Zone {
      sign: NONE,
      hour: NONE,
      minute: NONE,
    };
    let mut has_read_number = false;

    loop {
      let token = scanner.next();
      match token {
        Token::End => break,
        Token::Number { value: n, .. } => {
          has_read_number = true;
          if scanner.skip_symbol(':') {
            if scanner.skip_symbol(':') {
              if !time.is_empty() {
                return None;
              }
              time.add(n);
              time.add(0);
            } else {
              if !time.add(n) {
                return None;
              }
              if scanner.peek() == Token::Symbol('.') {
                scanner.next();
              }
            }
          } else if scanner.skip_symbol('.') && time.is_expecting(n) {
            // The dot is consumed even when the number turns out not to be a time part (as in V8).
            time.add(n);
            let Token::Number { value, length } = scanner.peek() else {
              return None;
            };
            scanner.next();
            time.add_final(milliseconds(value, length));
          } else if zone.is_expecting(n) {
            zone.minute = n;
          } else if time.is_expecting(n) {
            time.add_final(n);
            let next = scanner.peek();
            if !matches!(next, Token::End | Token::Space) && !next.is_z() && !next.is_sign() {
              return None;
            }
          } else {
            if !day.add(n) {
              return None;
            }
            scanner.skip_symbol('-');
          }
        }
        Token::Word { keyword, .. } => match keyword {
          Keyword::AmPm(offset) if !time.is_empty() => time.hour_offset = Some(offset),
          Keyword::Month(month) => {
            day.named_month = Some(month);
            scanner.skip_symbol('-');
          }
          Keyword::Zone(hours) if has_read_number => zone.set(hours),
          _ => {
            // Words are noise before the first number, fatal after it; and the first number must
            // be separated from such a word.
            if has_read_number || scanner.peek().is_number() {
              return None;
            }
          }
        },
        Token::Symbol(sign @ ('+' | '-')) if zone.is_utc() || !time.is_empty() => {
          zone.sign = if sign == '-' { -1 } else { 1 };
          let (mut n, mut length) = (0, 0);
          if let Token::Number { value, length: digits } = scanner.peek() {
            scanner.next();
            n = value;
            length = digits;
          }
          has_read_number = true;
          if scanner.peek() == Token::Symbol(':') {
            zone.hour = n;
            zone.minute = NONE;
          } else if length == 1 || length == 2 {
            zone.hour = n;
            zone.minute = 0;
          } else if length == 3 || length == 4 {
            zone.hour = n / 100;
            zone.minute = n % 100;
          } else {
            return None;
          }
        }
        Token::Symbol('+' | '-' | ')') if has_read_number => return None,
        Token::Symbol(_) | Token::Space | Token::Other => {}
      }
    }

    let (year, month, day_of_month) = day.write()?;
    let (hour, minute, second, millisecond) = time.write()?;
    let offset_seconds = zone.write()?;
    Some(Fields {
      year,
      month,
      day: day_of_month,
      hour,
      minute,
      second,
      millisecond,
      offset_seconds,
    })
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  fn classify(message: &str) -> RetryClassification {
    classify_provider_retry(&ErrorInfo::new(message), None)
  }

  fn retryable(reason: RetryReason, status: Option<u16>) -> RetryClassification {
    RetryClassification {
      retryable: true,
      reason: Some(reason),
      status_code: status,
    }
  }

  fn terminal(status: Option<u16>) -> RetryClassification {
    RetryClassification {
      retryable: false,
      reason: None,
      status_code: status,
    }
  }

  fn meta(status: u16) -> ResponseMeta {
    ResponseMeta {
      status_code: Some(status),
      ..ResponseMeta::default()
    }
  }

  // ---- Blade's provider-retry suite, case for case ----

  #[test]
  fn blade_retryable_messages() {
    assert_eq!(
      classify("429 rate limited"),
      retryable(RetryReason::RateLimit, Some(429))
    );
    assert_eq!(
      classify("status 503 upstream unavailable"),
      retryable(RetryReason::ServerError, Some(503))
    );
    assert_eq!(
      classify("ECONNRESET while reading response"),
      retryable(RetryReason::Transport, None)
    );
    assert_eq!(
      classify("Provider stream closed before completion"),
      retryable(RetryReason::StreamClosed, None)
    );
    assert_eq!(classify("Request timed out"), retryable(RetryReason::Timeout, None));
  }

  #[test]
  fn blade_retry_headers_quota_and_abort() {
    let deadline = ErrorInfo::new("Provider request deadline exceeded after 500ms")
      .with_name("ProviderRequestDeadlineExceededError")
      .with_code(PROVIDER_REQUEST_DEADLINE_EXCEEDED);
    assert_eq!(
      classify_provider_retry(&deadline, None),
      retryable(RetryReason::Timeout, None)
    );
    let no_retry_408 = ResponseMeta {
      should_retry: Some(false),
      ..meta(408)
    };
    assert_eq!(
      classify_provider_retry(&deadline, Some(&no_retry_408)),
      terminal(Some(408))
    );

    let no_retry_503 = ResponseMeta {
      should_retry: Some(false),
      ..meta(503)
    };
    assert_eq!(
      classify_provider_retry(&ErrorInfo::new("status 503"), Some(&no_retry_503)),
      terminal(Some(503))
    );
    let retry_400 = ResponseMeta {
      should_retry: Some(true),
      ..meta(400)
    };
    assert_eq!(
      classify_provider_retry(&ErrorInfo::new("status 400"), Some(&retry_400)),
      retryable(RetryReason::ServerError, Some(400))
    );

    assert_eq!(classify("429 insufficient_quota billing exhausted"), terminal(None));
    assert_eq!(classify("status 503 maximum context length exceeded"), terminal(None));
    assert_eq!(
      classify_provider_retry(&ErrorInfo::new("Stopped").with_name("AbortError"), None),
      terminal(None)
    );
    let idle = ErrorInfo::new("Provider stream idle timeout").with_code(STREAM_IDLE_TIMEOUT);
    assert_eq!(classify_provider_retry(&idle, None), terminal(None));
  }

  #[test]
  fn blade_context_limit_spellings() {
    assert!(is_provider_context_limit_error("context_length_exceeded"));
    assert!(is_provider_context_limit_error("prompt_too_long"));
    assert!(is_provider_context_limit_error("Prompt Is Too Long: 210000 tokens"));
    assert!(!is_provider_context_limit_error("status 503"));
  }

  // Blade's isFallbackablePiError cases (request-options and stream-adapter suites).
  #[test]
  fn blade_fallbackable_messages() {
    for message in [
      "Upstream service temporarily unavailable",
      r#"{"type":"upstream_error","message":"Upstream request failed"}"#,
      r#"503: {"message":"Injected transient failure","type":"server_error"}"#,
      "Error: 429 rate limited",
    ] {
      assert!(classify(message).retryable, "{message}");
    }
    assert!(!classify("status 400 invalid request").retryable);
    let idle = ErrorInfo::new("Provider stream idle timeout after 20ms without an event")
      .with_name("StreamIdleTimeoutError")
      .with_code(STREAM_IDLE_TIMEOUT);
    assert!(!classify_provider_retry(&idle, None).retryable);
    let closed = ErrorInfo::new("Provider stream closed before completion")
      .with_name("ProviderStreamClosedError")
      .with_code(PROVIDER_STREAM_CLOSED);
    assert_eq!(
      classify_provider_retry(&closed, None),
      retryable(RetryReason::StreamClosed, None)
    );
  }

  // ---- §6.5 rule by rule ----

  #[test]
  fn rule1_abort_and_watchdog_errors_are_terminal() {
    let budget =
      ErrorInfo::new("Provider recovery budget exhausted after 30000ms").with_code(PROVIDER_RECOVERY_BUDGET_EXCEEDED);
    assert_eq!(
      classify_provider_retry(
        &budget,
        Some(&ResponseMeta {
          should_retry: Some(true),
          ..meta(503)
        })
      ),
      terminal(None)
    );
    // Abort wins over any status.
    assert_eq!(
      classify_provider_retry(&ErrorInfo::new("503").with_name("AbortError"), Some(&meta(503))),
      terminal(None)
    );
    assert_eq!(classify("Request aborted by user, 503"), terminal(None));
    assert_eq!(classify("Aborted"), terminal(None));
    assert_eq!(classify("ABORTED"), terminal(None));
    // Only the exact word; a longer message goes on to later rules.
    assert_eq!(
      classify("aborted: socket hang up"),
      retryable(RetryReason::Transport, None)
    );
    // A name other than AbortError does not count, nor a code of a different error.
    assert_eq!(
      classify_provider_retry(&ErrorInfo::new("x").with_name("TimeoutError"), None),
      terminal(None)
    );
  }

  #[test]
  fn rule2_every_limit_marker_is_terminal() {
    for marker in NON_RETRYABLE_LIMIT_MARKERS {
      let message = format!("429 Too Many Requests: {}", marker.to_uppercase());
      assert_eq!(classify(&message), terminal(None), "{marker}");
      let with_meta = classify_provider_retry(
        &ErrorInfo::new(marker),
        Some(&ResponseMeta {
          should_retry: Some(true),
          ..meta(429)
        }),
      );
      assert_eq!(with_meta, terminal(None), "{marker}");
    }
    assert_eq!(classify("GoUsageLimitError: limit"), terminal(None));
  }

  #[test]
  fn rule3_every_context_marker_is_terminal_even_for_5xx() {
    for marker in NON_RETRYABLE_CONTEXT_MARKERS {
      let message = format!("500 Internal Server Error: {marker}");
      assert_eq!(classify(&message), terminal(None), "{marker}");
      assert_eq!(
        classify_provider_retry(&ErrorInfo::new(marker), Some(&meta(503))),
        terminal(None),
        "{marker}"
      );
    }
  }

  #[test]
  fn rule4_should_retry_false_reports_response_status_only() {
    let refuse = ResponseMeta {
      should_retry: Some(false),
      ..meta(429)
    };
    assert_eq!(
      classify_provider_retry(&ErrorInfo::new("rate limit"), Some(&refuse)),
      terminal(Some(429))
    );
    // The error's own status is not reported on this path.
    let refuse_without_status = ResponseMeta {
      should_retry: Some(false),
      ..ResponseMeta::default()
    };
    let error = ErrorInfo::new("503 busy").with_status(503);
    assert_eq!(
      classify_provider_retry(&error, Some(&refuse_without_status)),
      terminal(None)
    );
  }

  #[test]
  fn rule5_deadline_is_timeout_without_status() {
    let deadline = ErrorInfo::new("anything").with_code(PROVIDER_REQUEST_DEADLINE_EXCEEDED);
    assert_eq!(
      classify_provider_retry(&deadline, Some(&meta(200))),
      retryable(RetryReason::Timeout, None)
    );
    let retry_429 = ResponseMeta {
      should_retry: Some(true),
      ..meta(429)
    };
    assert_eq!(
      classify_provider_retry(&deadline, Some(&retry_429)),
      retryable(RetryReason::Timeout, None)
    );
  }

  #[test]
  fn status_source_priority() {
    // Response status beats the error's status and the message.
    let error = ErrorInfo::new("500 boom").with_status(429);
    assert_eq!(
      classify_provider_retry(&error, Some(&meta(408))),
      retryable(RetryReason::Timeout, Some(408))
    );
    // Error status beats the message.
    assert_eq!(
      classify_provider_retry(&error, None),
      retryable(RetryReason::RateLimit, Some(429))
    );
    // A status of 0 is a status: the message is not consulted.
    let zero = ErrorInfo::new("503 service unavailable").with_status(0);
    assert_eq!(
      classify_provider_retry(&zero, None),
      retryable(RetryReason::ServerError, Some(0))
    );
    let zero_plain = ErrorInfo::new("503 bad").with_status(0);
    assert_eq!(classify_provider_retry(&zero_plain, None), terminal(Some(0)));
  }

  #[test]
  fn rule6_should_retry_true() {
    let force = |status: Option<u16>| ResponseMeta {
      status_code: status,
      should_retry: Some(true),
      ..ResponseMeta::default()
    };
    let plain = ErrorInfo::new("bad request");
    assert_eq!(
      classify_provider_retry(&plain, Some(&force(Some(429)))),
      retryable(RetryReason::RateLimit, Some(429))
    );
    assert_eq!(
      classify_provider_retry(&plain, Some(&force(Some(408)))),
      retryable(RetryReason::Timeout, Some(408))
    );
    assert_eq!(
      classify_provider_retry(&plain, Some(&force(Some(409)))),
      retryable(RetryReason::Timeout, Some(409))
    );
    assert_eq!(
      classify_provider_retry(&plain, Some(&force(Some(200)))),
      retryable(RetryReason::ServerError, Some(200))
    );
    assert_eq!(
      classify_provider_retry(&plain, Some(&force(None))),
      retryable(RetryReason::ServerError, None)
    );
    // Without a response status the message status is used.
    let message_429 = ErrorInfo::new("429: slow down");
    assert_eq!(
      classify_provider_retry(&message_429, Some(&force(None))),
      retryable(RetryReason::RateLimit, Some(429))
    );
  }

  #[test]
  fn rules7_to_9_statuses() {
    assert_eq!(
      classify_provider_retry(&ErrorInfo::new("x"), Some(&meta(429))),
      retryable(RetryReason::RateLimit, Some(429))
    );
    assert_eq!(
      classify_provider_retry(&ErrorInfo::new("x"), Some(&meta(408))),
      retryable(RetryReason::Timeout, Some(408))
    );
    assert_eq!(
      classify_provider_retry(&ErrorInfo::new("x"), Some(&meta(409))),
      retryable(RetryReason::Timeout, Some(409))
    );
    for status in [500, 501, 502, 503, 504, 529, 599] {
      assert_eq!(
        classify_provider_retry(&ErrorInfo::new("x"), Some(&meta(status))),
        retryable(RetryReason::ServerError, Some(status))
      );
    }
    for status in [400, 401, 403, 404, 422, 499, 600] {
      assert_eq!(
        classify_provider_retry(&ErrorInfo::new("x"), Some(&meta(status))),
        terminal(Some(status))
      );
    }
  }

  #[test]
  fn rule10_stream_closed() {
    let coded = ErrorInfo::new("whatever").with_code(PROVIDER_STREAM_CLOSED);
    assert_eq!(
      classify_provider_retry(&coded, None),
      retryable(RetryReason::StreamClosed, None)
    );
    for message in [
      "Provider stream closed before completion",
      "Stream ended without finish_reason",
      "Google stream ended without a finish reason",
      "Anthropic stream ended before message_stop",
      "OpenAI Responses stream ended before a terminal response event",
    ] {
      assert_eq!(
        classify(message),
        retryable(RetryReason::StreamClosed, None),
        "{message}"
      );
    }
    // The status of the successful response that later broke is reported (§6.5 note).
    assert_eq!(
      classify_provider_retry(&ErrorInfo::new("Stream ended without finish_reason"), Some(&meta(200))),
      retryable(RetryReason::StreamClosed, Some(200))
    );
    // A 4xx status does not stop the later rules.
    assert_eq!(
      classify_provider_retry(&ErrorInfo::new("stream ended before done"), Some(&meta(404))),
      retryable(RetryReason::StreamClosed, Some(404))
    );
  }

  #[test]
  fn rule11_every_transport_marker() {
    for marker in TRANSPORT_MARKERS {
      let message = format!("request failed: {}", marker.to_uppercase());
      assert_eq!(classify(&message), retryable(RetryReason::Transport, None), "{marker}");
    }
    assert_eq!(
      classify_provider_retry(&ErrorInfo::new("fetch failed"), Some(&meta(200))),
      retryable(RetryReason::Transport, Some(200))
    );
  }

  #[test]
  fn rule12_every_transient_marker_and_its_reason() {
    let expected = [
      ("timeout", RetryReason::Timeout),
      ("timed out", RetryReason::Timeout),
      ("temporarily unavailable", RetryReason::ServerError),
      ("upstream_error", RetryReason::ServerError),
      ("overloaded", RetryReason::ServerError),
      ("rate limit", RetryReason::RateLimit),
      ("too many requests", RetryReason::RateLimit),
      ("service unavailable", RetryReason::ServerError),
      ("server error", RetryReason::ServerError),
      ("internal error", RetryReason::ServerError),
      ("please retry", RetryReason::ServerError),
      ("try your request again", RetryReason::ServerError),
    ];
    assert_eq!(expected.len(), TRANSIENT_MESSAGE_MARKERS.len());
    for (marker, reason) in expected {
      assert!(TRANSIENT_MESSAGE_MARKERS.contains(&marker));
      assert_eq!(
        classify(&format!("Oops: {marker}")),
        retryable(reason, None),
        "{marker}"
      );
    }
    // "rate" anywhere wins over "timeout" ("generate" contains "rate").
    assert_eq!(classify("generate timeout"), retryable(RetryReason::RateLimit, None));
    assert_eq!(
      classify("Overloaded: too many callers"),
      retryable(RetryReason::RateLimit, None)
    );
    assert_eq!(
      classify("server error after timeout"),
      retryable(RetryReason::Timeout, None)
    );
    // The status is carried along even when it decided nothing.
    assert_eq!(
      classify_provider_retry(&ErrorInfo::new("overloaded"), Some(&meta(400))),
      retryable(RetryReason::ServerError, Some(400))
    );
  }

  #[test]
  fn rule13_everything_else_is_terminal() {
    assert_eq!(classify("invalid api key"), terminal(None));
    assert_eq!(classify("status 400 invalid request"), terminal(Some(400)));
    assert_eq!(classify(""), terminal(None));
    assert_eq!(
      classify_provider_retry(&ErrorInfo::new("denied").with_status(401), None),
      terminal(Some(401))
    );
  }

  #[test]
  fn message_status_forms() {
    let status = |message: &str| status_from_message(&message.to_lowercase());
    assert_eq!(status("503: {\"error\":1}"), Some(503));
    assert_eq!(status("Error: 429 rate limited"), Some(429));
    assert_eq!(status("error:429"), Some(429));
    assert_eq!(status("error:\u{00A0} 502 bad gateway"), Some(502));
    assert_eq!(status("OpenAI API error (503): busy"), None);
    assert_eq!(status("status 503 upstream"), Some(503));
    assert_eq!(status("Status: 502"), Some(502));
    assert_eq!(status("status code 504"), Some(504));
    assert_eq!(status("status  code:  504"), Some(504));
    assert_eq!(status("failed with HTTP 500"), Some(500));
    assert_eq!(status("http:404 page"), Some(404));
    assert_eq!(status("got http/1.1 500"), None);
    // Not a 3-digit token.
    assert_eq!(status("5030 things"), None);
    assert_eq!(status("503x"), None);
    assert_eq!(status("503_x"), None);
    assert_eq!(status("status 5030"), None);
    assert_eq!(status("status 50"), None);
    assert_eq!(status("status503"), None);
    // The label must start at a word boundary.
    assert_eq!(status("xstatus 503"), None);
    assert_eq!(status("_http 503"), None);
    assert_eq!(status("-http 503"), Some(503));
    // A later label can still match.
    assert_eq!(status("status code abc, http 502"), Some(502));
    assert_eq!(status("statuses: 500"), None);
    // The leading form wins over a label.
    assert_eq!(status("404 then status 500"), Some(404));
    // Digits other than ASCII are not \d.
    assert_eq!(status("٥٠٣ error"), None);
    // Multi-byte text before the label is fine.
    assert_eq!(status("ошибка status 429"), Some(429));
  }

  #[test]
  fn lowercasing_is_unicode_aware() {
    assert_eq!(classify("QUOTA EXCEEDED"), terminal(None));
    assert_eq!(classify("RATE LIMIT reached"), retryable(RetryReason::RateLimit, None));
  }

  #[test]
  fn classification_serialises_like_blade() {
    let json = |c: RetryClassification| serde_json::to_string(&c).unwrap();
    assert_eq!(
      json(retryable(RetryReason::RateLimit, Some(429))),
      r#"{"retryable":true,"reason":"rate_limit","statusCode":429}"#
    );
    assert_eq!(
      json(retryable(RetryReason::StreamClosed, None)),
      r#"{"retryable":true,"reason":"stream_closed"}"#
    );
    assert_eq!(json(terminal(None)), r#"{"retryable":false}"#);
    assert_eq!(json(terminal(Some(400))), r#"{"retryable":false,"statusCode":400}"#);
  }

  #[test]
  fn response_meta_json_and_headers() {
    let parsed: ResponseMeta =
      serde_json::from_str(r#"{"statusCode":503,"retryAfter":"4","retryAfterMs":"3500","shouldRetry":"true"}"#)
        .unwrap();
    assert_eq!(
      parsed,
      ResponseMeta {
        status_code: Some(503),
        retry_after: Some("4".into()),
        retry_after_ms: Some("3500".into()),
        should_retry: Some(true),
      }
    );
    assert_eq!(
      serde_json::to_string(&parsed).unwrap(),
      r#"{"statusCode":503,"retryAfter":"4","retryAfterMs":"3500","shouldRetry":"true"}"#
    );
    let odd: ResponseMeta = serde_json::from_str(r#"{"statusCode":200,"shouldRetry":"TRUE"}"#).unwrap();
    assert_eq!(odd.should_retry, None);
    assert_eq!(serde_json::to_string(&meta(200)).unwrap(), r#"{"statusCode":200}"#);

    // Blade's observer test: a failed 503 with all three directives.
    let observed = ResponseMeta::from_headers(
      503,
      [
        ("Retry-After", "4"),
        ("retry-after-ms", "3500"),
        ("X-Should-Retry", "true"),
        ("content-type", "text/plain"),
      ],
    );
    assert_eq!(observed, parsed);
    let refused = ResponseMeta::from_headers(500, [("x-should-retry", " false ")]);
    assert_eq!(refused.should_retry, Some(false));
    let junk = ResponseMeta::from_headers(
      500,
      [("x-should-retry", "True"), ("retry-after", "1"), ("retry-after", "2")],
    );
    assert_eq!(junk.should_retry, None);
    assert_eq!(junk.retry_after.as_deref(), Some("1, 2"));
    assert_eq!(ResponseMeta::from_headers(200, []), meta(200));
  }

  // ---- Retry-After parsing ----

  fn after(retry_after: Option<&str>, retry_after_ms: Option<&str>) -> ResponseMeta {
    ResponseMeta {
      status_code: Some(429),
      retry_after: retry_after.map(str::to_owned),
      retry_after_ms: retry_after_ms.map(str::to_owned),
      should_retry: None,
    }
  }

  #[test]
  fn retry_after_ms_float_wins() {
    assert_eq!(
      provider_retry_after_ms(Some(&after(Some("9"), Some("1250"))), 0.0),
      Some(1250.0)
    );
    assert_eq!(provider_retry_after_ms(Some(&after(None, Some("1.5"))), 0.0), Some(1.5));
    assert_eq!(
      provider_retry_after_ms(Some(&after(None, Some("  250ms"))), 0.0),
      Some(250.0)
    );
    assert_eq!(provider_retry_after_ms(Some(&after(None, Some("-20"))), 0.0), Some(0.0));
    assert_eq!(provider_retry_after_ms(Some(&after(None, Some("-0"))), 0.0), Some(0.0));
    assert_eq!(
      provider_retry_after_ms(Some(&after(None, Some("1e3"))), 0.0),
      Some(1000.0)
    );
    // Garbage and non-finite values fall through to retry-after.
    assert_eq!(
      provider_retry_after_ms(Some(&after(Some("2"), Some("soon"))), 0.0),
      Some(2000.0)
    );
    assert_eq!(
      provider_retry_after_ms(Some(&after(Some("2"), Some("Infinity"))), 0.0),
      Some(2000.0)
    );
    assert_eq!(
      provider_retry_after_ms(Some(&after(Some("2"), Some("1e400"))), 0.0),
      Some(2000.0)
    );
    assert_eq!(provider_retry_after_ms(Some(&after(None, Some("soon"))), 0.0), None);
  }

  #[test]
  fn retry_after_seconds_float() {
    assert_eq!(
      provider_retry_after_ms(Some(&after(Some("3"), None)), 1_000.0),
      Some(3000.0)
    );
    assert_eq!(
      provider_retry_after_ms(Some(&after(Some("0.25"), None)), 0.0),
      Some(250.0)
    );
    assert_eq!(provider_retry_after_ms(Some(&after(Some("-5"), None)), 0.0), Some(0.0));
    assert_eq!(
      provider_retry_after_ms(Some(&after(Some(" 7 seconds"), None)), 0.0),
      Some(7000.0)
    );
    // parseFloat reads an ISO date's year: 2025 seconds.
    assert_eq!(
      provider_retry_after_ms(Some(&after(Some("2025-01-01T00:00:00Z"), None)), 0.0),
      Some(2_025_000.0)
    );
  }

  #[test]
  fn retry_after_http_date() {
    // new Date(5_000).toUTCString()
    let date = after(Some("Thu, 01 Jan 1970 00:00:05 GMT"), None);
    assert_eq!(provider_retry_after_ms(Some(&date), 1_000.0), Some(4000.0));
    // In the past: clamped to 0.
    assert_eq!(provider_retry_after_ms(Some(&date), 10_000.0), Some(0.0));
    let rfc850 = after(Some("Thursday, 01-Jan-70 00:00:07 GMT"), None);
    assert_eq!(provider_retry_after_ms(Some(&rfc850), 0.0), Some(7000.0));
    let asctime = after(Some("Thu Jan  1 00:00:09 1970"), None);
    assert_eq!(provider_retry_after_ms(Some(&asctime), 0.0), Some(9000.0));
  }

  #[test]
  fn retry_after_absent_or_garbage() {
    assert_eq!(provider_retry_after_ms(None, 0.0), None);
    assert_eq!(provider_retry_after_ms(Some(&meta(429)), 0.0), None);
    for garbage in [
      "",
      "soon",
      "Infinity",
      "-Infinity",
      "Thu, 99 Jan 1970 00:00:00 GMT",
      "later 5 please",
    ] {
      assert_eq!(
        provider_retry_after_ms(Some(&after(Some(garbage), None)), 0.0),
        None,
        "{garbage:?}"
      );
    }
  }

  #[test]
  fn parse_float_like_js() {
    let cases: [(&str, Option<f64>); 22] = [
      ("3", Some(3.0)),
      ("  3.5e2xyz", Some(350.0)),
      (".5", Some(0.5)),
      ("5.", Some(5.0)),
      ("-.5", Some(-0.5)),
      ("+2", Some(2.0)),
      ("1e", Some(1.0)),
      ("1e+", Some(1.0)),
      ("1E-2", Some(0.01)),
      ("0x10", Some(0.0)),
      ("1_000", Some(1.0)),
      ("\u{FEFF}\u{2028}42", Some(42.0)),
      ("Infinityx", Some(f64::INFINITY)),
      ("-Infinity", Some(f64::NEG_INFINITY)),
      ("infinity", None),
      ("e5", None),
      (".", None),
      ("+", None),
      ("-.e1", None),
      ("", None),
      ("\u{0085}1", None),
      ("abc", None),
    ];
    for (text, expected) in cases {
      assert_eq!(js_parse_float(text), expected, "{text:?}");
    }
    assert_eq!(js_parse_float("-0").map(f64::is_sign_negative), Some(true));
    assert_eq!(js_parse_float("1e400"), Some(f64::INFINITY));
  }

  #[test]
  fn date_parse_like_v8() {
    let cases: [(&str, Option<f64>); 24] = [
      ("Thu, 01 Jan 1970 00:00:05 GMT", Some(5_000.0)),
      ("Wed, 21 Oct 2015 07:28:00 GMT", Some(1_445_412_480_000.0)),
      ("Wednesday, 21-Oct-15 07:28:00 GMT", Some(1_445_412_480_000.0)),
      ("Wed Oct 21 07:28:00 2015", Some(1_445_412_480_000.0)),
      ("Sun, 06 Nov 1994 08:49:37 GMT", Some(784_111_777_000.0)),
      ("Sunday, 06-Nov-94 08:49:37 GMT", Some(784_111_777_000.0)),
      ("Sun Nov  6 08:49:37 1994", Some(784_111_777_000.0)),
      ("Wed, 21 Oct 2015 07:28:00 +0100", Some(1_445_408_880_000.0)),
      ("Wed, 21 Oct 2015 07:28:00 GMT+01:00", Some(1_445_408_880_000.0)),
      ("Wed, 21 Oct 2015 07:28:00 GMT-8", Some(1_445_441_280_000.0)),
      ("Wed, 21 Oct 2015 07:28:00 PST", Some(1_445_441_280_000.0)),
      (
        "Wed, 21 Oct 2015 07:28:00 UTC (Coordinated Universal Time)",
        Some(1_445_412_480_000.0),
      ),
      ("October 21, 2015 07:28:00.5 PM UTC", Some(1_445_455_680_500.0)),
      ("Oct 21 2015", Some(1_445_385_600_000.0)),
      ("Feb 30 2015 00:00:00 GMT", Some(1_425_254_400_000.0)),
      ("Thu, 01 Jan 1970 24:00:00 GMT", Some(86_400_000.0)),
      ("Thu, 01 Jan 1970 24:00:01 GMT", None),
      ("Thu, 01 Jan 1970 00:60:00 GMT", None),
      ("Thu, 01 Foo 1970 00:00:00 GMT", None),
      ("Thu, 01 Jan 1970 00:00:00 GMT garbage", None),
      ("Thu,01 Jan 1970", Some(0.0)),
      ("Thu01 Jan 1970", None),
      ("soon", None),
      ("", None),
    ];
    for (text, expected) in cases {
      assert_eq!(js_date_parse(text), expected, "{text:?}");
    }
  }

  /// Expected values recorded from Node 20 (`TZ=UTC node -e 'Date.parse(...)'`), V8's quirks included:
  /// a lone month and day means the year 2001, two-digit years pivot at 50, `Feb 30` rolls over, noise
  /// words are fine only before the first number, U+2028 is a word character.
  #[test]
  fn date_parse_v8_leniencies() {
    let cases: [(&str, Option<f64>); 52] = [
      ("later 5 please", None),
      ("Thu, 99 Jan 1970 00:00:00 GMT", None),
      ("Infinity", None),
      ("-Infinity", None),
      ("Jan 5", Some(978_652_800_000.0)),
      ("Jan 5 10:00", Some(978_688_800_000.0)),
      ("Thu, 01 Jan 1970 00:00:00.0001234 GMT", Some(0.0)),
      ("Thu, 01 Jan 1970 12:00 am GMT", Some(0.0)),
      ("Thu, 01 Jan 1970 12:00 pm GMT", Some(43_200_000.0)),
      ("Thu, 01 Jan 1970 13:00 pm GMT", None),
      ("Thu, 01 Jan 1970 1 pm", None),
      ("Thu, 01 Jan 1970 10:: GMT", Some(36_000_000.0)),
      ("Thu, 01 Jan 1970 10:20:30Z", Some(37_230_000.0)),
      ("Thu, 01 Jan 1970 10:20:30x", None),
      ("Thu, 01 Jan 1970 10:20:30 +05:30", Some(17_430_000.0)),
      ("Thu, 01 Jan 1970 10:20:30 GMT+12345", None),
      ("Thu, 01 Jan 1970 10:20 EDT", Some(51_600_000.0)),
      ("Mon, 01 Jan 2001 00:00:00 GMT-", None),
      ("Jan 1970 (comment (nested)) 1 00:00 GMT", Some(0.0)),
      ("Jan 1 1970 00:00 GMT)", None),
      ("Jan 1 1970 00:00 GMT +", None),
      ("September 9 99", Some(936_835_200_000.0)),
      ("Dec 31 49", Some(2_524_521_600_000.0)),
      ("Dec 31 50", Some(-599_702_400_000.0)),
      ("T Jan 1 1970", Some(0.0)),
      ("Jan 1 1970 T", None),
      ("\u{A0}Jan 1 1970 GMT", Some(0.0)),
      ("Jan-1-1970 GMT", Some(0.0)),
      ("Jan.1.1970", Some(0.0)),
      ("Jan/1/1970 10:00 GMT", Some(36_000_000.0)),
      ("x 1/2/2003", Some(1_041_465_600_000.0)),
      ("Mon 1/2/2003 04:05:06", Some(1_041_480_306_000.0)),
      ("Mon 2003/1/2", Some(1_041_465_600_000.0)),
      ("Tue 13/1/2003", None),
      ("Tue 12 2003 Jan", Some(1_042_329_600_000.0)),
      ("Jan 1 1970 00:00:00 UT", Some(0.0)),
      ("Jan 1 1970 00:00:00 Z", Some(0.0)),
      ("Jan 1 1970 00:00:00 ZZ", None),
      ("Jan 1 1970 10:20.5", None),
      ("Jan 1 1970 10.5", None),
      ("Jan 1 1970 GMT+0130", Some(-5_400_000.0)),
      ("Jan 1 1970 00:00 GMT+1:30", Some(-5_400_000.0)),
      ("a b c", None),
      ("Jan 1 123456789", None),
      ("Jan 1 1234567890123", None),
      ("Jan 1 000000000001970 00:00 GMT", Some(0.0)),
      ("Wed, 21 Oct 2015 07:28:00 gmt", Some(1_445_412_480_000.0)),
      ("WED, 21 OCT 2015 07:28:00 GMT", Some(1_445_412_480_000.0)),
      ("Jan 1 1970 5 GMT", Some(0.0)),
      ("Jan 1 1970 00:00:00:00", Some(0.0)),
      (".\u{2028}1970", None),
      ("Jan\u{2028} 1 1970", Some(0.0)),
    ];
    for (text, expected) in cases {
      assert_eq!(js_date_parse(text), expected, "{text:?}");
    }
  }

  // ---- Backoff ----

  fn options(random: f64) -> RetryDelayOptions {
    RetryDelayOptions::new(RetryMode::Standard, 1_000.0, random)
  }

  #[test]
  fn blade_retry_after_delays() {
    assert_eq!(
      compute_provider_retry_delay(1, Some(&after(Some("3"), None)), &options(0.5)),
      3_000
    );
    assert_eq!(
      compute_provider_retry_delay(1, Some(&after(None, Some("1250"))), &options(0.5)),
      1_250
    );
    let date = after(Some("Thu, 01 Jan 1970 00:00:05 GMT"), None);
    assert_eq!(compute_provider_retry_delay(1, Some(&date), &options(0.5)), 4_000);
    assert_eq!(
      compute_provider_retry_delay(1, Some(&after(Some("3600"), None)), &options(0.5)),
      MAX_PROVIDER_RETRY_DELAY_MS
    );
  }

  #[test]
  fn blade_jittered_backoff() {
    assert_eq!(compute_provider_retry_delay(1, None, &options(0.0)), 375);
    assert_eq!(compute_provider_retry_delay(1, None, &options(1.0)), 500);
    assert_eq!(compute_provider_retry_delay(2, None, &options(1.0)), 1_000);
    assert_eq!(compute_provider_retry_delay(20, None, &options(1.0)), 8_000);
  }

  #[test]
  fn blade_bounded_foreground_ceiling() {
    let bounded = RetryDelayOptions::new(RetryMode::BoundedForeground, 1_000.0, 1.0);
    assert_eq!(compute_provider_retry_delay(20, None, &bounded), 60_000);
    assert_eq!(
      compute_provider_retry_delay(20, Some(&after(Some("3600"), None)), &bounded),
      60_000
    );
  }

  #[test]
  fn backoff_bounds_per_attempt_and_mode() {
    let standard_low = [375, 750, 1_500, 3_000, 6_000, 6_000, 6_000];
    let standard_high = [500, 1_000, 2_000, 4_000, 8_000, 8_000, 8_000];
    let bounded_low = [375, 750, 1_500, 3_000, 6_000, 12_000, 24_000, 45_000, 45_000];
    let bounded_high = [500, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000];
    for (index, (low, high)) in standard_low.iter().zip(standard_high).enumerate() {
      let attempt = index as u32 + 1;
      assert_eq!(
        compute_retry_delay_for_mode(attempt, None, RetryMode::Standard, 0.0),
        *low,
        "attempt {attempt}"
      );
      assert_eq!(
        compute_retry_delay_for_mode(attempt, None, RetryMode::Standard, 1.0),
        high,
        "attempt {attempt}"
      );
    }
    for (index, (low, high)) in bounded_low.iter().zip(bounded_high).enumerate() {
      let attempt = index as u32 + 1;
      assert_eq!(
        compute_retry_delay_for_mode(attempt, None, RetryMode::BoundedForeground, 0.0),
        *low
      );
      assert_eq!(
        compute_retry_delay_for_mode(attempt, None, RetryMode::BoundedForeground, 1.0),
        high
      );
    }
    // Huge attempt numbers saturate instead of overflowing.
    assert_eq!(
      compute_retry_delay_for_mode(u32::MAX, None, RetryMode::Standard, 1.0),
      8_000
    );
    assert_eq!(
      compute_retry_delay_for_mode(u32::MAX, None, RetryMode::BoundedForeground, 0.0),
      45_000
    );
  }

  #[test]
  fn backoff_edge_inputs() {
    // Attempt 0 behaves like attempt 1.
    assert_eq!(compute_retry_delay_for_mode(0, None, RetryMode::Standard, 1.0), 500);
    // Random outside [0, 1] is clamped; NaN counts as 0.
    assert_eq!(compute_retry_delay_for_mode(1, None, RetryMode::Standard, -3.0), 375);
    assert_eq!(compute_retry_delay_for_mode(1, None, RetryMode::Standard, 7.0), 500);
    assert_eq!(
      compute_retry_delay_for_mode(1, None, RetryMode::Standard, f64::NAN),
      375
    );
    // Rounding is half-up: 500 · (0.75 + 0.25 · 0.5) = 437.5 → 438.
    assert_eq!(compute_retry_delay_for_mode(1, None, RetryMode::Standard, 0.5), 438);
    // Server delays round up and are capped, whatever the mode.
    assert_eq!(compute_retry_delay_for_mode(5, Some(1.2), RetryMode::Standard, 0.0), 2);
    assert_eq!(compute_retry_delay_for_mode(5, Some(0.0), RetryMode::Standard, 1.0), 0);
    assert_eq!(
      compute_retry_delay_for_mode(1, Some(90_000.0), RetryMode::BoundedForeground, 1.0),
      60_000
    );
    // A server delay replaces the curve even when it is longer than the curve's cap.
    assert_eq!(
      compute_retry_delay_for_mode(1, Some(30_000.0), RetryMode::Standard, 0.0),
      30_000
    );
    // Explicit ceilings from the options object.
    let custom = RetryDelayOptions {
      now_ms: 0.0,
      random: 1.0,
      max_delay_ms: 700,
      max_exponential_delay_ms: 60_000,
    };
    assert_eq!(compute_provider_retry_delay(3, None, &custom), 700);
    assert_eq!(
      compute_provider_retry_delay(3, Some(&after(Some("1"), None)), &custom),
      700
    );
  }

  #[test]
  fn mode_names() {
    assert_eq!(RetryMode::Standard.as_str(), "standard");
    assert_eq!(RetryMode::BoundedForeground.as_str(), "bounded_foreground");
    assert_eq!(
      serde_json::to_string(&RetryMode::BoundedForeground).unwrap(),
      r#""bounded_foreground""#
    );
    for reason in [
      RetryReason::RateLimit,
      RetryReason::ServerError,
      RetryReason::Timeout,
      RetryReason::Transport,
      RetryReason::StreamClosed,
    ] {
      assert_eq!(
        serde_json::to_string(&reason).unwrap(),
        format!("\"{}\"", reason.as_str())
      );
    }
  }
}

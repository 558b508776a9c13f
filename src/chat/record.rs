//! Recording of provider exchanges, for replay and bug reports (`PI_NATIVE_RECORD=<dir>` or the
//! CLI's `chat --record <dir>`): per attempt, `<stem>.json` holds the model, the request (URL,
//! headers with credentials redacted, body) and then the response's status and headers, and
//! `<stem>.body` the raw response body as read (after content decoding). Recording never fails a
//! stream: an I/O error just stops recording that attempt.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{json, Value};

use super::catalog::Model;
use super::types::{is_credential_header, HttpRequest};
use super::wire::transform::js_stringify;

static SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// Query parameters whose values are credentials (Google's `key`, some gateways' `api-key`).
fn is_credential_param(name: &str) -> bool {
  matches!(
    name.to_ascii_lowercase().as_str(),
    "key" | "api-key" | "api_key" | "apikey" | "access_token" | "token"
  )
}

/// The URL with credential query values replaced.
fn redacted_url(url: &str) -> String {
  let Ok(mut parsed) = reqwest::Url::parse(url) else {
    return url.to_string();
  };
  if parsed.query().is_none() {
    return url.to_string();
  }
  let pairs: Vec<(String, String)> = parsed
    .query_pairs()
    .map(|(k, v)| {
      let v = if is_credential_param(&k) { "[redacted]".into() } else { v.into_owned() };
      (k.into_owned(), v)
    })
    .collect();
  parsed.query_pairs_mut().clear().extend_pairs(pairs);
  parsed.to_string()
}

pub struct Recorder {
  stem: PathBuf,
  record: Value,
  body: Option<std::fs::File>,
}

impl Recorder {
  /// Start recording one attempt in `dir` (created if missing); `None` when it cannot be written.
  pub fn start(dir: &str, model: &Model, request: &HttpRequest) -> Option<Recorder> {
    let dir = Path::new(dir);
    std::fs::create_dir_all(dir).ok()?;
    let millis = std::time::SystemTime::now()
      .duration_since(std::time::UNIX_EPOCH)
      .map(|d| d.as_millis())
      .unwrap_or(0);
    let seq = SEQUENCE.fetch_add(1, Ordering::Relaxed);
    let stem = dir.join(format!("{millis}-{}-{seq}", std::process::id()));
    let headers: Vec<Value> = request
      .headers
      .iter()
      .map(|(k, v)| json!([k, if is_credential_header(k) { "[redacted]" } else { v.as_str() }]))
      .collect();
    let record = json!({
      "pi-native-recording": 1,
      "model": model,
      "request": { "method": "POST", "url": redacted_url(&request.url), "headers": headers, "body": request.body },
    });
    let recorder = Recorder {
      stem,
      record,
      body: None,
    };
    recorder.write_record().then_some(recorder)
  }

  fn write_record(&self) -> bool {
    std::fs::write(self.stem.with_extension("json"), js_stringify(&self.record)).is_ok()
  }

  /// The response head arrived; the body file is opened.
  pub fn response(&mut self, status: u16, headers: &[(String, String)]) {
    let headers: Vec<Value> = headers
      .iter()
      .map(|(k, v)| json!([k, if is_credential_header(k) || k == "set-cookie" { "[redacted]" } else { v.as_str() }]))
      .collect();
    self.record["response"] = json!({ "status": status, "headers": headers });
    self.record["body"] = json!(format!(
      "{}.body",
      self.stem.file_name().and_then(|n| n.to_str()).unwrap_or("")
    ));
    if self.write_record() {
      self.body = std::fs::File::create(self.stem.with_extension("body")).ok();
    }
  }

  /// Body bytes as read.
  pub fn body(&mut self, bytes: &[u8]) {
    if let Some(f) = self.body.as_mut() {
      if f.write_all(bytes).is_err() {
        self.body = None;
      }
    }
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn credentials_never_reach_a_recording() {
    let dir = std::env::temp_dir().join(format!("pi-native-record-test-{}", std::process::id()));
    let model: Model = serde_json::from_value(json!({"id": "m", "api": "openai-completions", "provider": "p"})).unwrap();
    let request = HttpRequest {
      url: "https://example.com/v1/x?key=sk-query-secret&alt=sse".into(),
      headers: vec![
        ("authorization".into(), "Bearer sk-header-secret".into()),
        ("X-Goog-Api-Key".into(), "goog-secret".into()),
        ("content-type".into(), "application/json".into()),
      ],
      body: json!({"model": "m"}),
      zstd: false,
    };
    let mut r = Recorder::start(dir.to_str().unwrap(), &model, &request).unwrap();
    r.response(200, &[("set-cookie".into(), "session=cookie-secret".into())]);
    r.body(b"data: {}\n\n");
    let text = std::fs::read_to_string(r.stem.with_extension("json")).unwrap();
    for secret in ["sk-query-secret", "sk-header-secret", "goog-secret", "cookie-secret"] {
      assert!(!text.contains(secret), "{secret} in {text}");
    }
    assert!(text.contains("alt=sse") && text.contains("application/json"));
    assert_eq!(std::fs::read(r.stem.with_extension("body")).unwrap(), b"data: {}\n\n");
    std::fs::remove_dir_all(&dir).ok();
  }
}

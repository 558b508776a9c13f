//! An incremental Server-Sent Events decoder (WHATWG event-stream rules).
//!
//! Feed it the body as it arrives, in chunks of any size: lines may end in CRLF, LF or CR (a CR at
//! the end of one chunk followed by LF at the start of the next is one line ending), UTF-8 sequences
//! may be split across chunks, comment lines (`:keep-alive`) are skipped, `data:` lines of one event
//! are joined with `\n`, and an event is dispatched at a blank line. A line longer than the
//! configured bound is an error instead of unbounded buffering.

/// One dispatched event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
  /// The `event:` field, empty when absent (the spec's default type is "message").
  pub event: String,
  pub data: String,
  pub id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
  #[error("SSE line longer than {0} bytes")]
  LineTooLong(usize),
  #[error("SSE event larger than {0} bytes")]
  EventTooLarge(usize),
}

pub struct SseDecoder {
  /// Bytes of the current, unfinished line.
  line: Vec<u8>,
  /// The previous chunk ended in CR: a leading LF in the next chunk belongs to that line ending.
  pending_cr: bool,
  event: String,
  data: String,
  has_data: bool,
  id: Option<String>,
  max_line: usize,
  started: bool,
}

/// Default bound on one line: 16 MiB (a data line carries one JSON event; real ones are small).
pub const DEFAULT_MAX_LINE: usize = 16 * 1024 * 1024;

impl Default for SseDecoder {
  fn default() -> Self {
    SseDecoder::new(DEFAULT_MAX_LINE)
  }
}

impl SseDecoder {
  pub fn new(max_line: usize) -> SseDecoder {
    SseDecoder {
      line: Vec::new(),
      pending_cr: false,
      event: String::new(),
      data: String::new(),
      has_data: false,
      id: None,
      max_line,
      started: false,
    }
  }

  /// Feed bytes; complete events are appended to `out`.
  pub fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
    // One event's joined data lines are bounded like one line is (x4).
    if self.data.len() > self.max_line.saturating_mul(4) {
      return Err(SseError::EventTooLarge(self.max_line.saturating_mul(4)));
    }
    // An empty chunk leaves a pending CR pending: the LF may still come.
    if self.pending_cr && !bytes.is_empty() {
      self.pending_cr = false;
      if bytes[0] == b'\n' {
        bytes = &bytes[1..];
      }
    }
    while !bytes.is_empty() {
      match memchr::memchr2(b'\n', b'\r', bytes) {
        Some(pos) => {
          if self.line.len() + pos > self.max_line {
            return Err(SseError::LineTooLong(self.max_line));
          }
          let ending = bytes[pos];
          let mut next = pos + 1;
          if ending == b'\r' {
            match bytes.get(next) {
              Some(b'\n') => next += 1,
              None => self.pending_cr = true,
              _ => {}
            }
          }
          if self.line.is_empty() {
            // The whole line is in this chunk: no copy.
            self.process_line(&bytes[..pos], out);
          } else {
            self.line.extend_from_slice(&bytes[..pos]);
            let mut line = std::mem::take(&mut self.line);
            self.process_line(&line, out);
            line.clear();
            self.line = line;
          }
          bytes = &bytes[next..];
        }
        None => {
          if self.line.len() + bytes.len() > self.max_line {
            return Err(SseError::LineTooLong(self.max_line));
          }
          self.line.extend_from_slice(bytes);
          break;
        }
      }
    }
    Ok(())
  }

  /// The body ended. An unterminated final event is discarded (the SSE rules, and the OpenAI
  /// SDK's decoder).
  pub fn finish(&mut self) {
    self.line.clear();
    self.reset_event();
  }

  /// The body ended; unlike [`SseDecoder::finish`], a pending line is processed and an
  /// unterminated final event is still dispatched (pi-ai's Anthropic decoder does this).
  pub fn finish_flushing(&mut self, out: &mut Vec<SseEvent>) {
    if !self.line.is_empty() {
      let line = std::mem::take(&mut self.line);
      self.process_line(&line, out);
    }
    self.process_line(&[], out);
  }

  fn reset_event(&mut self) {
    self.event.clear();
    self.data.clear();
    self.has_data = false;
  }

  fn process_line(&mut self, raw: &[u8], out: &mut Vec<SseEvent>) {
    let mut line = raw;
    // A UTF-8 byte-order mark may open the stream.
    if !self.started {
      self.started = true;
      if line.starts_with(&[0xEF, 0xBB, 0xBF]) {
        line = &line[3..];
      }
    }
    if line.is_empty() {
      // The SDK decoders dispatch on an event name alone (data "") as well as on data.
      if self.has_data || !self.event.is_empty() {
        let mut data = std::mem::take(&mut self.data);
        if data.ends_with('\n') {
          data.pop();
        }
        out.push(SseEvent {
          event: std::mem::take(&mut self.event),
          data,
          id: self.id.clone(),
        });
      }
      self.reset_event();
      return;
    }
    if line[0] == b':' {
      return;
    }
    let (field, value) = match memchr::memchr(b':', line) {
      Some(i) => {
        let v = &line[i + 1..];
        (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
      }
      None => (line, &[][..]),
    };
    // Valid UTF-8 (the usual case) is checked by the fast validator; only invalid bytes take the
    // replacing decoder.
    let value = match std::str::from_utf8(value) {
      Ok(text) => std::borrow::Cow::Borrowed(text),
      Err(_) => String::from_utf8_lossy(value),
    };
    match field {
      b"event" => self.event = value.into_owned(),
      b"data" => {
        self.data.push_str(&value);
        self.data.push('\n');
        self.has_data = true;
      }
      b"id" if !value.contains('\0') => self.id = Some(value.into_owned()),
      _ => {}
    }
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  fn decode_chunks(chunks: &[&[u8]]) -> Vec<SseEvent> {
    let mut d = SseDecoder::default();
    let mut out = Vec::new();
    for c in chunks {
      d.feed(c, &mut out).unwrap();
    }
    d.finish_flushing(&mut out);
    out
  }

  #[test]
  fn named_events_and_multiline_data() {
    let out = decode_chunks(&[b"event: message_start\ndata: {\"a\":1}\n\ndata: x\ndata: y\n\n"]);
    assert_eq!(out.len(), 2);
    assert_eq!(out[0].event, "message_start");
    assert_eq!(out[0].data, "{\"a\":1}");
    assert_eq!(out[1].event, "");
    assert_eq!(out[1].data, "x\ny");
  }

  #[test]
  fn crlf_cr_and_split_line_endings() {
    let out = decode_chunks(&[b"data: a\r", b"\n\r", b"\ndata: b\r\r", b"data:c\n\n"]);
    let data: Vec<_> = out.iter().map(|e| e.data.as_str()).collect();
    assert_eq!(data, ["a", "b", "c"]);
  }

  #[test]
  fn empty_chunk_between_cr_and_lf() {
    // Found by fuzzing (target `sse`): an empty chunk dropped the pending CR, so the LF after it
    // read as a blank line and dispatched the event early.
    let out = decode_chunks(&[b"data: a\r", b"", b"\ndata: b\n\n"]);
    let data: Vec<_> = out.iter().map(|e| e.data.as_str()).collect();
    assert_eq!(data, ["a\nb"]);
  }

  #[test]
  fn utf8_split_across_chunks() {
    let text = "data: héllo 🦀\n\n".as_bytes();
    let chunks: Vec<&[u8]> = text.chunks(1).collect();
    let out = decode_chunks(&chunks);
    assert_eq!(out[0].data, "héllo 🦀");
  }

  #[test]
  fn comments_keepalives_and_unterminated_tail() {
    let out = decode_chunks(&[b": keep-alive\n\n:ping\ndata: 1\n\ndata: 2"]);
    assert_eq!(out.len(), 2);
    assert_eq!(out[0].data, "1");
    assert_eq!(out[1].data, "2");
    let out = decode_chunks(&[b"event: message_stop\n\nevent: ping\n"]);
    assert_eq!(
      out.iter().map(|e| e.event.as_str()).collect::<Vec<_>>(),
      ["message_stop", "ping"]
    );
    assert_eq!(out[0].data, "");
  }

  #[test]
  fn plain_finish_drops_an_unterminated_event() {
    let mut d = SseDecoder::default();
    let mut out = Vec::new();
    d.feed(b"data: 1\n\ndata: 2", &mut out).unwrap();
    d.finish();
    assert_eq!(out.len(), 1);
  }

  #[test]
  fn bom_and_field_without_colon() {
    let out = decode_chunks(&[b"\xEF\xBB\xBFdata\n\ndata: [DONE]\n\n"]);
    assert_eq!(out[0].data, "");
    assert_eq!(out[1].data, "[DONE]");
  }

  #[test]
  fn huge_lines_are_bounded() {
    let mut d = SseDecoder::new(16);
    let mut out = Vec::new();
    assert!(d.feed(b"data: 0123", &mut out).is_ok());
    assert_eq!(d.feed(b"456789abcdef", &mut out), Err(SseError::LineTooLong(16)));
    let mut d = SseDecoder::new(16);
    let mut out = Vec::new();
    let mut result = Ok(());
    for _ in 0..10 {
      result = result.and(d.feed(b"data: 0123456789\n", &mut out));
    }
    assert_eq!(result, Err(SseError::EventTooLarge(64)));
  }
}

//! Wire adapters per API: request building and response-stream parsing.

pub mod anthropic;
pub mod transform;

use super::types::WireAdapter;

/// The adapter for a wire API id, when this build speaks it.
pub fn adapter_for(api: &str) -> Option<Box<dyn WireAdapter + Send + Sync>> {
  match api {
    "anthropic-messages" => Some(Box::new(anthropic::AnthropicAdapter)),
    _ => None,
  }
}

/// The error text of a non-2xx response, as the reference's SDK reports it (spec §5.11).
pub fn http_error_message(api: &str, status: u16, body: &str) -> String {
  match api {
    "anthropic-messages" => anthropic::http_error_message(status, body),
    _ => format!("{status}: {body}"),
  }
}

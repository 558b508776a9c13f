//! Wire adapters per API: request building and response-stream parsing.

pub mod transform;

use super::types::WireAdapter;

/// The adapter for a wire API id, when this build speaks it.
pub fn adapter_for(_api: &str) -> Option<Box<dyn WireAdapter + Send + Sync>> {
  None
}

/// The error text of a non-2xx response, as the reference's SDK reports it (spec §5.11).
pub fn http_error_message(_api: &str, status: u16, body: &str) -> String {
  format!("{status}: {body}")
}

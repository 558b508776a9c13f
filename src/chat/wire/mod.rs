//! Wire adapters per API: request building and response-stream parsing.

pub mod anthropic;
pub mod openai_completions;
pub mod openai_responses;
pub mod strict;
pub mod transform;

use super::types::WireAdapter;

/// The adapter for a wire API id, when this build speaks it.
pub fn adapter_for(api: &str) -> Option<Box<dyn WireAdapter + Send + Sync>> {
  match api {
    "anthropic-messages" => Some(Box::new(anthropic::AnthropicAdapter)),
    "openai-completions" => Some(Box::new(openai_completions::OpenAiCompletions)),
    "openai-responses" | "azure-openai-responses" | "openai-codex-responses" => Some(Box::new(
      openai_responses::ResponsesAdapter(openai_responses::ResponsesApi::from_api(api)?),
    )),
    _ => None,
  }
}

/// The error text of a non-2xx response, as the reference's SDK reports it (spec §5.11).
pub fn http_error_message(api: &str, status: u16, body: &str) -> String {
  match api {
    "anthropic-messages" => anthropic::http_error_message(status, body),
    "openai-completions" => openai_completions::http_error_message(status, body),
    "openai-responses" | "azure-openai-responses" | "openai-codex-responses" => {
      openai_responses::http_error_message(api, status, body)
    }
    _ => format!("{status}: {body}"),
  }
}

//! Wire adapters per API: request building and response-stream parsing.

pub mod anthropic;
pub mod google;
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
    "google-generative-ai" => Some(Box::new(google::generative_ai::GoogleGenerativeAi)),
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

/// The error text of a non-2xx response for any API: [`http_error_message`], or the SDK's own
/// wording where it also reads the response headers (Google: the `content-type`).
pub fn http_error_text(api: &str, status: u16, headers: &[(String, String)], body: &str) -> String {
  match api {
    "google-generative-ai" => {
      let content_type = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        .map(|(_, v)| v.as_str());
      google::http_error_message(status, content_type, body)
    }
    _ => http_error_message(api, status, body),
  }
}

/// What a failed connection reports: undici's `fetch failed` where the SDK surfaces fetch's own
/// error (Google), the OpenAI/Anthropic SDKs' `Connection error.` otherwise.
pub fn connection_error_message(api: &str) -> &'static str {
  match api {
    "google-generative-ai" => "fetch failed",
    _ => "Connection error.",
  }
}

//! The streaming chat core (napi-free): catalog, adapter rules, wire formats, stream decoding,
//! projection, liveness and retry policy.

pub mod catalog;
pub mod context;
pub mod history;
pub mod options;
pub mod record;
pub mod request;
pub mod retry;
pub mod service;
pub mod sse;
pub mod types;
pub mod wire;

//! pi-native: the Rust core of a Node.js addon for LLM coding agents.
//!
//! `js` is the JavaScript-semantics layer (values, JSON, strings, numbers) both cores share;
//! `repair` is plain Rust (no N-API types) and is covered by `cargo test`; `binding` is the thin
//! `#[napi]` layer that converts values, maps errors and owns handles.

pub mod chat;
#[doc(hidden)]
pub mod fuzzing;
pub mod js;
pub mod repair;

mod binding;

/// mimalloc serves the core's many short-lived allocations (values, strings, regex state) much
/// faster than the system allocator; memory never crosses to V8 by pointer, so the two allocators
/// never free each other's blocks. Fuzz builds (`--cfg fuzzing`) keep the system allocator so the
/// sanitizer and libFuzzer's malloc limit see every allocation.
#[cfg(not(fuzzing))]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

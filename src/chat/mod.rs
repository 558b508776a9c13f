//! The streaming chat core (napi-free): wire formats, stream decoding and projection.

pub mod catalog;
pub mod sse;

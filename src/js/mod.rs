//! The JavaScript-semantics layer shared by the repair and chat cores: the value model
//! ([`value`]), `JSON.parse` / `JSON.stringify` ([`json`]), strings as UTF-16 code units with lone
//! surrogates ([`text`]) and `String(n)` / `Number(s)` ([`jsnum`]).
//!
//! Strings are Rust `String`s in the injective encoding described in [`text`]: well-formed text is
//! stored as is, a lone surrogate (and a real U+10FFFF) is escaped with U+10FFFF, so every JS
//! string round-trips exactly through parsing, repair and serialisation.

pub mod jsnum;
pub mod json;
pub mod text;
pub mod value;

pub use value::{Obj, Opaque, Value};

//! The `#[napi]` layer: converts values, maps errors, owns compiled handles. No repair logic here.

// napi-derive registers exports only outside `cfg(test)`, so test builds see them as unused.
#![cfg_attr(test, allow(dead_code))]

mod chat;
mod grammar;
mod handles;
mod repair;

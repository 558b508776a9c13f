//! The `#[napi]` layer: converts values, maps errors, owns compiled handles. No repair logic here.

mod repair;

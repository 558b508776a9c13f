//! The `#[napi]` layer: converts values, maps errors, owns compiled handles. No repair logic here.

// napi-derive registers exports only outside `cfg(test)`, so test builds see them as unused.
#![cfg_attr(test, allow(dead_code))]

mod chat;
mod grammar;
mod handles;
mod repair;

/// Panics are turned into JS errors at every entry point; keep the default hook from printing a
/// backtrace (with whatever text the panic carried) into a host's terminal UI. Fuzz builds keep
/// the default hook: a crash report needs the panic's message.
#[cfg(not(any(test, fuzzing)))]
#[napi_derive::module_init]
fn quiet_panics() {
  // Only the file name and line: a full path would name the build machine's folders.
  std::panic::set_hook(Box::new(|info| {
    let location = info
      .location()
      .map(|l| {
        let file = l.file().rsplit(['/', '\\']).next().unwrap_or("");
        format!(" ({file}:{})", l.line())
      })
      .unwrap_or_default();
    eprintln!("pi-native: internal error{location}");
  }));
}

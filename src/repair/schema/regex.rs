//! JavaScript `RegExp` over our string model, backed by `regress`.
//!
//! Patterns and subjects are `String`s in which a lone UTF-16 surrogate is carried as a private-use
//! stand-in (see `crate::repair::text`). Matching has to happen on what JS sees: code points for
//! `u`-flag expressions, raw UTF-16 code units otherwise. ASCII subjects (the common case) are
//! matched directly without any conversion.

use super::SchemaFault;
use crate::repair::text::{code_points, is_plain, to_utf16};

pub(crate) struct JsRegex {
  re: regress::Regex,
  unicode: bool,
}

impl std::fmt::Debug for JsRegex {
  fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    f.debug_struct("JsRegex").field("unicode", &self.unicode).finish()
  }
}

impl JsRegex {
  /// `new RegExp(pattern, flags)`; the error is regress's description of the syntax problem.
  pub(crate) fn new(pattern: &str, flags: &str) -> Result<JsRegex, String> {
    let unicode = flags.contains('u');
    let re = if !is_plain(pattern) {
      regress::Regex::from_unicode(code_points(pattern), flags)
    } else {
      regress::Regex::with_flags(pattern, flags)
    };
    re.map(|re| JsRegex { re, unicode }).map_err(|e| e.to_string())
  }

  /// `RegExp.prototype.test` for a non-global expression.
  pub(crate) fn test(&self, s: &str) -> bool {
    if s.is_ascii() {
      return self.re.find(s).is_some();
    }
    if self.unicode {
      if is_plain(s) {
        return self.re.find(s).is_some();
      }
      let units = to_utf16(s);
      return self.re.find_from_utf16(&units, 0).next().is_some();
    }
    let units = to_utf16(s);
    self.re.find_from_ucs2(&units, 0).next().is_some()
  }
}

/// A schema's regular expression that failed to compile: JS only throws (a SyntaxError) when the
/// keyword holding it is evaluated, so the failure is kept and raised at first use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegexFault {
  pub source: String,
  pub flags: String,
  /// regress's description (the JS facade rebuilds V8's own SyntaxError from source and flags).
  pub reason: String,
}

thread_local! {
  /// The first fault met since the last `take_fault` (after a regex fault evaluation continues as
  /// a failed match; after running too deep it stops).
  static FAULT: std::cell::RefCell<Option<SchemaFault>> = const { std::cell::RefCell::new(None) };
}

/// Take (and clear) the fault recorded by the last evaluation on this thread.
pub(crate) fn take_fault() -> Option<SchemaFault> {
  FAULT.with(|f| f.borrow_mut().take())
}

fn record(fault: impl FnOnce() -> SchemaFault) {
  FAULT.with(|f| {
    let mut f = f.borrow_mut();
    if f.is_none() {
      *f = Some(fault());
    }
  });
}

/// Evaluation or conversion went deeper than [`super::check::MAX_EVAL_DEPTH`].
pub(crate) fn record_too_deep() {
  record(|| SchemaFault::TooDeep);
}

/// A schema regular expression compiled eagerly whose compile error is raised lazily.
#[derive(Debug)]
pub(crate) struct LazyRegex(Result<JsRegex, RegexFault>);

impl LazyRegex {
  pub(crate) fn new(source: &str, flags: &str) -> LazyRegex {
    LazyRegex(JsRegex::new(source, flags).map_err(|reason| RegexFault {
      source: source.to_string(),
      flags: flags.to_string(),
      reason,
    }))
  }
  /// `new RegExp(source, flags)` happens here: an invalid expression records its fault.
  pub(crate) fn touch(&self) -> bool {
    match &self.0 {
      Ok(_) => true,
      Err(fault) => {
        record(|| SchemaFault::Regex(fault.clone()));
        false
      }
    }
  }
  /// `regexp.test(s)`; an invalid expression records its fault and matches nothing.
  pub(crate) fn test(&self, s: &str) -> bool {
    match &self.0 {
      Ok(re) => re.test(s),
      Err(_) => self.touch(),
    }
  }
}

/// Does `name` read as itself when used as the body of `^name$`? (No regex syntax characters.)
pub(crate) fn is_plain_regex_text(name: &str) -> bool {
  !name.chars().any(|c| {
    matches!(
      c,
      '\\' | '^' | '$' | '.' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|'
    )
  })
}

/// Escape a property name the way TypeBox does before joining it into an alternation.
pub(crate) fn escape_property_key(key: &str) -> String {
  let mut out = String::with_capacity(key.len() + 2);
  for c in key.chars() {
    if matches!(
      c,
      '.' | '*' | '+' | '?' | '^' | '$' | '{' | '}' | '(' | ')' | '|' | '[' | ']' | '\\'
    ) {
      out.push('\\');
    }
    out.push(c);
  }
  out
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn unicode_flag_decides_code_point_or_unit_matching() {
    let nonu = JsRegex::new("^.$", "").unwrap();
    let u = JsRegex::new("^.$", "u").unwrap();
    assert!(!nonu.test("\u{1F600}"));
    assert!(u.test("\u{1F600}"));
    assert!(nonu.test("é"));
  }

  #[test]
  fn annex_b_syntax_only_without_u() {
    assert!(JsRegex::new("^a{$", "").is_ok());
    assert!(JsRegex::new("^a{$", "u").is_err());
    assert!(JsRegex::new("(", "").is_err());
  }

  #[test]
  fn plain_names() {
    assert!(is_plain_regex_text("file_path-2"));
    assert!(!is_plain_regex_text("a.b"));
    assert_eq!(escape_property_key("a.b(c)"), "a\\.b\\(c\\)");
  }
}

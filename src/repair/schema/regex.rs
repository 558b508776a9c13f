//! JavaScript `RegExp` over our string model, backed by `regress`.
//!
//! Patterns and subjects are `String`s in which a lone UTF-16 surrogate is carried as a private-use
//! stand-in (see `crate::repair::text`). Matching has to happen on what JS sees: code points for
//! `u`-flag expressions, raw UTF-16 code units otherwise. ASCII subjects (the common case) are
//! matched directly without any conversion.

use crate::repair::text::{stand_in_surrogate, to_utf16};

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
    let re = if pattern.chars().any(|c| stand_in_surrogate(c).is_some()) {
      let cps = pattern
        .chars()
        .map(|c| stand_in_surrogate(c).map_or(c as u32, u32::from));
      regress::Regex::from_unicode(cps, flags)
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
      if !s.chars().any(|c| stand_in_surrogate(c).is_some()) {
        return self.re.find(s).is_some();
      }
      let units = to_utf16(s);
      return self.re.find_from_utf16(&units, 0).next().is_some();
    }
    let units = to_utf16(s);
    self.re.find_from_ucs2(&units, 0).next().is_some()
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

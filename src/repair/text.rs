//! JavaScript string semantics over Rust strings.
//!
//! JS strings are sequences of UTF-16 code units and may hold lone surrogates. We keep strings as
//! UTF-8 `String`s and represent a lone surrogate `0xD800 + k` by the plane-16 private-use code
//! point `U+10F800 + k`, so it survives parsing, repair and serialisation (JSON output writes it
//! back as a `\udXXX` escape). Real text in that private-use block is vanishingly rare; it would be
//! read back as a lone surrogate.

use std::cmp::Ordering;

const LONE_BASE: u32 = 0x10F800;

/// The private-use stand-in for a lone surrogate code unit.
pub fn lone_surrogate_char(unit: u16) -> char {
  debug_assert!((0xD800..=0xDFFF).contains(&unit));
  char::from_u32(LONE_BASE + (unit as u32 - 0xD800)).unwrap_or('\u{FFFD}')
}

/// The lone surrogate a stand-in represents, if `c` is one.
pub fn stand_in_surrogate(c: char) -> Option<u16> {
  let cp = c as u32;
  if cp >= LONE_BASE {
    Some((cp - LONE_BASE + 0xD800) as u16)
  } else {
    None
  }
}

/// JS `WhiteSpace` + `LineTerminator` (what `trim()` and `Number()` strip).
pub fn is_js_whitespace(c: char) -> bool {
  matches!(
    c,
    '\u{9}' | '\u{A}' | '\u{B}' | '\u{C}' | '\u{D}' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
      ..='\u{200A}' | '\u{2028}' | '\u{2029}' | '\u{202F}' | '\u{205F}' | '\u{3000}' | '\u{FEFF}'
  )
}

pub fn js_trim(s: &str) -> &str {
  s.trim_matches(is_js_whitespace)
}
pub fn js_trim_start(s: &str) -> &str {
  s.trim_start_matches(is_js_whitespace)
}
pub fn js_trim_end(s: &str) -> &str {
  s.trim_end_matches(is_js_whitespace)
}

/// The UTF-16 code units of a string (stand-ins become lone surrogates again).
pub fn to_utf16(s: &str) -> Vec<u16> {
  if s.is_ascii() {
    return s.bytes().map(u16::from).collect();
  }
  let mut out = Vec::with_capacity(s.len());
  for c in s.chars() {
    match stand_in_surrogate(c) {
      Some(unit) => out.push(unit),
      None => {
        let mut buf = [0u16; 2];
        out.extend_from_slice(c.encode_utf16(&mut buf));
      }
    }
  }
  out
}

/// Decode UTF-16 code units, mapping lone surrogates to their stand-ins.
pub fn from_utf16(units: &[u16]) -> String {
  char::decode_utf16(units.iter().copied())
    .map(|r| r.unwrap_or_else(|e| lone_surrogate_char(e.unpaired_surrogate())))
    .collect()
}

/// `s.length` in JS.
pub fn utf16_len(s: &str) -> usize {
  if s.is_ascii() {
    return s.len();
  }
  s.chars()
    .map(|c| {
      if stand_in_surrogate(c).is_some() {
        1
      } else {
        c.len_utf16()
      }
    })
    .sum()
}

/// The first `n` UTF-16 code units of `s` (may split a surrogate pair, as JS `slice` does).
pub fn utf16_prefix(s: &str, n: usize) -> String {
  if s.is_ascii() {
    return s[..n.min(s.len())].to_string();
  }
  let units = to_utf16(s);
  from_utf16(&units[..n.min(units.len())])
}

/// Compare by UTF-16 code units (JS default `sort()` order for strings).
pub fn cmp_utf16(a: &str, b: &str) -> Ordering {
  if a.is_ascii() && b.is_ascii() {
    return a.cmp(b);
  }
  to_utf16(a).cmp(&to_utf16(b))
}

/// UTF-8 byte length the way Node's `Buffer.byteLength(s, "utf8")` counts it: a lone surrogate is
/// written as U+FFFD (3 bytes).
pub fn node_utf8_len(s: &str) -> usize {
  if s.is_ascii() {
    return s.len();
  }
  s.chars()
    .map(|c| {
      if stand_in_surrogate(c).is_some() {
        3
      } else {
        c.len_utf8()
      }
    })
    .sum()
}

/// JS `toLowerCase()` restricted to what the repair layer needs (full Unicode lowering).
pub fn js_lower(s: &str) -> String {
  s.to_lowercase()
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn lone_surrogates_round_trip() {
    let units = [0x61, 0xD800, 0x62, 0xD83D, 0xDE00, 0xDC00];
    let s = from_utf16(&units);
    assert_eq!(to_utf16(&s), units);
    assert_eq!(utf16_len(&s), 6);
    assert_eq!(node_utf8_len(&s), 1 + 3 + 1 + 4 + 3);
  }

  #[test]
  fn trim_uses_the_js_whitespace_set() {
    assert_eq!(js_trim("\u{FEFF}\u{3000} a \u{A0}"), "a");
    assert_eq!(js_trim("\u{85}a"), "\u{85}a");
  }

  #[test]
  fn prefix_may_split_a_pair() {
    let s = "a\u{1F600}";
    let p = utf16_prefix(s, 2);
    assert_eq!(to_utf16(&p), [0x61, 0xD83D]);
  }
}

//! JavaScript string semantics over Rust strings.
//!
//! A JS string is a sequence of UTF-16 code units and may hold lone surrogates, which a Rust `str`
//! cannot. Strings are kept as UTF-8 `String`s in an *injective* encoding (every JS string has
//! exactly one encoding, and decoding it gives the JS string back):
//!
//! - every Unicode scalar value except U+10FFFF is itself (so well-formed text is stored as is,
//!   including the whole plane-16 private-use block);
//! - a lone surrogate `0xD800 + k` (k < 0x800) is [`ESC`] followed by `U+10F000 + k`;
//! - a real U+10FFFF (a noncharacter, which Unicode reserves for such internal use) is [`ESC`]
//!   twice.
//!
//! [`ESC`] is U+10FFFF. Decoding reads `ESC ESC` as U+10FFFF, `ESC` + `U+10F000..=U+10F7FF` as a
//! lone surrogate, and an `ESC` followed by anything else as a plain U+10FFFF (so a well-formed
//! string that never went through [`encode_str`] still reads back as itself). Only strings that
//! contain `ESC` need more than a byte copy; [`is_plain`] tells them apart with one `memchr`.
//!
//! All lengths, offsets, comparisons, JSON and byte counts here follow JS semantics on the decoded
//! code units: use [`code_points`], [`to_utf16`] / [`from_utf16`], [`utf16_len`], [`utf16_prefix`],
//! [`cmp_utf16`] rather than `chars()` wherever the answer depends on the characters themselves.
//! Strings arriving from outside as well-formed UTF-8 (a napi `String`, `serde_json`) go through
//! [`encode_str`]; strings leaving as UTF-8 go through [`to_well_formed`] (Node's U+FFFD rule).
//!
//! Known limit: concatenating two encoded strings where the first ends in a lone high surrogate
//! and the second starts with a lone low one gives `ESC hi ESC lo`, while JS would see a pair; the
//! decoded code units (and so every output and length) are the same, only `==` on the two Rust
//! strings differs from `===` on the JS ones.

use std::borrow::Cow;
use std::cmp::Ordering;

/// The escape character: U+10FFFF.
pub const ESC: char = '\u{10FFFF}';
const ESC_UTF8: &[u8] = "\u{10FFFF}".as_bytes();
/// `ESC` + `U+10F000 + k` holds the lone surrogate `0xD800 + k`.
const LONE_BASE: u32 = 0x10F000;

/// Is `s` exactly its JS string as UTF-8 (no escape inside)?
#[inline]
pub fn is_plain(s: &str) -> bool {
  let b = s.as_bytes();
  match memchr::memchr(0xF4, b) {
    None => true,
    Some(at) => memchr::memmem::find(&b[at..], ESC_UTF8).is_none(),
  }
}

/// The JS code point (`codePointAt`) at byte offset `i` of an encoded string, and how many bytes
/// its encoding takes. A lone surrogate is reported as its own value (0xD800..=0xDFFF).
#[inline]
pub fn cp_at(s: &str, i: usize) -> (u32, usize) {
  let c = s[i..].chars().next().expect("index inside string");
  if c != ESC {
    return (c as u32, c.len_utf8());
  }
  match s[i + 4..].chars().next() {
    Some(ESC) => (0x10FFFF, 8),
    Some(n) if (LONE_BASE..LONE_BASE + 0x800).contains(&(n as u32)) => (n as u32 - LONE_BASE + 0xD800, 8),
    _ => (0x10FFFF, 4),
  }
}

/// The code points of an encoded string (lone surrogates as 0xD800..=0xDFFF).
pub fn code_points(s: &str) -> CodePoints<'_> {
  CodePoints { s, i: 0 }
}

/// Iterator of [`code_points`]; `offset()` is the byte offset of the next one.
#[derive(Clone)]
pub struct CodePoints<'a> {
  s: &'a str,
  i: usize,
}

impl CodePoints<'_> {
  pub fn offset(&self) -> usize {
    self.i
  }
}

impl Iterator for CodePoints<'_> {
  type Item = u32;
  #[inline]
  fn next(&mut self) -> Option<u32> {
    if self.i >= self.s.len() {
      return None;
    }
    let (cp, n) = cp_at(self.s, self.i);
    self.i += n;
    Some(cp)
  }
}

/// Append one code point (a lone surrogate as 0xD800..=0xDFFF) in the encoding.
#[inline]
pub fn push_code_point(out: &mut String, cp: u32) {
  match cp {
    0xD800..=0xDFFF => {
      out.push(ESC);
      out.push(char::from_u32(LONE_BASE + (cp - 0xD800)).expect("plane-16 scalar"));
    }
    0x10FFFF => {
      out.push(ESC);
      out.push(ESC);
    }
    _ => out.push(char::from_u32(cp).unwrap_or('\u{FFFD}')),
  }
}

/// The encoding of a lone surrogate code unit, as a string.
pub fn lone_surrogate(unit: u16) -> String {
  debug_assert!((0xD800..=0xDFFF).contains(&unit));
  let mut s = String::with_capacity(8);
  push_code_point(&mut s, unit as u32);
  s
}

/// Encode a well-formed string from outside (napi `String`, `serde_json`, Rust literals): only a
/// real U+10FFFF needs escaping.
pub fn encode_str(s: &str) -> Cow<'_, str> {
  if !s.as_bytes().contains(&0xF4) || !s.contains(ESC) {
    return Cow::Borrowed(s);
  }
  let mut out = String::with_capacity(s.len() + 8);
  for c in s.chars() {
    push_code_point(&mut out, c as u32);
  }
  Cow::Owned(out)
}

/// [`encode_str`] for an owned string.
pub fn encode_string(s: String) -> String {
  match encode_str(&s) {
    Cow::Borrowed(_) => s,
    Cow::Owned(o) => o,
  }
}

/// The well-formed UTF-8 Node writes for a JS string (`Buffer.from(s)`, a napi `String`,
/// `TextEncoder`): a lone surrogate becomes U+FFFD.
pub fn to_well_formed(s: &str) -> Cow<'_, str> {
  if is_plain(s) {
    return Cow::Borrowed(s);
  }
  let mut out = String::with_capacity(s.len());
  for cp in code_points(s) {
    out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
  }
  Cow::Owned(out)
}

/// Does the JS string hold a lone surrogate?
pub fn has_lone_surrogate(s: &str) -> bool {
  !is_plain(s) && code_points(s).any(|cp| (0xD800..=0xDFFF).contains(&cp))
}

/// pi-ai's `sanitizeSurrogates`: the string without its lone surrogates.
pub fn drop_lone_surrogates(s: &str) -> Cow<'_, str> {
  if !has_lone_surrogate(s) {
    return Cow::Borrowed(s);
  }
  let mut out = String::with_capacity(s.len());
  for cp in code_points(s) {
    if !(0xD800..=0xDFFF).contains(&cp) {
      push_code_point(&mut out, cp);
    }
  }
  Cow::Owned(out)
}

/// JS `WhiteSpace` + `LineTerminator` (what `trim()` and `Number()` strip).
pub fn is_js_whitespace(c: char) -> bool {
  matches!(
    c,
    '\u{9}' | '\u{A}' | '\u{B}' | '\u{C}' | '\u{D}' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
      ..='\u{200A}' | '\u{2028}' | '\u{2029}' | '\u{202F}' | '\u{205F}' | '\u{3000}' | '\u{FEFF}'
  )
}

// The escape and its payloads are not whitespace, so trimming the encoding trims the JS string.
pub fn js_trim(s: &str) -> &str {
  s.trim_matches(is_js_whitespace)
}
pub fn js_trim_start(s: &str) -> &str {
  s.trim_start_matches(is_js_whitespace)
}
pub fn js_trim_end(s: &str) -> &str {
  s.trim_end_matches(is_js_whitespace)
}

/// The UTF-16 code units of a string.
pub fn to_utf16(s: &str) -> Vec<u16> {
  if s.is_ascii() {
    return s.bytes().map(u16::from).collect();
  }
  if is_plain(s) {
    return s.encode_utf16().collect();
  }
  let mut out = Vec::with_capacity(s.len());
  for cp in code_points(s) {
    push_unit(&mut out, cp);
  }
  out
}

#[inline]
fn push_unit(out: &mut Vec<u16>, cp: u32) {
  if cp > 0xFFFF {
    let c = cp - 0x10000;
    out.push(0xD800 + (c >> 10) as u16);
    out.push(0xDC00 + (c & 0x3FF) as u16);
  } else {
    out.push(cp as u16);
  }
}

/// Decode UTF-16 code units into the encoding (exact for lone surrogates and U+10FFFF).
pub fn from_utf16(units: &[u16]) -> String {
  let mut out = String::with_capacity(units.len());
  for r in char::decode_utf16(units.iter().copied()) {
    match r {
      Ok(c) if c != ESC => out.push(c),
      Ok(c) => push_code_point(&mut out, c as u32),
      Err(e) => push_code_point(&mut out, e.unpaired_surrogate() as u32),
    }
  }
  out
}

/// `s.length` in JS.
pub fn utf16_len(s: &str) -> usize {
  if s.is_ascii() {
    return s.len();
  }
  if is_plain(s) {
    return s.chars().map(char::len_utf16).sum();
  }
  code_points(s).map(|cp| if cp > 0xFFFF { 2 } else { 1 }).sum()
}

/// The first `n` UTF-16 code units of `s` (may split a surrogate pair, as JS `slice` does).
pub fn utf16_prefix(s: &str, n: usize) -> String {
  if s.is_ascii() {
    return s[..n.min(s.len())].to_string();
  }
  let units = to_utf16(s);
  from_utf16(&units[..n.min(units.len())])
}

/// Compare by UTF-16 code units (JS default `sort()` order and `<` for strings).
pub fn cmp_utf16(a: &str, b: &str) -> Ordering {
  if a.is_ascii() && b.is_ascii() {
    return a.cmp(b);
  }
  to_utf16(a).cmp(&to_utf16(b))
}

/// UTF-8 byte length the way Node's `Buffer.byteLength(s, "utf8")` counts it: a lone surrogate is
/// written as U+FFFD (3 bytes).
pub fn node_utf8_len(s: &str) -> usize {
  if is_plain(s) {
    return s.len();
  }
  code_points(s)
    .map(|cp| match cp {
      0xD800..=0xDFFF => 3,
      _ => char::from_u32(cp).map_or(3, char::len_utf8),
    })
    .sum()
}

/// JS `toLowerCase()` (full Unicode lowering; the escape and its payloads have no case).
pub fn js_lower(s: &str) -> String {
  s.to_lowercase()
}

#[cfg(test)]
mod tests {
  use super::*;

  /// Every edge of the encoding: the block below the payloads, the payloads, the escape itself,
  /// lone highs and lows (alone, reversed, at the ends), and real pairs.
  const EDGES: &[&[u16]] = &[
    &[0x61, 0xD800, 0x62, 0xD83D, 0xDE00, 0xDC00],
    &[0xDBFF, 0xDFFF],             // U+10FFFF, the escape, as a real character
    &[0xDBFF, 0xDFFF, 0xDBFF, 0xDFFF],
    &[0xDBFF, 0xDFFF, 0xD800],     // U+10FFFF then a lone high
    &[0xDBFF, 0xDFFF, 0xDFFF],     // U+10FFFF then a lone low
    &[0xDBFD, 0xDFFF],             // U+10F7FF (the last payload char, real)
    &[0xD800, 0xDBFD, 0xDFFF],     // a lone high, then U+10F7FF
    &[0xDBFE, 0xDFFF],             // U+10FBFF
    &[0xDBFE, 0xDC00],             // U+10F800
    &[0xDBFC, 0xDC00],             // U+10F000 (first payload char, real)
    &[0xDFFF, 0xD800],             // low then high: two lone surrogates
    &[0xD800],
    &[0xDBFF],
    &[0xDC00],
    &[0xDFFF],
    &[0xDBFF, 0xDBFF, 0xDFFF, 0xDFFF], // lone high, U+10FFFF, lone low
  ];

  #[test]
  fn every_edge_round_trips() {
    for units in EDGES {
      let s = from_utf16(units);
      assert_eq!(to_utf16(&s), *units, "{units:x?}");
      assert_eq!(utf16_len(&s), units.len(), "{units:x?}");
      assert_eq!(from_utf16(&to_utf16(&s)), s);
      let wf = to_well_formed(&s);
      assert_eq!(wf.as_ref(), String::from_utf16_lossy(units), "{units:x?}");
      assert_eq!(node_utf8_len(&s), String::from_utf16_lossy(units).len());
    }
  }

  #[test]
  fn plain_text_is_stored_as_is() {
    for c in ['\u{10F7FF}', '\u{10F800}', '\u{10FFFE}', '\u{10F000}', 'a', '\u{1F600}'] {
      let s = c.to_string();
      assert_eq!(from_utf16(&s.encode_utf16().collect::<Vec<_>>()), s);
      assert!(is_plain(&s));
      assert_eq!(encode_str(&s), s);
    }
    let esc = ESC.to_string();
    assert!(!is_plain(&encode_str(&esc)));
    assert_eq!(encode_str(&esc), "\u{10FFFF}\u{10FFFF}");
    assert_eq!(to_utf16(&encode_str(&esc)), [0xDBFF, 0xDFFF]);
    // A raw escape (never encoded) still reads as U+10FFFF.
    assert_eq!(to_utf16(&esc), [0xDBFF, 0xDFFF]);
    assert_eq!(utf16_len(&esc), 2);
  }

  #[test]
  fn distinct_js_strings_have_distinct_encodings() {
    // A lone high followed by a real U+10F000 (a payload character) is not the pair ESC + payload.
    let a = from_utf16(&[0xD800, 0xDBFC, 0xDC00]);
    assert_eq!(to_utf16(&a), [0xD800, 0xDBFC, 0xDC00]);
    assert_ne!(a, from_utf16(&[0xD800]));
    assert_ne!(from_utf16(&[0xD800]), from_utf16(&[0xDBFC, 0xDC00]));
    assert_ne!(from_utf16(&[0xDBFF, 0xDFFF]), from_utf16(&[0xDFFF]));
    assert_ne!(from_utf16(&[0xDBFF, 0xDFFF, 0xDBFC, 0xDC00]), from_utf16(&[0xD800]));
  }

  #[test]
  fn comparisons_and_lengths_follow_code_units() {
    let hi = from_utf16(&[0xD800]);
    let real = "\u{10F800}";
    // U+E000 sorts after a lone high surrogate and after any astral character in UTF-16 order.
    assert_eq!(cmp_utf16(&hi, "\u{E000}"), Ordering::Less);
    assert_eq!(cmp_utf16(real, "\u{E000}"), Ordering::Less);
    assert_eq!(cmp_utf16(&hi, real), Ordering::Less);
    assert_eq!(utf16_len(real), 2);
    assert_eq!(utf16_len(&hi), 1);
    assert_eq!(code_points(&from_utf16(&[0x61, 0xDFFF, 0xDBFF, 0xDFFF])).collect::<Vec<_>>(), [0x61, 0xDFFF, 0x10FFFF]);
    assert_eq!(drop_lone_surrogates(&from_utf16(&[0x61, 0xD800, 0xDBFF, 0xDFFF])), "a\u{10FFFF}\u{10FFFF}");
  }

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
    let p = utf16_prefix("\u{10FFFF}\u{10FFFF}b", 1);
    assert_eq!(to_utf16(&p), [0xDBFF]);
  }
}

//! Low-level text machinery for the grammar parsers, all over UTF-16 code units so every offset
//! is a JavaScript string index.
//!
//! Regular expressions run on `regress` (ECMAScript syntax and semantics). Two adaptations keep
//! them faithful to V8:
//! * a pattern without the `u` flag sees the text as UCS-2 (one element per code unit), a `u`
//!   pattern as UTF-16 code points;
//! * under `i` without `u`, `regress` lets three non-ASCII letters (U+0131 dotless i, U+017F long
//!   s, U+212A Kelvin sign) match ASCII letters, which JavaScript's `Canonicalize` forbids. Those
//!   code units are swapped for an inert private-use unit before such a pattern runs; offsets are
//!   unchanged and captured text is always read from the caller's original units.

use std::borrow::Cow;
use std::ops::Range;

use regress::{Flags, Regex};

use crate::repair::text::{from_utf16, is_js_whitespace};

/// Text handed to the patterns: the caller's code units plus, for patterns compiled with `i` but
/// not `u`, a copy with the fold traps neutralised. Both have identical offsets; captured text is
/// always read from `raw`.
#[derive(Clone, Copy, Debug)]
pub struct Hay<'a> {
  pub raw: &'a [u16],
  safe: &'a [u16],
}

/// Code units `regress` folds onto ASCII letters under `i` without `u` (JS does not).
const FOLD_TRAPS: [u16; 3] = [0x0131, 0x017F, 0x212A];
/// A private-use unit with no case mapping that none of the positive classes contain.
const INERT: u16 = 0xE000;

/// The trap-free copy of `raw` (borrowed when there is nothing to replace).
pub fn neutralise(raw: &[u16]) -> Cow<'_, [u16]> {
  // Every trap is non-ASCII: a branch-free ASCII check (vectorised) settles the common case.
  if raw.iter().fold(0u16, |acc, &u| acc | u) < 0x80 {
    return Cow::Borrowed(raw);
  }
  if raw.iter().any(|u| FOLD_TRAPS.contains(u)) {
    Cow::Owned(
      raw
        .iter()
        .map(|&u| if FOLD_TRAPS.contains(&u) { INERT } else { u })
        .collect(),
    )
  } else {
    Cow::Borrowed(raw)
  }
}

impl<'a> Hay<'a> {
  /// `safe` must be `neutralise(raw)`.
  pub fn new(raw: &'a [u16], safe: &'a [u16]) -> Hay<'a> {
    debug_assert_eq!(raw.len(), safe.len());
    Hay { raw, safe }
  }
  pub fn len(&self) -> usize {
    self.raw.len()
  }
  pub fn slice(&self, r: Range<usize>) -> Hay<'a> {
    Hay {
      raw: &self.raw[r.clone()],
      safe: &self.safe[r],
    }
  }
  pub fn from(&self, start: usize) -> Hay<'a> {
    self.slice(start..self.len())
  }
  pub fn trim(&self) -> Hay<'a> {
    let start = self.len() - trim_start(self.raw).len();
    let end = start + trim(&self.raw[start..]).len();
    self.slice(start..end)
  }
}

/// One match of a pattern: the whole span and its capture groups, relative to the searched hay.
#[derive(Clone, Debug)]
pub struct Hit {
  pub range: Range<usize>,
  groups: Vec<Option<Range<usize>>>,
}

impl Hit {
  pub fn start(&self) -> usize {
    self.range.start
  }
  pub fn end(&self) -> usize {
    self.range.end
  }
  /// Capture group `n` (1-based) as a range, if it participated.
  pub fn group(&self, n: usize) -> Option<Range<usize>> {
    self.groups.get(n - 1).cloned().flatten()
  }
  /// Capture group `n` of `hay` (empty when it did not participate, like `m[n] ?? ""`).
  pub fn slice<'a>(&self, hay: Hay<'a>, n: usize) -> Hay<'a> {
    match self.group(n) {
      Some(r) => hay.slice(r),
      None => hay.slice(0..0),
    }
  }
  /// A match found by one of the hand-written scanners.
  pub fn new(range: Range<usize>, groups: Vec<Option<Range<usize>>>) -> Hit {
    Hit { range, groups }
  }
}

/// A compiled JavaScript regular expression.
///
/// An optional *tail* keeps lazy `open[\s\S]*?close` patterns from going quadratic: it is a
/// pattern every match must end with (and no assertion looks past a match end), so the hay can be
/// cut after the last tail occurrence without changing any match; an opener with no closer after
/// it then fails at once instead of scanning to the end of the text.
pub struct Re {
  re: Regex,
  flags: Flags,
  unicode: bool,
  guard: bool,
  tail: Option<Box<Re>>,
}

impl Re {
  /// Compile `pattern` with JS flags (`g` is implied by how the helpers iterate).
  pub fn new(pattern: &str, flags: &str) -> Re {
    let parsed = Flags::from(flags);
    Re {
      re: compile(pattern, parsed),
      flags: parsed,
      unicode: parsed.unicode,
      guard: parsed.icase && !parsed.unicode,
      tail: None,
    }
  }

  /// Attach the tail every match ends with (compiled with the same flags).
  pub fn tail(mut self, pattern: &str) -> Re {
    self.tail = Some(Box::new(Re {
      re: compile(pattern, self.flags),
      flags: self.flags,
      unicode: self.unicode,
      guard: self.guard,
      tail: None,
    }));
    self
  }

  fn input<'a>(&self, hay: Hay<'a>) -> &'a [u16] {
    if self.guard {
      hay.safe
    } else {
      hay.raw
    }
  }

  fn run(&self, re: &Regex, input: &[u16], from: usize, limit: usize) -> Vec<Hit> {
    let to_hit = |m: regress::Match| Hit {
      range: m.range.clone(),
      groups: m.captures,
    };
    if self.unicode {
      re.find_from_utf16(input, from).take(limit).map(to_hit).collect()
    } else {
      re.find_from_ucs2(input, from).take(limit).map(to_hit).collect()
    }
  }

  /// Where matches must end by: after the last tail occurrence (`None`: no match is possible).
  fn cut(&self, hay: Hay) -> Option<usize> {
    match &self.tail {
      None => Some(hay.len()),
      Some(tail) => tail.all(hay).last().map(Hit::end),
    }
  }

  fn collect(&self, hay: Hay, from: usize, limit: usize) -> Vec<Hit> {
    if from > hay.len() {
      return Vec::new();
    }
    let Some(cut) = self.cut(hay) else {
      return Vec::new();
    };
    if from > cut {
      return Vec::new();
    }
    self.run(&self.re, &self.input(hay)[..cut], from, limit)
  }

  /// Every match, left to right, as `String.prototype.matchAll` yields them.
  pub fn all(&self, hay: Hay) -> Vec<Hit> {
    self.collect(hay, 0, usize::MAX)
  }

  /// The first match starting at or after `from` (a global regex's `exec` with `lastIndex`).
  pub fn first_from(&self, hay: Hay, from: usize) -> Option<Hit> {
    self.collect(hay, from, 1).pop()
  }

  /// `re.test(hay)`.
  pub fn test(&self, hay: Hay) -> bool {
    self.first_from(hay, 0).is_some()
  }

  /// `re.test(units)` for text that is not a slice of a prepared hay.
  pub fn test_units(&self, units: &[u16]) -> bool {
    let safe = if self.guard {
      neutralise(units)
    } else {
      Cow::Borrowed(units)
    };
    self.test(Hay::new(units, &safe))
  }
}

fn compile(pattern: &str, flags: Flags) -> Regex {
  Regex::with_flags(pattern, flags).unwrap_or_else(|e| panic!("bad built-in pattern {pattern}: {e}"))
}

/// Positions of the non-overlapping "```" runs, found left to right. A position `p` is inside a
/// fence when an odd number of them end at or before `p` (the count `text.slice(0, p)` would see).
pub struct Fences {
  starts: Vec<usize>,
}

impl Fences {
  pub fn new(text: &[u16]) -> Fences {
    let mut starts = Vec::new();
    let mut i = 0;
    while i + 3 <= text.len() {
      if text[i] == b'`' as u16 && text[i + 1] == b'`' as u16 && text[i + 2] == b'`' as u16 {
        starts.push(i);
        i += 3;
      } else {
        i += 1;
      }
    }
    Fences { starts }
  }

  pub fn inside(&self, p: usize) -> bool {
    self.starts.partition_point(|&s| s + 3 <= p) % 2 == 1
  }
}

/// The code units of an ASCII literal.
pub fn units(s: &str) -> Vec<u16> {
  s.encode_utf16().collect()
}

/// `text.indexOf(needle, from)`.
pub fn index_of(text: &[u16], needle: &[u16], from: usize) -> Option<usize> {
  if needle.is_empty() {
    return Some(from.min(text.len()));
  }
  let first = needle[0];
  let mut i = from;
  while i + needle.len() <= text.len() {
    match text[i..=text.len() - needle.len()].iter().position(|&u| u == first) {
      None => return None,
      Some(off) => {
        i += off;
        if text[i..i + needle.len()] == *needle {
          return Some(i);
        }
        i += 1;
      }
    }
  }
  None
}

/// JS `\s` (the same set `trim` strips).
pub fn is_ws(u: u16) -> bool {
  char::from_u32(u as u32).is_some_and(is_js_whitespace)
}

/// `String.prototype.trim` over code units (the JS whitespace set is all in the BMP).
pub fn trim(s: &[u16]) -> &[u16] {
  trim_end(trim_start(s))
}

pub fn trim_start(s: &[u16]) -> &[u16] {
  let skip = s.iter().position(|&u| !is_ws(u)).unwrap_or(s.len());
  &s[skip..]
}

pub fn trim_end(s: &[u16]) -> &[u16] {
  let keep = s.iter().rposition(|&u| !is_ws(u)).map_or(0, |i| i + 1);
  &s[..keep]
}

/// `s.trim().split(/\s+/)[0]`: the first whitespace-delimited token of the trimmed text.
pub fn first_token(s: &[u16]) -> &[u16] {
  let t = trim(s);
  let end = t.iter().position(|&u| is_ws(u)).unwrap_or(t.len());
  &t[..end]
}

pub fn string(s: &[u16]) -> String {
  from_utf16(s)
}

/// JS `\w` without `u`+`i`: `[A-Za-z0-9_]`.
pub fn is_word(u: u16) -> bool {
  u < 128 && ((u as u8).is_ascii_alphanumeric() || u == b'_' as u16)
}

/// `/^[A-Za-z_][\w.-]*$/.test(s)` (no flags, so ASCII only).
pub fn is_identifier(s: &[u16]) -> bool {
  match s.split_first() {
    None => false,
    Some((&first, rest)) => {
      first < 128
        && ((first as u8).is_ascii_alphabetic() || first == b'_' as u16)
        && rest.iter().all(|&u| is_word(u) || u == b'.' as u16 || u == b'-' as u16)
    }
  }
}

/// `s.replace(/\bWORD\b/g, to)` for an ASCII word.
pub fn replace_word(s: &[u16], word: &str, to: &str) -> Vec<u16> {
  let w = units(word);
  let t = units(to);
  let mut out = Vec::with_capacity(s.len());
  let mut i = 0;
  while i < s.len() {
    let fits = i + w.len() <= s.len() && s[i..i + w.len()] == w[..];
    let left_ok = i == 0 || !is_word(s[i - 1]);
    let right_ok = i + w.len() >= s.len() || !is_word(s[i + w.len()]);
    if fits && left_ok && right_ok {
      out.extend_from_slice(&t);
      i += w.len();
    } else {
      out.push(s[i]);
      i += 1;
    }
  }
  out
}

const QUOTE_D: u16 = b'"' as u16;
const QUOTE_S: u16 = b'\'' as u16;
const BACKSLASH: u16 = b'\\' as u16;

/// Index of the closer that brings the depth opened at `open` back to zero, skipping `"`/`'`
/// quoted runs (a backslash escapes one unit inside them).
pub fn find_matching(text: &[u16], open: usize, opener: u16, closer: u16) -> Option<usize> {
  let mut depth: i64 = 0;
  let mut quote: Option<u16> = None;
  let mut escaped = false;
  for (i, &ch) in text.iter().enumerate().skip(open) {
    if let Some(q) = quote {
      if escaped {
        escaped = false;
      } else if ch == BACKSLASH {
        escaped = true;
      } else if ch == q {
        quote = None;
      }
      continue;
    }
    if ch == QUOTE_D || ch == QUOTE_S {
      quote = Some(ch);
      continue;
    }
    if ch == opener {
      depth += 1;
    }
    if ch == closer {
      depth -= 1;
      if depth == 0 {
        return Some(i);
      }
    }
  }
  None
}

/// The first `[`/`{` of `text` and its balanced extent: `(start, end_exclusive)`.
pub fn first_balanced_json(text: &[u16]) -> Option<(usize, usize)> {
  let start = text.iter().position(|&u| u == b'[' as u16 || u == b'{' as u16)?;
  let closer = if text[start] == b'{' as u16 { b'}' } else { b']' } as u16;
  let end = find_matching(text, start, text[start], closer)?;
  Some((start, end + 1))
}

/// Walk `text` at bracket depth zero outside quotes, calling `hit` for each unit equal to
/// `target`; stop early when `hit` returns false.
fn top_level_walk(text: &[u16], target: u16, mut hit: impl FnMut(usize) -> bool) {
  let mut depth: i64 = 0;
  let mut quote: Option<u16> = None;
  let mut escaped = false;
  for (i, &ch) in text.iter().enumerate() {
    if let Some(q) = quote {
      if escaped {
        escaped = false;
      } else if ch == BACKSLASH {
        escaped = true;
      } else if ch == q {
        quote = None;
      }
      continue;
    }
    if ch == QUOTE_D || ch == QUOTE_S {
      quote = Some(ch);
      continue;
    }
    if [b'(', b'[', b'{'].iter().any(|&b| ch == b as u16) {
      depth += 1;
    }
    if [b')', b']', b'}'].iter().any(|&b| ch == b as u16) {
      depth -= 1;
    }
    if ch == target && depth == 0 && !hit(i) {
      return;
    }
  }
}

/// Split on top-level `delimiter`, trim the parts and drop empty ones.
pub fn split_top_level(text: &[u16], delimiter: u16) -> Vec<&[u16]> {
  let mut cuts = Vec::new();
  top_level_walk(text, delimiter, |i| {
    cuts.push(i);
    true
  });
  let mut parts = Vec::with_capacity(cuts.len() + 1);
  let mut start = 0;
  for cut in cuts {
    parts.push(&text[start..cut]);
    start = cut + 1;
  }
  parts.push(&text[start..]);
  parts.into_iter().map(trim).filter(|p| !p.is_empty()).collect()
}

/// Index of the first top-level `target`.
pub fn find_top_level(text: &[u16], target: u16) -> Option<usize> {
  let mut found = None;
  top_level_walk(text, target, |i| {
    found = Some(i);
    false
  });
  found
}

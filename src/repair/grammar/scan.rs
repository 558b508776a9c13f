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
use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Range;
use std::rc::Rc;

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
/// `regress` built with UTF-16 support tries a match at every position of the text (its start
/// predicates are compiled out), so a search over 100 KB costs 100,000 attempts. Two things keep
/// searches proportional to the places a match can start:
/// * a *first-unit set* read off the pattern (its leading literal, both cases under `i`): only
///   positions holding one of those units are tried, found with `memchr`; a pattern anchored with
///   `^` (no `m`) is tried at position 0 only;
/// * each try is *sticky*: the pattern runs as `(?:pattern)|`, whose empty alternative matches at
///   the very position tried, so `regress` answers for that one position and stops (an empty
///   answer means the pattern itself failed there). The alternation keeps the pattern's own
///   backtracking order, so the match found is the one a JS `y`-flagged search finds.
///
/// An optional *tail* keeps lazy `open[\s\S]*?close` patterns from going quadratic: it is a
/// pattern every match must end with (and no assertion looks past a match end), so the hay can be
/// cut after the last tail occurrence without changing any match; an opener with no closer after
/// it then fails at once instead of scanning to the end of the text. The tail occurrences are
/// found once per text and remembered (`reset_cut_memo` forgets them when a new text is scanned).
///
/// The tail also bounds each try. `regress` runs a lazy one-unit loop such as `[\s\S]*?` by first
/// walking as far as the loop could go (to the end of the input) and only then trying the
/// continuation, so a try costs the rest of the text, and many matches cost its square. A try at
/// `at` therefore first runs on the input cut after the first tail occurrence ending after `at`,
/// then after the 2nd, 4th, 8th, … and finally on the whole cut input; the first success is the
/// match. That equals the match on the whole input for the patterns given a tail, which all have
/// the form `A [\s\S]*? C`: no assertions, `A` matches in at most one way, the match ends where a
/// tail occurrence ends, and of two matches of `C` the one starting earlier never ends later. A
/// path that fails only because it reads past a cut would be a match of `C` starting before the
/// successful one and ending after it, which cannot exist (`tails_never_change_matches` and
/// `every_tailed_pattern_equals_its_plain_search` compare with the plain search).
pub struct Re {
  re: Regex,
  sticky: Regex,
  first: First,
  prefix: Vec<u16>,
  flags: Flags,
  unicode: bool,
  guard: bool,
  tail: Option<Box<Re>>,
  #[cfg(test)]
  source: (String, String),
}

/// Where a match of a pattern can start.
#[derive(Clone, Debug, PartialEq)]
enum First {
  /// Anywhere.
  Any,
  /// Only at position 0 (`^` without `m`, no top-level alternation).
  Start,
  /// Only at a unit of this set (ASCII units, at most three).
  Units(Vec<u16>),
}

/// Does the pattern have a `|` outside every group and class?
fn has_top_level_alternation(pattern: &str) -> bool {
  let mut depth = 0i32;
  let mut in_class = false;
  let mut chars = pattern.chars();
  while let Some(c) = chars.next() {
    match c {
      '\\' => {
        chars.next();
      }
      '[' if !in_class => in_class = true,
      ']' if in_class => in_class = false,
      '(' if !in_class => depth += 1,
      ')' if !in_class => depth -= 1,
      '|' if !in_class && depth == 0 => return true,
      _ => {}
    }
  }
  false
}

/// The first-unit set of a pattern: its leading literal character when that character is
/// required (not quantified away) and every alternative starts with it.
fn first_units(pattern: &str, flags: Flags) -> First {
  if has_top_level_alternation(pattern) {
    return First::Any;
  }
  let mut chars = pattern.chars();
  let (lit, rest) = match chars.next() {
    Some('^') if !flags.multiline => return First::Start,
    Some('\\') => match chars.next() {
      Some(c) if "/[]{}()|.*+?^$\\-<>".contains(c) => (c, chars.as_str()),
      _ => return First::Any,
    },
    Some(c) if !".[(*+?{|^$)".contains(c) => (c, chars.as_str()),
    _ => return First::Any,
  };
  if rest.starts_with(['?', '*', '{']) || !lit.is_ascii() {
    return First::Any;
  }
  let mut set = vec![lit as u16];
  if flags.icase && lit.is_ascii_alphabetic() {
    set = vec![lit.to_ascii_lowercase() as u16, lit.to_ascii_uppercase() as u16];
    // Under `iu`, U+017F folds to `s` and U+212A to `k`.
    if flags.unicode {
      match lit.to_ascii_lowercase() {
        's' => set.push(0x017F),
        'k' => set.push(0x212A),
        _ => {}
      }
    }
  }
  First::Units(set)
}

/// The literal every match begins with (ASCII only; letters compared case-insensitively under
/// `i`), read off the pattern up to its first metacharacter. A unit followed by a quantifier is
/// not part of it.
fn literal_prefix(pattern: &str, flags: Flags) -> Vec<u16> {
  if has_top_level_alternation(pattern) {
    return Vec::new();
  }
  let mut out: Vec<u16> = Vec::new();
  let mut chars = pattern.chars().peekable();
  while let Some(c) = chars.next() {
    let lit = match c {
      '\\' => match chars.next() {
        Some(e) if "/[]{}()|.*+?^$\\-<>".contains(e) => e,
        _ => break,
      },
      c if ".[(*+?{|^$)".contains(c) => break,
      c => c,
    };
    if !lit.is_ascii() || (flags.icase && flags.unicode && matches!(lit.to_ascii_lowercase(), 's' | 'k')) {
      break;
    }
    if matches!(chars.peek(), Some('?' | '*' | '{' | '+')) {
      break;
    }
    out.push(lit as u16);
  }
  out
}

/// Does `input` hold `prefix` at `at` (ASCII letters folded when `icase`)?
fn has_prefix(input: &[u16], at: usize, prefix: &[u16], icase: bool) -> bool {
  let Some(window) = input.get(at..at + prefix.len()) else {
    return false;
  };
  window.iter().zip(prefix).all(|(&u, &p)| {
    u == p || (icase && p < 0x80 && (p as u8).is_ascii_alphabetic() && u == (p ^ 0x20))
  })
}

/// The next position at or after `from` whose unit is in `set`.
pub fn find_unit(input: &[u16], from: usize, set: &[u16]) -> Option<usize> {
  if set.iter().any(|&u| u >= 0x80) {
    return input.get(from..)?.iter().position(|u| set.contains(u)).map(|i| from + i);
  }
  let tail = input.get(from..)?;
  // SAFETY: a `[u16]` is readable as twice as many bytes (alignment 1, same allocation).
  let bytes = unsafe { std::slice::from_raw_parts(tail.as_ptr().cast::<u8>(), tail.len() * 2) };
  let mut at = 0;
  loop {
    let hit = match set {
      [a] => memchr::memchr(*a as u8, &bytes[at..]),
      [a, b] => memchr::memchr2(*a as u8, *b as u8, &bytes[at..]),
      [a, b, c, ..] => memchr::memchr3(*a as u8, *b as u8, *c as u8, &bytes[at..]),
      [] => return None,
    }? + at;
    // A unit's low byte comes first on little-endian machines; an ASCII unit's high byte is 0.
    let unit = hit / 2;
    if hit % 2 == 0 && set.contains(&tail[unit]) {
      return Some(from + unit);
    }
    at = hit + 1;
  }
}

/// Tail occurrence ends already found in slices of the text being scanned, keyed by (tail
/// address, hay address, hay length); only hays inside `text` (an address range) are remembered,
/// so a temporary buffer reusing an address is never mistaken for another.
struct CutMemo {
  text: (usize, usize),
  ends: HashMap<(usize, usize, usize), Rc<[usize]>>,
}

thread_local! {
  static CUTS: RefCell<Option<CutMemo>> = const { RefCell::new(None) };
}

/// Forget the remembered tail occurrences and remember those of slices of `text` from now on
/// (call before scanning a new text).
pub fn reset_cut_memo(text: &[u16]) {
  let start = text.as_ptr() as usize;
  CUTS.with(|c| {
    let mut c = c.borrow_mut();
    let memo = c.get_or_insert_with(|| CutMemo {
      text: (0, 0),
      ends: HashMap::new(),
    });
    memo.ends.clear();
    memo.text = (start, start + text.len() * 2);
  });
}

/// Work counters for the growth tests: regex tries and the units handed to them (the most a try
/// can read), and units walked by the bracket scanners.
#[cfg(test)]
pub mod work {
  use std::cell::Cell;
  thread_local! {
    pub static UNITS: Cell<u64> = const { Cell::new(0) };
  }
  pub fn add(n: usize) {
    UNITS.with(|c| c.set(c.get() + n as u64));
  }
  pub fn take() -> u64 {
    UNITS.with(|c| c.replace(0))
  }
}

#[cfg(not(test))]
pub mod work {
  #[inline(always)]
  pub fn add(_: usize) {}
}

/// Tests switch the linear-time helpers back to the plain scans they replace (one scan per
/// query, untailed searches) to compare results.
#[cfg(test)]
pub mod plain {
  use std::cell::Cell;
  thread_local! {
    static ON: Cell<bool> = const { Cell::new(false) };
  }
  pub fn on() -> bool {
    ON.with(Cell::get)
  }
  pub fn set(on: bool) {
    ON.with(|c| c.set(on));
  }
}

#[cfg(not(test))]
pub mod plain {
  #[inline(always)]
  pub fn on() -> bool {
    false
  }
}

impl Re {
  /// Compile `pattern` with JS flags (`g` is implied by how the helpers iterate).
  pub fn new(pattern: &str, flags: &str) -> Re {
    let parsed = Flags::from(flags);
    Re {
      re: compile(pattern, parsed),
      sticky: compile(&format!("(?:{pattern})|"), parsed),
      first: first_units(pattern, parsed),
      prefix: literal_prefix(pattern, parsed),
      flags: parsed,
      unicode: parsed.unicode,
      guard: parsed.icase && !parsed.unicode,
      tail: None,
      #[cfg(test)]
      source: (pattern.to_string(), flags.to_string()),
    }
  }

  /// The same pattern without its tail (the plain search the tail must not change).
  #[cfg(test)]
  pub fn untailed(&self) -> Re {
    Re::new(&self.source.0, &self.source.1)
  }

  #[cfg(test)]
  pub fn has_tail(&self) -> bool {
    self.tail.is_some()
  }

  /// Attach the tail every match ends with (compiled with the same flags).
  pub fn tail(mut self, pattern: &str) -> Re {
    let mut tail = Re::new(pattern, "");
    tail.flags = self.flags;
    tail.re = compile(pattern, self.flags);
    tail.sticky = compile(&format!("(?:{pattern})|"), self.flags);
    tail.first = first_units(pattern, self.flags);
    tail.prefix = literal_prefix(pattern, self.flags);
    tail.unicode = self.unicode;
    tail.guard = self.guard;
    debug_assert!(matches!(self.first, First::Units(_)), "a tailed pattern starts with a literal");
    self.tail = Some(Box::new(tail));
    self
  }

  fn input<'a>(&self, hay: Hay<'a>) -> &'a [u16] {
    if self.guard {
      hay.safe
    } else {
      hay.raw
    }
  }

  /// The pattern tried at exactly `at` (a sticky search).
  fn attempt(&self, input: &[u16], at: usize) -> Option<Hit> {
    if !has_prefix(input, at, &self.prefix, self.flags.icase) {
      return None;
    }
    let m = if self.unicode {
      self.sticky.find_from_utf16(input, at).next()
    } else {
      self.sticky.find_from_ucs2(input, at).next()
    }?;
    // Work: a tailed try can read its whole (cut) input; any other try, what it matched.
    work::add(1 + if self.tail.is_some() { input.len() - at } else { m.range.len() });
    (m.range.start == at && !m.range.is_empty()).then(|| Hit {
      range: m.range.clone(),
      groups: m.captures,
    })
  }

  /// The try at `at` on inputs cut after growing numbers of tail occurrences (`ends`: where the
  /// occurrences end, ascending; the last is `input.len()`).
  fn attempt_within(&self, input: &[u16], at: usize, ends: Option<&[usize]>) -> Option<Hit> {
    let Some(ends) = ends else {
      return self.attempt(input, at);
    };
    if !has_prefix(input, at, &self.prefix, self.flags.icase) {
      return None;
    }
    let last = ends.len().checked_sub(1)?;
    let mut j = ends.partition_point(|&e| e <= at);
    let mut step = 1;
    while j <= last {
      if let Some(hit) = self.attempt(&input[..ends[j]], at) {
        return Some(hit);
      }
      if j == last {
        break;
      }
      j = (j + step).min(last);
      step *= 2;
    }
    None
  }

  fn run(&self, input: &[u16], from: usize, limit: usize, ends: Option<&[usize]>) -> Vec<Hit> {
    let to_hit = |m: regress::Match| Hit {
      range: m.range.clone(),
      groups: m.captures,
    };
    match &self.first {
      First::Any => {
        work::add(input.len().saturating_sub(from));
        if self.unicode {
          self.re.find_from_utf16(input, from).take(limit).map(to_hit).collect()
        } else {
          self.re.find_from_ucs2(input, from).take(limit).map(to_hit).collect()
        }
      }
      First::Start => {
        if from == 0 && limit > 0 {
          self.attempt_within(input, 0, ends).into_iter().collect()
        } else {
          Vec::new()
        }
      }
      First::Units(set) => {
        let mut out = Vec::new();
        let mut pos = from;
        while out.len() < limit {
          let Some(at) = find_unit(input, pos, set) else { break };
          match self.attempt_within(input, at, ends) {
            Some(hit) => {
              pos = hit.end().max(at + 1);
              out.push(hit);
            }
            None => pos = at + 1,
          }
        }
        out
      }
    }
  }

  /// Where the tail occurrences of `hay` end, ascending (`None`: no tail).
  fn tail_ends(&self, hay: Hay) -> Option<Rc<[usize]>> {
    let tail = self.tail.as_ref()?;
    let find = || -> Rc<[usize]> { tail.all(hay).iter().map(Hit::end).collect() };
    let at = hay.raw.as_ptr() as usize;
    let key = (std::ptr::from_ref::<Re>(tail) as usize, at, hay.len());
    Some(CUTS.with(|c| {
      let inside = c
        .borrow()
        .as_ref()
        .filter(|m| at >= m.text.0 && at + hay.len() * 2 <= m.text.1)
        .map(|m| m.ends.get(&key).cloned());
      match inside {
        Some(Some(found)) => found,
        Some(None) => {
          let found = find();
          if let Some(m) = c.borrow_mut().as_mut() {
            m.ends.insert(key, found.clone());
          }
          found
        }
        None => find(),
      }
    }))
  }

  fn collect(&self, hay: Hay, from: usize, limit: usize) -> Vec<Hit> {
    if from > hay.len() {
      return Vec::new();
    }
    if plain::on() {
      return self.run(self.input(hay), from, limit, None);
    }
    let ends = self.tail_ends(hay);
    // Matches end by the last tail occurrence (none: no match is possible).
    let cut = match &ends {
      None => hay.len(),
      Some(ends) => match ends.last() {
        Some(&cut) => cut,
        None => return Vec::new(),
      },
    };
    if from > cut {
      return Vec::new();
    }
    self.run(&self.input(hay)[..cut], from, limit, ends.as_deref())
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
    // Prose is full of single backticks; only runs of three matter, so look for those directly.
    static FENCE: std::sync::OnceLock<memchr::memmem::Finder<'static>> = std::sync::OnceLock::new();
    let finder = FENCE.get_or_init(|| memchr::memmem::Finder::new(b"`\0`\0`\0"));
    // SAFETY: a `[u16]` is readable as twice as many bytes (alignment 1, same allocation).
    let bytes = unsafe { std::slice::from_raw_parts(text.as_ptr().cast::<u8>(), text.len() * 2) };
    let mut starts = Vec::new();
    let mut at = 0;
    while let Some(hit) = finder.find(&bytes[at..]).map(|h| h + at) {
      // Little-endian units: an odd offset would straddle two units.
      if hit % 2 == 0 {
        starts.push(hit / 2);
        at = hit + 6;
      } else {
        at = hit + 1;
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
  let first = [needle[0]];
  let mut i = from;
  while i + needle.len() <= text.len() {
    let at = find_unit(text, i, &first)?;
    if at + needle.len() > text.len() {
      return None;
    }
    if text[at..at + needle.len()] == *needle {
      return Some(at);
    }
    i = at + 1;
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
    work::add(1);
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
    work::add(1);
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

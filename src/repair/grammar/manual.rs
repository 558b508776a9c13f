//! Linear-time equivalents of reference steps that go quadratic on long inputs: hand-written
//! scanners for three patterns (`regress` cannot anchor a search at one position, so probing line
//! starts with it would be quadratic too), a memo for repeated searches from increasing offsets,
//! and shared bracket matching for many openers. Each yields exactly what the reference computes;
//! the unit tests compare them with the regex or the plain scan on generated texts.

use std::collections::HashMap;

use super::scan::{find_matching, find_unit, first_balanced_json, index_of, is_word, is_ws, plain, work, Hay, Hit, Re};

const NL: u16 = b'\n' as u16;

fn skip_ws(t: &[u16], mut i: usize) -> usize {
  while i < t.len() && is_ws(t[i]) {
    i += 1;
  }
  i
}

fn next_newline(t: &[u16], from: usize) -> Option<usize> {
  find_unit(t, from, &[NL])
}

/// Does `lit` (ASCII) occur at `i`, letters compared ASCII-case-insensitively? (JS `i` without
/// `u` never folds a non-ASCII unit onto an ASCII letter.)
fn literal_ci(t: &[u16], i: usize, lit: &str) -> bool {
  let lit = lit.as_bytes();
  i + lit.len() <= t.len()
    && t[i..i + lit.len()]
      .iter()
      .zip(lit)
      .all(|(&u, &b)| u == b as u16 || (b.is_ascii_alphabetic() && u == (b ^ 0x20) as u16))
}

/// Candidate starts of a `(?:^|\n)\s*X` pattern where `X` never matches white space, in order.
/// Every start inside one white-space run reaches the same `X` position, hence the same outcome,
/// so after a failure the rest of the run is skipped; `attempt(start, x)` returns a match end.
fn line_starts(t: &[u16], mut attempt: impl FnMut(usize, usize) -> Option<Hit>) -> Vec<Hit> {
  let mut out = Vec::new();
  let mut candidate = Some(0);
  while let Some(c) = candidate {
    let x = skip_ws(t, c);
    match attempt(c, x) {
      Some(hit) => {
        candidate = next_newline(t, hit.end().max(c + 1));
        out.push(hit);
      }
      None => candidate = next_newline(t, x.max(c + 1)),
    }
  }
  out
}

/// `/(?:^|\n)\s*([A-Za-z_][\w.-]*)\s*\(/g`: every step is forced (no backtracking can help), so a
/// single left-to-right pass decides each start.
pub fn pythonic_lines(t: &[u16]) -> Vec<Hit> {
  let ident_start = |u: u16| u < 128 && ((u as u8).is_ascii_alphabetic() || u == b'_' as u16);
  let ident = |u: u16| is_word(u) || u == b'.' as u16 || u == b'-' as u16;
  line_starts(t, |c, x| {
    if !t.get(x).is_some_and(|&u| ident_start(u)) {
      return None;
    }
    let mut j = x + 1;
    while j < t.len() && ident(t[j]) {
      j += 1;
    }
    let k = skip_ws(t, j);
    (t.get(k) == Some(&(b'(' as u16))).then(|| Hit::new(c..k + 1, vec![Some(x..j)]))
  })
}

/// `/(?:^|\n)(\s*)invoke\s+name=["']([^"']+)["']\s*>([\s\S]*?)(?:\n\s*(?:\/invoke|invoke)>|$)/gi`
/// (groups: leading space, name, body). The body ends at the first line break whose following
/// white-space run is followed by `/invoke>` or `invoke>`, else at the end of the text.
pub fn malformed_invokes(t: &[u16]) -> Vec<Hit> {
  let quote = |u: u16| u == b'"' as u16 || u == b'\'' as u16;
  line_starts(t, |c, x| {
    if !literal_ci(t, x, "invoke") {
      return None;
    }
    let j = skip_ws(t, x + 6);
    if j == x + 6 || !literal_ci(t, j, "name=") || !t.get(j + 5).is_some_and(|&u| quote(u)) {
      return None;
    }
    let name_start = j + 6;
    let name_end = t[name_start..].iter().position(|&u| quote(u)).map(|i| name_start + i)?;
    if name_end == name_start {
      return None;
    }
    let gt = skip_ws(t, name_end + 1);
    if t.get(gt) != Some(&(b'>' as u16)) {
      return None;
    }
    let body_start = gt + 1;
    let (body_end, end) = body_close(t, body_start);
    let lead = if c == 0 { 0 } else { c + 1 };
    Some(Hit::new(
      c..end,
      vec![Some(lead..x), Some(name_start..name_end), Some(body_start..body_end)],
    ))
  })
}

/// The lazy body end of [`malformed_invokes`] and the match end.
fn body_close(t: &[u16], body_start: usize) -> (usize, usize) {
  let mut q = next_newline(t, body_start);
  while let Some(nl) = q {
    let r = skip_ws(t, nl + 1);
    if t.get(r) == Some(&(b'/' as u16)) && literal_ci(t, r + 1, "invoke>") {
      return (nl, r + 8);
    }
    if literal_ci(t, r, "invoke>") {
      return (nl, r + 7);
    }
    // Every line break in the same white-space run reaches the same `r`.
    q = next_newline(t, r.max(nl + 1));
  }
  (t.len(), t.len())
}

/// `first_from` with a one-entry memo: searches start at non-decreasing offsets, and the first
/// match at or after `q` is also the first at or after any `q'` in `q..=match.start` (no match
/// after `q` means none after `q'`).
pub struct SearchMemo<'r> {
  re: &'r Re,
  last: Option<(usize, Option<Hit>)>,
}

impl<'r> SearchMemo<'r> {
  pub fn new(re: &'r Re) -> SearchMemo<'r> {
    SearchMemo { re, last: None }
  }
  pub fn first_from(&mut self, hay: Hay, from: usize) -> Option<Hit> {
    if let Some((q, found)) = &self.last {
      if from >= *q && found.as_ref().is_none_or(|h| from <= h.start()) {
        return found.clone();
      }
    }
    let found = self.re.first_from(hay, from);
    self.last = Some((from, found.clone()));
    found
  }
}

/// `/<(tool_call|tools)>[\s\S]*?<\/\1>/gi` (group 1 = tag): an opener matches up to the first
/// closer of the same tag (case-insensitively, as the back-reference compares under `i`);
/// openers inside an earlier match are skipped, and one without a closer simply fails.
pub fn xml_wrappers(hay: Hay, open: &Re, close_tool_call: &Re, close_tools: &Re) -> Vec<Hit> {
  let mut tool_call = SearchMemo::new(close_tool_call);
  let mut tools = SearchMemo::new(close_tools);
  let mut out = Vec::new();
  let mut pos = 0;
  for o in open.all(hay) {
    if o.start() < pos {
      continue;
    }
    let Some(tag) = o.group(1) else {
      continue;
    };
    let closer = if tag.len() == "tools".len() {
      &mut tools
    } else {
      &mut tool_call
    };
    if let Some(c) = closer.first_from(hay, o.end()) {
      pos = c.end();
      out.push(Hit::new(o.start()..c.end(), vec![Some(tag)]));
    }
  }
  out
}

/// `find_matching` answers for many openers of one text. A scan from an opener passes every
/// later opener it meets outside quotes in exactly the state a fresh scan from there starts in
/// (outside quotes, depth zero relative to it), so one stack-based pass settles all of them: an
/// opener's match is the closer that pops it, and openers still open at the end have none.
pub struct BalanceCache {
  opener: u16,
  closer: u16,
  known: HashMap<usize, Option<usize>>,
}

impl BalanceCache {
  pub fn new(opener: u8, closer: u8) -> BalanceCache {
    BalanceCache {
      opener: opener as u16,
      closer: closer as u16,
      known: HashMap::new(),
    }
  }

  /// `find_matching(text, open, opener, closer)` where `text[open]` is the opener.
  pub fn matching(&mut self, text: &[u16], open: usize) -> Option<usize> {
    if plain::on() {
      return find_matching(text, open, self.opener, self.closer);
    }
    if let Some(&known) = self.known.get(&open) {
      return known;
    }
    let mut stack: Vec<usize> = Vec::new();
    let mut quote: Option<u16> = None;
    let mut escaped = false;
    for (i, &ch) in text.iter().enumerate().skip(open) {
      work::add(1);
      if let Some(q) = quote {
        if escaped {
          escaped = false;
        } else if ch == b'\\' as u16 {
          escaped = true;
        } else if ch == q {
          quote = None;
        }
        continue;
      }
      if ch == b'"' as u16 || ch == b'\'' as u16 {
        quote = Some(ch);
      } else if ch == self.opener {
        stack.push(i);
      } else if ch == self.closer {
        if let Some(q) = stack.pop() {
          self.known.insert(q, Some(i));
          if stack.is_empty() {
            return Some(i);
          }
        }
      }
    }
    for q in stack {
      self.known.insert(q, None);
    }
    None
  }
}

/// `first_balanced_json(&text[from..])` (in text offsets) for many `from`s of one text: the
/// bracket positions are listed once and bracket matching is shared ([`BalanceCache`]).
pub struct BalancedJson {
  brackets: Vec<usize>,
  curly: BalanceCache,
  square: BalanceCache,
}

impl BalancedJson {
  pub fn new(text: &[u16]) -> BalancedJson {
    BalancedJson {
      brackets: (0..text.len())
        .filter(|&i| text[i] == b'[' as u16 || text[i] == b'{' as u16)
        .collect(),
      curly: BalanceCache::new(b'{', b'}'),
      square: BalanceCache::new(b'[', b']'),
    }
  }

  /// The first `[`/`{` at or after `from` and its balanced extent `(start, end_exclusive)`.
  pub fn first_from(&mut self, text: &[u16], from: usize) -> Option<(usize, usize)> {
    if plain::on() {
      return first_balanced_json(&text[from..]).map(|(a, b)| (from + a, from + b));
    }
    let start = *self.brackets.get(self.brackets.partition_point(|&p| p < from))?;
    let cache = if text[start] == b'{' as u16 {
      &mut self.curly
    } else {
      &mut self.square
    };
    cache.matching(text, start).map(|close| (start, close + 1))
  }
}

/// `text.indexOf(literal, from)` for many `from`s: every occurrence (overlapping ones too) is
/// listed once.
pub struct LiteralIndex {
  literal: Vec<u16>,
  at: Vec<usize>,
}

impl LiteralIndex {
  pub fn new(text: &[u16], literal: &[u16]) -> LiteralIndex {
    let mut at = Vec::new();
    let mut from = 0;
    while let Some(i) = index_of(text, literal, from) {
      at.push(i);
      from = i + 1;
    }
    LiteralIndex {
      literal: literal.to_vec(),
      at,
    }
  }

  pub fn first_from(&self, text: &[u16], from: usize) -> Option<usize> {
    if plain::on() {
      return index_of(text, &self.literal, from);
    }
    self.at.get(self.at.partition_point(|&p| p < from)).copied()
  }
}

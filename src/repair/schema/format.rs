//! The string formats TypeBox registers by default (`typebox/format`). Unknown formats pass.
//!
//! Lengths and character codes are JS ones (UTF-16 code units). `iri` / `iri-reference` use the
//! WHATWG URL parser in TypeBox; here they are approximated by a structural check (see `is_iri`).

use std::sync::LazyLock;

use super::regex::JsRegex;
use crate::repair::text::{to_utf16, utf16_len};

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Format {
  DateTime,
  Date,
  Duration,
  Email,
  Hostname,
  IdnEmail,
  IdnHostname,
  Ipv4,
  Ipv6,
  IriReference,
  Iri,
  JsonPointerUriFragment,
  JsonPointer,
  Regex,
  RelativeJsonPointer,
  Time,
  UriReference,
  UriTemplate,
  Uri,
  Url,
  Uuid,
}

impl Format {
  pub(crate) fn by_name(name: &str) -> Option<Format> {
    Some(match name {
      "date-time" => Format::DateTime,
      "date" => Format::Date,
      "duration" => Format::Duration,
      "email" => Format::Email,
      "hostname" => Format::Hostname,
      "idn-email" => Format::IdnEmail,
      "idn-hostname" => Format::IdnHostname,
      "ipv4" => Format::Ipv4,
      "ipv6" => Format::Ipv6,
      "iri-reference" => Format::IriReference,
      "iri" => Format::Iri,
      "json-pointer-uri-fragment" => Format::JsonPointerUriFragment,
      "json-pointer" => Format::JsonPointer,
      "regex" => Format::Regex,
      "relative-json-pointer" => Format::RelativeJsonPointer,
      "time" => Format::Time,
      "uri-reference" => Format::UriReference,
      "uri-template" => Format::UriTemplate,
      "uri" => Format::Uri,
      "url" => Format::Url,
      "uuid" => Format::Uuid,
      _ => return None,
    })
  }
}

fn re(pattern: &str, flags: &str) -> JsRegex {
  JsRegex::new(pattern, flags).expect("built-in format expression compiles")
}

static DURATION: LazyLock<JsRegex> = LazyLock::new(|| {
  re(
    r"^P((\d+Y(\d+M(\d+D)?)?|\d+M(\d+D)?|\d+D)(T(\d+H(\d+M(\d+S)?)?|\d+M(\d+S)?|\d+S))?|T(\d+H(\d+M(\d+S)?)?|\d+M(\d+S)?|\d+S)|\d+W)$",
    "",
  )
});
static EMAIL: LazyLock<JsRegex> = LazyLock::new(|| {
  re(
    r"^(?!.*\.\.)[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$",
    "i",
  )
});
static IDN_EMAIL: LazyLock<JsRegex> = LazyLock::new(|| {
  re(
    r"^(?!.*\.\.)[\p{L}\p{N}!#$%&'*+/=?^_`{|}~-]+(?:\.[\p{L}\p{N}!#$%&'*+/=?^_`{|}~-]+)*@[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?(?:\.[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?)*$",
    "iu",
  )
});
static JSON_POINTER: LazyLock<JsRegex> = LazyLock::new(|| re(r"^(?:\/(?:[^~/]|~0|~1)*)*$", ""));
static JSON_POINTER_URI_FRAGMENT: LazyLock<JsRegex> =
  LazyLock::new(|| re(r"^#(?:\/(?:[a-z0-9_\-.!$&'()*+,;:=@]|%[0-9a-f]{2}|~0|~1)*)*$", "i"));
static RELATIVE_JSON_POINTER: LazyLock<JsRegex> =
  LazyLock::new(|| re(r"^(?:0|[1-9][0-9]*)(?:#|(?:\/(?:[^~/]|~0|~1)*)*)$", ""));
static URI_REFERENCE: LazyLock<JsRegex> = LazyLock::new(|| {
  re(
    r"^(?!.*[^\x00-\x7F])(?!.*\\)(?:(?:[a-z][a-z0-9+\-.]*:)?(?:\/\/[^\s[\]{}<>^`|]*)?|[^\s[\]{}<>^`|]*)(?:\?[^\s[\]{}<>^`|]*)?(?:#[^\s[\]{}<>^`|]*)?$",
    "i",
  )
});
static URI_TEMPLATE: LazyLock<JsRegex> = LazyLock::new(|| {
  re(
    r#"^(?:(?:[^\x00-\x20"'<>%\\^`{|}]|%[0-9a-f]{2})|\{[+#./;?&=,!@|]?(?:[a-z0-9_]|%[0-9a-f]{2})+(?::[1-9][0-9]{0,3}|\*)?(?:,(?:[a-z0-9_]|%[0-9a-f]{2})+(?::[1-9][0-9]{0,3}|\*)?)*\})*$"#,
    "i",
  )
});
static URL: LazyLock<JsRegex> = LazyLock::new(|| {
  re(
    r"^(?:https?|ftp):\/\/(?:\S+(?::\S*)?@)?(?:(?!(?:10|127)(?:\.\d{1,3}){3})(?!(?:169\.254|192\.168)(?:\.\d{1,3}){2})(?!172\.(?:1[6-9]|2\d|3[0-1])(?:\.\d{1,3}){2})(?:[1-9]\d?|1\d\d|2[01]\d|22[0-3])(?:\.(?:1?\d{1,2}|2[0-4]\d|25[0-5])){2}(?:\.(?:[1-9]\d?|1\d\d|2[0-4]\d|25[0-4]))|(?:(?:[a-z0-9\u{00a1}-\u{ffff}]+-)*[a-z0-9\u{00a1}-\u{ffff}]+)(?:\.(?:[a-z0-9\u{00a1}-\u{ffff}]+-)*[a-z0-9\u{00a1}-\u{ffff}]+)*(?:\.(?:[a-z\u{00a1}-\u{ffff}]{2,})))(?::\d{2,5})?(?:\/[^\s]*)?$",
    "iu",
  )
});
static UUID: LazyLock<JsRegex> =
  LazyLock::new(|| re(r"^(?:urn:uuid:)?[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$", "i"));
static MARK: LazyLock<JsRegex> = LazyLock::new(|| re(r"^[\p{Mn}\p{Mc}\p{Me}]$", "u"));
static JAPANESE: LazyLock<JsRegex> =
  LazyLock::new(|| re(r"^[\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Han}]$", "u"));
static GREEK: LazyLock<JsRegex> = LazyLock::new(|| re(r"^\p{Script=Greek}$", "u"));
static HEBREW: LazyLock<JsRegex> = LazyLock::new(|| re(r"^\p{Script=Hebrew}$", "u"));

pub(crate) fn test(f: Format, s: &str) -> bool {
  match f {
    Format::DateTime => is_date_time(s),
    Format::Date => is_date(s),
    Format::Duration => DURATION.test(s),
    Format::Email => EMAIL.test(s),
    Format::Hostname => is_hostname(s),
    Format::IdnEmail => IDN_EMAIL.test(s),
    Format::IdnHostname => is_idn_hostname(s),
    Format::Ipv4 => {
      let u = to_utf16(s);
      is_ipv4_range(&u, 0, u.len())
    }
    Format::Ipv6 => is_ipv6(&to_utf16(s)),
    Format::IriReference => is_iri_reference(s),
    Format::Iri => is_iri(s),
    Format::JsonPointerUriFragment => JSON_POINTER_URI_FRAGMENT.test(s),
    Format::JsonPointer => JSON_POINTER.test(s),
    Format::Regex => !s.is_empty() && JsRegex::new(s, "").is_ok(),
    Format::RelativeJsonPointer => RELATIVE_JSON_POINTER.test(s),
    Format::Time => is_time(s),
    Format::UriReference => URI_REFERENCE.test(s),
    Format::UriTemplate => URI_TEMPLATE.test(s),
    Format::Uri => is_uri(&to_utf16(s)),
    Format::Url => URL.test(s),
    Format::Uuid => UUID.test(s),
  }
}

// ------------------------------------------------------------------------------------------------
// date / time
// ------------------------------------------------------------------------------------------------

fn digits(b: &[u8]) -> Option<u32> {
  if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
    return None;
  }
  Some(b.iter().fold(0u32, |acc, d| acc * 10 + u32::from(d - b'0')))
}

fn is_date(s: &str) -> bool {
  let b = s.as_bytes();
  if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
    return false;
  }
  let (Some(year), Some(month), Some(day)) = (digits(&b[0..4]), digits(&b[5..7]), digits(&b[8..10])) else {
    return false;
  };
  const DAYS: [u32; 13] = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
  (1..=12).contains(&month) && day >= 1 && day <= if month == 2 && leap { 29 } else { DAYS[month as usize] }
}

/// `^(\d\d):(\d\d):(\d\d(?:\.\d+)?)(?:Z|([+-])(\d\d):(\d\d))?$` (case-insensitive) plus range
/// rules, with a mandatory zone.
fn is_time(s: &str) -> bool {
  let b = s.as_bytes();
  if b.len() < 8 || b[2] != b':' || b[5] != b':' {
    return false;
  }
  let (Some(hr), Some(min)) = (digits(&b[0..2]), digits(&b[3..5])) else {
    return false;
  };
  let mut i = 6;
  if digits(&b[6..8]).is_none() {
    return false;
  }
  i += 2;
  if i < b.len() && b[i] == b'.' {
    let start = i + 1;
    let mut j = start;
    while j < b.len() && b[j].is_ascii_digit() {
      j += 1;
    }
    if j == start {
      return false;
    }
    i = j;
  }
  let sec: f64 = match s[6..i].parse() {
    Ok(v) => v,
    Err(_) => return false,
  };
  let rest = &b[i..];
  let (sign, tz_h, tz_m) = match rest {
    [] => (None, 0, 0),
    [b'z' | b'Z'] => (None, 0, 0),
    [sg @ (b'+' | b'-'), h1, h2, b':', m1, m2] => match (digits(&[*h1, *h2]), digits(&[*m1, *m2])) {
      (Some(h), Some(m)) => (Some(*sg), h, m),
      _ => return false,
    },
    _ => return false,
  };
  if tz_h > 23 || tz_m > 59 {
    return false;
  }
  if sign.is_none() && !s.to_lowercase().contains('z') {
    return false;
  }
  if hr <= 23 && min <= 59 && sec < 60.0 {
    return true;
  }
  let tz_sign: i64 = if sign == Some(b'-') { -1 } else { 1 };
  let utc_min = i64::from(min) - i64::from(tz_m) * tz_sign;
  let utc_hr = i64::from(hr) - i64::from(tz_h) * tz_sign - i64::from(utc_min < 0);
  (utc_hr == 23 || utc_hr == -1) && (utc_min == 59 || utc_min == -1) && sec < 61.0
}

fn is_date_time(s: &str) -> bool {
  let parts: Vec<&str> = s.split(['T', 't']).collect();
  parts.len() == 2 && is_date(parts[0]) && is_time(parts[1])
}

// ------------------------------------------------------------------------------------------------
// IP addresses (ported code-unit scanners)
// ------------------------------------------------------------------------------------------------

fn is_ipv4_range(v: &[u16], start: usize, end: usize) -> bool {
  let (mut dots, mut num, mut count, mut leading) = (0u32, 0u32, 0u32, 0u16);
  for &ch in &v[start..end] {
    if ch == 46 {
      if count == 0 || num > 255 || (leading == 48 && count > 1) {
        return false;
      }
      dots += 1;
      num = 0;
      count = 0;
      leading = 0;
    } else if (48..=57).contains(&ch) {
      if count == 0 {
        leading = ch;
      }
      num = num.saturating_mul(10).saturating_add(u32::from(ch - 48));
      count += 1;
    } else {
      return false;
    }
  }
  dots == 3 && count > 0 && num <= 255 && !(leading == 48 && count > 1)
}

fn is_hex_unit(ch: u16) -> bool {
  (48..=57).contains(&ch) || (65..=70).contains(&ch) || (97..=102).contains(&ch)
}

fn is_ipv6(v: &[u16]) -> bool {
  let len = v.len();
  let at = |i: usize| v.get(i).copied().unwrap_or(0xFFFF);
  if len == 0 {
    return false;
  }
  let mut groups = 0;
  let mut compressed = false;
  let mut i = 0;
  if at(0) == 58 && at(1) == 58 {
    if len == 2 {
      return true;
    }
    compressed = true;
    i = 2;
  }
  while i < len {
    let start = i;
    let mut count = 0;
    while i < len && is_hex_unit(v[i]) {
      i += 1;
      count += 1;
    }
    if count == 0 {
      return false;
    }
    let next = at(i);
    if next == 46 {
      if !is_ipv4_range(v, start, len) {
        return false;
      }
      groups += 2;
      break;
    }
    if count > 4 {
      return false;
    }
    groups += 1;
    if i == len {
      break;
    }
    if next != 58 {
      return false;
    }
    i += 1;
    if at(i) == 58 {
      if compressed || at(i + 1) == 58 {
        return false;
      }
      compressed = true;
      i += 1;
      if i == len {
        break;
      }
    }
  }
  if compressed {
    groups <= 7
  } else {
    groups == 8
  }
}

// ------------------------------------------------------------------------------------------------
// Hostnames (RFC 1123 / IDNA label rules as TypeBox implements them)
// ------------------------------------------------------------------------------------------------

fn is_hostname(s: &str) -> bool {
  let len = utf16_len(s);
  if len == 0 || len > 253 || s.ends_with('.') {
    return false;
  }
  s.split('.').all(is_label)
}

fn is_idn_hostname(s: &str) -> bool {
  if s.is_empty() || s.contains(' ') {
    return false;
  }
  // TypeBox NFC-normalises first; we have no normaliser and use the text as given.
  let canonical: String = s
    .chars()
    .map(|c| {
      if matches!(c, '\u{3002}' | '\u{FF0E}' | '\u{FF61}') {
        '.'
      } else {
        c
      }
    })
    .collect();
  if utf16_len(&canonical) > 253 {
    return false;
  }
  canonical.split('.').all(is_idn_label)
}

fn is_puny(label: &str) -> bool {
  label.to_lowercase().starts_with("xn--")
}

fn is_label(label: &str) -> bool {
  let len = utf16_len(label);
  if len == 0 || len > 63 {
    return false;
  }
  if is_puny(label) {
    is_puny_label(label)
  } else {
    is_ascii_label(label)
  }
}

fn is_idn_label(label: &str) -> bool {
  let len = utf16_len(label);
  if len == 0 || len > 63 {
    return false;
  }
  if is_puny(label) {
    is_puny_label(label)
  } else {
    is_unicode_label(label)
  }
}

fn is_ascii_label(label: &str) -> bool {
  let b = label.as_bytes();
  if b.first() == Some(&b'-') || b.last() == Some(&b'-') {
    return false;
  }
  if b.len() >= 4 && b[2] == b'-' && b[3] == b'-' {
    return false;
  }
  b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
}

fn is_puny_label(label: &str) -> bool {
  let units = to_utf16(label);
  match puny_decode(&units[4.min(units.len())..]) {
    Some(decoded) => is_unicode_label(&decoded),
    None => false,
  }
}

fn char_is(re: &JsRegex, cp: u32) -> bool {
  match char::from_u32(cp) {
    Some(c) => {
      let mut buf = [0u8; 4];
      re.test(c.encode_utf8(&mut buf))
    }
    None => false,
  }
}

const VIRAMA: [u32; 32] = [
  0x094d, 0x09cd, 0x0a4d, 0x0acd, 0x0b4d, 0x0bcd, 0x0c4d, 0x0ccd, 0x0d3b, 0x0d3c, 0x0d4d, 0x0dca, 0x1b44, 0x1baa,
  0x1bab, 0xa9c0, 0x11046, 0x1107f, 0x110b9, 0x11133, 0x11134, 0x111c0, 0x11235, 0x1134d, 0x11442, 0x114c2, 0x115bf,
  0x1163f, 0x116b6, 0x11c3f, 0x11d44, 0x11d45,
];
const DISALLOWED: [u32; 10] = [
  0x0640, 0x07fa, 0x302e, 0x302f, 0x3031, 0x3032, 0x3033, 0x3034, 0x3035, 0x303b,
];

fn is_unicode_label(label: &str) -> bool {
  let cps: Vec<u32> = crate::repair::text::code_points(label).collect();
  let len = cps.len();
  if len == 0 {
    return false;
  }
  if cps[0] == 0x2d || cps[len - 1] == 0x2d {
    return false;
  }
  if len >= 4 && cps[2] == 0x2d && cps[3] == 0x2d {
    return false;
  }
  if char_is(&MARK, cps[0]) {
    return false;
  }
  let (mut japanese, mut arabic, mut extended) = (false, false, false);
  for i in 0..len {
    let cp = cps[i];
    if DISALLOWED.contains(&cp) {
      return false;
    }
    if char_is(&JAPANESE, cp) {
      japanese = true;
    }
    if (0x0660..=0x0669).contains(&cp) {
      arabic = true;
    }
    if (0x06f0..=0x06f9).contains(&cp) {
      extended = true;
    }
    let prev = if i > 0 { Some(cps[i - 1]) } else { None };
    let next = cps.get(i + 1).copied();
    match cp {
      0x00b7 if prev != Some(0x6c) || next != Some(0x6c) => return false,
      0x0375 if !next.is_some_and(|n| char_is(&GREEK, n)) => return false,
      0x05f3 | 0x05f4 if !prev.is_some_and(|p| char_is(&HEBREW, p)) => return false,
      0x200d if !prev.is_some_and(|p| VIRAMA.contains(&p)) => return false,
      _ => {}
    }
  }
  if cps.contains(&0x30fb) && !japanese {
    return false;
  }
  !(arabic && extended)
}

/// RFC 3492 decoding of the part after `xn--` (None where TypeBox's decoder throws).
fn puny_decode(input: &[u16]) -> Option<String> {
  const BASE: i64 = 36;
  const TMIN: i64 = 1;
  const TMAX: i64 = 26;
  fn adapt(delta: i64, points: i64, first: bool) -> i64 {
    let mut delta = if first { delta / 700 } else { delta >> 1 };
    delta += delta / points;
    let mut k = 0;
    while delta > ((BASE - TMIN) * TMAX) >> 1 {
      delta /= BASE - TMIN;
      k += BASE;
    }
    k + ((BASE - TMIN + 1) * delta) / (delta + 38)
  }
  let mut output: Vec<u32> = Vec::new();
  let (mut n, mut i, mut bias) = (128i64, 0i64, 72i64);
  let delim = input.iter().rposition(|&c| c == u16::from(b'-'));
  if let Some(d) = delim.filter(|&d| d > 0) {
    for &c in &input[..d] {
      if c >= 128 {
        return None;
      }
      output.push(u32::from(c));
    }
  }
  let mut idx = delim.map_or(0, |d| d + 1);
  while idx < input.len() {
    let old_i = i;
    let mut w = 1i64;
    let mut k = BASE;
    loop {
      let ch = *input.get(idx)?;
      idx += 1;
      let digit = match ch {
        0x61..=0x7a => i64::from(ch - 0x61),
        0x30..=0x39 => i64::from(ch - 0x30) + 26,
        0x41..=0x5a => i64::from(ch - 0x41),
        _ => return None,
      };
      i = i.checked_add(digit.checked_mul(w)?)?;
      let t = if k <= bias {
        TMIN
      } else if k >= bias + TMAX {
        TMAX
      } else {
        k - bias
      };
      if digit < t {
        break;
      }
      w = w.checked_mul(BASE - t)?;
      k += BASE;
    }
    let out_len = output.len() as i64 + 1;
    bias = adapt(i - old_i, out_len, old_i == 0);
    n += i / out_len;
    i %= out_len;
    // String.fromCodePoint throws on invalid code points.
    if !(0..=0x10FFFF).contains(&n) {
      return None;
    }
    output.insert(i as usize, n as u32);
    i += 1;
  }
  let mut s = String::new();
  for cp in output {
    crate::repair::text::push_code_point(&mut s, cp);
  }
  Some(s)
}

// ------------------------------------------------------------------------------------------------
// URIs
// ------------------------------------------------------------------------------------------------

fn is_alpha(c: u16) -> bool {
  (97..=122).contains(&c) || (65..=90).contains(&c)
}
fn is_alnum(c: u16) -> bool {
  is_alpha(c) || (48..=57).contains(&c)
}
fn is_unreserved(c: u16) -> bool {
  is_alnum(c) || c == 45 || c == 46 || c == 95 || c == 126
}
fn is_sub_delim(c: u16) -> bool {
  matches!(c, 33 | 36 | 38 | 39 | 40 | 41 | 42 | 43 | 44 | 59 | 61)
}

/// TypeBox's RFC 3986 scanner, on code units.
fn is_uri(v: &[u16]) -> bool {
  let len = v.len();
  let at = |i: usize| v.get(i).copied().unwrap_or(0xFFFF);
  if len == 0 || !is_alpha(at(0)) {
    return false;
  }
  let mut i = 1;
  while i < len {
    let c = v[i];
    if c == 58 {
      break;
    }
    if !(is_alnum(c) || c == 43 || c == 45 || c == 46) {
      return false;
    }
    i += 1;
  }
  if at(i) != 58 {
    return false;
  }
  i += 1;
  if at(i) == 47 && at(i + 1) == 47 {
    i += 2;
    let authority_start = i;
    let mut at_pos = None;
    for (j, &c) in v.iter().enumerate().skip(i) {
      if c == 64 {
        at_pos = Some(j);
        break;
      }
      if c == 47 || c == 63 || c == 35 {
        break;
      }
    }
    if let Some(at_pos) = at_pos {
      let mut j = authority_start;
      while j < at_pos {
        let c = v[j];
        if c == 91 || c == 93 {
          return false;
        }
        if c == 37 {
          if j + 2 >= at_pos || !is_hex_unit(at(j + 1)) || !is_hex_unit(at(j + 2)) {
            return false;
          }
          j += 2;
        } else if !is_unreserved(c) && !is_sub_delim(c) && c != 58 {
          return false;
        }
        j += 1;
      }
      i = at_pos + 1;
    }
    if at(i) == 91 {
      i += 1;
      while i < len && v[i] != 93 {
        i += 1;
      }
      if at(i) != 93 {
        return false;
      }
      i += 1;
    } else {
      while i < len {
        let c = v[i];
        if c == 47 || c == 63 || c == 35 || c == 58 {
          break;
        }
        if c < 128 && !is_unreserved(c) && !is_sub_delim(c) {
          return false;
        }
        i += 1;
      }
    }
    if at(i) == 58 {
      i += 1;
      while i < len {
        let c = v[i];
        if c == 47 || c == 63 || c == 35 {
          break;
        }
        if !(48..=57).contains(&c) {
          return false;
        }
        i += 1;
      }
    }
  }
  while i < len {
    let c = v[i];
    if c == 37 {
      if i + 2 >= len || !is_hex_unit(at(i + 1)) || !is_hex_unit(at(i + 2)) {
        return false;
      }
      i += 2;
    } else if c > 127 || !(is_unreserved(c) || is_sub_delim(c) || c == 58 || c == 64 || c == 47 || c == 63 || c == 35) {
      // Non-ASCII is never allowed here.
      return false;
    }
    i += 1;
  }
  true
}

const SPECIAL_SCHEMES: [&str; 6] = ["http", "https", "ws", "wss", "ftp", "file"];

/// Approximation of `new URL(value)` succeeding (WHATWG URL): a scheme is required; for special
/// (http-like) schemes the host must be present, free of forbidden code points and, when it ends
/// in a number, a valid IPv4 address; ports must be at most 65535. IDNA mapping and the bidi
/// rules are not applied.
fn is_iri(s: &str) -> bool {
  let t = s.trim_matches(|c: char| c <= ' ');
  let t: String = t.chars().filter(|c| !matches!(c, '\t' | '\n' | '\r')).collect();
  let Some(colon) = t.find(':') else {
    return false;
  };
  let scheme = &t[..colon];
  let mut chars = scheme.chars();
  if !chars.next().is_some_and(|c| c.is_ascii_alphabetic())
    || !chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
  {
    return false;
  }
  let rest = &t[colon + 1..];
  let lower = scheme.to_ascii_lowercase();
  if !SPECIAL_SCHEMES.contains(&lower.as_str()) {
    return match rest.strip_prefix("//") {
      Some(after) => authority_ok(after, false),
      None => true,
    };
  }
  if lower == "file" {
    return match rest.strip_prefix("//").or_else(|| rest.strip_prefix("\\\\")) {
      Some(after) => file_host_ok(after),
      None => true,
    };
  }
  authority_ok(rest.trim_start_matches(['/', '\\']), true)
}

fn file_host_ok(after: &str) -> bool {
  let end = after.find(['/', '\\', '?', '#']).unwrap_or(after.len());
  let host = &after[..end];
  host.is_empty() || host_ok(host, true)
}

fn authority_ok(after: &str, special: bool) -> bool {
  let end = after
    .find(|c| matches!(c, '/' | '?' | '#') || (special && c == '\\'))
    .unwrap_or(after.len());
  let authority = &after[..end];
  let (has_credentials, host_port) = match authority.rfind('@') {
    Some(i) => (true, &authority[i + 1..]),
    None => (false, authority),
  };
  let (host, port) = if host_port.starts_with('[') {
    match host_port.find(']') {
      Some(i) => {
        let inner = &host_port[1..i];
        if !is_ipv6(&to_utf16(inner)) {
          return false;
        }
        let tail = &host_port[i + 1..];
        if !tail.is_empty() && !tail.starts_with(':') {
          return false;
        }
        (&host_port[..=i], tail.strip_prefix(':'))
      }
      None => return false,
    }
  } else {
    match host_port.find(':') {
      Some(i) => (&host_port[..i], Some(&host_port[i + 1..])),
      None => (host_port, None),
    }
  };
  if let Some(port) = port {
    if !port.is_empty()
      && (!port.bytes().all(|b| b.is_ascii_digit()) || port.parse::<u64>().map_or(true, |p| p > 65535))
    {
      return false;
    }
  }
  if host.is_empty() {
    // A missing host is only an error for special schemes, or with credentials or a port.
    return !(special || has_credentials || port.is_some_and(|p| !p.is_empty()));
  }
  host.starts_with('[') || host_ok(host, special)
}

fn host_ok(host: &str, special: bool) -> bool {
  let forbidden = |c: char| {
    matches!(
      c,
      '\0' | '\t' | '\n' | '\r' | ' ' | '#' | '/' | ':' | '<' | '>' | '?' | '@' | '[' | '\\' | ']' | '^' | '|'
    ) || (special && (c == '%' || c <= '\u{1F}' || c == '\u{7F}'))
  };
  if host.chars().any(forbidden) {
    return false;
  }
  !special || !ends_in_number(host) || whatwg_ipv4(host)
}

fn ipv4_number(part: &str) -> Option<u64> {
  let (digits, radix) = if let Some(h) = part.strip_prefix("0x").or_else(|| part.strip_prefix("0X")) {
    (h, 16)
  } else if part.len() > 1 && part.starts_with('0') {
    (&part[1..], 8)
  } else {
    (part, 10)
  };
  if digits.is_empty() {
    return Some(0);
  }
  if !digits.chars().all(|c| c.is_digit(radix)) {
    return None;
  }
  Some(u64::from_str_radix(digits, radix).unwrap_or(u64::MAX))
}

fn ends_in_number(host: &str) -> bool {
  let mut parts: Vec<&str> = host.split('.').collect();
  if parts.last() == Some(&"") {
    if parts.len() == 1 {
      return false;
    }
    parts.pop();
  }
  let last = parts.last().copied().unwrap_or("");
  (!last.is_empty() && last.bytes().all(|b| b.is_ascii_digit()))
    || (last.len() >= 2 && ipv4_number(last).is_some() && last[..2].eq_ignore_ascii_case("0x"))
}

fn whatwg_ipv4(host: &str) -> bool {
  let mut parts: Vec<&str> = host.split('.').collect();
  if parts.last() == Some(&"") && parts.len() > 1 {
    parts.pop();
  }
  if parts.len() > 4 || parts.iter().any(|p| p.is_empty()) {
    return false;
  }
  let Some(nums) = parts.iter().map(|p| ipv4_number(p)).collect::<Option<Vec<u64>>>() else {
    return false;
  };
  let (last, init) = nums.split_last().expect("at least one part");
  init.iter().all(|&n| n <= 255) && *last < 256u64.pow(5 - nums.len() as u32)
}

fn is_iri_reference(s: &str) -> bool {
  if s.contains(' ') || s.contains('\\') || s.chars().any(|c| c <= '\u{1F}' || c == '\u{7F}') {
    return false;
  }
  let b = s.as_bytes();
  for (i, &c) in b.iter().enumerate() {
    if c == b'%' && !(i + 2 < b.len() && b[i + 1].is_ascii_hexdigit() && b[i + 2].is_ascii_hexdigit()) {
      return false;
    }
  }
  if s.is_empty() {
    return true;
  }
  let colon = s.find(':');
  let scheme_ok = |sch: &str| {
    let mut it = sch.chars();
    it.next().is_some_and(|c| c.is_ascii_alphabetic())
      && it.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
  };
  if let Some(c) = colon.filter(|&c| c > 0) {
    if scheme_ok(&s[..c]) {
      return is_iri(s);
    }
  }
  if colon.is_none() {
    // `httpx//example.com`: a scheme-looking prefix followed by `//` without a colon.
    let prefix_len = s.find("//").unwrap_or(0);
    if prefix_len > 0 && scheme_ok(&s[..prefix_len]) {
      return false;
    }
  }
  // Relative to http://example.com (a special base): only an authority (`//host:port`, any number
  // of slashes) can make it fail.
  if s.starts_with("//") || s.starts_with("\\\\") || s.starts_with("/\\") || s.starts_with("\\/") {
    return authority_ok(s.trim_start_matches(['/', '\\']), true);
  }
  true
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn dates_and_times() {
    assert!(test(Format::Date, "2020-02-29"));
    assert!(!test(Format::Date, "2021-02-29"));
    assert!(test(Format::Time, "20:20:39+00:00"));
    assert!(test(Format::Time, "20:20:39Z"));
    assert!(!test(Format::Time, "20:20:39"));
    assert!(test(Format::Time, "23:59:60Z"));
    assert!(test(Format::DateTime, "2020-12-12T20:20:40+00:00"));
    assert!(!test(Format::DateTime, "2020-12-12 20:20:40Z"));
  }

  #[test]
  fn addresses() {
    assert!(test(Format::Ipv4, "192.168.0.1"));
    assert!(!test(Format::Ipv4, "192.168.00.1"));
    assert!(test(Format::Ipv6, "::1"));
    assert!(test(Format::Ipv6, "2001:db8::8a2e:370:7334"));
    assert!(!test(Format::Ipv6, "1:2:3:4:5:6:7:8:9"));
    assert!(test(Format::Hostname, "example.com"));
    assert!(!test(Format::Hostname, "-bad.com"));
    assert!(test(Format::Hostname, "xn--mnchen-3ya.de"));
    assert!(test(Format::Email, "a.b@example.com"));
    assert!(test(Format::Uri, "https://example.com/a?b#c"));
    assert!(!test(Format::Uri, "example.com"));
    assert!(test(Format::Uuid, "123e4567-e89b-12d3-a456-426614174000"));
  }
}

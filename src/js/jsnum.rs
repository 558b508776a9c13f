//! JavaScript number semantics: `String(n)` and `Number(s)`.

use super::text::js_trim;

/// JS `String(n)` / `Number.prototype.toString()` (shortest round-trip, exponent form at
/// >= 1e21 and < 1e-6, `-0` printed as `0`).
pub fn number_to_string(n: f64) -> String {
  if n.is_nan() {
    return "NaN".into();
  }
  if n.is_infinite() {
    return if n > 0.0 { "Infinity".into() } else { "-Infinity".into() };
  }
  if n == 0.0 {
    return "0".into();
  }
  let mut buf = ryu_js::Buffer::new();
  buf.format_finite(n).to_string()
}

/// JS `Number(s)` (ToNumber applied to a string): trims JS whitespace, `""` is 0, accepts
/// `Infinity` with a sign, `0x`/`0o`/`0b` literals without a sign, decimal literals with optional
/// fraction and exponent; anything else is NaN.
pub fn string_to_number(s: &str) -> f64 {
  let t = js_trim(s);
  if t.is_empty() {
    return 0.0;
  }
  let b = t.as_bytes();
  if b.len() > 2 && b[0] == b'0' {
    let radix = match b[1] {
      b'x' | b'X' => 16,
      b'o' | b'O' => 8,
      b'b' | b'B' => 2,
      _ => 0,
    };
    if radix != 0 {
      let mut acc = 0f64;
      for &c in &b[2..] {
        let d = match (c as char).to_digit(radix) {
          Some(d) => d,
          None => return f64::NAN,
        };
        acc = acc * radix as f64 + d as f64;
      }
      return acc;
    }
  }
  let (sign, rest) = match b[0] {
    b'+' => (1.0, &t[1..]),
    b'-' => (-1.0, &t[1..]),
    _ => (1.0, t),
  };
  if rest == "Infinity" {
    return sign * f64::INFINITY;
  }
  if !is_decimal_literal(rest.as_bytes()) {
    return f64::NAN;
  }
  match rest.parse::<f64>() {
    Ok(v) => sign * v,
    Err(_) => f64::NAN,
  }
}

/// StrUnsignedDecimalLiteral: `digits [. digits?] [exp]` or `. digits [exp]`.
fn is_decimal_literal(b: &[u8]) -> bool {
  let mut i = 0;
  let int_start = i;
  while i < b.len() && b[i].is_ascii_digit() {
    i += 1;
  }
  let int_digits = i - int_start;
  let mut frac_digits = 0;
  if i < b.len() && b[i] == b'.' {
    i += 1;
    let f = i;
    while i < b.len() && b[i].is_ascii_digit() {
      i += 1;
    }
    frac_digits = i - f;
  }
  if int_digits == 0 && frac_digits == 0 {
    return false;
  }
  if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
    i += 1;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
      i += 1;
    }
    let e = i;
    while i < b.len() && b[i].is_ascii_digit() {
      i += 1;
    }
    if i == e {
      return false;
    }
  }
  i == b.len()
}

/// JS `Number.isInteger`.
pub fn is_integer(n: f64) -> bool {
  n.is_finite() && n.trunc() == n
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn formats_like_js() {
    assert_eq!(number_to_string(5.0), "5");
    assert_eq!(number_to_string(-0.0), "0");
    assert_eq!(number_to_string(1.5), "1.5");
    assert_eq!(number_to_string(1e21), "1e+21");
    assert_eq!(number_to_string(1e20), "100000000000000000000");
    assert_eq!(number_to_string(1e-7), "1e-7");
    assert_eq!(number_to_string(0.000001), "0.000001");
    assert_eq!(number_to_string(0.1 + 0.2), "0.30000000000000004");
    assert_eq!(number_to_string(f64::NAN), "NaN");
    assert_eq!(number_to_string(f64::NEG_INFINITY), "-Infinity");
  }

  #[test]
  fn parses_like_js() {
    assert_eq!(string_to_number(" 0x10 "), 16.0);
    assert_eq!(string_to_number("0b101"), 5.0);
    assert_eq!(string_to_number("0o17"), 15.0);
    assert!(string_to_number("-0x10").is_nan());
    assert_eq!(string_to_number(""), 0.0);
    assert_eq!(string_to_number(" \n"), 0.0);
    assert_eq!(string_to_number("1e3"), 1000.0);
    assert_eq!(string_to_number(".5"), 0.5);
    assert_eq!(string_to_number("5."), 5.0);
    assert_eq!(string_to_number("-Infinity"), f64::NEG_INFINITY);
    assert!(string_to_number("inf").is_nan());
    assert!(string_to_number("1_000").is_nan());
    assert!(string_to_number("abc").is_nan());
    assert!(string_to_number("1e").is_nan());
    assert!(string_to_number(".").is_nan());
    assert_eq!(string_to_number("\u{FEFF}42\u{A0}"), 42.0);
  }
}

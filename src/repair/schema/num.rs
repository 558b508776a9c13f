//! Numbers and BigInts as TypeBox compares them (JS relational operators mix the two exactly).

use std::cmp::Ordering;

use crate::repair::jsnum::number_to_string;
use crate::repair::value::{Opaque, Value};

/// A numeric schema limit: a finite number or a BigInt.
#[derive(Debug, Clone)]
pub(crate) enum Num {
  F(f64),
  Big(String),
}

impl Num {
  pub(crate) fn from_value(v: &Value) -> Option<Num> {
    match v {
      Value::Number(n) if n.is_finite() => Some(Num::F(*n)),
      Value::Opaque(Opaque::BigInt(text)) => Some(Num::Big(text.clone())),
      _ => None,
    }
  }

  /// `${limit}` in a message.
  pub(crate) fn display(&self) -> String {
    match self {
      Num::F(n) => number_to_string(*n),
      Num::Big(text) => text.clone(),
    }
  }

  fn as_ref(&self) -> NumRef<'_> {
    match self {
      Num::F(n) => NumRef::F(*n),
      Num::Big(t) => NumRef::Big(t),
    }
  }
}

/// A value operand: a finite number or BigInt text.
#[derive(Clone, Copy)]
pub(crate) enum NumRef<'a> {
  F(f64),
  Big(&'a str),
}

impl<'a> NumRef<'a> {
  /// The operand for the numeric keywords (`G.IsNumber(v) || G.IsBigInt(v)`).
  pub(crate) fn of(v: &'a Value) -> Option<NumRef<'a>> {
    match v {
      Value::Number(n) if n.is_finite() => Some(NumRef::F(*n)),
      Value::Opaque(Opaque::BigInt(t)) => Some(NumRef::Big(t)),
      _ => None,
    }
  }
}

/// Parse canonical BigInt text into an i128 when it fits.
pub(crate) fn big_to_i128(text: &str) -> Option<i128> {
  text.parse::<i128>().ok()
}

/// Mathematical comparison of a BigInt with a finite double.
fn cmp_big_f64(text: &str, f: f64) -> Option<Ordering> {
  if f.is_nan() {
    return None;
  }
  match big_to_i128(text) {
    Some(b) => {
      // i128 covers +-1.7e38; anything beyond is decided by magnitude.
      if f >= 1.7e38 {
        return Some(Ordering::Less);
      }
      if f <= -1.7e38 {
        return Some(Ordering::Greater);
      }
      let fl = f.floor();
      let fi = fl as i128;
      match b.cmp(&fi) {
        Ordering::Equal => {
          if f > fl {
            Some(Ordering::Less)
          } else {
            Some(Ordering::Equal)
          }
        }
        other => Some(other),
      }
    }
    None => {
      // Outside i128: far beyond any double with a fractional part, so a float compare is exact
      // enough to order it.
      let approx: f64 = text.parse().ok()?;
      approx.partial_cmp(&f)
    }
  }
}

fn cmp_big_big(a: &str, b: &str) -> Ordering {
  match (big_to_i128(a), big_to_i128(b)) {
    (Some(x), Some(y)) => x.cmp(&y),
    _ => {
      let neg_a = a.starts_with('-');
      let neg_b = b.starts_with('-');
      match (neg_a, neg_b) {
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        _ => {
          let (da, db) = (a.trim_start_matches('-'), b.trim_start_matches('-'));
          let mag = da.len().cmp(&db.len()).then_with(|| da.cmp(db));
          if neg_a {
            mag.reverse()
          } else {
            mag
          }
        }
      }
    }
  }
}

/// `left <op> right` with JS semantics; `None` when incomparable (never for finite operands).
pub(crate) fn compare(left: NumRef<'_>, right: &Num) -> Option<Ordering> {
  match (left, right.as_ref()) {
    (NumRef::F(a), NumRef::F(b)) => a.partial_cmp(&b),
    (NumRef::Big(a), NumRef::F(b)) => cmp_big_f64(a, b),
    (NumRef::F(a), NumRef::Big(b)) => cmp_big_f64(b, a).map(Ordering::reverse),
    (NumRef::Big(a), NumRef::Big(b)) => Some(cmp_big_big(a, b)),
  }
}

/// TypeBox's `IsMultipleOf(dividend, divisor)`.
pub(crate) fn is_multiple_of(dividend: NumRef<'_>, divisor: &Num) -> bool {
  match (dividend, divisor) {
    (NumRef::F(d), Num::F(m)) => {
      let m = *m;
      if crate::repair::jsnum::is_integer(d) && (1.0 / m) % 1.0 == 0.0 {
        return true;
      }
      let r = d % m;
      r.abs().min((r - m).abs()) < 1e-10
    }
    // One side is a BigInt: `BigInt(x) % BigInt(y) === 0n`. BigInt() of a fraction and `% 0n`
    // throw in JS; we report those as not-a-multiple.
    (d, m) => {
      let to_i = |n: NumRef<'_>| -> Option<i128> {
        match n {
          NumRef::F(f) if crate::repair::jsnum::is_integer(f) && f.abs() < 1.7e38 => Some(f as i128),
          NumRef::F(_) => None,
          NumRef::Big(t) => big_to_i128(t),
        }
      };
      match (to_i(d), to_i(m.as_ref())) {
        (Some(_), Some(0)) | (None, _) | (_, None) => false,
        (Some(a), Some(b)) => a % b == 0,
      }
    }
  }
}

/// Decimal text of an integral double (for `BigInt(Math.trunc(n))`).
pub(crate) fn integral_f64_to_decimal(n: f64) -> String {
  debug_assert!(n.is_finite() && n.trunc() == n);
  if n == 0.0 {
    return "0".into();
  }
  if n.abs() < 1e38 {
    return format!("{}", n as i128);
  }
  // Exact decimal expansion of mantissa * 2^exp using base-1e9 limbs.
  let bits = n.to_bits();
  let neg = bits >> 63 == 1;
  let exp = ((bits >> 52) & 0x7ff) as i32 - 1075;
  let mant = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
  let mut limbs: Vec<u64> = vec![mant % 1_000_000_000, (mant / 1_000_000_000) % 1_000_000_000];
  limbs.push(mant / 1_000_000_000_000_000_000);
  for _ in 0..exp {
    let mut carry = 0u64;
    for l in limbs.iter_mut() {
      let v = *l * 2 + carry;
      *l = v % 1_000_000_000;
      carry = v / 1_000_000_000;
    }
    if carry > 0 {
      limbs.push(carry);
    }
  }
  while limbs.len() > 1 && *limbs.last().unwrap() == 0 {
    limbs.pop();
  }
  let mut out = String::new();
  if neg {
    out.push('-');
  }
  out.push_str(&limbs.last().unwrap().to_string());
  for l in limbs.iter().rev().skip(1) {
    out.push_str(&format!("{l:09}"));
  }
  out
}

/// Normalise BigInt literal digits (`-0` is `0`, no leading zeros are possible from our patterns).
pub(crate) fn canonical_big(text: &str) -> String {
  let (neg, digits) = match text.strip_prefix('-') {
    Some(d) => (true, d),
    None => (false, text),
  };
  let digits = digits.trim_start_matches('0');
  if digits.is_empty() {
    "0".into()
  } else if neg {
    format!("-{digits}")
  } else {
    digits.to_string()
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn mixed_comparisons() {
    let five = Num::F(5.0);
    assert_eq!(compare(NumRef::Big("5"), &five), Some(Ordering::Equal));
    assert_eq!(compare(NumRef::Big("4"), &Num::F(4.5)), Some(Ordering::Less));
    assert_eq!(compare(NumRef::F(4.5), &Num::Big("4".into())), Some(Ordering::Greater));
    assert_eq!(
      compare(NumRef::Big("-100000000000000000000000000000000000000000"), &five),
      Some(Ordering::Less)
    );
  }

  #[test]
  fn multiple_of() {
    assert!(is_multiple_of(NumRef::F(0.3), &Num::F(0.1)));
    assert!(!is_multiple_of(NumRef::F(0.35), &Num::F(0.1)));
    assert!(is_multiple_of(NumRef::F(10.0), &Num::F(0.5)));
    assert!(is_multiple_of(NumRef::Big("10"), &Num::F(5.0)));
  }

  #[test]
  fn integral_decimal() {
    assert_eq!(integral_f64_to_decimal(1e21), "1000000000000000000000");
    assert_eq!(integral_f64_to_decimal(-3.0), "-3");
    assert_eq!(
      integral_f64_to_decimal(1e40),
      "10000000000000000303786028427003666890752"
    );
    assert_eq!(canonical_big("-0"), "0");
  }
}

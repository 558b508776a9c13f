//! Table tests whose expectations were produced by running TypeBox 1.1.38 itself
//! (`Value.Check`, `Value.Errors` with `maxErrors` raised to the case's limit, `Value.Convert`)
//! on the same inputs, serialised with `JSON.stringify`. Special values are encoded as
//! `{"$u":1}` (undefined), `{"$n":"NaN"}` (non-finite or -0), `{"$b":"12"}` (BigInt),
//! `{"$fn":1}` (function); converted objects as `{"$o":[[key, value], ...]}` to pin key order.

use super::*;
use crate::repair::jsnum::number_to_string;
use crate::repair::text::from_utf16;
use crate::repair::value::{Obj, Opaque};

enum J {
  O(Vec<(String, J)>),
  A(Vec<J>),
  S(String),
  B(bool),
  N,
  Num(f64),
}

struct Parser<'a> {
  s: &'a [u8],
  i: usize,
}

impl Parser<'_> {
  fn ws(&mut self) {
    while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
      self.i += 1;
    }
  }
  fn value(&mut self) -> J {
    self.ws();
    match self.s[self.i] {
      b'{' => {
        self.i += 1;
        let mut out = Vec::new();
        loop {
          self.ws();
          if self.s[self.i] == b'}' {
            self.i += 1;
            return J::O(out);
          }
          let J::S(k) = self.value() else { panic!("key") };
          self.ws();
          self.i += 1; // ':'
          let v = self.value();
          out.push((k, v));
          self.ws();
          if self.s[self.i] == b',' {
            self.i += 1;
          }
        }
      }
      b'[' => {
        self.i += 1;
        let mut out = Vec::new();
        loop {
          self.ws();
          if self.s[self.i] == b']' {
            self.i += 1;
            return J::A(out);
          }
          out.push(self.value());
          self.ws();
          if self.s[self.i] == b',' {
            self.i += 1;
          }
        }
      }
      b'"' => {
        self.i += 1;
        let mut units: Vec<u16> = Vec::new();
        loop {
          let c = self.s[self.i];
          match c {
            b'"' => {
              self.i += 1;
              return J::S(from_utf16(&units));
            }
            b'\\' => {
              let e = self.s[self.i + 1];
              self.i += 2;
              match e {
                b'n' => units.push(10),
                b't' => units.push(9),
                b'r' => units.push(13),
                b'b' => units.push(8),
                b'f' => units.push(12),
                b'u' => {
                  let hex = std::str::from_utf8(&self.s[self.i..self.i + 4]).unwrap();
                  units.push(u16::from_str_radix(hex, 16).unwrap());
                  self.i += 4;
                }
                other => units.push(u16::from(other)),
              }
            }
            _ => {
              let len = match c {
                0..=0x7F => 1,
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                _ => 4,
              };
              let ch = std::str::from_utf8(&self.s[self.i..self.i + len]).unwrap();
              let mut buf = [0u16; 2];
              for c in ch.chars() {
                units.extend_from_slice(c.encode_utf16(&mut buf));
              }
              self.i += len;
            }
          }
        }
      }
      b't' => {
        self.i += 4;
        J::B(true)
      }
      b'f' => {
        self.i += 5;
        J::B(false)
      }
      b'n' => {
        self.i += 4;
        J::N
      }
      _ => {
        let start = self.i;
        while self.i < self.s.len() && b"+-0123456789.eE".contains(&self.s[self.i]) {
          self.i += 1;
        }
        J::Num(std::str::from_utf8(&self.s[start..self.i]).unwrap().parse().unwrap())
      }
    }
  }
}

fn parse(s: &str) -> J {
  Parser { s: s.as_bytes(), i: 0 }.value()
}

fn field<'a>(o: &'a [(String, J)], k: &str) -> Option<&'a J> {
  o.iter().find(|(x, _)| x == k).map(|(_, v)| v)
}

fn decode(j: &J) -> Value {
  match j {
    J::O(o) => {
      if field(o, "$u").is_some() {
        return Value::Undefined;
      }
      if let Some(J::S(n)) = field(o, "$n") {
        return Value::Number(match n.as_str() {
          "NaN" => f64::NAN,
          "Infinity" => f64::INFINITY,
          "-Infinity" => f64::NEG_INFINITY,
          other => other.parse().unwrap(),
        });
      }
      if let Some(J::S(b)) = field(o, "$b") {
        return Value::Opaque(Opaque::BigInt(b.clone()));
      }
      if field(o, "$fn").is_some() {
        return Value::Opaque(Opaque::Function);
      }
      Value::Object(o.iter().map(|(k, v)| (k.clone(), decode(v))).collect::<Obj>())
    }
    J::A(a) => Value::Array(a.iter().map(decode).collect()),
    J::S(s) => Value::String(s.clone()),
    J::B(b) => Value::Bool(*b),
    J::N => Value::Null,
    J::Num(n) => Value::Number(*n),
  }
}

/// `JSON.stringify` of a string.
fn quote(s: &str) -> String {
  crate::repair::json::quote(s)
}

fn encode(v: &Value) -> String {
  match v {
    Value::Undefined => r#"{"$u":1}"#.into(),
    Value::Null => "null".into(),
    Value::Bool(b) => b.to_string(),
    Value::Number(n) if n.is_finite() && !(*n == 0.0 && n.is_sign_negative()) => number_to_string(*n),
    Value::Number(n) if *n == 0.0 => r#"{"$n":"-0"}"#.into(),
    Value::Number(n) => format!(r#"{{"$n":"{}"}}"#, number_to_string(*n)),
    Value::String(s) => quote(s),
    Value::Array(a) => format!("[{}]", a.iter().map(encode).collect::<Vec<_>>().join(",")),
    Value::Object(o) => format!(
      r#"{{"$o":[{}]}}"#,
      o.iter()
        .map(|(k, v)| format!("[{},{}]", quote(k), encode(v)))
        .collect::<Vec<_>>()
        .join(",")
    ),
    Value::Opaque(Opaque::BigInt(b)) => format!(r#"{{"$b":{}}}"#, quote(b)),
    Value::Opaque(Opaque::Function) => r#"{"$fn":1}"#.into(),
    Value::Opaque(_) => "null".into(),
  }
}

fn list(items: &[String]) -> String {
  format!("[{}]", items.iter().map(|s| quote(s)).collect::<Vec<_>>().join(","))
}

/// Run one case and render it like the TypeBox side does.
fn run(input: &str) -> String {
  let J::O(o) = parse(input) else {
    panic!("case is an object")
  };
  let schema = decode(field(&o, "schema").unwrap());
  let value = decode(field(&o, "value").unwrap());
  let limit = match field(&o, "limit") {
    Some(J::Num(n)) => *n as usize,
    _ => 1000,
  };
  let s = Schema::compile(&schema).expect("schema compiles");
  let errors: Vec<String> = s
    .errors(&value, limit)
    .iter()
    .map(|e| {
      let mut out = format!(
        r#"{{"keyword":{},"instancePath":{},"message":{}"#,
        quote(&e.keyword),
        quote(&e.instance_path),
        quote(&e.message)
      );
      if let Some(t) = &e.params_type {
        out.push_str(&format!(r#","type":{}"#, quote(t)));
      }
      if let Some(t) = &e.params_type_list {
        out.push_str(&format!(r#","type":{}"#, list(t)));
      }
      if let Some(r) = &e.required_properties {
        out.push_str(&format!(r#","required":{}"#, list(r)));
      }
      out.push('}');
      out
    })
    .collect();
  let convert = match s.convert(value.clone()) {
    Ok(v) => encode(&v),
    Err(_) => r#""throw""#.into(),
  };
  format!(
    r#"{{"check":{},"errors":[{}],"convert":{}}}"#,
    s.check(&value),
    errors.join(","),
    convert
  )
}

#[test]
fn matches_typebox_on_recorded_cases() {
  let mut failures = Vec::new();
  for (input, expected) in CASES {
    let got = run(input);
    if got != *expected {
      failures.push(format!("case:     {input}\nexpected: {expected}\ngot:      {got}"));
    }
  }
  assert!(
    failures.is_empty(),
    "{} of {} cases differ:\n{}",
    failures.len(),
    CASES.len(),
    failures.join("\n\n")
  );
}

#[test]
fn errors_respect_the_limit() {
  let schema = decode(&parse(r#"{"type":"array","items":{"type":"string"}}"#));
  let s = Schema::compile(&schema).unwrap();
  let value = Value::Array((0..20).map(|i| Value::Number(f64::from(i))).collect());
  assert_eq!(s.errors(&value, TYPEBOX_MAX_ERRORS).len(), 8);
  assert_eq!(s.errors(&value, 3).len(), 3);
  assert_eq!(s.errors(&value, 1000).len(), 20);
  assert_eq!(s.errors(&value, 1000)[19].instance_path, "/19");
}

#[test]
fn invalid_patterns_fail_only_when_evaluated() {
  // JS builds `new RegExp(pattern, "u")` when a string reaches the keyword: compiling succeeds,
  // a value that never reaches it is fine, one that does fails with the expression's fault.
  let schema = decode(&parse(r#"{"type":"string","pattern":"(unclosed"}"#));
  let s = Schema::compile(&schema).unwrap();
  assert_eq!(s.try_check(&Value::Number(1.0)), Ok(false));
  let Err(SchemaFault::Regex(fault)) = s.try_check(&Value::str("x")) else {
    panic!("expected a regex fault");
  };
  assert_eq!((fault.source.as_str(), fault.flags.as_str()), ("(unclosed", "u"));
  assert!(s.try_errors(&Value::str("x"), 8).is_err());
  // Inside a `try` (the pipeline's final Convert + Check) it is just "not valid".
  assert!(!s.check(&Value::str("x")));
  assert_eq!(s.try_check(&Value::Number(1.0)), Ok(false));
  // patternProperties: built when an object reaches the keyword, keys or not.
  let schema = decode(&parse(r#"{"patternProperties":{"[":{}}}"#));
  let s = Schema::compile(&schema).unwrap();
  assert_eq!(s.try_check(&Value::str("x")), Ok(true));
  assert!(s.try_check(&Value::Object(Default::default())).is_err());
  assert_eq!(Schema::compile(&Value::Null).unwrap_err(), SchemaError::InvalidRoot);
}

#[test]
fn invalid_property_regex_only_throws_for_objects() {
  let schema = decode(&parse(
    r#"{"~kind":"Object","type":"object","properties":{"a(":{"~kind":"Number","type":"number"}}}"#,
  ));
  let s = Schema::compile(&schema).unwrap();
  assert!(s.check(&decode(&parse(r#"{"a(":1}"#))));
  match s.convert(decode(&parse(r#"{"b":"1"}"#))) {
    Err(ConvertError::InvalidRegex { source, .. }) => assert_eq!(source, "^a($"),
    other => panic!("expected InvalidRegex, got {other:?}"),
  }
  assert_eq!(s.convert(Value::str("x")).unwrap(), Value::str("x"));
}

#[test]
fn plain_schemas_convert_as_identity() {
  let schema = decode(&parse(r#"{"type":"object","properties":{"n":{"type":"number"}}}"#));
  let s = Schema::compile(&schema).unwrap();
  let v = decode(&parse(r#"{"n":"5"}"#));
  assert_eq!(s.convert(v.clone()).unwrap(), v);
}

#[test]
fn unrepresentable_is_an_empty_object() {
  let schema = decode(&parse(r#"{"type":"object","required":["a"]}"#));
  let s = Schema::compile(&schema).unwrap();
  let v = Value::Opaque(Opaque::Unrepresentable);
  let errors = s.errors(&v, 8);
  assert_eq!(errors.len(), 1);
  assert_eq!(errors[0].keyword, "required");
  assert_eq!(errors[0].required_properties.as_deref(), Some(&["a".to_string()][..]));
}

#[test]
fn schema_is_send_and_sync() {
  fn assert_send_sync<T: Send + Sync>() {}
  assert_send_sync::<Schema>();
}

#[test]
fn valid_check_is_fast() {
  let schema = decode(&parse(
    r#"{"~kind":"Object","type":"object","required":["path","offset","limit"],"properties":{"path":{"~kind":"String","type":"string"},"offset":{"~kind":"Number","type":"number"},"limit":{"~kind":"Integer","type":"integer","minimum":1}}}"#,
  ));
  let s = Schema::compile(&schema).unwrap();
  let v = decode(&parse(r#"{"path":"src/main.rs","offset":10,"limit":50}"#));
  assert!(s.check(&v));
  let start = std::time::Instant::now();
  let rounds = 10_000u32;
  for _ in 0..rounds {
    assert!(std::hint::black_box(&s).check(std::hint::black_box(&v)));
  }
  let per_call = start.elapsed() / rounds;
  // Generous bound so unoptimised test builds pass; release builds are far below this.
  assert!(
    per_call < std::time::Duration::from_micros(20),
    "check took {per_call:?}"
  );
}

const CASES: &[(&str, &str)] = &[
  (
    r##"{"schema":{"type":"object","required":["v"],"properties":{"v":{"anyOf":[{"type":"string","~kind":"String"},{"type":"null","~kind":"Null"}],"~kind":"Union"}},"~kind":"Object"},"value":{"v":5},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"/v","message":"must be string","type":"string"},{"keyword":"type","instancePath":"/v","message":"must be null","type":"null"},{"keyword":"anyOf","instancePath":"/v","message":"must match a schema in anyOf"}],"convert":{"$o":[["v","5"]]}}"##,
  ),
  (
    r##"{"schema":{"type":"number","~kind":"Number"},"value":"0x10","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be number","type":"number"}],"convert":16}"##,
  ),
  (
    r##"{"schema":{"type":"integer","~kind":"Integer"},"value":"3.7","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be integer","type":"integer"}],"convert":3}"##,
  ),
  (
    r##"{"schema":{"type":"number","~kind":"Number"},"value":"abc","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be number","type":"number"}],"convert":"abc"}"##,
  ),
  (
    r##"{"schema":{"type":"integer","~kind":"Integer"},"value":"-3.7","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be integer","type":"integer"}],"convert":-3}"##,
  ),
  (
    r##"{"schema":{"type":"null","~kind":"Null"},"value":"NULL","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be null","type":"null"}],"convert":null}"##,
  ),
  (
    r##"{"schema":{"type":"null","~kind":"Null"},"value":"","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be null","type":"null"}],"convert":null}"##,
  ),
  (
    r##"{"schema":{"type":"null","~kind":"Null"},"value":0,"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be null","type":"null"}],"convert":null}"##,
  ),
  (
    r##"{"schema":{"type":"null","~kind":"Null"},"value":"x","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be null","type":"null"}],"convert":"x"}"##,
  ),
  (
    r##"{"schema":{"type":"null","~kind":"Null"},"value":{"$u":1},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be null","type":"null"}],"convert":null}"##,
  ),
  (
    r##"{"schema":{"type":"boolean","~kind":"Boolean"},"value":"TRUE","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be boolean","type":"boolean"}],"convert":true}"##,
  ),
  (
    r##"{"schema":{"type":"boolean","~kind":"Boolean"},"value":"0","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be boolean","type":"boolean"}],"convert":false}"##,
  ),
  (
    r##"{"schema":{"type":"boolean","~kind":"Boolean"},"value":2,"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be boolean","type":"boolean"}],"convert":2}"##,
  ),
  (
    r##"{"schema":{"type":"boolean","~kind":"Boolean"},"value":null,"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be boolean","type":"boolean"}],"convert":false}"##,
  ),
  (
    r##"{"schema":{"type":"boolean","~kind":"Boolean"},"value":{"$b":"1"},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be boolean","type":"boolean"}],"convert":true}"##,
  ),
  (
    r##"{"schema":{"type":"array","items":{"type":"string","~kind":"String"},"~kind":"Array"},"value":"a","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be array","type":"array"}],"convert":["a"]}"##,
  ),
  (
    r##"{"schema":{"type":"array","items":{"type":"number","~kind":"Number"},"~kind":"Array"},"value":["1","x",true],"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"/0","message":"must be number","type":"number"},{"keyword":"type","instancePath":"/1","message":"must be number","type":"number"},{"keyword":"type","instancePath":"/2","message":"must be number","type":"number"}],"convert":[1,"x",1]}"##,
  ),
  (
    r##"{"schema":{"type":"array","items":{"type":"string","~kind":"String"},"~kind":"Array"},"value":{"a":1},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be array","type":"array"}],"convert":[{"$o":[["a",1]]}]}"##,
  ),
  (
    r##"{"schema":{"type":"string","~kind":"String"},"value":5,"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be string","type":"string"}],"convert":"5"}"##,
  ),
  (
    r##"{"schema":{"type":"string","~kind":"String"},"value":1e+21,"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be string","type":"string"}],"convert":"1e+21"}"##,
  ),
  (
    r##"{"schema":{"type":"string","~kind":"String"},"value":-1e-7,"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be string","type":"string"}],"convert":"-1e-7"}"##,
  ),
  (
    r##"{"schema":{"type":"string","~kind":"String"},"value":null,"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be string","type":"string"}],"convert":"null"}"##,
  ),
  (
    r##"{"schema":{"type":"string","~kind":"String"},"value":{"$u":1},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be string","type":"string"}],"convert":""}"##,
  ),
  (
    r##"{"schema":{"type":"string","~kind":"String"},"value":true,"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be string","type":"string"}],"convert":"true"}"##,
  ),
  (
    r##"{"schema":{"type":"string","~kind":"String"},"value":{"$b":"12"},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be string","type":"string"}],"convert":"12"}"##,
  ),
  (
    r##"{"schema":{"type":"string","~kind":"String"},"value":{"$n":"NaN"},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be string","type":"string"}],"convert":{"$n":"NaN"}}"##,
  ),
  (
    r##"{"schema":{"type":"number","~kind":"Number"},"value":"","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be number","type":"number"}],"convert":0}"##,
  ),
  (
    r##"{"schema":{"type":"number","~kind":"Number"},"value":" 12 ","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be number","type":"number"}],"convert":12}"##,
  ),
  (
    r##"{"schema":{"type":"number","~kind":"Number"},"value":"1e3","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be number","type":"number"}],"convert":1000}"##,
  ),
  (
    r##"{"schema":{"type":"number","~kind":"Number"},"value":"TRUE","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be number","type":"number"}],"convert":1}"##,
  ),
  (
    r##"{"schema":{"type":"number","~kind":"Number"},"value":"12n","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be number","type":"number"}],"convert":12}"##,
  ),
  (
    r##"{"schema":{"type":"number","~kind":"Number"},"value":"99999999999999999999n","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be number","type":"number"}],"convert":"99999999999999999999n"}"##,
  ),
  (
    r##"{"schema":{"type":"number","~kind":"Number"},"value":"0b101","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be number","type":"number"}],"convert":5}"##,
  ),
  (
    r##"{"schema":{"type":"number","~kind":"Number"},"value":"Infinity","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be number","type":"number"}],"convert":"Infinity"}"##,
  ),
  (
    r##"{"schema":{"type":"string","const":"abc","~kind":"Literal"},"value":"abc","limit":1000}"##,
    r##"{"check":true,"errors":[],"convert":"abc"}"##,
  ),
  (
    r##"{"schema":{"type":"number","const":5,"~kind":"Literal"},"value":"5","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be number","type":"number"},{"keyword":"const","instancePath":"","message":"must be equal to constant"}],"convert":5}"##,
  ),
  (
    r##"{"schema":{"type":"number","const":5,"~kind":"Literal"},"value":"6","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be number","type":"number"},{"keyword":"const","instancePath":"","message":"must be equal to constant"}],"convert":"6"}"##,
  ),
  (
    r##"{"schema":{"type":"boolean","const":true,"~kind":"Literal"},"value":"true","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be boolean","type":"boolean"},{"keyword":"const","instancePath":"","message":"must be equal to constant"}],"convert":true}"##,
  ),
  (
    r##"{"schema":{"type":"string","const":"5","~kind":"Literal"},"value":5,"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be string","type":"string"},{"keyword":"const","instancePath":"","message":"must be equal to constant"}],"convert":"5"}"##,
  ),
  (
    r##"{"schema":{"type":"bigint","~kind":"BigInt"},"value":"12","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be bigint","type":"bigint"}],"convert":{"$b":"12"}}"##,
  ),
  (
    r##"{"schema":{"type":"bigint","~kind":"BigInt"},"value":2.9,"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be bigint","type":"bigint"}],"convert":{"$b":"2"}}"##,
  ),
  (
    r##"{"schema":{"type":"bigint","~kind":"BigInt"},"value":"3.5","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be bigint","type":"bigint"}],"convert":{"$b":"3"}}"##,
  ),
  (
    r##"{"schema":{"type":"bigint","~kind":"BigInt"},"value":"x","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be bigint","type":"bigint"}],"convert":"x"}"##,
  ),
  (
    r##"{"schema":{"enum":["a","b",1],"~kind":"Enum"},"value":"1","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"enum","instancePath":"","message":"must be equal to one of the allowed values"}],"convert":1}"##,
  ),
  (
    r##"{"schema":{"enum":["a","b",1],"~kind":"Enum"},"value":"c","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"enum","instancePath":"","message":"must be equal to one of the allowed values"}],"convert":"c"}"##,
  ),
  (
    r##"{"schema":{"type":"object","required":["a"],"properties":{"a":{"type":"string","~kind":"String"},"b":{"type":"number","~kind":"Number","~optional":true}},"~kind":"Object"},"value":{"a":1,"b":{"$u":1}},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"/a","message":"must be string","type":"string"}],"convert":{"$o":[["a","1"],["b",{"$u":1}]]}}"##,
  ),
  (
    r##"{"schema":{"type":"object","required":["a"],"properties":{"a":{"type":"string","~kind":"String"},"b":{"type":"number","~kind":"Number","~optional":true}},"~kind":"Object"},"value":{"b":"2"},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"required","instancePath":"","message":"must have required properties a","required":["a"]},{"keyword":"type","instancePath":"/b","message":"must be number","type":"number"}],"convert":{"$o":[["b",2]]}}"##,
  ),
  (
    r##"{"schema":{"type":"object","required":["a.c","abc"],"properties":{"a.c":{"type":"number","~kind":"Number"},"abc":{"type":"string","~kind":"String"}},"~kind":"Object"},"value":{"a.c":"1","abc":2,"aXc":"3"},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"/a.c","message":"must be number","type":"number"},{"keyword":"type","instancePath":"/abc","message":"must be string","type":"string"}],"convert":{"$o":[["a.c",1],["abc","2"],["aXc",3]]}}"##,
  ),
  (
    r##"{"schema":{"type":"object","required":["a("],"properties":{"a(":{"type":"number","~kind":"Number"}},"~kind":"Object"},"value":{"x":1},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"required","instancePath":"","message":"must have required properties a(","required":["a("]}],"convert":"throw"}"##,
  ),
  (
    r##"{"schema":{"type":"object","required":["a("],"properties":{"a(":{"type":"number","~kind":"Number"}},"~kind":"Object"},"value":"not an object","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be object","type":"object"}],"convert":"not an object"}"##,
  ),
  (
    r##"{"schema":{"type":"object","required":["a","b"],"properties":{"a":{"type":"number","~kind":"Number"},"b":{"type":"boolean","~kind":"Boolean"}},"additionalProperties":{"type":"number","~kind":"Number"},"~kind":"Object"},"value":{"a":"1","b":"true","c":"3"},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"additionalProperties","instancePath":"","message":"must not have additional properties"},{"keyword":"type","instancePath":"/a","message":"must be number","type":"number"},{"keyword":"type","instancePath":"/b","message":"must be boolean","type":"boolean"}],"convert":{"$o":[["a",1],["b",1],["c",3]]}}"##,
  ),
  (
    r##"{"schema":{"type":"object","patternProperties":{"^.*$":{"type":"number","~kind":"Number"}},"~kind":"Record"},"value":{"x":"1","y":"z"},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"/x","message":"must be number","type":"number"},{"keyword":"type","instancePath":"/y","message":"must be number","type":"number"}],"convert":{"$o":[["x",1],["y","z"]]}}"##,
  ),
  (
    r##"{"schema":{"type":"array","additionalItems":false,"items":[{"type":"number","~kind":"Number"},{"type":"string","~kind":"String"}],"minItems":2,"~kind":"Tuple"},"value":["1",2,3],"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"boolean","instancePath":"/2","message":"schema is false"},{"keyword":"type","instancePath":"/0","message":"must be number","type":"number"},{"keyword":"type","instancePath":"/1","message":"must be string","type":"string"}],"convert":[1,"2",3]}"##,
  ),
  (
    r##"{"schema":{"$defs":{"Node":{"type":"object","required":["v","next"],"properties":{"v":{"type":"number","~kind":"Number"},"next":{"anyOf":[{"$ref":"Node","~kind":"Ref"},{"type":"null","~kind":"Null"}],"~kind":"Union"}},"~kind":"Object","$id":"Node"}},"$ref":"Node","~kind":"Cyclic"},"value":{"v":"1","next":{"v":"2","next":null}},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"/v","message":"must be number","type":"number"},{"keyword":"type","instancePath":"/next/v","message":"must be number","type":"number"},{"keyword":"type","instancePath":"/next","message":"must be null","type":"null"},{"keyword":"anyOf","instancePath":"/next","message":"must match a schema in anyOf"}],"convert":{"$o":[["v",1],["next",{"$o":[["v",2],["next",null]]}]]}}"##,
  ),
  (
    r##"{"schema":{"anyOf":[{"type":"object","required":["kind","n"],"properties":{"kind":{"type":"string","const":"x","~kind":"Literal"},"n":{"type":"number","~kind":"Number"}},"~kind":"Object"},{"type":"object","required":["kind","s"],"properties":{"kind":{"type":"string","const":"y","~kind":"Literal"},"s":{"type":"string","~kind":"String"}},"~kind":"Object"}],"~kind":"Union"},"value":{"kind":"y","s":5},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"required","instancePath":"","message":"must have required properties n","required":["n"]},{"keyword":"const","instancePath":"/kind","message":"must be equal to constant"},{"keyword":"type","instancePath":"/s","message":"must be string","type":"string"},{"keyword":"anyOf","instancePath":"","message":"must match a schema in anyOf"}],"convert":{"$o":[["kind","y"],["s","5"]]}}"##,
  ),
  (
    r##"{"schema":{"type":"object","required":["path","edits"],"properties":{"path":{"type":"string","~kind":"String"},"edits":{"type":"array","items":{"type":"object","required":["oldText","newText"],"properties":{"oldText":{"type":"string","~kind":"String"},"newText":{"type":"string","~kind":"String"}},"~kind":"Object"},"~kind":"Array"}},"~kind":"Object"},"value":{"edits":"[]"},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"required","instancePath":"","message":"must have required properties path","required":["path"]},{"keyword":"type","instancePath":"/edits","message":"must be array","type":"array"}],"convert":{"$o":[["edits",["[]"]]]}}"##,
  ),
  (
    r##"{"schema":{"type":"object","required":["path","edits"],"properties":{"path":{"type":"string","~kind":"String"},"edits":{"type":"array","items":{"type":"object","required":["oldText","newText"],"properties":{"oldText":{"type":"string","~kind":"String"},"newText":{"type":"string","~kind":"String"}},"~kind":"Object"},"~kind":"Array"}},"~kind":"Object"},"value":{"path":1,"edits":[{"oldText":1},"x"]},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"/path","message":"must be string","type":"string"},{"keyword":"required","instancePath":"/edits/0","message":"must have required properties newText","required":["newText"]},{"keyword":"type","instancePath":"/edits/0/oldText","message":"must be string","type":"string"},{"keyword":"type","instancePath":"/edits/1","message":"must be object","type":"object"}],"convert":{"$o":[["path","1"],["edits",[{"$o":[["oldText","1"]]},"x"]]]}}"##,
  ),
  (
    r##"{"schema":{"type":"object","required":["path","edits"],"properties":{"path":{"type":"string","~kind":"String"},"edits":{"type":"array","items":{"type":"object","required":["oldText","newText"],"properties":{"oldText":{"type":"string","~kind":"String"},"newText":{"type":"string","~kind":"String"}},"~kind":"Object"},"~kind":"Array"}},"~kind":"Object"},"value":{"path":1,"edits":[{"oldText":1},"x",{},{},{},{},{}]},"limit":8}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"/path","message":"must be string","type":"string"},{"keyword":"required","instancePath":"/edits/0","message":"must have required properties newText","required":["newText"]},{"keyword":"type","instancePath":"/edits/0/oldText","message":"must be string","type":"string"},{"keyword":"type","instancePath":"/edits/1","message":"must be object","type":"object"},{"keyword":"required","instancePath":"/edits/2","message":"must have required properties oldText, newText","required":["oldText","newText"]},{"keyword":"required","instancePath":"/edits/3","message":"must have required properties oldText, newText","required":["oldText","newText"]},{"keyword":"required","instancePath":"/edits/4","message":"must have required properties oldText, newText","required":["oldText","newText"]},{"keyword":"required","instancePath":"/edits/5","message":"must have required properties oldText, newText","required":["oldText","newText"]}],"convert":{"$o":[["path","1"],["edits",[{"$o":[["oldText","1"]]},"x",{"$o":[]},{"$o":[]},{"$o":[]},{"$o":[]},{"$o":[]}]]]}}"##,
  ),
  (
    r##"{"schema":{"type":"object","required":["a"],"properties":{"a":{"type":"string","~kind":"String"}},"~kind":"Object"},"value":{"a":{"$u":1}},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"/a","message":"must be string","type":"string"}],"convert":{"$o":[["a",""]]}}"##,
  ),
  (
    r##"{"schema":{"type":"object","properties":{"a":{"type":"string","~kind":"String","~optional":true}},"~kind":"Object"},"value":{"a":{"$u":1}},"limit":1000}"##,
    r##"{"check":true,"errors":[],"convert":{"$o":[["a",{"$u":1}]]}}"##,
  ),
  (
    r##"{"schema":{"type":"object","properties":{"a":{"type":"string","~kind":"String","~optional":true}},"~kind":"Object"},"value":{"a":null},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"/a","message":"must be string","type":"string"}],"convert":{"$o":[["a","null"]]}}"##,
  ),
  (
    r##"{"schema":{"type":"object","required":["a"],"properties":{"a":{"type":"string","~kind":"String"}},"additionalProperties":false,"~kind":"Object"},"value":{"a":"x","b":1,"c":2},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"additionalProperties","instancePath":"","message":"must not have additional properties"}],"convert":{"$o":[["a","x"],["b",1],["c",2]]}}"##,
  ),
  (
    r##"{"schema":{"type":"object","required":["a/b"],"properties":{"a/b":{"type":"string","~kind":"String"}},"~kind":"Object"},"value":{"a/b":1},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"/a/b","message":"must be string","type":"string"}],"convert":{"$o":[["a/b","1"]]}}"##,
  ),
  (
    r##"{"schema":{"anyOf":[{"type":"string","~kind":"String"},{"type":"number","~kind":"Number"}],"~kind":"Union"},"value":null,"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be string","type":"string"},{"keyword":"type","instancePath":"","message":"must be number","type":"number"},{"keyword":"anyOf","instancePath":"","message":"must match a schema in anyOf"}],"convert":"null"}"##,
  ),
  (
    r##"{"schema":{"anyOf":[{"type":"object","required":["a"],"properties":{"a":{"type":"string","~kind":"String"}},"~kind":"Object"},{"type":"array","items":{"type":"string","~kind":"String"},"~kind":"Array"}],"~kind":"Union"},"value":{"a":1},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"/a","message":"must be string","type":"string"},{"keyword":"type","instancePath":"","message":"must be array","type":"array"},{"keyword":"anyOf","instancePath":"","message":"must match a schema in anyOf"}],"convert":{"$o":[["a","1"]]}}"##,
  ),
  (
    r##"{"schema":{"type":["string","null"]},"value":1,"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be either string or null","type":["string","null"]}],"convert":1}"##,
  ),
  (
    r##"{"schema":{"type":"object","required":["a","b"],"properties":{"a":{"type":"string"}}},"value":{},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"required","instancePath":"","message":"must have required properties a, b","required":["a","b"]}],"convert":{"$o":[]}}"##,
  ),
  (
    r##"{"schema":{"type":"object","required":["a","b"],"properties":{"a":{"type":"string"}}},"value":[],"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be object","type":"object"}],"convert":[]}"##,
  ),
  (
    r##"{"schema":{"type":"number"},"value":{"$n":"NaN"},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be number","type":"number"}],"convert":{"$n":"NaN"}}"##,
  ),
  (
    r##"{"schema":{"type":"number"},"value":{"$n":"Infinity"},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be number","type":"number"}],"convert":{"$n":"Infinity"}}"##,
  ),
  (
    r##"{"schema":{"type":"integer"},"value":1.5,"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be integer","type":"integer"}],"convert":1.5}"##,
  ),
  (
    r##"{"schema":{"type":"integer"},"value":{"$b":"1"},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be integer","type":"integer"}],"convert":{"$b":"1"}}"##,
  ),
  (
    r##"{"schema":{"type":"bigint"},"value":{"$b":"1"},"limit":1000}"##,
    r##"{"check":true,"errors":[],"convert":{"$b":"1"}}"##,
  ),
  (
    r##"{"schema":{"minimum":1,"maximum":2,"exclusiveMinimum":1,"exclusiveMaximum":1.5,"multipleOf":0.25},"value":0.1,"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"exclusiveMinimum","instancePath":"","message":"must be > 1"},{"keyword":"minimum","instancePath":"","message":"must be >= 1"},{"keyword":"multipleOf","instancePath":"","message":"must be multiple of 0.25"}],"convert":0.1}"##,
  ),
  (
    r##"{"schema":{"minimum":1},"value":{"$n":"NaN"},"limit":1000}"##,
    r##"{"check":true,"errors":[],"convert":{"$n":"NaN"}}"##,
  ),
  (
    r##"{"schema":{"maximum":{"$b":"10"}},"value":{"$b":"11"},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"maximum","instancePath":"","message":"must be <= 10"}],"convert":{"$b":"11"}}"##,
  ),
  (
    r##"{"schema":{"minimum":5},"value":{"$b":"4"},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"minimum","instancePath":"","message":"must be >= 5"}],"convert":{"$b":"4"}}"##,
  ),
  (
    r##"{"schema":{"minLength":2,"maxLength":3},"value":"é","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"minLength","instancePath":"","message":"must not have fewer than 2 characters"}],"convert":"é"}"##,
  ),
  (
    r##"{"schema":{"maxLength":1},"value":"👨‍👩","limit":1000}"##,
    r##"{"check":true,"errors":[],"convert":"👨‍👩"}"##,
  ),
  (
    r##"{"schema":{"maxLength":1},"value":"a️️","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"maxLength","instancePath":"","message":"must not have more than 1 characters"}],"convert":"a️️"}"##,
  ),
  (
    r##"{"schema":{"minLength":2},"value":"🇺🇸","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"minLength","instancePath":"","message":"must not have fewer than 2 characters"}],"convert":"🇺🇸"}"##,
  ),
  (
    r##"{"schema":{"pattern":"^\\p{Lu}"},"value":"Éa","limit":1000}"##,
    r##"{"check":true,"errors":[],"convert":"Éa"}"##,
  ),
  (
    r##"{"schema":{"pattern":"^.$"},"value":"😀","limit":1000}"##,
    r##"{"check":true,"errors":[],"convert":"😀"}"##,
  ),
  (
    r##"{"schema":{"pattern":"b"},"value":"abc","limit":1000}"##,
    r##"{"check":true,"errors":[],"convert":"abc"}"##,
  ),
  (
    r##"{"schema":{"pattern":"^a"},"value":"ba","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"pattern","instancePath":"","message":"must match pattern \"^a\""}],"convert":"ba"}"##,
  ),
  (
    r##"{"schema":{"format":"email"},"value":"nope","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"format","instancePath":"","message":"must match format \"email\""}],"convert":"nope"}"##,
  ),
  (
    r##"{"schema":{"format":"date-time"},"value":"2020-01-01T10:00:00Z","limit":1000}"##,
    r##"{"check":true,"errors":[],"convert":"2020-01-01T10:00:00Z"}"##,
  ),
  (
    r##"{"schema":{"format":"ipv4"},"value":"1.2.3.256","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"format","instancePath":"","message":"must match format \"ipv4\""}],"convert":"1.2.3.256"}"##,
  ),
  (
    r##"{"schema":{"format":"uuid"},"value":"x","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"format","instancePath":"","message":"must match format \"uuid\""}],"convert":"x"}"##,
  ),
  (
    r##"{"schema":{"format":"whatever"},"value":"x","limit":1000}"##,
    r##"{"check":true,"errors":[],"convert":"x"}"##,
  ),
  (
    r##"{"schema":{"const":{"a":[1,{"b":null}]}},"value":{"a":[1,{"b":null}]},"limit":1000}"##,
    r##"{"check":true,"errors":[],"convert":{"$o":[["a",[1,{"$o":[["b",null]]}]]]}}"##,
  ),
  (
    r##"{"schema":{"const":{"a":1}},"value":{"a":1,"b":{"$u":1}},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"const","instancePath":"","message":"must be equal to constant"}],"convert":{"$o":[["a",1],["b",{"$u":1}]]}}"##,
  ),
  (
    r##"{"schema":{"enum":[[1],"x"]},"value":[1],"limit":1000}"##,
    r##"{"check":true,"errors":[],"convert":[1]}"##,
  ),
  (
    r##"{"schema":{"enum":[1,2]},"value":"1","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"enum","instancePath":"","message":"must be equal to one of the allowed values"}],"convert":"1"}"##,
  ),
  (
    r##"{"schema":{"uniqueItems":true},"value":[{"a":1,"b":2},{"b":2,"a":1}],"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"uniqueItems","instancePath":"","message":"must not have duplicate items"}],"convert":[{"$o":[["a",1],["b",2]]},{"$o":[["b",2],["a",1]]}]}"##,
  ),
  (
    r##"{"schema":{"uniqueItems":true},"value":[0,{"$n":"-0"}],"limit":1000}"##,
    r##"{"check":true,"errors":[],"convert":[0,{"$n":"-0"}]}"##,
  ),
  (
    r##"{"schema":{"uniqueItems":true},"value":[["a\nb"],["a","b"]],"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"uniqueItems","instancePath":"","message":"must not have duplicate items"}],"convert":[["a\nb"],["a","b"]]}"##,
  ),
  (
    r##"{"schema":{"minItems":2,"maxItems":3,"items":{"type":"string"}},"value":[1],"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"/0","message":"must be string","type":"string"},{"keyword":"minItems","instancePath":"","message":"must not have fewer than 2 items"}],"convert":[1]}"##,
  ),
  (
    r##"{"schema":{"items":[{"type":"string"}],"additionalItems":{"type":"number"}},"value":["a","b","c"],"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"/1","message":"must be number","type":"number"}],"convert":["a","b","c"]}"##,
  ),
  (
    r##"{"schema":{"prefixItems":[{"type":"string"}],"items":{"type":"number"}},"value":[1,"x","y"],"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"/1","message":"must be number","type":"number"},{"keyword":"type","instancePath":"/2","message":"must be number","type":"number"},{"keyword":"type","instancePath":"/0","message":"must be string","type":"string"}],"convert":[1,"x","y"]}"##,
  ),
  (
    r##"{"schema":{"contains":{"type":"string"}},"value":[1,2],"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"contains","instancePath":"","message":"must contain at least 1 valid item"}],"convert":[1,2]}"##,
  ),
  (
    r##"{"schema":{"contains":{"type":"number"},"minContains":2,"maxContains":3},"value":[1,"a"],"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"contains","instancePath":"","message":"must contain at least 1 valid item"}],"convert":[1,"a"]}"##,
  ),
  (
    r##"{"schema":{"contains":{"type":"number"},"minContains":0},"value":[],"limit":1000}"##,
    r##"{"check":true,"errors":[],"convert":[]}"##,
  ),
  (
    r##"{"schema":{"minProperties":2,"maxProperties":0},"value":{"a":1},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"minProperties","instancePath":"","message":"must not have fewer than 2 properties"},{"keyword":"maxProperties","instancePath":"","message":"must not have more than 0 properties"}],"convert":{"$o":[["a",1]]}}"##,
  ),
  (
    r##"{"schema":{"propertyNames":{"maxLength":1}},"value":{"ab":1,"c":2,"de":3},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"propertyNames","instancePath":"","message":"property names ab, de are invalid"}],"convert":{"$o":[["ab",1],["c",2],["de",3]]}}"##,
  ),
  (
    r##"{"schema":{"patternProperties":{"^x":{"type":"number"}},"additionalProperties":false},"value":{"x1":"a","y":1},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"additionalProperties","instancePath":"","message":"must not have additional properties"},{"keyword":"type","instancePath":"/x1","message":"must be number","type":"number"}],"convert":{"$o":[["x1","a"],["y",1]]}}"##,
  ),
  (
    r##"{"schema":{"patternProperties":{"^x":{"type":"number"}},"properties":{"y":{"type":"string"}},"additionalProperties":{"type":"boolean"}},"value":{"x1":1,"y":"s","z":3},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"additionalProperties","instancePath":"","message":"must not have additional properties"}],"convert":{"$o":[["x1",1],["y","s"],["z",3]]}}"##,
  ),
  (
    r##"{"schema":{"dependentRequired":{"a":["b","c"]}},"value":{"a":1},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"dependentRequired","instancePath":"","message":"must have properties b, c when property a is present"},{"keyword":"dependentRequired","instancePath":"","message":"must have properties b, c when property a is present"}],"convert":{"$o":[["a",1]]}}"##,
  ),
  (
    r##"{"schema":{"dependencies":{"a":["b","c"]}},"value":{"a":1},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"dependencies","instancePath":"","message":"must have properties b, c when property a is present"}],"convert":{"$o":[["a",1]]}}"##,
  ),
  (
    r##"{"schema":{"dependencies":{"a":{"required":["z"]}}},"value":{"a":1},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"required","instancePath":"","message":"must have required properties z","required":["z"]}],"convert":{"$o":[["a",1]]}}"##,
  ),
  (
    r##"{"schema":{"anyOf":[{"type":"string","minLength":3},{"type":"number","minimum":5}]},"value":"ab","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"minLength","instancePath":"","message":"must not have fewer than 3 characters"},{"keyword":"type","instancePath":"","message":"must be number","type":"number"},{"keyword":"anyOf","instancePath":"","message":"must match a schema in anyOf"}],"convert":"ab"}"##,
  ),
  (
    r##"{"schema":{"oneOf":[{"type":"number"},{"type":"integer"}]},"value":1,"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"oneOf","instancePath":"","message":"must match exactly one schema in oneOf"}],"convert":1}"##,
  ),
  (
    r##"{"schema":{"oneOf":[{"type":"string"},{"type":"boolean"}]},"value":1,"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be string","type":"string"},{"keyword":"type","instancePath":"","message":"must be boolean","type":"boolean"},{"keyword":"oneOf","instancePath":"","message":"must match exactly one schema in oneOf"}],"convert":1}"##,
  ),
  (
    r##"{"schema":{"allOf":[{"type":"number"},{"minimum":5},{"maximum":1}]},"value":3,"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"minimum","instancePath":"","message":"must be >= 5"},{"keyword":"maximum","instancePath":"","message":"must be <= 1"}],"convert":3}"##,
  ),
  (
    r##"{"schema":{"not":{"type":"string"}},"value":"x","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"not","instancePath":"","message":"must not be valid"}],"convert":"x"}"##,
  ),
  (
    r##"{"schema":{"if":{"type":"string"},"then":{"minLength":5},"else":{"type":"number"}},"value":"abc","limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"if","instancePath":"","message":"must match \"then\" schema"}],"convert":"abc"}"##,
  ),
  (
    r##"{"schema":{"if":{"type":"string"},"then":{"minLength":5},"else":{"type":"number"}},"value":true,"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be number","type":"number"},{"keyword":"if","instancePath":"","message":"must match \"else\" schema"}],"convert":true}"##,
  ),
  (
    r##"{"schema":true,"value":1,"limit":1000}"##,
    r##"{"check":true,"errors":[],"convert":1}"##,
  ),
  (
    r##"{"schema":false,"value":1,"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"boolean","instancePath":"","message":"schema is false"}],"convert":1}"##,
  ),
  (
    r##"{"schema":{"properties":{"a":false}},"value":{"a":1},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"boolean","instancePath":"/a","message":"schema is false"}],"convert":{"$o":[["a",1]]}}"##,
  ),
  (
    r##"{"schema":{"$defs":{"s":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/s"}}},"value":{"x":1},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"/x","message":"must be string","type":"string"}],"convert":{"$o":[["x",1]]}}"##,
  ),
  (
    r##"{"schema":{"$ref":"#/$defs/missing"},"value":1,"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"boolean","instancePath":"","message":"schema is false"}],"convert":1}"##,
  ),
  (
    r##"{"schema":{"type":"object","properties":{"child":{"$ref":"#"}},"required":["v"]},"value":{"v":1,"child":{"child":{}}},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"required","instancePath":"/child","message":"must have required properties v","required":["v"]},{"keyword":"required","instancePath":"/child/child","message":"must have required properties v","required":["v"]}],"convert":{"$o":[["v",1],["child",{"$o":[["child",{"$o":[]}]]}]]}}"##,
  ),
  (
    r##"{"schema":{"type":"object","properties":{"a":{"type":"number"}},"unevaluatedProperties":false},"value":{"a":1,"b":2},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"unevaluatedProperties","instancePath":"","message":"must not have unevaluated properties"}],"convert":{"$o":[["a",1],["b",2]]}}"##,
  ),
  (
    r##"{"schema":{"allOf":[{"properties":{"a":{}}}],"anyOf":[{"properties":{"b":{}}}],"unevaluatedProperties":false},"value":{"a":1,"b":2,"c":3},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"unevaluatedProperties","instancePath":"","message":"must not have unevaluated properties"}],"convert":{"$o":[["a",1],["b",2],["c",3]]}}"##,
  ),
  (
    r##"{"schema":{"prefixItems":[{}],"unevaluatedItems":{"type":"string"}},"value":[1,"a",2],"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"unevaluatedItems","instancePath":"","message":"must not have unevaluated items"}],"convert":[1,"a",2]}"##,
  ),
  (
    r##"{"schema":{"type":"object"},"value":{"$fn":1},"limit":1000}"##,
    r##"{"check":false,"errors":[{"keyword":"type","instancePath":"","message":"must be object","type":"object"}],"convert":{"$fn":1}}"##,
  ),
  (
    r##"{"schema":{"type":"function"},"value":{"$fn":1},"limit":1000}"##,
    r##"{"check":true,"errors":[],"convert":{"$fn":1}}"##,
  ),
];

#[test]
fn intersect_converts_with_its_evaluated_type() {
  // TypeBox: Value.Convert(Intersect([Object({count: Literal(true)})]), {count: "true"}) converts.
  let schema = decode(&parse(
    r#"{"~kind":"Intersect","allOf":[{"~kind":"Object","type":"object","required":["count"],"properties":{"count":{"~kind":"Literal","type":"boolean","const":true}}}]}"#,
  ));
  let s = Schema::compile(&schema).unwrap();
  let converted = s.convert(decode(&parse(r#"{"count":"true"}"#))).unwrap();
  assert_eq!(converted, decode(&parse(r#"{"count":true}"#)));
  assert!(s.check(&converted));
  // A raw allOf (no ~kind) is not converted.
  let schema = decode(&parse(r#"{"allOf":[{"~kind":"Object","type":"object","properties":{"n":{"~kind":"Number","type":"number"}}}]}"#));
  let s = Schema::compile(&schema).unwrap();
  assert_eq!(s.convert(decode(&parse(r#"{"n":"5"}"#))).unwrap(), decode(&parse(r#"{"n":"5"}"#)));
  // The evaluated object builds `^a($` for its property names: Convert throws.
  let schema = decode(&parse(
    r#"{"~kind":"Intersect","allOf":[{"~kind":"Object","type":"object","properties":{"a(":{"~kind":"Any"}}}]}"#,
  ));
  let s = Schema::compile(&schema).unwrap();
  assert!(matches!(s.convert(decode(&parse("{}"))), Err(ConvertError::InvalidRegex { .. })));
}

#[test]
fn endless_schema_recursion_is_a_range_error_not_a_stack_overflow() {
  // Found by fuzzing (fuzz target `schema`): a `$ref` cycle that never descends into the value
  // recursed until the native stack overflowed and the process aborted. TypeBox overflows V8's
  // stack on the same schemas: `RangeError: Maximum call stack size exceeded`.
  for text in [
    r##"{"$ref":"#"}"##,
    r##"{"not":{"$ref":"#"}}"##,
    // Two self-references per level: evaluation must stop at once, not try 2^depth paths.
    r##"{"$id":"a","anyOf":[{"$ref":"a"},{"$ref":"a"}],"allOf":[{"$ref":"a"}]}"##,
    r##"{"$defs":{"x":{"if":{"$ref":"#/$defs/x"},"then":{"$ref":"#/$defs/x"}}},"oneOf":[{"$ref":"#/$defs/x"},{}]}"##,
  ] {
    let s = Schema::compile(&decode(&parse(text))).unwrap();
    for v in [Value::Number(1.0), Value::Array(vec![Value::Null]), Value::Undefined] {
      assert_eq!(s.try_check(&v), Err(SchemaFault::TooDeep), "{text}");
      assert!(!s.check(&v));
      assert_eq!(s.try_errors(&v, 8), Err(SchemaFault::TooDeep));
      let _ = s.errors(&v, 8);
    }
  }
  // The fault does not leak into the next call on this thread.
  let ok = Schema::compile(&decode(&parse(r#"{"type":"number"}"#))).unwrap();
  assert_eq!(ok.try_check(&Value::Number(1.0)), Ok(true));
}

#[test]
fn endless_convert_recursion_is_a_range_error_not_a_stack_overflow() {
  // Convert steps take about 1 KiB of stack in release builds but over 10 KiB unoptimised: give
  // the debug build the room the bound needs there.
  let run = || {
    // Convert of an array-of-itself wraps a non-array value in arrays forever.
    let text = r#"{"~kind":"Cyclic","$defs":{"A":{"~kind":"Array","type":"array","items":{"~kind":"Ref","$ref":"A"}}},"$ref":"A"}"#;
    let s = Schema::compile(&decode(&parse(text))).unwrap();
    assert_eq!(s.convert(Value::Number(1.0)), Err(ConvertError::TooDeep));
    assert_eq!(ConvertError::TooDeep.to_string(), STACK_OVERFLOW_MESSAGE);
    // A union converting through such a branch (and checking it) stops too.
    let text = r#"{"~kind":"Cyclic","$defs":{"A":{"~kind":"Union","anyOf":[{"~kind":"Array","type":"array","items":{"~kind":"Ref","$ref":"A"}},{"~kind":"Ref","$ref":"A"}]}},"$ref":"A"}"#;
    let s = Schema::compile(&decode(&parse(text))).unwrap();
    assert_eq!(s.convert(Value::str("x")), Err(ConvertError::TooDeep));
    let ok = Schema::compile(&decode(&parse(r#"{"~kind":"Number","type":"number"}"#))).unwrap();
    assert_eq!(ok.convert(Value::str("1")), Ok(Value::Number(1.0)));
  };
  std::thread::Builder::new()
    .stack_size(64 << 20)
    .spawn(run)
    .unwrap()
    .join()
    .unwrap();
}

#[test]
fn deep_values_in_recursive_schemas_still_check() {
  // A tree schema over a value nested as deep as the JSON parser goes stays under the bound.
  let text = r##"{"$defs":{"n":{"type":"object","properties":{"c":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}"##;
  let s = Schema::compile(&decode(&parse(text))).unwrap();
  let mut v = Value::Object(Obj::new());
  for _ in 0..crate::repair::json::MAX_DEPTH {
    let mut o = Obj::new();
    o.set("c", v);
    v = Value::Object(o);
  }
  assert_eq!(s.try_check(&v), Ok(true));
  assert_eq!(s.try_errors(&v, 8), Ok(vec![]));
}

#[test]
fn ref_fragments_with_a_percent_before_a_multibyte_character() {
  // Found by fuzzing (target `pipeline`): percent-decoding a `$ref` fragment sliced the string
  // inside the character after a `%` and panicked.
  for text in [r##"{"$ref":"#%é"}"##, r##"{"$ref":"#/%é%"}"##, r##"{"$ref":"#/a%1é"}"##] {
    let s = Schema::compile(&decode(&parse(text))).unwrap();
    let _ = s.try_check(&Value::Null);
  }
  // Escapes still decode (two hex digits; a sign is not a digit).
  let text = r##"{"$defs":{"é":{"type":"string"},"%+1":{"type":"number"}},"properties":{"a":{"$ref":"#/$defs/%C3%A9"},"b":{"$ref":"#/$defs/%+1"}}}"##;
  let s = Schema::compile(&decode(&parse(text))).unwrap();
  assert!(s.check(&decode(&parse(r#"{"a":"x","b":1}"#))));
  assert!(!s.check(&decode(&parse(r#"{"a":1}"#))));
  assert!(!s.check(&decode(&parse(r#"{"b":"x"}"#))));
}

//! Schema tree -> node arena.
//!
//! Keyword guards follow TypeBox's `schema/types` predicates: a keyword whose value has the wrong
//! shape (e.g. `properties` with a non-schema member, `minLength: "3"`) is ignored entirely.
//! Nodes are keyed by their JSON pointer so `$ref` targets and Convert's views of the same schema
//! object share one node.

use std::collections::HashMap;

use super::format::Format;
use super::num::Num;
use super::regex::{escape_property_key, is_plain_regex_text, JsRegex, LazyRegex};
use super::{
  AdditionalProps, ArrayKws, Conv, ConvObject, ConvProp, ConvRecord, Dependency, IfKw, Items, KeyMatcher, KnownKeys,
  Node, NodeId, NumberKws, ObjNode, ObjectKws, Prop, Schema, SchemaError, StringKws, TypeKw, TypeName, TypeRaw,
};
use crate::repair::value::{Obj, Value};

pub(crate) fn compile(root: &Value) -> Result<Schema, SchemaError> {
  if !is_schema(root) {
    return Err(SchemaError::InvalidRoot);
  }
  let mut c = Compiler {
    root,
    nodes: Vec::new(),
    by_ptr: HashMap::new(),
    pending: Vec::new(),
    tracks: false,
    synthetic: 0,
  };
  let root_id = c.node(root, String::new(), "")?;
  // Link references; resolving one may compile new targets that hold references themselves.
  while let Some(p) = c.pending.pop() {
    let target = match c.resolve(&p.reference, &p.base) {
      Some(ptr) => match c.by_ptr.get(&ptr) {
        Some(&id) => id,
        None => {
          let value = pointer_get(root, &ptr).expect("resolved pointer exists");
          c.node(value, ptr, &p.base)?
        }
      },
      // TypeBox resolves a missing target to `false`.
      None => c.push(Node::Bool(false)),
    };
    if let Node::Obj(n) = &mut c.nodes[p.holder] {
      n.refs[p.slot] = target;
    }
  }
  Ok(Schema {
    nodes: c.nodes,
    root: root_id,
    tracks_evaluation: c.tracks,
  })
}

struct PendingRef {
  holder: NodeId,
  slot: usize,
  reference: String,
  base: String,
}

struct Compiler<'a> {
  root: &'a Value,
  nodes: Vec<Node>,
  by_ptr: HashMap<String, NodeId>,
  pending: Vec<PendingRef>,
  tracks: bool,
  synthetic: usize,
}

fn is_schema(v: &Value) -> bool {
  matches!(v, Value::Object(_) | Value::Bool(_))
}

fn finite(v: Option<&Value>) -> Option<f64> {
  match v {
    Some(Value::Number(n)) if n.is_finite() => Some(*n),
    _ => None,
  }
}

fn string_list(v: Option<&Value>) -> Option<Vec<String>> {
  let a = v?.as_array()?;
  a.iter().map(|s| s.as_str().map(str::to_string)).collect()
}

fn escape_segment(s: &str) -> String {
  s.replace('~', "~0").replace('/', "~1")
}

fn child_ptr(ptr: &str, segs: &[&str]) -> String {
  let mut out = ptr.to_string();
  for s in segs {
    out.push('/');
    out.push_str(&escape_segment(s));
  }
  out
}

fn type_name(s: &str) -> TypeName {
  match s {
    "object" => TypeName::Object,
    "array" => TypeName::Array,
    "boolean" => TypeName::Boolean,
    "integer" => TypeName::Integer,
    "number" => TypeName::Number,
    "null" => TypeName::Null,
    "string" => TypeName::String,
    "asyncIterator" => TypeName::AsyncIterator,
    "bigint" => TypeName::BigInt,
    "constructor" => TypeName::Constructor,
    "function" => TypeName::Function,
    "iterator" => TypeName::Iterator,
    "symbol" => TypeName::Symbol,
    "undefined" | "void" => TypeName::Undefined,
    _ => TypeName::Unknown,
  }
}

impl<'a> Compiler<'a> {
  fn push(&mut self, n: Node) -> NodeId {
    self.nodes.push(n);
    self.nodes.len() - 1
  }

  /// Compile (or reuse) the node for `v` found at `ptr`; `base` is the pointer of the nearest
  /// enclosing schema with an `$id` (where `#...` references resolve).
  fn node(&mut self, v: &Value, ptr: String, base: &str) -> Result<NodeId, SchemaError> {
    if let Some(&id) = self.by_ptr.get(&ptr) {
      return Ok(id);
    }
    let id = self.push(Node::Other);
    self.by_ptr.insert(ptr.clone(), id);
    let node = match v {
      Value::Bool(b) => Node::Bool(*b),
      Value::Object(o) => {
        let base = if matches!(o.get("$id"), Some(Value::String(_))) {
          ptr.as_str()
        } else {
          base
        };
        let base = base.to_string();
        Node::Obj(Box::new(self.obj(id, o, &ptr, &base)?))
      }
      _ => Node::Other,
    };
    self.nodes[id] = node;
    Ok(id)
  }

  fn sub(&mut self, v: &Value, ptr: &str, segs: &[&str], base: &str) -> Result<NodeId, SchemaError> {
    self.node(v, child_ptr(ptr, segs), base)
  }

  /// Compile a list of schemas; `None` unless it is an array made only of schemas.
  fn schema_list(&mut self, o: &Obj, key: &str, ptr: &str, base: &str) -> Result<Option<Vec<NodeId>>, SchemaError> {
    let Some(Value::Array(a)) = o.get(key) else {
      return Ok(None);
    };
    if !a.iter().all(is_schema) {
      return Ok(None);
    }
    let mut out = Vec::with_capacity(a.len());
    for (i, s) in a.iter().enumerate() {
      out.push(self.sub(s, ptr, &[key, &i.to_string()], base)?);
    }
    Ok(Some(out))
  }

  fn schema_at(&mut self, o: &Obj, key: &str, ptr: &str, base: &str) -> Result<Option<NodeId>, SchemaError> {
    match o.get(key) {
      Some(s) if is_schema(s) => Ok(Some(self.sub(s, ptr, &[key], base)?)),
      _ => Ok(None),
    }
  }

  /// An object whose values are all schemas.
  fn schema_map(
    &mut self,
    o: &Obj,
    key: &str,
    ptr: &str,
    base: &str,
  ) -> Result<Option<Vec<(String, NodeId)>>, SchemaError> {
    let Some(Value::Object(m)) = o.get(key) else {
      return Ok(None);
    };
    if !m.values().all(is_schema) {
      return Ok(None);
    }
    let mut out = Vec::with_capacity(m.len());
    for (k, s) in m.iter() {
      out.push((k.clone(), self.sub(s, ptr, &[key, k], base)?));
    }
    Ok(Some(out))
  }

  fn obj(&mut self, id: NodeId, o: &Obj, ptr: &str, base: &str) -> Result<ObjNode, SchemaError> {
    // type
    let ty = match o.get("type") {
      Some(Value::String(s)) => Some(TypeKw {
        names: vec![type_name(s)],
        raw: TypeRaw::One(s.clone()),
      }),
      Some(Value::Array(_)) => string_list(o.get("type")).map(|list| TypeKw {
        names: list.iter().map(|s| type_name(s)).collect(),
        raw: TypeRaw::Many(list),
      }),
      _ => None,
    };
    let mut n = ObjNode {
      ty,
      ..Default::default()
    };

    // object keywords
    let mut ok = ObjectKws {
      required: string_list(o.get("required")),
      ..Default::default()
    };
    let properties = self.schema_map(o, "properties", ptr, base)?;
    if let Some(props) = &properties {
      let required = ok.required.as_deref().unwrap_or(&[]);
      ok.properties = Some(
        props
          .iter()
          .map(|(k, node)| Prop {
            key: k.clone(),
            node: *node,
            required: required.contains(k),
          })
          .collect(),
      );
    }
    let pattern_properties = self.schema_map(o, "patternProperties", ptr, base)?;
    if let Some(pp) = &pattern_properties {
      let mut list = Vec::with_capacity(pp.len());
      for (pattern, node) in pp {
        list.push((LazyRegex::new(pattern, "u"), *node));
      }
      ok.pattern_properties = Some(list);
    }
    if let Some(node) = self.schema_at(o, "additionalProperties", ptr, base)? {
      let known = match &pattern_properties {
        Some(pp) => {
          let mut parts: Vec<String> = pp.iter().map(|(k, _)| k.clone()).collect();
          if let Some(props) = &properties {
            parts.extend(props.iter().map(|(k, _)| format!("^{}$", escape_property_key(k))));
          }
          let source = if parts.is_empty() {
            "(?!)".to_string()
          } else {
            format!("({})", parts.join("|"))
          };
          KnownKeys::Regex(LazyRegex::new(&source, ""))
        }
        None => KnownKeys::Names(
          properties
            .as_ref()
            .map(|p| p.iter().map(|(k, _)| k.clone()).collect())
            .unwrap_or_default(),
        ),
      };
      ok.additional_properties = Some(AdditionalProps { node, known });
    }
    if let Some(Value::Object(deps)) = o.get("dependencies") {
      let valid = deps.values().all(|d| is_schema(d) || string_list(Some(d)).is_some());
      if valid {
        let mut list = Vec::with_capacity(deps.len());
        for (k, d) in deps.iter() {
          let dep = match string_list(Some(d)) {
            Some(keys) if d.as_array().is_some() => Dependency::Keys(keys),
            _ => Dependency::Schema(self.sub(d, ptr, &["dependencies", k], base)?),
          };
          list.push((k.clone(), dep));
        }
        ok.dependencies = Some(list);
      }
    }
    if let Some(Value::Object(deps)) = o.get("dependentRequired") {
      let list: Option<Vec<(String, Vec<String>)>> = deps
        .iter()
        .map(|(k, d)| string_list(Some(d)).map(|l| (k.clone(), l)))
        .collect();
      ok.dependent_required = list;
    }
    ok.dependent_schemas = self.schema_map(o, "dependentSchemas", ptr, base)?;
    ok.property_names = match o.get("propertyNames") {
      // An array passes TypeBox's guard and then behaves like a schema without keywords.
      Some(Value::Array(_)) => Some(self.push(Node::Bool(true))),
      Some(s) if is_schema(s) => Some(self.sub(s, ptr, &["propertyNames"], base)?),
      _ => None,
    };
    ok.min_properties = finite(o.get("minProperties"));
    ok.max_properties = finite(o.get("maxProperties"));
    let has_object = ok.required.is_some()
      || ok.additional_properties.is_some()
      || ok.dependencies.is_some()
      || ok.dependent_required.is_some()
      || ok.dependent_schemas.is_some()
      || ok.pattern_properties.is_some()
      || ok.properties.is_some()
      || ok.property_names.is_some()
      || ok.min_properties.is_some()
      || ok.max_properties.is_some();
    if has_object {
      n.object = Some(Box::new(ok));
    }

    // array keywords
    let items = match o.get("items") {
      Some(Value::Array(a)) if a.iter().all(is_schema) => Some(Items::Tuple(
        self.schema_list(o, "items", ptr, base)?.unwrap_or_default(),
      )),
      Some(s) if is_schema(s) => Some(Items::Single(self.sub(s, ptr, &["items"], base)?)),
      _ => None,
    };
    let mut ak = ArrayKws {
      items,
      ..Default::default()
    };
    let additional_items = self.schema_at(o, "additionalItems", ptr, base)?;
    if matches!(ak.items, Some(Items::Tuple(_))) {
      ak.additional_items = additional_items;
    }
    ak.contains = self.schema_at(o, "contains", ptr, base)?;
    let min_contains = finite(o.get("minContains"));
    ak.contains_active = min_contains != Some(0.0);
    if ak.contains.is_some() {
      ak.min_contains = min_contains;
      ak.max_contains = finite(o.get("maxContains"));
    }
    ak.max_items = finite(o.get("maxItems"));
    ak.min_items = finite(o.get("minItems"));
    ak.prefix_items = self.schema_list(o, "prefixItems", ptr, base)?;
    ak.unique_items = matches!(o.get("uniqueItems"), Some(Value::Bool(true)));
    let has_array = ak.additional_items.is_some()
      || ak.contains.is_some()
      || ak.items.is_some()
      || ak.max_contains.is_some()
      || ak.max_items.is_some()
      || ak.min_contains.is_some()
      || ak.min_items.is_some()
      || ak.prefix_items.is_some()
      || ak.unique_items;
    if has_array {
      n.array = Some(Box::new(ak));
    }

    // string keywords
    let mut sk = StringKws {
      max_length: finite(o.get("maxLength")),
      min_length: finite(o.get("minLength")),
      ..Default::default()
    };
    if let Some(Value::String(f)) = o.get("format") {
      sk.format = Some((f.clone(), Format::by_name(f)));
    }
    if let Some(Value::String(p)) = o.get("pattern") {
      sk.pattern = Some((p.clone(), LazyRegex::new(p, "u")));
    }
    if sk.max_length.is_some() || sk.min_length.is_some() || sk.format.is_some() || sk.pattern.is_some() {
      n.string = Some(Box::new(sk));
    }

    // numeric keywords
    let num = |k: &str| o.get(k).and_then(Num::from_value);
    let nk = NumberKws {
      exclusive_maximum: num("exclusiveMaximum"),
      exclusive_minimum: num("exclusiveMinimum"),
      maximum: num("maximum"),
      minimum: num("minimum"),
      multiple_of: num("multipleOf"),
    };
    if nk.exclusive_maximum.is_some()
      || nk.exclusive_minimum.is_some()
      || nk.maximum.is_some()
      || nk.minimum.is_some()
      || nk.multiple_of.is_some()
    {
      n.number = Some(Box::new(nk));
    }

    // references: placeholders linked after the whole tree is compiled
    for key in ["$ref", "$recursiveRef", "$dynamicRef"] {
      if let Some(Value::String(r)) = o.get(key) {
        self.pending.push(PendingRef {
          holder: id,
          slot: n.refs.len(),
          reference: r.clone(),
          base: base.to_string(),
        });
        n.refs.push(usize::MAX);
      }
    }

    n.const_ = o.get("const").cloned();
    n.enum_ = match o.get("enum") {
      Some(Value::Array(a)) => Some(a.clone()),
      _ => None,
    };
    if let Some(if_) = self.schema_at(o, "if", ptr, base)? {
      let then = self.schema_at(o, "then", ptr, base)?;
      let else_ = self.schema_at(o, "else", ptr, base)?;
      n.if_ = Some(IfKw { if_, then, else_ });
    }
    n.not = self.schema_at(o, "not", ptr, base)?;
    n.all_of = self.schema_list(o, "allOf", ptr, base)?;
    n.any_of = self.schema_list(o, "anyOf", ptr, base)?;
    n.one_of = self.schema_list(o, "oneOf", ptr, base)?;
    n.unevaluated_items = self.schema_at(o, "unevaluatedItems", ptr, base)?;
    n.unevaluated_properties = self.schema_at(o, "unevaluatedProperties", ptr, base)?;
    if n.unevaluated_items.is_some() || n.unevaluated_properties.is_some() {
      self.tracks = true;
    }
    n.optional = o.has("~optional");
    n.conv = self.conv(o, ptr, base)?;
    Ok(n)
  }

  /// Convert behaviour from `~kind`.
  fn conv(&mut self, o: &Obj, ptr: &str, base: &str) -> Result<Conv, SchemaError> {
    let Some(Value::String(kind)) = o.get("~kind") else {
      return Ok(Conv::Identity);
    };
    Ok(match kind.as_str() {
      "String" => Conv::String,
      "Number" => Conv::Number,
      "Integer" => Conv::Integer,
      "Boolean" => Conv::Boolean,
      "Null" => Conv::Null,
      "BigInt" => Conv::BigInt,
      "Undefined" => Conv::Undefined,
      "Void" => Conv::Void,
      "Literal" => match o.get("const") {
        Some(c @ (Value::String(_) | Value::Bool(_) | Value::Opaque(crate::repair::value::Opaque::BigInt(_)))) => {
          Conv::Literal(c.clone())
        }
        Some(c @ Value::Number(n)) if n.is_finite() => Conv::Literal(c.clone()),
        _ => Conv::Identity,
      },
      "Array" => Conv::Array(match o.get("items") {
        Some(items @ Value::Object(_)) => Some(self.sub(items, ptr, &["items"], base)?),
        _ => None,
      }),
      "Object" => {
        let mut props = Vec::new();
        let mut invalid = None;
        if let Some(Value::Object(m)) = o.get("properties") {
          for (k, s) in m.iter() {
            let matcher = property_matcher(k, &mut invalid);
            let node = self.sub(s, ptr, &["properties", k], base)?;
            props.push(ConvProp { matcher, node });
          }
        }
        let additional = self.conv_additional(o, ptr, base)?;
        Conv::Object(Box::new(ConvObject {
          props,
          invalid,
          additional,
        }))
      }
      "Record" => {
        let mut patterns = Vec::new();
        let mut invalid = None;
        if let Some(Value::Object(m)) = o.get("patternProperties") {
          for (k, s) in m.iter() {
            let matcher = property_matcher(k, &mut invalid);
            let node = self.sub(s, ptr, &["patternProperties", k], base)?;
            patterns.push((matcher, node));
          }
        }
        let additional = self.conv_additional(o, ptr, base)?;
        Conv::Record(Box::new(ConvRecord {
          patterns,
          invalid,
          additional,
        }))
      }
      "Tuple" => match o.get("items") {
        Some(Value::Array(a)) => {
          let mut ids = Vec::with_capacity(a.len());
          for (i, s) in a.iter().enumerate() {
            ids.push(self.sub(s, ptr, &["items", &i.to_string()], base)?);
          }
          Conv::Tuple(ids)
        }
        _ => Conv::Identity,
      },
      "Union" => match o.get("anyOf") {
        Some(Value::Array(a)) => {
          let mut ids = Vec::with_capacity(a.len());
          for (i, s) in a.iter().enumerate() {
            ids.push(self.sub(s, ptr, &["anyOf", &i.to_string()], base)?);
          }
          Conv::Union(ids)
        }
        _ => Conv::Identity,
      },
      "Enum" => match o.get("enum") {
        Some(Value::Array(values)) => Conv::Enum(self.enum_union(values)?),
        _ => Conv::Identity,
      },
      // TypeBox converts inside an Intersect with its evaluated type (Evaluate(Instantiate(type))).
      "Intersect" => {
        let members = match o.get("allOf") {
          Some(Value::Array(a)) => a.as_slice(),
          _ => &[],
        };
        let evaluated = super::evaluate::evaluate_intersect(members);
        self.synthetic += 1;
        let ptr = format!("\u{0}intersect{}", self.synthetic);
        Conv::Evaluated(self.node(&evaluated, ptr, "")?)
      }
      "Ref" => match o.get("$ref") {
        Some(Value::String(r)) => Conv::Ref(r.clone()),
        _ => Conv::Identity,
      },
      "Cyclic" => match (o.get("$defs"), o.get("$ref")) {
        (Some(Value::Object(defs)), Some(Value::String(target))) => {
          let mut list = Vec::with_capacity(defs.len());
          for (k, s) in defs.iter() {
            list.push((k.clone(), self.sub(s, ptr, &["$defs", k], base)?));
          }
          Conv::Cyclic {
            defs: list,
            target: target.clone(),
          }
        }
        _ => Conv::Identity,
      },
      _ => Conv::Identity,
    })
  }

  fn conv_additional(&mut self, o: &Obj, ptr: &str, base: &str) -> Result<Option<NodeId>, SchemaError> {
    match o.get("additionalProperties") {
      Some(s @ Value::Object(_)) => Ok(Some(self.sub(s, ptr, &["additionalProperties"], base)?)),
      _ => Ok(None),
    }
  }

  /// TypeBox's `EnumToUnion`: strings and finite numbers become literals, `null` becomes Null,
  /// anything else Never.
  fn enum_union(&mut self, values: &[Value]) -> Result<NodeId, SchemaError> {
    let kind = |k: &str| ("~kind".to_string(), Value::str(k));
    let variants: Vec<Value> = values
      .iter()
      .map(|v| match v {
        Value::String(_) => Value::Object(Obj::from_iter([
          kind("Literal"),
          ("type".into(), Value::str("string")),
          ("const".into(), v.clone()),
        ])),
        Value::Number(n) if n.is_finite() => Value::Object(Obj::from_iter([
          kind("Literal"),
          ("type".into(), Value::str("number")),
          ("const".into(), v.clone()),
        ])),
        Value::Null => Value::Object(Obj::from_iter([kind("Null"), ("type".into(), Value::str("null"))])),
        _ => Value::Object(Obj::from_iter([
          kind("Never"),
          ("not".into(), Value::Object(Obj::new())),
        ])),
      })
      .collect();
    let union = Value::Object(Obj::from_iter([
      kind("Union"),
      ("anyOf".into(), Value::Array(variants)),
    ]));
    // Synthetic pointers cannot collide with real ones (they start with a NUL).
    self.synthetic += 1;
    let ptr = format!("\u{0}enum{}", self.synthetic);
    self.node(&union, ptr, "")
  }

  /// Resolve a reference to a JSON pointer into the root (see TypeBox `Resolve.Ref`; simplified
  /// to `#`-pointers relative to the base, `#anchor`, and `$id` equality).
  fn resolve(&self, reference: &str, base: &str) -> Option<String> {
    if let Some(fragment) = reference.strip_prefix('#') {
      return resolve_fragment(self.root, base, fragment);
    }
    let (id_part, fragment) = match reference.find('#') {
      Some(i) => (&reference[..i], Some(&reference[i + 1..])),
      None => (reference, None),
    };
    let found = find_id(self.root, String::new(), id_part)?;
    match fragment {
      Some(f) if !f.is_empty() => resolve_fragment(self.root, &found, f),
      _ => Some(found),
    }
  }
}

/// Convert's `new RegExp('^' + key + '$')`, with a plain-text fast path.
fn property_matcher(key: &str, invalid: &mut Option<(String, String)>) -> KeyMatcher {
  if is_plain_regex_text(key) {
    return KeyMatcher::Exact(key.to_string());
  }
  let source = format!("^{key}$");
  match JsRegex::new(&source, "") {
    Ok(re) => KeyMatcher::Regex(re),
    Err(reason) => {
      if invalid.is_none() {
        *invalid = Some((source, reason));
      }
      KeyMatcher::Invalid
    }
  }
}

/// `%XX` escapes decoded (two hex digits each); anything else, or a result that is not UTF-8,
/// is left as it was.
fn percent_decode(s: &str) -> String {
  let b = s.as_bytes();
  let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
  let mut out = Vec::with_capacity(b.len());
  let mut i = 0;
  while i < b.len() {
    // Bytes, not `&s[..]`: a `%` may be followed by a multi-byte character.
    if b[i] == b'%' && i + 2 < b.len() {
      if let (Some(hi), Some(lo)) = (hex(b[i + 1]), hex(b[i + 2])) {
        out.push(hi << 4 | lo);
        i += 3;
        continue;
      }
    }
    out.push(b[i]);
    i += 1;
  }
  String::from_utf8(out).unwrap_or_else(|_| s.to_string())
}

fn resolve_fragment(root: &Value, base: &str, fragment: &str) -> Option<String> {
  let fragment = percent_decode(fragment);
  if fragment.is_empty() {
    return Some(base.to_string());
  }
  if let Some(pointer) = fragment.strip_prefix('/') {
    let base_value = pointer_get(root, base)?;
    let mut ptr = base.to_string();
    let mut cur = base_value;
    for seg in pointer.split('/') {
      let seg = seg.replace("~1", "/").replace("~0", "~");
      cur = match cur {
        Value::Object(o) => o.get(&seg)?,
        Value::Array(a) => a.get(crate::repair::value::array_index(&seg)?)?,
        _ => return None,
      };
      ptr.push('/');
      ptr.push_str(&escape_segment(&seg));
    }
    return Some(ptr);
  }
  // `#name`: a `$anchor` (or `$dynamicAnchor`) inside the base resource.
  find_anchor(pointer_get(root, base)?, base.to_string(), &fragment)
}

fn find_anchor(v: &Value, ptr: String, name: &str) -> Option<String> {
  match v {
    Value::Object(o) => {
      let hit = |k: &str| matches!(o.get(k), Some(Value::String(a)) if a == name);
      if hit("$anchor") || hit("$dynamicAnchor") {
        return Some(ptr);
      }
      let mut found = None;
      for (k, child) in o.iter() {
        if let Some(p) = find_anchor(child, child_ptr(&ptr, &[k]), name) {
          found = Some(p);
        }
      }
      found
    }
    Value::Array(a) => {
      let mut found = None;
      for (i, child) in a.iter().enumerate() {
        if let Some(p) = find_anchor(child, child_ptr(&ptr, &[&i.to_string()]), name) {
          found = Some(p);
        }
      }
      found
    }
    _ => None,
  }
}

/// Pre-order search for a schema whose `$id` equals `id`; a match stops descent and the last
/// matching subtree wins, like TypeBox's reducer.
fn find_id(v: &Value, ptr: String, id: &str) -> Option<String> {
  match v {
    Value::Object(o) => {
      if let Some(Value::String(own)) = o.get("$id") {
        if own == id || own.trim_start_matches("./") == id.trim_start_matches("./") {
          return Some(ptr);
        }
      }
      let mut found = None;
      for (k, child) in o.iter() {
        if let Some(p) = find_id(child, child_ptr(&ptr, &[k]), id) {
          found = Some(p);
        }
      }
      found
    }
    Value::Array(a) => {
      let mut found = None;
      for (i, child) in a.iter().enumerate() {
        if let Some(p) = find_id(child, child_ptr(&ptr, &[&i.to_string()]), id) {
          found = Some(p);
        }
      }
      found
    }
    _ => None,
  }
}

/// The value at an (escaped) pointer produced by this module.
fn pointer_get<'v>(root: &'v Value, ptr: &str) -> Option<&'v Value> {
  if ptr.is_empty() {
    return Some(root);
  }
  let mut cur = root;
  for seg in ptr[1..].split('/') {
    let seg = seg.replace("~1", "/").replace("~0", "~");
    cur = match cur {
      Value::Object(o) => o.get(&seg)?,
      Value::Array(a) => a.get(seg.parse::<usize>().ok()?)?,
      _ => return None,
    };
  }
  Some(cur)
}

// Turn a plain JSON Schema into the shape TypeBox 1.x (1.1.38) builds: the same
// enumerable keywords plus NON-enumerable string-keyed markers `~kind` on every
// schema node and `~optional: true` on properties missing from `required`.
// The recorded conformance results were produced against such schemas; the
// markers are what TypeBox's Value.Convert dispatches on (spec §7, §14.4).

type JsonSchema = Record<string, unknown>;

function isRecord(value: unknown): value is JsonSchema {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function defineHidden(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    writable: true,
    enumerable: false,
    configurable: true,
  });
}

/** The `~kind` TypeBox 1.1.38 gives a node with these keywords (undefined: none). */
export function kindOf(node: JsonSchema): string | undefined {
  if ("const" in node) return "Literal";
  if (Array.isArray(node.anyOf)) return "Union";
  if (Array.isArray(node.enum)) return "Enum";
  if (Array.isArray(node.allOf)) return "Intersect";
  if (typeof node.$ref === "string") return "Ref";
  if (isRecord(node.not) && Object.keys(node.not).length === 0) return "Never";
  switch (node.type) {
    case "object":
      return isRecord(node.patternProperties) ? "Record" : "Object";
    case "array":
      return Array.isArray(node.items) ? "Tuple" : "Array";
    case "string":
      return "String";
    case "number":
      return "Number";
    case "integer":
      return "Integer";
    case "boolean":
      return "Boolean";
    case "null":
      return "Null";
    case "undefined":
      return "Undefined";
    default:
      break;
  }
  if (node.type === undefined && Object.keys(node).every((k) => k === "description" || k === "title")) {
    return "Unknown";
  }
  return undefined;
}

function clone(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(clone);
  if (isRecord(value)) {
    const out: JsonSchema = {};
    for (const key of Object.keys(value)) out[key] = clone(value[key]);
    return out;
  }
  return value;
}

function mark(node: unknown): void {
  if (!isRecord(node)) return;
  const kind = kindOf(node);
  if (kind !== undefined) defineHidden(node, "~kind", kind);

  if (isRecord(node.properties)) {
    const required = Array.isArray(node.required) ? (node.required as unknown[]) : [];
    for (const [name, child] of Object.entries(node.properties)) {
      mark(child);
      if (isRecord(child) && !required.includes(name)) defineHidden(child, "~optional", true);
    }
  }
  if (isRecord(node.patternProperties)) {
    for (const child of Object.values(node.patternProperties)) mark(child);
  }
  if (isRecord(node.additionalProperties)) mark(node.additionalProperties);
  if (Array.isArray(node.items)) node.items.forEach(mark);
  else mark(node.items);
  for (const key of ["anyOf", "allOf", "oneOf"]) {
    const list = node[key];
    if (Array.isArray(list)) list.forEach(mark);
  }
  if (isRecord(node.not)) mark(node.not);
}

/** Deep copy of `schema` carrying TypeBox's non-enumerable markers. */
export function withTypeBoxMarkers<T>(schema: T): T {
  const copy = clone(schema);
  mark(copy);
  return copy as T;
}

/** Collect every (json-pointer-ish path -> {kind, optional}) pair, for comparisons. */
export function collectMarkers(schema: unknown, path = "#"): Record<string, { kind?: unknown; optional?: unknown }> {
  const out: Record<string, { kind?: unknown; optional?: unknown }> = {};
  const walk = (node: unknown, at: string) => {
    if (!isRecord(node)) return;
    const kind = Object.getOwnPropertyDescriptor(node, "~kind");
    const optional = Object.getOwnPropertyDescriptor(node, "~optional");
    out[at] = {
      kind: kind ? `${kind.value}${kind.enumerable ? "(enumerable)" : ""}` : undefined,
      optional: optional ? `${optional.value}${optional.enumerable ? "(enumerable)" : ""}` : undefined,
    };
    for (const key of Object.keys(node)) {
      const child = node[key];
      if (Array.isArray(child)) child.forEach((item, index) => walk(item, `${at}/${key}/${index}`));
      else if (isRecord(child)) walk(child, `${at}/${key}`);
    }
  };
  walk(schema, path);
  return out;
}

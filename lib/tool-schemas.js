// The parameter schemas of pi's seven built-in tools (pi 0.80.6), in the shape TypeBox 1.x builds
// them: plain JSON Schema plus TypeBox's non-enumerable `~kind` / `~optional` markers, which the
// repair pipeline's Convert step acts on. Used by the command line's `repair --tool <name>`.

function hidden(target, key, value) {
  Object.defineProperty(target, key, { value, writable: true, enumerable: false, configurable: true })
}

const isRecord = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)

/** The `~kind` TypeBox 1.x gives a node with these keywords (undefined: none). */
function kindOf(node) {
  if ('const' in node) return 'Literal'
  if (Array.isArray(node.anyOf)) return 'Union'
  if (Array.isArray(node.enum)) return 'Enum'
  if (Array.isArray(node.allOf)) return 'Intersect'
  if (typeof node.$ref === 'string') return 'Ref'
  if (isRecord(node.not) && Object.keys(node.not).length === 0) return 'Never'
  switch (node.type) {
    case 'object':
      return isRecord(node.patternProperties) ? 'Record' : 'Object'
    case 'array':
      return Array.isArray(node.items) ? 'Tuple' : 'Array'
    case 'string':
      return 'String'
    case 'number':
      return 'Number'
    case 'integer':
      return 'Integer'
    case 'boolean':
      return 'Boolean'
    case 'null':
      return 'Null'
    default:
      break
  }
  if (node.type === undefined && Object.keys(node).every((k) => k === 'description' || k === 'title')) return 'Unknown'
  return undefined
}

function mark(node) {
  if (!isRecord(node)) return node
  const kind = kindOf(node)
  if (kind !== undefined) hidden(node, '~kind', kind)
  if (isRecord(node.properties)) {
    const required = Array.isArray(node.required) ? node.required : []
    for (const [name, child] of Object.entries(node.properties)) {
      mark(child)
      if (isRecord(child) && !required.includes(name)) hidden(child, '~optional', true)
    }
  }
  if (isRecord(node.patternProperties)) for (const child of Object.values(node.patternProperties)) mark(child)
  if (isRecord(node.additionalProperties)) mark(node.additionalProperties)
  if (Array.isArray(node.items)) node.items.forEach(mark)
  else mark(node.items)
  for (const key of ['anyOf', 'allOf', 'oneOf']) if (Array.isArray(node[key])) node[key].forEach(mark)
  if (isRecord(node.not)) mark(node.not)
  return node
}

/** A JSON Schema (parsed JSON, not shared) marked in place as the TypeBox 1.x schema it describes. */
export function withTypeBoxMarkers(schema) {
  return mark(schema)
}

const str = (description) => ({ type: 'string', description })
const num = (description) => ({ type: 'number', description })
const bool = (description) => ({ type: 'boolean', description })
const object = (properties, required) => (required.length > 0 ? { type: 'object', properties, required } : { type: 'object', properties })

function schemas() {
  return {
    read: object(
      {
        path: str('Path to the file to read (relative or absolute)'),
        offset: num('Line number to start reading from (1-indexed)'),
        limit: num('Maximum number of lines to read'),
      },
      ['path'],
    ),
    bash: object({ command: str('Bash command to execute'), timeout: num('Timeout in seconds (optional, no default timeout)') }, ['command']),
    edit: object(
      {
        path: str('Path to the file to edit (relative or absolute)'),
        edits: {
          type: 'array',
          items: object({ oldText: str('Exact text for one targeted replacement.'), newText: str('Replacement text for this targeted edit.') }, ['oldText', 'newText']),
          description: 'One or more targeted replacements.',
        },
      },
      ['path', 'edits'],
    ),
    write: object({ path: str('Path to the file to write (relative or absolute)'), content: str('Content to write to the file') }, ['path', 'content']),
    grep: object(
      {
        pattern: str('Search pattern (regex or literal string)'),
        path: str('Directory or file to search'),
        glob: str('Filter files by glob pattern'),
        ignoreCase: bool('Case-insensitive search'),
        literal: bool('Treat pattern as literal string'),
        context: num('Lines of context around each match'),
        limit: num('Maximum number of matches to return'),
      },
      ['pattern'],
    ),
    find: object({ pattern: str('Glob pattern to match files'), path: str('Directory to search in'), limit: num('Maximum number of results') }, ['pattern']),
    ls: object({ path: str('Directory to list'), limit: num('Maximum number of entries to return') }, []),
  }
}

/** A fresh, marked schema of one of pi's built-in tools (undefined for other names). */
export function builtinToolSchema(name) {
  const all = schemas()
  return Object.hasOwn(all, name) ? mark(all[name]) : undefined
}

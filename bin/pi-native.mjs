#!/usr/bin/env node
// The pi-native command line: repair a tool call, find leaked tool-call grammar in a text, stream a
// chat from a provider (recording the exchange if asked), replay a recording offline.
// Results go to stdout, progress and errors to stderr. Exit codes: 0 success, 1 the operation
// failed (an unrepairable call, a provider error), 2 bad usage, 130 interrupted.
import { readFileSync, existsSync } from 'node:fs'
import { createServer } from 'node:http'
import { basename, dirname, join, resolve } from 'node:path'
import { parseArgs } from 'node:util'

const HELP = `pi-native — tool-call repair and streaming chat for LLM coding agents

Usage:
  pi-native repair [--tool <name> | --schema <file.json>] [--policy <p>] [--model <id>] [--json] [<arguments-json> | --file <f> | -]
  pi-native grammar [--recover | --strip] [--tools <a,b>] [--model <id>] [--json] [<text> | --file <f> | -]
  pi-native chat --provider <p> --model <id> [--base-url <url>] [--system <text>] [--reasoning <level>]
                 [--record <dir>] [--json] [<prompt> | -]
  pi-native replay [--json] <recording.json>
  pi-native help [<command>]

Commands:
  repair   Run the repair pipeline on one tool call's arguments (JSON). --tool takes pi's built-in
           tools (read, bash, edit, write, grep, find, ls) with their repair tables; --schema a JSON
           Schema file, read as the TypeBox schema it describes (--raw-schema: as plain JSON
           Schema; --name names the tool). --policy conservative | adaptive | recover.
           Prints the outcome, the arguments, each change's rule ID and note, the retry message;
           --json prints the pipeline's result object. Exit 1 when unrepairable.
  grammar  Find tool calls leaked into a text as model grammar (DSML, <tool_call>, [TOOL_CALLS], GLM,
           ...). --recover / --strip run recovery on it as an assistant message (--tools lists the
           known tool names); otherwise the leaks are listed.
  chat     Stream one prompt. The key comes from PI_NATIVE_API_KEY or the provider's usual variable
           (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...). --json prints each chunk as a JSON line.
           --record <dir> (or PI_NATIVE_RECORD) saves each attempt's request (credentials redacted)
           and raw response body. Ctrl-C cancels the request.
  replay   Feed a recorded response through its wire adapter and the chunk projection, offline (a
           loopback server on 127.0.0.1 plays the provider), and print the chunks.
`

const KEY_VARIABLES = {
  openai: 'OPENAI_API_KEY',
  'openai-codex': 'OPENAI_API_KEY',
  'azure-openai-responses': 'AZURE_OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  google: 'GEMINI_API_KEY',
  mistral: 'MISTRAL_API_KEY',
  deepseek: 'DEEPSEEK_API_KEY',
  openrouter: 'OPENROUTER_API_KEY',
  groq: 'GROQ_API_KEY',
  xai: 'XAI_API_KEY',
  zai: 'ZAI_API_KEY',
  cerebras: 'CEREBRAS_API_KEY',
}

class UsageError extends Error {}

function readInput(positional, file) {
  if (file) return readFileSync(file, 'utf8')
  if (positional === '-' || (positional === undefined && !process.stdin.isTTY)) return readFileSync(0, 'utf8')
  if (positional === undefined) throw new UsageError('no input: pass it as an argument, with --file, or on stdin')
  return positional
}

function parse(args, options) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true })
  } catch (error) {
    throw new UsageError(error.message)
  }
}

const out = (text) => process.stdout.write(`${text}\n`)

async function repair(args) {
  const { values, positionals } = parse(args, {
    tool: { type: 'string' },
    schema: { type: 'string' },
    'raw-schema': { type: 'boolean' },
    name: { type: 'string' },
    policy: { type: 'string' },
    model: { type: 'string' },
    file: { type: 'string' },
    json: { type: 'boolean' },
  })
  const core = await import('../lib/core.js')
  const { builtinToolSchema } = await import('../lib/tool-schemas.js')
  if (!values.tool && !values.schema) throw new UsageError('repair needs --tool <name> or --schema <file.json>')
  const { withTypeBoxMarkers } = await import('../lib/tool-schemas.js')
  if (values.policy && !['conservative', 'adaptive', 'recover'].includes(values.policy)) {
    throw new UsageError(`--policy must be conservative, adaptive or recover, not ${values.policy}`)
  }
  const text = readInput(positionals[0], values.file)
  let input
  try {
    input = JSON.parse(text)
  } catch {
    // Not JSON: hand the text over as it is (the envelope stage recovers JSON-ish text).
    input = text
  }
  let config
  if (values.tool) {
    const table = core.BUILTIN_TOOL_REPAIRS[values.tool]
    const schema = builtinToolSchema(values.tool)
    if (!table || !schema) throw new UsageError(`--tool must be one of ${core.BUILTIN_TOOL_NAMES.join(', ')}`)
    config = { toolName: values.tool, schema, preprocessors: table.preprocessors, legacyConfig: table.legacyConfig }
  } else {
    let schema
    try {
      schema = JSON.parse(readFileSync(values.schema, 'utf8'))
    } catch (error) {
      throw new UsageError(`--schema ${values.schema}: ${error.message}`)
    }
    // A JSON Schema file is read as the TypeBox schema it describes (as pi's tools are), so
    // Convert coerces "3" to 3; --raw-schema keeps it a plain JSON Schema.
    config = { toolName: values.name ?? 'tool', schema: values['raw-schema'] ? schema : withTypeBoxMarkers(schema) }
  }
  if (values.policy) config.policy = core.resolveRepairPolicy(values.policy)
  if (values.model) config.modelId = values.model
  const result = core.runRepairPipeline({ input, config })
  if (values.json) out(JSON.stringify(result))
  else {
    out(`outcome: ${result.outcome}`)
    out(`arguments: ${JSON.stringify(result.args)}`)
    for (const c of result.changes) out(`  ${c.ruleId} (${c.stage}): ${c.note}`)
    if (result.retryMessage) out(`retry message:\n${result.retryMessage}`)
  }
  return result.outcome === 'unrepairable' ? 1 : 0
}

async function grammar(args) {
  const { values, positionals } = parse(args, {
    recover: { type: 'boolean' },
    strip: { type: 'boolean' },
    tools: { type: 'string' },
    model: { type: 'string' },
    file: { type: 'string' },
    json: { type: 'boolean' },
  })
  const g = await import('../lib/grammar.js')
  const text = readInput(positionals[0], values.file)
  if (values.recover || values.strip) {
    const knownTools = new Set((values.tools ?? '').split(',').map((t) => t.trim()).filter(Boolean))
    const message = { role: 'assistant', content: [{ type: 'text', text }], stopReason: 'stop' }
    const r = g.recoverGrammarLeaks(message, { mode: values.recover ? 'recover' : 'strip', knownTools })
    if (values.json) out(JSON.stringify(r))
    else {
      out(`changed: ${r.changed}; grammars: ${r.detectedGrammars.join(', ') || 'none'}`)
      for (const c of r.recoveredCalls ?? []) out(`  call ${c.name} ${JSON.stringify(c.arguments)}`)
      for (const part of r.message.content) if (part.type === 'text') out(part.text)
    }
    return 0
  }
  const leaks = g.parseToolGrammarLeaks(text)
  if (values.json) out(JSON.stringify(leaks))
  else if (leaks.length === 0) out('no leaked tool calls')
  else for (const l of leaks) out(`${l.grammar}: ${l.name} ${JSON.stringify(l.arguments)}`)
  return 0
}

function printChunk(chunk, json) {
  if (json) return out(JSON.stringify(chunk))
  if (chunk.content) process.stdout.write(chunk.content)
  if (chunk.reasoningContent) process.stderr.write(chunk.reasoningContent)
  for (const call of chunk.toolCalls ?? []) out(`\n[tool call ${call.function?.name} ${call.function?.arguments}]`)
  if (chunk.providerRetry) process.stderr.write(`\n[retry ${chunk.providerRetry.phase} ${chunk.providerRetry.reason}]\n`)
  if (chunk.finishReason) out(`\n[${chunk.finishReason}${chunk.usage ? `, ${chunk.usage.totalTokens} tokens` : ''}]`)
}

async function stream(service, messages, json, signal) {
  try {
    for await (const chunk of service.streamChat(messages, [], signal)) printChunk(chunk, json)
    return 0
  } catch (error) {
    if (error?.name === 'AbortError') {
      process.stderr.write('\ncancelled\n')
      return 130
    }
    process.stderr.write(`\npi-native: ${error.name && error.name !== 'Error' ? `${error.name}: ` : ''}${error.message}\n`)
    return 1
  }
}

async function chat(args) {
  const { values, positionals } = parse(args, {
    provider: { type: 'string' },
    model: { type: 'string' },
    'base-url': { type: 'string' },
    system: { type: 'string' },
    reasoning: { type: 'string' },
    record: { type: 'string' },
    json: { type: 'boolean' },
  })
  if (!values.provider || !values.model) throw new UsageError('chat needs --provider and --model')
  const prompt = readInput(positionals[0])
  const { createChatServiceAsync } = await import('../lib/chat.js')
  const apiKey = process.env.PI_NATIVE_API_KEY ?? process.env[KEY_VARIABLES[values.provider] ?? ''] ?? ''
  const config = { provider: values.provider, model: values.model, apiKey }
  if (values['base-url']) config.baseUrl = values['base-url']
  if (values.reasoning) Object.assign(config, { reasoningEnabled: true, reasoningEffort: values.reasoning })
  let service
  try {
    service = await createChatServiceAsync(config, values.record ? { record: values.record } : {})
  } catch (error) {
    throw new UsageError(error.message)
  }
  const messages = [...(values.system ? [{ role: 'system', content: values.system }] : []), { role: 'user', content: prompt }]
  const controller = new AbortController()
  process.once('SIGINT', () => controller.abort())
  return stream(service, messages, values.json, controller.signal)
}

async function replay(args) {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } })
  const file = positionals[0]
  if (!file) throw new UsageError('replay needs a recording (<stem>.json)')
  let record
  try {
    record = JSON.parse(readFileSync(file, 'utf8'))
  } catch (error) {
    throw new UsageError(`${file}: ${error.message}`)
  }
  if (record['pi-native-recording'] !== 1 || !record.model || !record.response) throw new UsageError(`${file} is not a pi-native recording of a response`)
  const bodyFile = join(dirname(resolve(file)), basename(String(record.body ?? '')))
  const body = existsSync(bodyFile) ? readFileSync(bodyFile) : Buffer.alloc(0)
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const headers = {}
      for (const [k, v] of record.response.headers) if (!/^(content-length|content-encoding|transfer-encoding|connection)$/i.test(k)) headers[k] = v
      res.writeHead(record.response.status, headers)
      res.end(body)
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    const { createChatService } = await import('../lib/chat.js')
    const base = `http://127.0.0.1:${server.address().port}`
    const model = { ...record.model, baseUrl: base }
    const service = createChatService({ provider: model.provider, model: model.id, apiKey: 'replay', baseUrl: base, maxRetries: 0 }, { models: [model] })
    process.stderr.write(`replaying ${model.provider}/${model.id} (${model.api}), HTTP ${record.response.status}, ${body.length} body bytes\n`)
    return await stream(service, [{ role: 'user', content: 'replay' }], values.json)
  } finally {
    server.close()
  }
}

const COMMANDS = { repair, grammar, chat, replay }

async function main(argv) {
  const [command, ...rest] = argv
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    out(HELP)
    return 0
  }
  if (command === '--version' || command === '-v') {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
    out(pkg.version)
    return 0
  }
  const run = COMMANDS[command]
  if (!run) throw new UsageError(`unknown command ${command}`)
  if (rest.includes('--help') || rest.includes('-h')) {
    out(HELP)
    return 0
  }
  return run(rest)
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error) => {
    if (error instanceof UsageError) {
      process.stderr.write(`pi-native: ${error.message}\nRun \`pi-native --help\` for usage.\n`)
      process.exitCode = 2
    } else {
      process.stderr.write(`pi-native: ${error?.message ?? error}\n`)
      process.exitCode = 1
    }
  },
)

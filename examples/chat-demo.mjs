// Streams one chat through pi-native/chat. Offline by default: an embedded loopback provider
// answers with reasoning, text and a tool call. With OPENAI_API_KEY or ANTHROPIC_API_KEY set,
// the same code talks to the real provider instead.
import { createChatService } from '../lib/chat.js'
import { startMockProvider } from '../__test__/chat/mock-provider.mjs'

const messages = [
  { role: 'system', content: 'You are a coding agent. Be brief.' },
  { role: 'user', content: 'Read src/main.rs and tell me what it does.' },
]
const tools = [
  {
    name: 'read_file',
    description: 'Read a file',
    parameters: { type: 'object', properties: { path: { type: 'string' }, limit: { type: 'integer' } }, required: ['path'] },
  },
]

let mock
let config
if (process.env.OPENAI_API_KEY) {
  config = { provider: 'openai', model: 'gpt-4.1', apiKey: process.env.OPENAI_API_KEY }
} else if (process.env.ANTHROPIC_API_KEY) {
  config = { provider: 'anthropic', model: 'claude-sonnet-4-5', apiKey: process.env.ANTHROPIC_API_KEY, reasoningEnabled: true }
} else {
  mock = await startMockProvider({ ttlMs: 30_000 })
  config = {
    provider: 'openai-compatible',
    model: 'demo-reasoner',
    baseUrl: `${mock.baseUrl}/v1`,
    apiKey: 'offline-demo',
    reasoningEnabled: true,
    customHeaders: { 'x-mock-scenario': 'full' },
  }
}

const service = createChatService(config, {
  models: [{ provider: 'openai-compatible', id: 'demo-reasoner', name: 'Demo reasoner', api: 'openai-completions', reasoning: true }],
})
console.log(`\n● chat: ${config.provider}/${config.model}${mock ? ` on the embedded loopback provider ${mock.baseUrl}` : ''}`)
try {
  for await (const chunk of service.streamChat(messages, tools)) {
    if (chunk.reasoningContent) console.log(`  reasoning │ ${chunk.reasoningContent}`)
    else if (chunk.content) console.log(`  text      │ ${chunk.content}`)
    else if (chunk.toolCalls) for (const c of chunk.toolCalls) console.log(`  tool call │ ${c.function.name}(${c.function.arguments})`)
    else if (chunk.finishReason) console.log(`  finish    │ ${chunk.finishReason}, usage ${JSON.stringify(chunk.usage)}`)
    else console.log(`  event     │ ${JSON.stringify(chunk)}`)
  }
} finally {
  await mock?.close()
}

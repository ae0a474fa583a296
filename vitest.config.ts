import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Files run in parallel processes; each isolates its data (own schema, own Redis prefix).
    pool: 'forks',
    maxWorkers: 2,
  },
})

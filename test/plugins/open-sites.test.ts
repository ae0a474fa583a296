import { describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { createKeyRing } from '../../src/secret.js'
import { createTestSite } from '../helpers/core-flow.js'
import { openTestDatabase, openTestKeyValue } from '../helpers/storage.js'
import { TEST_SECRET } from '../helpers/test-app.js'

describe('sites that list no domains', () => {
  it('are counted in a warning at a production start, and not in development', async () => {
    const database = await openTestDatabase('pglite')
    const keyValue = await openTestKeyValue('memory')
    const storage = { database: database.database, keyValue: keyValue.keyValue }
    const start = async (NODE_ENV: string, lines: string[]) => {
      const app = await buildApp({
        config: loadConfig({ NODE_ENV, TOLLGATE_SECRET: TEST_SECRET, RATE_LIMIT_PER_MINUTE: '0' }),
        storage,
        keyRing: createKeyRing(TEST_SECRET),
        logger: { level: 'info', stream: { write: (line: string) => lines.push(line) } },
      })
      await app.ready()
      return app
    }
    const warnings = (lines: string[]) => lines.map((line) => JSON.parse(line) as { msg: string; sitesWithoutDomains?: number }).filter((line) => line.msg.includes('no domains'))

    // A development start makes the demo site (any origin, on purpose) and says nothing of it.
    const developmentLines: string[] = []
    const development = await start('development', developmentLines)
    await createTestSite(development, { domains: [] })
    await createTestSite(development, { domains: [] })
    await createTestSite(development, { domains: ['shop.example'] })
    expect(warnings(developmentLines)).toEqual([])

    const productionLines: string[] = []
    const production = await start('production', productionLines)
    try {
      // The demo site is gone (a production start removes it): the two open sites are left.
      expect(warnings(productionLines)).toEqual([
        expect.objectContaining({ sitesWithoutDomains: 2, msg: expect.stringMatching(/^2 sites list no domains, so any origin may use their site keys: list the hostnames/) }),
      ])
    } finally {
      await production.close()
      await development.close()
    }
  }, 90_000)
})

import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/**
 * A production start says how many sites list no domains: their keys work from any origin (docs/core-flow.md,
 * section 3), which suits a try on localhost, not a site in production, and nothing else would tell. A
 * warning, not a refusal: a site may mean it (a key used from many customers' hosts).
 */
async function openSitesPlugin(app: FastifyInstance): Promise<void> {
  if (app.config.environment !== 'production') return
  app.addHook('onReady', async () => {
    try {
      const [row] = await app.database.query<{ count: number }>("SELECT count(*)::int AS count FROM sites WHERE domains = '{}'")
      const count = row?.count ?? 0
      if (count > 0) {
        app.log.warn(
          { sitesWithoutDomains: count },
          `${count} ${count === 1 ? 'site lists' : 'sites list'} no domains, so any origin may use ${count === 1 ? 'its site key' : 'their site keys'}: ` +
            'list the hostnames each site runs on (dashboard, Settings, Domains; or domains in PUT /api/v1/sites/{id})',
        )
      }
    } catch (error) {
      // A start is not stopped for a warning: the database's trouble shows elsewhere.
      app.log.warn({ err: error }, 'could not count the sites that list no domains')
    }
  })
}

export default fp(openSitesPlugin, { name: 'open-sites', dependencies: ['storage'] })

import { createHmac } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { hashSecretKey } from '../domain/sites/site-keys.js'

/** The development demo site's fixed id, so that every start finds the same row. */
export const DEMO_SITE_ID = '00000000-0000-4000-8000-00000000de30'

export interface DemoSite {
  siteKey: string
  secretKey: string
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Set in development only. */
    demoSite?: DemoSite
  }
}

/**
 * The demo site's keys, derived from the server secret rather than stored: the secret key is kept
 * only hashed, yet every start can print it, and two installations never share keys.
 */
export function deriveDemoSiteKeys(siteSecretKey: Buffer): DemoSite {
  const derive = (purpose: string) => createHmac('sha256', siteSecretKey).update(`demo-site|${purpose}`, 'utf8').digest()
  return {
    siteKey: `tgk_${derive('site-key').subarray(0, 16).toString('base64url')}`,
    secretKey: `tgs_${derive('secret-key').toString('base64url')}`,
  }
}

/**
 * In development, a demo site (no account, any origin, default settings) so that a newcomer can
 * try the whole flow right after `npm start`: its keys are printed at every start. The upsert
 * also repairs the keys when TOLLGATE_SECRET changed; concurrent starts converge on one row.
 */
async function demoSitePlugin(app: FastifyInstance): Promise<void> {
  if (app.config.environment === 'production') {
    // A development start pointed at this database by mistake left its demo site: a site of no
    // account, open to any origin, whose keys that start printed. Production serves none.
    const removed = await app.database.query('DELETE FROM sites WHERE id = $1 AND account_id IS NULL RETURNING id', [DEMO_SITE_ID])
    if (removed.length > 0) {
      await app.siteCache.invalidate({ id: DEMO_SITE_ID })
      app.log.warn({ siteId: DEMO_SITE_ID }, 'removed the development demo site from this production database (a development start used it)')
    }
    return
  }
  if (app.config.environment !== 'development') return
  const keys = deriveDemoSiteKeys(app.keyRing.keyFor('site-secret'))
  await app.database.query(
    `INSERT INTO sites (id, account_id, name, site_key, secret_key_hash, domains, settings)
     VALUES ($1, NULL, 'Demo site (development)', $2, $3, '{}', '{}')
     ON CONFLICT (id) DO UPDATE SET site_key = excluded.site_key, secret_key_hash = excluded.secret_key_hash
       WHERE sites.site_key IS DISTINCT FROM excluded.site_key OR sites.secret_key_hash IS DISTINCT FROM excluded.secret_key_hash`,
    [DEMO_SITE_ID, keys.siteKey, hashSecretKey(keys.secretKey)],
  )
  await app.siteCache.invalidate({ id: DEMO_SITE_ID })
  app.decorate('demoSite', keys)
  // Once listening: a start that then fails (the port taken) ends with its one line of cause.
  app.addHook('onListen', async () => {
    app.log.info(
      { siteKey: keys.siteKey, secretKey: keys.secretKey },
      `Demo site (development only): site key ${keys.siteKey}, secret key ${keys.secretKey}`,
    )
  })
}

export default fp(demoSitePlugin, { name: 'demo-site', dependencies: ['storage', 'sites'] })

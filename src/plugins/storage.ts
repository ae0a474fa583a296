import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { KeyValueStore, SqlDatabase, Storage } from '../storage/ports.js'

declare module 'fastify' {
  interface FastifyInstance {
    database: SqlDatabase
    keyValue: KeyValueStore
  }
}

/**
 * Hands the opened stores to the app and closes them last: onClose hooks run in reverse order
 * of registration, so every plugin registered after this one (counters, the verification log)
 * flushes into the database before it closes.
 */
async function storagePlugin(app: FastifyInstance, options: { storage: Storage }): Promise<void> {
  app.decorate('database', options.storage.database)
  app.decorate('keyValue', options.storage.keyValue)
  app.addHook('onClose', async () => {
    await Promise.allSettled([options.storage.keyValue.close(), options.storage.database.close()])
  })
}

export default fp(storagePlugin, { name: 'storage' })

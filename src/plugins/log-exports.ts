import type { Readable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError } from '../errors.js'

declare module 'fastify' {
  interface FastifyInstance {
    logExports: LogExports
  }
}

export interface LogExports {
  /**
   * Takes one of the account's export slots, before the export reads anything: 429 rate_limited
   * while MAX_EXPORTS_PER_ACCOUNT of its exports run on this instance, 503 service_unavailable
   * once the server is closing. The slot is the caller's to give back (release) or to hand to the
   * stream it sends (attach), which gives it back when the stream closes.
   */
  admit(accountId: string): ExportSlot
}

export interface ExportSlot {
  /** The export's stream, from here on destroyed when the server closes; 503 if it is closing already. */
  attach(stream: Readable): void
  /** Gives the slot back (an export that failed before it had a stream); once. */
  release(): void
}

/**
 * An account's exports at once on an instance. Each one holds a connection's worth of reads for
 * as long as its client reads, so a script that opens downloads in a loop would otherwise have
 * the database read its logs over and over; two cover a dashboard's two links.
 */
export const MAX_EXPORTS_PER_ACCOUNT = 2

/**
 * The exports in progress. An export is one long answer, and Node's server.close waits for every
 * answer under way: on SIGTERM a download would hold the shutdown up to its grace timeout (then
 * exit 1, skipping the flushes of counters and logs). When the app starts closing, the exports'
 * streams are destroyed, which resets their connections: the client sees a failed download, not
 * a file that looks complete.
 */
async function logExportsPlugin(app: FastifyInstance): Promise<void> {
  const countsByAccount = new Map<string, number>()
  const streams = new Set<Readable>()
  let closing = false
  const shuttingDown = () => new ApiError('service_unavailable', 'The server is shutting down; retry the download in a moment.')

  app.decorate('logExports', {
    admit(accountId: string): ExportSlot {
      if (closing) throw shuttingDown()
      const running = countsByAccount.get(accountId) ?? 0
      if (running >= MAX_EXPORTS_PER_ACCOUNT) {
        throw new ApiError(
          'rate_limited',
          `${MAX_EXPORTS_PER_ACCOUNT} downloads of this account's logs are in progress already; retry when one has ended.`,
          undefined,
          { 'retry-after': '10' },
        )
      }
      countsByAccount.set(accountId, running + 1)
      let isReleased = false
      const release = () => {
        if (isReleased) return
        isReleased = true
        const remaining = (countsByAccount.get(accountId) ?? 1) - 1
        if (remaining <= 0) countsByAccount.delete(accountId)
        else countsByAccount.set(accountId, remaining)
      }
      return {
        release,
        attach(stream: Readable) {
          if (closing) throw shuttingDown()
          streams.add(stream)
          stream.once('close', () => {
            streams.delete(stream)
            release()
          })
        },
      }
    },
  })

  app.addHook('preClose', async () => {
    closing = true
    for (const stream of streams) stream.destroy()
  })
}

export default fp(logExportsPlugin, { name: 'log-exports' })

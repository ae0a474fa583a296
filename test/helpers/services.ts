import net from 'node:net'

export const isCi = process.env.CI === 'true'
export const postgresUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
export const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

function isPortOpen(url: string, defaultPort: number): Promise<boolean> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: port === '' ? defaultPort : Number(port) })
    socket.setTimeout(1_000)
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
    socket.once('timeout', () => {
      socket.destroy()
      resolve(false)
    })
  })
}

/**
 * Whether a real service can be used. On a laptop without it the suites that need it are
 * skipped, saying so loudly; under CI a missing service is an error, never a skip.
 */
async function requireService(name: string, url: string, defaultPort: number): Promise<boolean> {
  if (await isPortOpen(url, defaultPort)) return true
  const message = `${name} is not reachable at ${url}`
  if (isCi) throw new Error(`${message}; CI must run against it`)
  console.warn(`\n!!! SKIPPING ${name} SUITES: ${message} (set up ${name} to run them) !!!\n`)
  return false
}

export const hasPostgres = await requireService('PostgreSQL', postgresUrl, 5432)
export const hasRedis = await requireService('Redis', redisUrl, 6379)

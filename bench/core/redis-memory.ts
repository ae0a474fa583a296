import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import { tagClient } from '../../src/domain/challenge/client-tag.js'
import { issueChallenge } from '../../src/domain/challenge/issue-challenge.js'
import { openRedisStore } from '../../src/storage/redis/redis-store.js'
import { startPrivateRedis } from '../shared.js'

export interface RedisMemoryFigures {
  challenges: number
  bytesPerChallenge: number
  memoryUsageOfOneKey: number | null
  server: string
}

const usedMemory = async (client: Redis) => Number(/used_memory:(\d+)/.exec(await client.info('memory'))?.[1])

/**
 * Redis memory per outstanding challenge: INFO used_memory before and after issuing `count`
 * challenges through the real issuing code, under the production key prefix, on a private server
 * (or, without redis-server on PATH, on database 15 of the shared one).
 */
export async function measureRedisMemory(count: number, sharedRedisUrl: string): Promise<RedisMemoryFigures> {
  const privateRedis = await startPrivateRedis()
  const url = privateRedis?.url ?? `${sharedRedisUrl}/15`
  const admin = new Redis(url)
  const store = await openRedisStore({ url, keyPrefix: 'tollgate:' })
  try {
    if (privateRedis === undefined) await admin.flushdb()
    const before = await usedMemory(admin)
    const key = Buffer.alloc(32, 7)
    const siteId = randomUUID()
    let issued = 0
    let firstId = ''
    const worker = async () => {
      while (issued < count) {
        issued++
        const challenge = await issueChallenge(store, key, {
          siteId,
          difficulty: 18,
          lifetimeSeconds: 120,
          stepUps: 0,
          clientTag: tagClient(key, `198.51.${issued % 256}.${issued % 251}`),
          now: Date.now(),
        })
        firstId ||= challenge.challengeId
      }
    }
    await Promise.all(Array.from({ length: 64 }, worker))
    const after = await usedMemory(admin)
    const memoryUsageOfOneKey = (await admin.call('MEMORY', 'USAGE', `tollgate:challenge:${firstId}`)) as number | null
    return {
      challenges: count,
      bytesPerChallenge: Math.round((after - before) / count),
      memoryUsageOfOneKey,
      server: privateRedis === undefined ? `${sharedRedisUrl}/15 (shared)` : 'private redis-server',
    }
  } finally {
    if (privateRedis === undefined) await admin.flushdb()
    admin.disconnect()
    await store.close()
    privateRedis?.process.kill()
  }
}

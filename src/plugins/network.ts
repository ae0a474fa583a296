import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { countryOfAddress, profileNetwork, type NetworkProfile } from '../domain/network/network-profile.js'
import { openSharedNetworkData, type LoadedNetworkData } from '../storage/network-data/open-network-data.js'

declare module 'fastify' {
  interface FastifyInstance {
    network: NetworkIntelligence
  }
}

export interface NetworkIntelligence {
  /** Country, ASN, hosting/VPN provider and Tor exit status of a client address, from offline data. */
  profile(ip: string): Promise<NetworkProfile>
  /** The profile's countryCode alone ('XX' when unknown), without its ASN and provider lookups. */
  countryCode(ip: string): Promise<string>
}

/**
 * Offline IP intelligence for the risk model. The data takes about a second to read, so a
 * serving process starts reading at boot without delaying it; tests read it on first use, once
 * per process. Should the data be unreadable (a broken install), profiles say 'XX' and no
 * provider, and the error is logged once: verifications go on without network signals rather
 * than failing.
 */
async function networkPlugin(app: FastifyInstance): Promise<void> {
  let data: Promise<LoadedNetworkData | undefined> | undefined
  const load = () => {
    data ??= openSharedNetworkData({ dataDirectory: app.config.dataDirectory }).catch((error: unknown) => {
      app.log.error({ err: error }, 'offline network data could not be read; network signals are off (run npm run refresh:ip-data)')
      return undefined
    })
    return data
  }
  if (app.config.environment !== 'test') void load()

  const unknownData = { findCountry: () => undefined, asns: { find: () => undefined, rangeCounts: { ipv4: 0, ipv6: 0 } }, torExits: new Set<string>() }
  app.decorate('network', {
    async profile(ip: string) {
      return profileNetwork((await load()) ?? unknownData, ip)
    },
    async countryCode(ip: string) {
      return countryOfAddress((await load()) ?? unknownData, ip)
    },
  } satisfies NetworkIntelligence)
}

export default fp(networkPlugin, { name: 'network' })

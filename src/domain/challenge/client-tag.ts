import { hmacSha256, type MacKey } from '../mac.js'
import { addressGroupOf } from '../history/client-keys.js'
import { RecentCache } from '../recent-cache.js'

/**
 * A short keyed tag of the client's IP address: enough to tell whether a solution comes from the
 * address its challenge was issued to, and to key step-up state per client, without keeping
 * addresses in clear in Redis. 48 bits: collisions between two clients of one site are negligible.
 */
export function tagClient(key: MacKey, clientIp: string): string {
  return hmacSha256(key, `client|${clientIp}`).subarray(0, 6).toString('base64url')
}

/**
 * A tag function (tagClient under the challenge key) with a bounded memory of recent addresses
 * (RecentCache): a client asks for a challenge and then submits it, and an HMAC costs more than
 * the rest of the gate together.
 */
export function createClientTagger(tag: (clientIp: string) => string, capacity = 10_000): (clientIp: string) => string {
  const tags = new RecentCache<string, string>(capacity)
  return (clientIp) => tags.getOrCompute(clientIp, tag)
}

/** The app's one tagger of clients (app.clientTags), whose memory every route that tags shares. */
export interface ClientTags {
  /** The tag of the address itself: binds a challenge to the client it was issued to. */
  readonly ofAddress: (clientIp: string) => string
  /**
   * The tag of its IPv4 address or IPv6 /64 (addressGroupOf): the unit of the clients' history,
   * of rate limits and of the token's address claim. For IPv4 it is ofAddress's own tag.
   */
  readonly ofGroup: (clientIp: string) => string
}

export function createClientTags(key: MacKey, capacity = 10_000): ClientTags {
  const ofAddress = createClientTagger((clientIp) => tagClient(key, clientIp), capacity)
  return { ofAddress, ofGroup: (clientIp) => ofAddress(addressGroupOf(clientIp)) }
}

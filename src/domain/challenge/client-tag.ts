import { hmacSha256, type MacKey } from '../mac.js'

/**
 * A short keyed tag of the client's IP address: enough to tell whether a solution comes from the
 * address its challenge was issued to, and to key step-up state per client, without keeping
 * addresses in clear in Redis. 48 bits: collisions between two clients of one site are negligible.
 */
export function tagClient(key: MacKey, clientIp: string): string {
  return hmacSha256(key, `client|${clientIp}`).subarray(0, 6).toString('base64url')
}

/**
 * A tag function (tagClient under the challenge key) with a bounded memory of recent addresses: a
 * client asks for a challenge and then submits it, and an HMAC costs more than the rest of the
 * gate together. Two generations of at most `capacity` addresses each: when the current one is
 * full it becomes the previous one, and an address found there moves back to the current one, so
 * an address in use is never dropped all at once with the rest (as clearing a single full map
 * would), and memory stays under 2 x capacity addresses.
 */
export function createClientTagger(tag: (clientIp: string) => string, capacity = 10_000): (clientIp: string) => string {
  let current = new Map<string, string>()
  let previous = new Map<string, string>()
  return (clientIp) => {
    const cached = current.get(clientIp)
    if (cached !== undefined) return cached
    const value = previous.get(clientIp) ?? tag(clientIp)
    if (current.size >= capacity) {
      previous = current
      current = new Map()
    }
    current.set(clientIp, value)
    return value
  }
}

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
 * tagClient with a bounded memory of recent addresses: a client asks for a challenge and then
 * submits it, and an HMAC costs more than the rest of the gate together.
 */
export function createClientTagger(key: MacKey, capacity = 10_000): (clientIp: string) => string {
  const tags = new Map<string, string>()
  return (clientIp) => {
    let tag = tags.get(clientIp)
    if (tag === undefined) {
      tag = tagClient(key, clientIp)
      if (tags.size >= capacity) tags.clear()
      tags.set(clientIp, tag)
    }
    return tag
  }
}

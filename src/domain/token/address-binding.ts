import { addressGroupOf } from '../history/client-keys.js'
import { parseAddress } from '../network/ip-address.js'

/**
 * What a site's tokens say of the address that earned them (settings.tokenAddressCheck):
 * - `off`: nothing; Siteverify answers `remoteipMatch: null` (the default, and every token before it);
 * - `report`: the token carries a keyed tag of the visitor's address group, and Siteverify, given
 *   `remoteip`, answers whether that is the same group (`remoteipMatch`), leaving the verdict to the backend;
 * - `refuse`: as report, and a token redeemed for another group of the same family fails
 *   (invalid-input-response, counted as remoteip-mismatch), as does the gate's clearance for one.
 */
export const tokenAddressChecks = ['off', 'report', 'refuse'] as const
export type TokenAddressCheck = (typeof tokenAddressChecks)[number]

/**
 * The token's claim of where it was earned: the address family (`4` or `6`) and the tag of the
 * address group (an IPv4 address or an IPv6 /64: addressGroupOf) under the challenge key
 * (tagClient), 9 characters. A keyed tag, not the address: the token reaches the page and the
 * site's backend, and an IPv4 address's plain hash is reversed by trying all 2^32 of them.
 * Undefined for text that is no address.
 */
export function addressClaimOf(ip: string, tagGroup: (group: string) => string): string | undefined {
  const address = parseAddress(ip)
  if (address === undefined) return undefined
  return `${address.family}${tagGroup(addressGroupOf(ip))}`
}

/**
 * Whether the address a backend names (Siteverify's remoteip) is in the group the token was earned
 * from: true or false; null when either side says nothing to compare (a token without the claim,
 * no remoteip, text that is no address) or the two are of different families (a dual-stack
 * visitor reached Tollgate by IPv6 and the site by IPv4, say: one is not the other's network).
 */
export function matchesAddressClaim(claim: string | null, remoteClaim: string | undefined): boolean | null {
  if (claim === null || remoteClaim === undefined || claim[0] !== remoteClaim[0]) return null
  return claim === remoteClaim
}

/** Whether a site with this check refuses a token whose address matched so (matchesAddressClaim): only refuse, only a mismatch. */
export function refusesAddress(check: TokenAddressCheck, match: boolean | null): boolean {
  return match === false && check === 'refuse'
}

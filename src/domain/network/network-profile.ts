import type { AsnTable } from './asn-table.js'
import { UNKNOWN_COUNTRY_CODE } from './country-codes.js'
import { parseAddress } from './ip-address.js'
import { findProvider, hostingProviders, vpnProviders } from './provider-catalogue.js'

/** What the offline data says about one client address. */
export interface NetworkProfile {
  /** The canonical address (IPv4-mapped IPv6 shown as IPv4), or the raw text when unparseable. */
  ip: string
  /** ISO 3166-1 alpha-2 code, or 'XX' when unknown (private address, no data, unparseable). */
  countryCode: string
  asn: number | null
  asOrganization: string | null
  /** The hosting or cloud provider the ASN belongs to, when it is one. */
  hostingProvider: string | null
  /** The VPN or proxy provider the ASN belongs to, when it is one. */
  vpnProvider: string | null
  isTorExit: boolean
  /** False for private, loopback, link-local and other non-internet addresses. */
  isPublic: boolean
}

/** The data sources, already loaded; see open-network-data for how they are read from disk. */
export interface NetworkData {
  /** Country of an address (canonical text), or undefined when the data has none. */
  findCountry(address: string): string | undefined
  asns: AsnTable
  torExits: ReadonlySet<string>
}

const UNKNOWN_COUNTRY = UNKNOWN_COUNTRY_CODE

export function profileNetwork(data: NetworkData, rawAddress: string): NetworkProfile {
  const address = parseAddress(rawAddress)
  if (address === undefined || !address.isPublic) {
    return {
      ip: address?.text ?? rawAddress,
      countryCode: UNKNOWN_COUNTRY,
      asn: null,
      asOrganization: null,
      hostingProvider: null,
      vpnProvider: null,
      isTorExit: false,
      isPublic: false,
    }
  }
  const system = data.asns.find(address)
  // A VPN provider's network is usually also a hosting network; it is reported once, as the VPN,
  // because that is the more specific explanation.
  const vpnProvider = system === undefined ? undefined : findProvider(vpnProviders, system)
  const hostingProvider = system === undefined || vpnProvider !== undefined ? undefined : findProvider(hostingProviders, system)
  return {
    ip: address.text,
    countryCode: countryIn(data, address.text),
    asn: system?.number ?? null,
    asOrganization: system?.organization ?? null,
    hostingProvider: hostingProvider ?? null,
    vpnProvider: vpnProvider ?? null,
    isTorExit: data.torExits.has(address.text),
    isPublic: true,
  }
}

function countryIn(data: Pick<NetworkData, 'findCountry'>, canonicalAddress: string): string {
  const country = data.findCountry(canonicalAddress)
  return country !== undefined && /^[A-Z]{2}$/.test(country) ? country : UNKNOWN_COUNTRY
}

/**
 * The country of an address alone, as profileNetwork has it: for a caller that needs nothing
 * else (the gate's blocklist), without the ASN search and the provider catalogue.
 */
export function countryOfAddress(data: Pick<NetworkData, 'findCountry'>, rawAddress: string): string {
  const address = parseAddress(rawAddress)
  return address === undefined || !address.isPublic ? UNKNOWN_COUNTRY : countryIn(data, address.text)
}

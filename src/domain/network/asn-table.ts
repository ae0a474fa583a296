import { searchLastStart } from '../search-last-start.js'
import type { ParsedAddress } from './ip-address.js'

export interface AutonomousSystem {
  number: number
  organization: string
}

export interface AsnTable {
  /** The autonomous system announcing this address, or undefined when no range covers it. */
  find(address: ParsedAddress): AutonomousSystem | undefined
  /** Ranges loaded per family, for health checks and the refresh script's sanity check. */
  readonly rangeCounts: { ipv4: number; ipv6: number }
}

interface Columns<Value> {
  starts: Value[]
  ends: Value[]
  asns: number[]
  organizations: number[]
}

/**
 * Reads the `@ip-location-db/asn` numeric CSV format: `range_start,range_end,asn,organization`,
 * both ends inclusive, the organization quoted (with doubled quotes) when it holds a comma.
 * Malformed lines are skipped, not fatal: one bad line in a daily data file must not take the
 * service down. The text is scanned in place (no split into 400k strings) because this runs at
 * start and its cost is start-up latency.
 */
function parseColumns<Value>(
  csv: string,
  toValue: (text: string) => Value | undefined,
  indexOrganization: (organization: string) => number,
): Columns<Value> {
  const columns: Columns<Value> = { starts: [], ends: [], asns: [], organizations: [] }
  let lineStart = 0
  while (lineStart < csv.length) {
    let lineEnd = csv.indexOf('\n', lineStart)
    if (lineEnd < 0) lineEnd = csv.length
    const first = csv.indexOf(',', lineStart)
    const second = first < 0 ? -1 : csv.indexOf(',', first + 1)
    const third = second < 0 ? -1 : csv.indexOf(',', second + 1)
    if (first > lineStart && third > second && third < lineEnd) {
      const start = toValue(csv.slice(lineStart, first))
      const end = toValue(csv.slice(first + 1, second))
      const asn = Number(csv.slice(second + 1, third))
      if (start !== undefined && end !== undefined && Number.isInteger(asn) && asn >= 0) {
        let organization = csv.slice(third + 1, lineEnd).trimEnd()
        if (organization.length >= 2 && organization.startsWith('"') && organization.endsWith('"')) {
          organization = organization.slice(1, -1).replaceAll('""', '"')
        }
        columns.starts.push(start)
        columns.ends.push(end)
        columns.asns.push(asn)
        columns.organizations.push(indexOrganization(organization))
      }
    }
    lineStart = lineEnd + 1
  }
  return columns
}

/**
 * The files are published sorted by range start; a file that is not (a future format change)
 * is sorted here rather than silently giving wrong answers from the binary search.
 */
function sortColumns<Value>(columns: Columns<Value>, compare: (a: Value, b: Value) => number): Columns<Value> {
  const { starts } = columns
  let isSorted = true
  for (let i = 1; i < starts.length && isSorted; i++) isSorted = compare(starts[i - 1] as Value, starts[i] as Value) <= 0
  if (isSorted) return columns
  const order = starts.map((_, i) => i).sort((a, b) => compare(starts[a] as Value, starts[b] as Value))
  const pick = <T>(values: T[]): T[] => order.map((i) => values[i] as T)
  return { starts: pick(starts), ends: pick(columns.ends), asns: pick(columns.asns), organizations: pick(columns.organizations) }
}

function toIpv4Value(text: string): number | undefined {
  const value = Number(text)
  return Number.isInteger(value) && value >= 0 && value <= 0xffffffff ? value : undefined
}

function toIpv6Value(text: string): bigint | undefined {
  return /^\d{1,39}$/.test(text) ? BigInt(text) : undefined
}

/**
 * Builds the lookup table from the two numeric CSV files (about 400k IPv4 and 100k IPv6 ranges).
 * Organization names repeat across many ranges, so each distinct name is stored once and ranges
 * point at it; IPv4 bounds live in typed arrays, IPv6 bounds as bigints.
 */
export function buildAsnTable(ipv4Csv: string, ipv6Csv: string): AsnTable {
  const organizations: string[] = []
  const organizationIndex = new Map<string, number>()
  const indexOrganization = (organization: string): number => {
    let index = organizationIndex.get(organization)
    if (index === undefined) {
      index = organizations.length
      organizations.push(organization)
      organizationIndex.set(organization, index)
    }
    return index
  }

  const columns4 = sortColumns(parseColumns(ipv4Csv, toIpv4Value, indexOrganization), (a, b) => a - b)
  const starts4 = Float64Array.from(columns4.starts)
  const ends4 = Float64Array.from(columns4.ends)
  const asns4 = Uint32Array.from(columns4.asns)
  const organizations4 = Uint32Array.from(columns4.organizations)

  const columns6 = sortColumns(parseColumns(ipv6Csv, toIpv6Value, indexOrganization), (a, b) => (a < b ? -1 : a > b ? 1 : 0))
  const { starts: starts6, ends: ends6 } = columns6
  const asns6 = Uint32Array.from(columns6.asns)
  const organizations6 = Uint32Array.from(columns6.organizations)

  const describe = (asn: number | undefined, organization: number | undefined): AutonomousSystem | undefined =>
    asn === undefined || asn === 0 ? undefined : { number: asn, organization: organizations[organization ?? -1] ?? '' }

  return {
    rangeCounts: { ipv4: starts4.length, ipv6: starts6.length },
    find(address) {
      if (address.family === 4) {
        const index = searchLastStart(starts4, address.value)
        if (index < 0 || address.value > (ends4[index] ?? -1)) return undefined
        return describe(asns4[index], organizations4[index])
      }
      const index = searchLastStart(starts6, address.value)
      if (index < 0 || address.value > (ends6[index] ?? -1n)) return undefined
      return describe(asns6[index], organizations6[index])
    },
  }
}

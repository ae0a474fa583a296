import { lookup, type LookupAddress } from 'node:dns'
import { isIP, type LookupFunction } from 'node:net'
import { Agent, buildConnector } from 'undici'
import { describeRefusedRange, findRefusedRange, type AddressPolicy } from '../domain/webhooks/address-policy.js'

/**
 * Thrown (into undici) when a webhook would connect to an address that is not public. The message
 * reaches the site's owner (the test send's answer, the delivery log): for a name it says which
 * kind of address it resolves to but not which one, so that no tenant can map the internal names
 * of the network Tollgate runs in to their addresses. `address` keeps it for the code.
 */
export class RefusedAddressError extends Error {
  readonly code = 'ERR_WEBHOOK_ADDRESS_REFUSED'

  constructor(
    readonly hostname: string,
    readonly address: string,
    readonly range: string,
  ) {
    super(hostname === address ? `${address} is ${describeRefusedRange(range)}` : `${hostname} resolves to ${describeRefusedRange(range)}`)
    this.name = 'RefusedAddressError'
  }
}

export type Resolve = (hostname: string, family: number) => Promise<LookupAddress[]>

const resolveWithSystem: Resolve = (hostname, family) =>
  new Promise((resolve, reject) => {
    lookup(hostname, { all: true, family }, (error, addresses) => (error === null ? resolve(addresses) : reject(error)))
  })

/**
 * A `lookup` for net/tls.connect that resolves the name, then refuses the connection unless every
 * address is public. It runs on every connection attempt, so the address checked is the address
 * connected to: a name that answered a public address when the URL was saved and a private one
 * now (DNS rebinding) is refused now. `resolve` is injectable for tests.
 */
export function createGuardedLookup(resolve: Resolve = resolveWithSystem, policy: AddressPolicy = {}): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, options.family === 4 || options.family === 6 ? options.family : 0)
      .then((addresses) => {
        // Any refused answer refuses the whole name: a mixed answer is how rebinding attacks start.
        for (const { address } of addresses) {
          const range = findRefusedRange(address, policy)
          if (range !== undefined) throw new RefusedAddressError(hostname, address, range)
        }
        const first = addresses[0]
        if (first === undefined) throw Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' })
        if (options.all === true) callback(null, addresses)
        else callback(null, first.address, first.family)
      })
      .catch((error: NodeJS.ErrnoException) => callback(error, ''))
  }
}

export interface WebhookAgentOptions {
  allowPrivateAddresses: boolean
  connectTimeoutMs: number
  /** Test hook: the name resolver the guard uses. */
  resolve?: Resolve
}

/**
 * The undici dispatcher for webhooks. Its connector checks the address at connect time: IP
 * literals directly (Node does no lookup for them), names through the guarded lookup. Nothing
 * reaches the network before the check passes. With private addresses allowed, only link-local
 * and metadata addresses are refused (address-policy.ts).
 */
export function createWebhookAgent(options: WebhookAgentOptions): Agent {
  const policy: AddressPolicy = { allowPrivate: options.allowPrivateAddresses }
  const connect = buildConnector({ timeout: options.connectTimeoutMs, lookup: createGuardedLookup(options.resolve, policy) })
  return new Agent({
    connect(connectOptions, callback) {
      const host = connectOptions.hostname.replace(/^\[(.*)\]$/, '$1')
      if (isIP(host) !== 0) {
        const range = findRefusedRange(host, policy)
        if (range !== undefined) {
          callback(new RefusedAddressError(host, host, range), null)
          return
        }
      }
      connect(connectOptions, callback)
    },
  })
}

/**
 * A service's URL as logs and messages show it: without its password, in the user part or in the
 * query (node-postgres and ioredis read `?password=` too, and ioredis any option, such as
 * `sentinelPassword`). The host stays: the operator needs it.
 */
export function urlWithoutPassword(url: string): string {
  const parsed = new URL(url)
  parsed.password = ''
  for (const name of [...parsed.searchParams.keys()]) {
    if (/password/i.test(name)) parsed.searchParams.delete(name)
  }
  return parsed.toString()
}

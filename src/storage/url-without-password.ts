/**
 * A service's URL as logs and messages show it: without its password, in the user part or in the
 * query (node-postgres and ioredis read `?password=` too). The host stays: the operator needs it.
 */
export function urlWithoutPassword(url: string): string {
  const parsed = new URL(url)
  parsed.password = ''
  if (parsed.searchParams.has('password')) parsed.searchParams.delete('password')
  return parsed.toString()
}

/** List answers are `{items: [...]}`; a bare array is accepted too. */
export function readList<T>(body: unknown): T[] {
  if (Array.isArray(body)) return body as T[]
  if (typeof body === 'object' && body !== null && 'items' in body && Array.isArray(body.items)) return body.items as T[]
  return []
}

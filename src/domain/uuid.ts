const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Whether the text is a UUID; checked before a query so that PostgreSQL never sees a malformed one. */
export function isUuid(text: string): boolean {
  return uuidPattern.test(text)
}

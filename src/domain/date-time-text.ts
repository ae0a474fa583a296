/** A leap second (`23:59:60`): the date-time format lets it through, and Date reads no such time. */
const LEAP_SECOND = /[T ]\d{2}:\d{2}:60(?!\d)/i

/**
 * Why a date-time text that the schema's date-time format let through does not read as a date
 * (a leap second, an offset such as "+02"): named for the leap second, which is well formed but
 * has no time of its own here.
 */
export function unreadableDateTimeMessage(text: string | undefined): string {
  return text !== undefined && LEAP_SECOND.test(text)
    ? 'must not be a leap second (:60), which is not supported: give :59.999 or the next minute'
    : 'must be an ISO 8601 date-time, such as 2027-01-01T00:00:00Z'
}

import type { FieldError } from '../api/client.js'

export interface SortedErrors {
  /** Messages by form field name, for the fields this form has. */
  byField: Record<string, string>
  /** Messages no field of the form can show. */
  general: string[]
}

/**
 * Places validation details beside their field. The API names fields by path
 * (`settings.webhookUrl`, `domains.2`); a detail matches the longest known field that prefixes it.
 */
export function sortFieldErrors(details: readonly FieldError[], fields: readonly string[]): SortedErrors {
  const byField: Record<string, string> = {}
  const general: string[] = []
  for (const detail of details) {
    const path = detail.field ?? ''
    const field = fields
      .filter((name) => path === name || path.startsWith(name + '.') || name.endsWith('.' + path))
      .sort((a, b) => b.length - a.length)[0]
    if (field === undefined) general.push(detail.field === undefined ? detail.message : `${detail.field}: ${detail.message}`)
    else byField[field] = byField[field] === undefined ? fieldSentence(detail.message) : `${byField[field]} ${fieldSentence(detail.message)}`
  }
  return { byField, general }
}

/**
 * A validation detail's message as a sentence under its field. The API writes them to follow the
 * field's name ("password must be at least 10 characters", "currentPassword is not your current
 * password"), which is how the general errors above still read; under the field, a lower-case
 * fragment reads as the schema's text. A length rule says what to do, as the fields' hints do.
 */
export function fieldSentence(message: string): string {
  const length = /^must be at (least|most) (\d+) characters$/.exec(message)
  const sentence =
    length !== null
      ? `Use at ${length[1]} ${length[2]} characters`
      : /^(must|is|are|has|does) /.test(message)
        ? `This ${message}`
        : message.charAt(0).toUpperCase() + message.slice(1)
  return /[.!?]$/.test(sentence) ? sentence : `${sentence}.`
}

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
    else byField[field] = byField[field] === undefined ? detail.message : `${byField[field]}; ${detail.message}`
  }
  return { byField, general }
}

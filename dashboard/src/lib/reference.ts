/**
 * The reference a turned-away visitor is shown (by the SDK's forms and the gate's page): the first
 * 13 characters of the verification's id, as src/domain/analytics/verification-reference.ts says.
 */
export const REFERENCE_LENGTH = 13

export const referenceOf = (id: string): string => id.slice(0, REFERENCE_LENGTH)

/** What the log's search takes (the API's pattern): at least 8 hexadecimal digits of an id, from its start, dashes optional. */
export const isReference = (text: string): text is string => /^[0-9a-fA-F]{8}(-?[0-9a-fA-F]){0,24}$/.test(text)

import { REFERENCE_LENGTH, REFERENCE_PATTERN } from '../../../src/domain/analytics/verification-reference.js'

/**
 * The reference a turned-away visitor is shown (by the SDK's forms and the gate's page): the start
 * of the verification's id. The length and the search's pattern are the API's own.
 */
export const referenceOf = (id: string): string => id.slice(0, REFERENCE_LENGTH)

const referencePattern = new RegExp(REFERENCE_PATTERN)

/** What the log's search takes, as the API checks it: at least 8 hexadecimal digits of an id, from its start, dashes optional. */
export const isReference = (text: string): text is string => referencePattern.test(text)

/**
 * A device's ephemeral id as Siteverify answers it and the verification log's filter takes it
 * (ephemeralIdOf: 12 bytes in hexadecimal), in either case. Apart from ephemeral-id.ts, which
 * needs node:crypto, so that the dashboard checks an id as the API does.
 */
export const EPHEMERAL_ID_PATTERN = '^[0-9a-fA-F]{24}$'

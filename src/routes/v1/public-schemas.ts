import { Type } from 'typebox'

/*
 * Response schemas of the hot routes avoid anyOf: fast-json-stringify serializes an anyOf by
 * running the validator against each branch for every response. A type list (nullable) and an
 * enum serialize directly; @fastify/swagger turns the type list into OpenAPI 3.0's nullable.
 */

/** One of fixed strings, as an enum. */
export function stringEnum<const Values extends readonly string[]>(values: Values, options: { description?: string } = {}) {
  return Type.Unsafe<Values[number]>({ type: 'string', enum: [...values], ...options })
}

/** A string or number, or null. */
export function nullable<const Kind extends 'string' | 'number' | 'integer' | 'boolean'>(type: Kind, options: Record<string, unknown> = {}) {
  return Type.Unsafe<(Kind extends 'string' ? string : Kind extends 'boolean' ? boolean : number) | null>({ type: [type, 'null'], ...options })
}

/** The error body of DESIGN section 3, for the OpenAPI document of the public routes. */
export const PublicErrorResponse = Type.Object({
  error: Type.Object({
    code: Type.String({ description: 'Stable snake_case code to branch on' }),
    message: Type.String(),
    requestId: Type.String(),
    details: Type.Optional(Type.Array(Type.Object({ field: Type.Optional(Type.String()), message: Type.String() }))),
  }),
})

/** Answers every route behind the public gate can give besides its own. */
export const publicGateErrors = {
  401: PublicErrorResponse,
  403: PublicErrorResponse,
  429: PublicErrorResponse,
}

export const siteKeySecurity: Record<string, string[]>[] = [{ siteKey: [] }]

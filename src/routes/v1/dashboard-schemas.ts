import { Type, type Static, type TSchema } from 'typebox'
import { PASSWORD_MAX_LENGTH } from '../../domain/accounts/password.js'
import { named } from './named-schemas.js'

/** The error body of DESIGN section 3, for the OpenAPI document. */
export const ErrorResponse = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: 'Stable snake_case code to branch on' }),
      message: Type.String(),
      requestId: Type.String(),
      details: Type.Optional(Type.Array(Type.Object({ field: Type.Optional(Type.String()), message: Type.String() }))),
    }),
  },
)

/**
 * The dashboard API's queries take no parameter beyond their own: a filter misspelt (`?site=`,
 * the dashboard page's own, for the audit log's `siteId`) would otherwise answer the whole log as
 * if it were the filtered one, and `?limit=` on a listing that has no pages would seem obeyed.
 * 400 validation_error naming the parameter ("is not a parameter of this route"). The dashboard
 * scope (routes/v1/dashboard.ts) closes every route's query with it, one that takes no parameter
 * included; the public routes (SDK, Siteverify, the gate) keep theirs open to vendors' clients.
 */
export const closedQuery = { additionalProperties: false } as const

/** A route's query schema, closed (closedQuery); no parameters at all when it has none. */
export function closedQueryOf(querystring: unknown): TSchema {
  const schema: TSchema = querystring ?? Type.Object({})
  return { ...schema, ...closedQuery }
}

/** Either credential works on every authenticated dashboard route. */
export const dashboardSecurity: Record<string, string[]>[] = [{ session: [] }, { bearer: [] }]

/** Error answers every authenticated route can give. */
export const authenticatedErrors = {
  401: ErrorResponse,
  403: ErrorResponse,
}

/**
 * What a change of a site (auditedSiteTransaction) can answer beyond its own errors: 409 conflict
 * when the site's owner changed under it on each of its attempts (transfers in a row while it waited).
 */
export const siteChangeErrors = {
  409: ErrorResponse,
}

export const Account = named('Account', Type.Object({
  id: Type.String({ format: 'uuid' }),
  email: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
}))

/** The account's current password, which the account's changes (and a new API key) are confirmed by. */
export const CurrentPassword = Type.String({ maxLength: PASSWORD_MAX_LENGTH, description: "The account's current password" })

/** A code of the account's second factor, which the log-in and the account's changes take while two-factor is on. */
export const SecondFactorCode = Type.String({
  maxLength: 100,
  description: "The authenticator app's current code, or an unused recovery code (which is used up)",
})

/**
 * The `from` or `to` of a query's time range, the one format of every route that takes one (the
 * stats, the exports): more than milliseconds is refused there (subMillisecondIssues), not cut.
 */
export function RangeTimeQuery(description: string) {
  return Type.Optional(
    Type.String({
      format: 'date-time',
      description: `${description}. ISO 8601 with a time zone, to the millisecond at most: more digits of fractions of a second, or a leap second (:60), are a 400 validation_error`,
    }),
  )
}

export const IdParams = Type.Object({ id: Type.String({ description: 'UUID' }) })

/**
 * A request field that also accepts null (to clear it). Not Type.Union([schema, Type.Null()]):
 * the app's ajv coerces types, and the first branch would turn null into 0 or "" before the
 * second is tried. `nullable` (OpenAPI 3.0) makes null a value of the field's own type.
 */
export function NullableInput<T extends TSchema>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, nullable: true })
}

import type { FastifyInstance } from 'fastify'
import { Type, type Static, type TSchema } from 'typebox'

/**
 * The records the API answers in several places (a site and its settings, a member, a webhook
 * delivery...) and the error body: each is registered once under its name (app.addSchema, the
 * name as its $id) and referenced where it is used (`{ $ref: 'Name#' }`). Fastify validates and
 * serializes with the one schema as it did with the copies; the OpenAPI document
 * (plugins/docs.ts) states it once, under components.schemas, for generated clients to name
 * (`components['schemas']['Site']`) instead of repeating it in every operation.
 */
const namedSchemas = new Map<string, TSchema>()

/** `schema` registered as `name`: what a route's schema holds is a reference to it, of the same static type. */
export function named<T extends TSchema>(name: string, schema: T) {
  if (namedSchemas.has(name)) throw new Error(`The schema ${name} is named twice`)
  namedSchemas.set(name, { ...schema, $id: name })
  return Type.Unsafe<Static<T>>({ $ref: `${name}#` })
}

/** Registers every named schema with the app, before the routes that reference them. */
export function addNamedSchemas(app: FastifyInstance): void {
  for (const schema of namedSchemas.values()) app.addSchema(schema)
}

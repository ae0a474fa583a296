import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify'
import { errorCatalogue, type ErrorCode } from '../errors.js'
import { ErrorResponse } from '../routes/v1/dashboard-schemas.js'
import { sessionCookieName } from './authentication.js'
import fp from 'fastify-plugin'

/**
 * The OpenAPI document is generated from the route schemas. It must be registered before the
 * routes so that it sees them. Outside production /docs serves Swagger UI and /docs/json the
 * document; in production neither route exists (404).
 */
async function docsPlugin(app: FastifyInstance, options: { exposeUi: boolean }): Promise<void> {
  app.addHook('onRoute', documentErrors)
  await app.register(swagger, {
    transform: documentErrorsAsJson,
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Tollgate',
        description: 'Self-hosted bot protection: proof-of-work challenges, risk scores, signed tokens, Siteverify.',
        version: '1',
      },
      components: {
        securitySchemes: {
          siteKey: { type: 'apiKey', in: 'header', name: 'X-Site-Key' },
          bearer: { type: 'http', scheme: 'bearer', description: 'A dashboard API key' },
          session: { type: 'apiKey', in: 'cookie', name: sessionCookieName(app.config) },
        },
      },
    },
  })
  if (options.exposeUi) {
    await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } })
  }
}

/** The catalogue's codes by HTTP status, for the responses' descriptions. */
const codesByStatus = new Map<number, string[]>()
for (const [code, { status }] of Object.entries(errorCatalogue)) codesByStatus.set(status, [...(codesByStatus.get(status) ?? []), code])

function describeCodes(codes: readonly string[], qualifier: string): string {
  return `Error body \`{ error: { code, message, requestId, details? } }\`; \`error.code\` is ${codes.length === 1 ? '' : 'one of '}${codes.map((code) => `\`${code}\``).join(', ')}${qualifier}`
}

/** The code of each error answer any route can give, where the route does not declare the status itself. */
const frameworkCodes: Record<number, ErrorCode> = {
  400: 'validation_error',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  500: 'internal_error',
  503: 'service_unavailable',
}

/** What the public routes' gate (site key, origin, budget) answers with each status. */
const publicGateCodes: Record<number, ErrorCode> = {
  401: 'invalid_site_key',
  403: 'origin_not_allowed',
  429: 'rate_limited',
}

/**
 * Every documented route's error answers, in the OpenAPI document: the ones it declares get a
 * description naming their codes, and those any route can give are added: 400 validation_error
 * where input is validated, 413 payload_too_large and 415 unsupported_media_type where a body is
 * taken (a DELETE's too), 500 internal_error, and 503 service_unavailable (a database or Redis away). Siteverify, which answers every failure with 200, is left as it is.
 */
function documentErrors(route: RouteOptions): void {
  const schema = route.schema as (FastifySchema & { hide?: boolean; tags?: string[] }) | undefined
  if (schema?.response === undefined || schema.hide === true || schema.tags?.includes('server-side') === true) return
  const responses: Record<string, unknown> = { ...(schema.response as Record<string, unknown>) }
  const methods = Array.isArray(route.method) ? route.method : [route.method]
  // Fastify reads a body sent with any method but GET and HEAD, so a DELETE's may be refused too.
  const takesBody = schema.body !== undefined || methods.some((method) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method))
  // The dashboard API refuses text PostgreSQL cannot store anywhere in a request, the query string included.
  const validatesInput =
    takesBody || schema.querystring !== undefined || schema.params !== undefined || schema.tags?.includes('dashboard') === true
  const statuses = [...(validatesInput ? [400] : []), ...(takesBody ? [413, 415] : []), 500, 503]
  for (const status of statuses) responses[status] ??= { ...ErrorResponse, description: describeCodes([frameworkCodes[status]!], '') }
  // The public routes answer a fixed code for each status of their gate, not every code of the status.
  const isPublic = schema.tags?.includes('public') === true
  for (const [status, response] of Object.entries(responses)) {
    const code = Number(status)
    if (code >= 400 && typeof response === 'object' && response !== null && !('description' in response)) {
      const publicCode = isPublic ? publicGateCodes[code] : undefined
      responses[status] = { ...response, description: publicCode === undefined ? describeCodes(codesByStatus.get(code) ?? [], ', as the route applies') : describeCodes([publicCode], '') }
    }
  }
  route.schema = { ...schema, response: responses }
}

type SwaggerTransform = (input: { schema: FastifySchema; url: string }) => { schema: FastifySchema; url: string }

/**
 * Error answers are JSON whatever the route's success answers are (a script, text/plain metrics,
 * an HTML page): in the document only, each error status names application/json as its media
 * type instead of the route's `produces`.
 */
const documentErrorsAsJson: SwaggerTransform = ({ schema, url }) => {
  const response = schema?.response as Record<string, { description?: string; content?: unknown }> | undefined
  if (response === undefined) return { schema, url }
  const responses = Object.fromEntries(Object.entries(response).map(([status, answer]) => [
    status,
    Number(status) >= 400 && answer.content === undefined ? { description: answer.description, content: { 'application/json': { schema: answer } } } : answer,
  ]))
  return { schema: { ...schema, response: responses }, url }
}

export default fp(docsPlugin, { name: 'docs' })

import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify'
import { errorCatalogue, type ErrorCode } from '../errors.js'
import { ErrorResponse } from '../routes/v1/dashboard-schemas.js'
import { DASHBOARD_CHALLENGE } from '../routes/v1/dashboard.js'
import { named } from '../routes/v1/named-schemas.js'
import { sessionCookieName } from './authentication.js'
import { DOCS_THEME_CSS, DOCS_THEME_JS } from './docs-theme.js'
import fp from 'fastify-plugin'

declare module 'fastify' {
  interface FastifySchema {
    /** The route takes a request without a body too (the document says the body is not required). */
    optionalBody?: boolean
    /** The codes only some routes give (routeSpecificCodes) that this one gives, for its error answers' documentation. */
    errorCodes?: ErrorCode[]
    /** The route reads no body: one is ignored (within the body limit), so it is not validated, nor refused for a well-formed media type (a Content-Type that is none is 415 still). */
    ignoresBody?: boolean
    /** The route reads no input and no store (/health): it gives none of the error answers any route can. */
    cannotFail?: boolean
    /** The body as the document states it, with the limits the handler checks (the validating `body` bounds less). */
    documentedBody?: unknown
    /** The query as the document states it: without a credential that the operation's security schemes state (createAssessment's `key`), which a generated client would otherwise send twice. */
    documentedQuerystring?: unknown
    /** Headers of an answer, by status, for the document only (Fastify's schemas describe bodies). */
    responseHeaders?: Record<number, Record<string, { type: 'string' | 'integer'; description: string }>>
  }
}

/** Every 401 of the dashboard API names the scheme it takes (routes/v1/dashboard.ts). */
const wwwAuthenticate = { 'WWW-Authenticate': { type: 'string', description: `\`${DASHBOARD_CHALLENGE}\`: an API key as a bearer token, or log in for a session` } } as const

/** Every 429 says when to come back. */
const retryAfter = { 'Retry-After': { type: 'integer', description: 'Seconds to wait before trying again' } } as const

/**
 * The OpenAPI document is generated from the route schemas. It must be registered before the
 * routes so that it sees them. Outside production /docs serves Swagger UI and /docs/json the
 * document; in production neither route exists (404).
 */
async function docsPlugin(app: FastifyInstance, options: { exposeUi: boolean }): Promise<void> {
  const optionalBodies = new Set<string>()
  app.addHook('onRoute', (route) => {
    documentErrors(route, route.bodyLimit ?? app.initialConfig.bodyLimit)
    if (route.schema?.optionalBody === true) for (const method of [route.method].flat()) optionalBodies.add(`${method.toLowerCase()} ${openApiPath(route.url)}`)
  })
  await app.register(swagger, {
    // A schema registered with a name (routes/v1/named-schemas.ts) is #/components/schemas/<name>.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    transform: (input) => documentErrorsAsJson(nameOperation(documentInputs(input))),
    // @fastify/swagger marks every body it documents as required.
    transformObject: (documentObject) => {
      if (!('openapiObject' in documentObject)) return documentObject.swaggerObject
      const { openapiObject } = documentObject
      const pathsOfIds = new Map<string, string[]>()
      for (const [path, operations] of Object.entries(openapiObject.paths ?? {})) {
        for (const [method, operation] of Object.entries(operations as Record<string, { requestBody?: { required?: boolean }; operationId?: string }>)) {
          if (optionalBodies.has(`${method} ${path}`) && operation.requestBody !== undefined) operation.requestBody.required = false
          if (operation.operationId !== undefined) pathsOfIds.set(operation.operationId, [...(pathsOfIds.get(operation.operationId) ?? []), path])
        }
      }
      // A vendor's path at the root (/siteverify) beside the same under /api/v1: the root one's id says so.
      for (const [path, operations] of Object.entries(openapiObject.paths ?? {})) {
        if (path.startsWith('/api/v1/')) continue
        for (const operation of Object.values(operations as Record<string, { operationId?: string }>)) {
          const id = operation.operationId
          if (id !== undefined && (pathsOfIds.get(id)?.length ?? 0) > 1) operation.operationId = id.replace(/^[a-z]+/, (method) => `${method}Root`)
        }
      }
      admitNullToNullableEnums(openapiObject)
      return openapiObject
    },
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Tollgate',
        description:
          'Self-hosted bot protection: proof-of-work challenges, risk scores, signed tokens, Siteverify. Every answer carries an ' +
          '`X-Request-Id` header (the `requestId` of an error body). Any route may also answer 408 `request_timeout` (a request ' +
          'that did not arrive whole within 30 s), 417 `expectation_failed` (an `Expect` header other than `100-continue`) and 431 ' +
          '`headers_too_large` (a request line and headers over 16 KiB), in the ' +
          'error body of every other error, and a path asked with a method it does not take answers 405 `method_not_allowed` ' +
          'with an `Allow` header naming the methods it takes: the methods this document lists for the path, and `HEAD` beside a ' +
          '`GET` except on the Siteverify paths (`Allow: POST, GET`; a `HEAD` would spend the token unseen) and the logs\' exports (`Allow: GET`). ' +
          'The flow, the risk model and what a client other than the browser SDK must expect: docs/core-flow.md and docs/risk.md.',
        version: '1',
        license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
      },
      // No servers: the default is this one ('/'), and Swagger UI would show a select of the one
      // server without a name (axe's select-name).
      components: {
        securitySchemes: {
          siteKey: {
            type: 'apiKey',
            in: 'header',
            name: 'X-Site-Key',
            description: "A site's public key; the test site keys 1x00000000000000000000AA (always passes, as do Turnstile's, reCAPTCHA's and hCaptcha's own always-pass test site keys) and 2x00000000000000000000AB (always blocked) serve a site's own browser tests",
          },
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description:
              'A dashboard API key (`Authorization: Bearer tgak_...`). A `read` key may only GET (and HEAD): any other method answers 403 ' +
              '`forbidden`. Operations that manage the account\'s own sign-in (sessions, password, two-factor, passkeys, new API keys, ' +
              'invitations, handing a site over) take a session only and answer an API key 403 `forbidden`: their security names the session alone.',
          },
          metricsToken: { type: 'http', scheme: 'bearer', description: 'The METRICS_TOKEN, when the operator set one' },
          // createAssessment takes the site's secret key where Google's clients send their API key: any one of these.
          googleApiKey: { type: 'apiKey', in: 'query', name: 'key', description: "The site's secret key (tgs_... or a test secret) as Google's `?key=` API key (createAssessment)" },
          googleApiKeyHeader: {
            type: 'apiKey',
            in: 'header',
            name: 'X-Goog-Api-Key',
            description: "The site's secret key (tgs_... or a test secret) as Google's API key header, which its client libraries send (createAssessment)",
          },
          secretKeyBearer: { type: 'http', scheme: 'bearer', description: "The site's secret key (tgs_... or a test secret) as a bearer token (createAssessment)" },
          session: {
            type: 'apiKey',
            in: 'cookie',
            name: sessionCookieName(app.config),
            description:
              'The session cookie set by `POST /api/v1/sessions` (log-in). A request that changes something (any method but GET) ' +
              "with it must carry an `Origin` (or `Referer`) header naming the service's own origin, else 403 `csrf_rejected`; " +
              'requests with an API key (bearer) need none. ' +
              `In production (where this document is not served) the cookie is named \`${sessionCookieName({ environment: 'production' })}\` and is Secure.`,
          },
        },
      },
    },
  })
  if (options.exposeUi) {
    // A title naming the page (WCAG 2.4.2); BaseLayout leaves out Swagger UI's top bar, whose logo
    // image, address field and select have no names, and this page has one document to show.
    // Without deep links: each operation's path would be a link inside the button that opens it,
    // which a screen reader or a keyboard cannot tell apart (axe's nested-interactive). The
    // theme's colours stand out from their backgrounds, and its script names the dialog's buttons
    // by their text (docs-theme.ts).
    await app.register(swaggerUi, {
      routePrefix: '/docs',
      uiConfig: { docExpansion: 'list', deepLinking: false, layout: 'BaseLayout' },
      theme: {
        title: 'Tollgate API reference',
        css: [{ filename: 'contrast.css', content: DOCS_THEME_CSS }],
        js: [{ filename: 'label-in-name.js', content: DOCS_THEME_JS }],
      },
    })
  }
}

/** The catalogue's codes by HTTP status, for the responses' descriptions. */
const codesByStatus = new Map<number, ErrorCode[]>()
for (const [code, { status }] of Object.entries(errorCatalogue) as [ErrorCode, { status: number }][]) codesByStatus.set(status, [...(codesByStatus.get(status) ?? []), code])

function describeCodes(codes: readonly string[], qualifier: string): string {
  return `Error body \`{ error: { code, message, requestId, details? } }\`; \`error.code\` is ${codes.length === 1 ? '' : 'one of '}${codes.map((code) => `\`${code}\``).join(', ')}${qualifier}`
}

/**
 * Codes only some routes give: a route's error answers list them only when the route declares
 * them (schema.errorCodes), or, for the public routes' gate, publicGateCodes. Every other code of
 * a status is listed for every route that declares the status.
 */
const routeSpecificCodes = new Set<ErrorCode>([
  'challenge_invalid',
  'challenge_expired',
  'solution_invalid',
  'invalid_site_key',
  'origin_not_allowed',
  'email_taken',
  'sign_up_closed',
  'setup_code_invalid',
  'invalid_credentials',
  'account_disabled',
  'password_unchanged',
  'two_factor_required',
  'two_factor_invalid',
  'webhook_not_configured',
  'webhook_event_not_redeliverable',
  'webhook_event_expired',
  'owner_role_fixed',
  'already_owner',
  'not_a_member',
  'member_lacks_two_factor',
  'site_limit_reached',
  'idempotency_key_reused',
  'api_key_site_not_found',
  'api_key_site_restricted',
  'api_key_widening_forbidden',
  'api_key_expired',
  // Any route that authenticates (its security names the bearer key, or a session only, which an
  // API key is told of after its address is checked): documentErrors declares it for them.
  'api_key_address_refused',
  // Any route of one site (/sites/{id}/...), whose member may lack two-factor: documentErrors declares it for them.
  'site_requires_two_factor',
  'passkey_challenge_invalid',
  'passkey_unknown',
  'passkey_invalid',
  'clearance_required',
  'token_invalid',
  'token_spent',
  'unsupported_language',
  // Answered at the socket for any route (the document's description says so), not by a route.
  'request_timeout',
  'expectation_failed',
  'headers_too_large',
])

/**
 * The error body, named once in the document (components.schemas.ApiError): each error answer
 * refers to it and narrows `error.code` to the codes it can carry (documentErrorsAsJson).
 */
const ApiErrorSchema = named('ApiError', {
  ...ErrorResponse,
  description: 'The body of every error answer (DESIGN section 3): `error.code` is the stable code to branch on, `error.requestId` the `X-Request-Id` of the answer',
})

/** The error body with `error.code` one of `codes`, described. */
function errorAnswer(codes: readonly ErrorCode[], qualifier = ''): Record<string, unknown> {
  const { properties } = ErrorResponse
  return {
    ...ErrorResponse,
    properties: {
      ...properties,
      error: { ...properties.error, properties: { ...properties.error.properties, code: { ...properties.error.properties.code, enum: [...codes] } } },
    },
    description: describeCodes(codes, qualifier),
  }
}

/** The codes an error answer's `error.code` is narrowed to (errorAnswer's enum), if it is. */
function codesOf(answer: object): readonly string[] | undefined {
  return (answer as { properties?: { error?: { properties?: { code?: { enum?: string[] } } } } }).properties?.error?.properties?.code?.enum
}

/**
 * An error answer's body in the document: ApiError, with `error.code` narrowed to the answer's
 * codes (an allOf, so that a generated client types the code as their union, and the envelope is
 * stated once). Fastify serializes with the route's own schema (errorAnswer), not this one.
 */
function documentedErrorBody(answer: object): object {
  const codes = codesOf(answer)
  if (codes === undefined) return answer
  const code = { type: 'object', required: ['code'], properties: { code: { type: 'string', enum: [...codes] } } }
  return { allOf: [ApiErrorSchema, { type: 'object', required: ['error'], properties: { error: code } }] }
}

/**
 * A response's media types with its JSON one's error envelope as ApiError: the reference itself,
 * or narrowed where errorAnswer made it (an allOf of one member would say nothing more, and
 * linters flag it: Redocly's no-illogical-composition-keywords).
 */
function withNamedErrorBody(content: Record<string, { schema?: object }>): Record<string, { schema?: object }> {
  const json = content['application/json']
  if (json?.schema === undefined) return content
  const body = codesOf(json.schema) === undefined ? ApiErrorSchema : documentedErrorBody(json.schema)
  return { ...content, 'application/json': { ...json, schema: body } }
}

/** What a 413 says of the route's body limit (its own bodyLimit, else the service's 16 KiB). */
function bodyLimitQualifier(bodyLimit: number | undefined): string {
  return bodyLimit === undefined ? '' : `: the body is over ${bodyLimit / 1024} KiB (${bodyLimit} bytes), this route's limit`
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
 * where input is validated, 413 payload_too_large (with the route's body limit) and 415
 * unsupported_media_type where a body is taken (a DELETE's too, and one the route ignores), 500 internal_error, and 503 service_unavailable
 * (a database or Redis away). Siteverify, which answers every failure with 200, is left as it is.
 * 405 method_not_allowed and the socket's 408, 417 and 431 belong to no operation: the document's
 * description states them for every path.
 */
function documentErrors(route: RouteOptions, bodyLimit: number | undefined): void {
  const schema = route.schema as (FastifySchema & { hide?: boolean; tags?: string[] }) | undefined
  if (schema?.response === undefined || schema.hide === true || schema.cannotFail === true || schema.tags?.includes('server-side') === true) return
  const responses: Record<string, unknown> = { ...(schema.response as Record<string, unknown>) }
  const methods = Array.isArray(route.method) ? route.method : [route.method]
  // Fastify reads a body sent with any method but GET and HEAD, so a DELETE's may be refused too.
  const takesBody = schema.body !== undefined || methods.some((method) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method))
  const readsBody = takesBody && schema.ignoresBody !== true
  // The dashboard API refuses text PostgreSQL cannot store anywhere in a request, the query string included.
  const validatesInput =
    readsBody || schema.querystring !== undefined || schema.params !== undefined || schema.tags?.includes('dashboard') === true
  // Fastify refuses a Content-Type that is no media type at all (`text`, `;;;`) before any parser,
  // so a route that ignores its body answers that 415 too.
  const statuses = [...(validatesInput ? [400] : []), ...(takesBody ? [413, 415] : []), 500, 503]
  for (const status of statuses) responses[status] ??= errorAnswer([frameworkCodes[status]!], status === 413 ? bodyLimitQualifier(bodyLimit) : '')
  // The public routes answer a fixed code for each status of their gate, not every code of the status.
  const isPublic = schema.tags?.includes('public') === true
  const declared = new Set(schema.errorCodes ?? [])
  const security = (schema as { security?: Record<string, unknown>[] }).security
  if (schema.sessionOnly !== undefined || security?.some((each) => 'bearer' in each) === true) declared.add('api_key_address_refused')
  if (/\/sites\/:id(\/|$)/.test(route.url)) declared.add('site_requires_two_factor')
  for (const [status, response] of Object.entries(responses)) {
    const code = Number(status)
    if (code >= 400 && typeof response === 'object' && response !== null && !('description' in response)) {
      const publicCode = isPublic ? publicGateCodes[code] : undefined
      const codes = (codesByStatus.get(code) ?? []).filter((each) => !routeSpecificCodes.has(each) || declared.has(each))
      responses[status] = publicCode === undefined ? errorAnswer(codes, ', as the route applies') : errorAnswer([publicCode])
    }
  }
  route.schema = { ...schema, response: responses }
}

/**
 * OpenAPI 3.0's `nullable` does not widen an `enum`: a value must be one of its members, so a
 * nullable enum without null refuses the null it means to allow, in Ajv as in every strict
 * validator (Prism, openapi-response-validator). @fastify/swagger turns a field that is an enum or
 * null (`Type.Union([enum, Type.Null()])`) into such a schema: every nullable enum of the document
 * gets null as a member. New objects and arrays only: the route schemas Fastify validates with
 * are left as they are.
 */
function admitNullToNullableEnums(node: unknown): void {
  if (Array.isArray(node)) {
    for (const each of node) admitNullToNullableEnums(each)
    return
  }
  if (typeof node !== 'object' || node === null) return
  const schema = node as { nullable?: unknown; enum?: unknown[] }
  if (schema.nullable === true && Array.isArray(schema.enum) && !schema.enum.includes(null)) schema.enum = [...schema.enum, null]
  for (const value of Object.values(node)) admitNullToNullableEnums(value)
}

type SwaggerTransform = (input: { schema: FastifySchema; url: string; route: RouteOptions }) => { schema: FastifySchema; url: string; route: RouteOptions }

/** Fastify's `:id` path parameters as OpenAPI writes them (`{id}`). */
function openApiPath(url: string): string {
  return url.replace(/:(\w+)/g, '{$1}')
}

/** A route's documentedBody and documentedQuerystring, where it has them, stand for its body and query in the document. */
const documentInputs: SwaggerTransform = (input) => {
  const { schema } = input
  if (schema?.documentedBody === undefined && schema?.documentedQuerystring === undefined) return input
  const { documentedBody, documentedQuerystring, ...rest } = schema
  return { ...input, schema: { ...rest, body: documentedBody ?? rest.body, querystring: documentedQuerystring ?? rest.querystring } }
}

/**
 * Every operation gets an operationId, from its method and path (`post /api/v1/sites/:id/secret/rotate`
 * is `postSitesByIdSecretRotate`), so that generated clients have stable method names; routes with
 * no credential say so (`security: []`), and those only a session may use (schema.sessionOnly) name
 * the session alone.
 */
const nameOperation: SwaggerTransform = (input) => {
  const { schema, url, route } = input
  if (schema === undefined || schema === null) return input
  const words = url
    .replace(/^\/api\/v1\//, '/')
    .split('/')
    .filter((part) => part !== '')
    .map((part) => (part.startsWith(':') ? `By-${part.slice(1)}` : part))
    .flatMap((part) => part.split(/[^A-Za-z0-9]+/))
    .filter((word) => word !== '')
  const method = [route.method].flat()[0]?.toLowerCase() ?? 'get'
  const operationId = method + words.map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join('')
  const documented = schema as FastifySchema & { security?: Record<string, string[]>[]; operationId?: string }
  // A route only a session may use (app.authenticate refuses API keys there) names no bearer key.
  const security = schema.sessionOnly === undefined ? (documented.security ?? []) : (documented.security ?? [{ session: [] }]).filter((each) => !('bearer' in each))
  return { ...input, schema: { ...schema, operationId: documented.operationId ?? operationId, security } }
}

/**
 * Error answers are JSON whatever the route's success answers are (a script, text/plain metrics,
 * an HTML page): in the document only, each error status names application/json as its media
 * type instead of the route's `produces`.
 */
const documentErrorsAsJson: SwaggerTransform = (input) => {
  const { schema } = input
  const response = schema?.response as Record<string, { description?: string; content?: unknown }> | undefined
  if (response === undefined) return input
  const responses = Object.fromEntries(Object.entries(response).map(([status, answer]) => {
    const declared = schema.responseHeaders?.[Number(status)]
    const challenge = status === '401' && schema.tags?.includes('dashboard') === true ? wwwAuthenticate : undefined
    const headers = status === '429' ? { ...retryAfter, ...declared } : challenge === undefined ? declared : { ...challenge, ...declared }
    const withHeaders = headers === undefined ? {} : { headers }
    if (Number(status) < 400) return [status, { ...answer, ...withHeaders }]
    // An error answer with media types of its own (the gate's page or its JSON error): its JSON
    // body refers to ApiError too, instead of repeating the envelope.
    if (answer.content !== undefined) return [status, { ...answer, ...withHeaders, content: withNamedErrorBody(answer.content as Record<string, { schema?: object }>) }]
    return [status, { description: answer.description, ...withHeaders, content: { 'application/json': { schema: documentedErrorBody(answer) } } }]
  }))
  return { ...input, schema: { ...schema, response: responses } }
}

export default fp(docsPlugin, { name: 'docs' })

/**
 * The one place that talks HTTP. Requests are same-origin with the session cookie; the browser
 * adds the Origin header the service's CSRF check requires on POST, PUT and DELETE.
 */

export interface FieldError {
  field?: string
  message: string
}

/** An error answer of the API: `{error: {code, message, requestId, details?}}`. */
export class ApiRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | undefined,
    readonly details: FieldError[],
  ) {
    super(message)
    this.name = 'ApiRequestError'
  }
}

/** The API's 409: the resource changed meanwhile (in another tab, say), so nothing was done. */
export function isConflict(error: unknown): boolean {
  return error instanceof ApiRequestError && error.code === 'conflict'
}

type Listener = () => void
const unauthorizedListeners = new Set<Listener>()

/** Called when any request answers 401, so the app can return to the login screen. */
export function onUnauthorized(listener: Listener): () => void {
  unauthorizedListeners.add(listener)
  return () => unauthorizedListeners.delete(listener)
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null
}

function readError(status: number, body: unknown): ApiRequestError {
  const error = isRecord(body) && isRecord(body.error) ? body.error : {}
  const details = Array.isArray(error.details)
    ? error.details.filter(isRecord).map((detail) => ({
        ...(typeof detail.field === 'string' ? { field: detail.field } : {}),
        message: typeof detail.message === 'string' ? detail.message : 'is not valid',
      }))
    : []
  return new ApiRequestError(
    status,
    typeof error.code === 'string' ? error.code : 'http_' + String(status),
    typeof error.message === 'string' ? error.message : `The service answered HTTP ${status}.`,
    typeof error.requestId === 'string' ? error.requestId : undefined,
    details,
  )
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  body?: unknown
  query?: Record<string, string | number | undefined>
  /** Do not announce a 401 (the log-in form itself, and the log-out). */
  isQuietOnUnauthorized?: boolean
  /** An ETag the resource must still have (If-Match); else the service answers 412 precondition_failed. */
  ifMatch?: string
  /** Makes a creation safe to send again (Idempotency-Key): a retry with it gets the first answer. */
  idempotencyKey?: string
}

/** The address of an API path with its query; parameters left out or empty are not sent. */
export function apiUrl(path: string, query: RequestOptions['query'] = {}): URL {
  const url = new URL('/api/v1' + path, window.location.origin)
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== '') url.searchParams.set(name, String(value))
  }
  return url
}

export async function request<T>(path: string, options: RequestOptions = {}): Promise<T> {
  return (await requestWithEtag<T>(path, options)).body
}

/** As request, with the ETag of the answer (a site's, for a later If-Match). */
export async function requestWithEtag<T>(path: string, options: RequestOptions = {}): Promise<{ body: T; etag: string | undefined }> {
  const url = apiUrl(path, options.query)
  const headers: Record<string, string> = { accept: 'application/json' }
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  if (options.ifMatch !== undefined) headers['if-match'] = options.ifMatch
  if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey
  let response: Response
  try {
    response = await fetch(url, {
      method: options.method ?? 'GET',
      headers,
      credentials: 'same-origin',
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    })
  } catch {
    throw new ApiRequestError(0, 'network_error', 'The service could not be reached. Check your connection and retry.', undefined, [])
  }
  const text = await response.text()
  let body: unknown = undefined
  if (text !== '') {
    try {
      body = JSON.parse(text)
    } catch {
      body = undefined
    }
  }
  if (!response.ok) {
    if (response.status === 401 && options.isQuietOnUnauthorized !== true) {
      for (const listener of unauthorizedListeners) listener()
    }
    throw readError(response.status, body)
  }
  return { body: body as T, etag: response.headers.get('etag') ?? undefined }
}

/** A message for people, with the request id support needs to find the log line. */
export function describeError(error: unknown): string {
  if (error instanceof ApiRequestError) {
    return error.requestId === undefined ? error.message : `${error.message} (request ${error.requestId})`
  }
  return error instanceof Error ? error.message : 'Something went wrong.'
}

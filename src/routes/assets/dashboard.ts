import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import fastifyStatic from '@fastify/static'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { errorBody } from '../../errors.js'

export interface DashboardAssetsOptions {
  /** The built dashboard (`npm run build:dashboard`); tests may point elsewhere. */
  root?: string
  /** In production the pages also send HSTS (transportSecurity). */
  isProduction?: boolean
}

const defaultRoot = fileURLToPath(new URL('../../../dist/dashboard/', import.meta.url))

/**
 * The dashboard holds a session that can delete sites and rotate secrets, so its pages get the
 * strictest policy the build allows: only its own scripts and styles (no inline code, no eval),
 * API calls to this origin only, and never framed (clickjacking).
 */
const contentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

/**
 * In production the service is reached over https (its session cookie is __Host- and Secure):
 * browsers are told to keep to https for a year, so a first plain-http visit cannot be
 * intercepted and stripped of TLS. Not for subdomains, which may not all serve https.
 */
export const transportSecurity = { 'strict-transport-security': 'max-age=31536000' }

const securityHeaders = {
  'content-security-policy': contentSecurityPolicy,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // Same-origin requests keep their Referer (a CSRF fallback when Origin is absent); others get none.
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
}

/** Vite writes only content-hashed files under assets/: they never change, so they are cached for a year. */
function isHashedAsset(path: string): boolean {
  return /[/\\]assets[/\\]/.test(path)
}

/** Paths of the app's own screens: no file extension in the last segment. */
function isAppPath(url: string): boolean {
  const path = url.split('?')[0] ?? ''
  const lastSegment = path.slice(path.lastIndexOf('/') + 1)
  return !path.startsWith('/dashboard/assets/') && !lastSegment.includes('.')
}

/**
 * Serves the single-page dashboard at /dashboard: its files from the build directory, and
 * index.html for every app path below it (/dashboard/sites/..., deep links and reloads).
 */
const dashboardAssets: FastifyPluginAsyncTypebox<DashboardAssetsOptions> = async (app, options) => {
  const root = options.root ?? defaultRoot

  async function sendIndex(request: FastifyRequest, reply: FastifyReply) {
    let html: Buffer
    try {
      html = await readFile(join(root, 'index.html'))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      request.log.warn({ root }, 'the dashboard is not built')
      return reply
        .code(503)
        .header('cache-control', 'no-store')
        .send(errorBody('service_unavailable', request.id, 'The dashboard is not built; run `npm run build` (no restart needed).'))
    }
    // index.html names the current hashed bundles, so it is revalidated on every visit.
    return reply.code(200).header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(html)
  }

  await app.register(
    async (scope) => {
      const headers = options.isProduction === true ? { ...securityHeaders, ...transportSecurity } : securityHeaders
      scope.addHook('onSend', async (_request, reply, payload) => {
        void reply.headers(headers)
        return payload
      })

      await scope.register(fastifyStatic, {
        root,
        prefix: '/',
        index: false,
        redirect: false,
        decorateReply: false,
        dotfiles: 'deny',
        cacheControl: false,
        preCompressed: true,
        // A folder is no file: answered as unknown below (404) instead of the plugin's 403.
        allowedPath: (path) => !path.endsWith('/'),
        setHeaders: (reply, path) => {
          void reply.header('cache-control', isHashedAsset(path) ? 'public, max-age=31536000, immutable' : 'no-cache')
        },
      })

      scope.get('/', { schema: { hide: true } }, sendIndex)

      const answerUnknown = async (request: FastifyRequest, reply: FastifyReply) => {
        if ((request.method === 'GET' || request.method === 'HEAD') && isAppPath(request.url)) return sendIndex(request, reply)
        return reply.code(404).send(errorBody('not_found', request.id, `No route for ${request.method} ${request.url.split('?')[0]}.`))
      }
      scope.setNotFoundHandler(answerUnknown)
      // A name longer than any file's (255 bytes) is none of the build's: the plugin would answer
      // 403 (it cannot check the name's spelling on disk).
      scope.addHook('onRequest', async (request, reply) => {
        const path = request.url.split('?')[0] ?? ''
        if (path.length > 255 && path.split('/').some((segment) => Buffer.byteLength(segment) > 255)) return answerUnknown(request, reply)
      })
    },
    { prefix: '/dashboard' },
  )
}

export default dashboardAssets

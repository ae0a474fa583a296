import { createHash } from 'node:crypto'
import { readdir, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { errorBody, type ErrorCode } from '../../errors.js'
import { PublicErrorResponse } from '../v1/public-schemas.js'
import { chooseContentEncoding, type ContentEncoding } from './accept-encoding.js'

export interface SdkAssetsOptions {
  /** The build output of `npm run build:sdk`; tests may point elsewhere. */
  directory?: string
}

interface ManifestFile {
  name: string
  contentType: string
  immutable: boolean
}

/** A file as it is sent in one encoding: its bytes and their own validator. */
interface Encoded {
  body: Buffer
  etag: string
}

interface Asset {
  contentType: string
  cacheControl: string
  identity: Encoded
  /** The build's `.br` and `.gz` beside the file, when it wrote them (an earlier build's file may have only its `.gz`). */
  encoded: Partial<Record<ContentEncoding, Encoded>>
}

/** The encodings the build writes beside each file (scripts/build-sdk.ts), and their files' endings. */
const ENCODINGS: readonly ContentEncoding[] = ['br', 'gzip']
const EXTENSION_OF: Record<ContentEncoding, string> = { br: 'br', gzip: 'gz' }

/** compat.js of the build (scripts/build-sdk.ts). */
const COMPAT_NAME = 'compat.js'
/** The folder of the SDK's texts in the build, `{language}.json` each (scripts/build-sdk.ts). */
const STRINGS_FOLDER = 'strings'

/** The vendors' own paths of their page scripts (Turnstile, reCAPTCHA and its Enterprise, hCaptcha), served as compat.js. */
export const VENDOR_SCRIPT_PATHS = ['/turnstile/v0/api.js', '/recaptcha/api.js', '/recaptcha/enterprise.js', '/1/api.js'] as const

/**
 * Whether If-None-Match names `etag` (or is `*`), compared weakly as RFC 9110 asks of it: a
 * cache that holds several encodings of a file sends their ETags as one list, and one that
 * weakened an ETag (`W/"..."`) still means the same bytes.
 */
function isEtagListed(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false
  return ifNoneMatch.split(',').some((listed) => {
    const tag = listed.trim()
    return tag === '*' || tag.replace(/^W\//, '') === etag
  })
}

const defaultDirectory = fileURLToPath(new URL('../../../dist/sdk/', import.meta.url))

/**
 * Cache lifetimes. The worker and the WebAssembly have content hashes in their names, so a
 * browser may keep them for a year. The entry scripts keep stable URLs that sites paste into
 * their pages: a day, then revalidated with the ETag (a deploy reaches every visitor within a
 * day, and a stale copy may serve while it revalidates).
 */
const IMMUTABLE = 'public, max-age=31536000, immutable'
const STABLE_NAME = 'public, max-age=86400, stale-while-revalidate=604800'

/**
 * The worker runs with its own policy (a worker from a URL gets the CSP of its response): it
 * may fetch and compile the solver next to it and nothing else.
 */
const WORKER_POLICY = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'"

const FileParams = Type.Object({ file: Type.String({ pattern: '^[A-Za-z0-9._-]{1,80}$' }) })

/** Content-hashed files of earlier builds still in the directory: the worker, the WebAssembly, and the pinnable entry scripts. */
const HASHED_NAME = /^(?:tollgate-worker\.[0-9a-f]{12}\.js|tollgate-solver\.[0-9a-f]{12}\.wasm|tollgate\.[0-9a-f]{12}\.m?js|compat\.[0-9a-f]{12}\.js)$/

async function loadAssets(directory: string): Promise<Map<string, Asset>> {
  const manifest = JSON.parse(await readFile(join(directory, 'manifest.json'), 'utf8')) as { files: ManifestFile[] }
  // A browser may hold last build's tollgate.js for a day and ask for the worker and WebAssembly it
  // names, and a page may pin an earlier build's entry script by its hashed name (sdk/README.md,
  // "Subresource Integrity"), so those stay served as long as they are on disk (a rebuild never deletes them).
  const current = new Set(manifest.files.map((file) => file.name))
  const earlier: ManifestFile[] = (await readdir(directory))
    .filter((name) => HASHED_NAME.test(name) && !current.has(name))
    .map((name) => ({ name, contentType: name.endsWith('.wasm') ? 'application/wasm' : 'text/javascript; charset=utf-8', immutable: true }))
  const assets = new Map<string, Asset>()
  for (const file of [...manifest.files, ...earlier]) {
    const body = await readFile(join(directory, file.name))
    const hash = createHash('sha256').update(body).digest('base64url').slice(0, 22)
    // Each encoding is a representation of its own, with its own bytes: a strong ETag per
    // encoding, so that a cache never answers a revalidation of one with the other's bytes.
    const encoded: Asset['encoded'] = {}
    for (const encoding of ENCODINGS) {
      const compressed = await readFile(join(directory, `${file.name}.${EXTENSION_OF[encoding]}`)).catch(() => undefined)
      if (compressed !== undefined) encoded[encoding] = { body: compressed, etag: `"${hash}-${encoding}"` }
    }
    assets.set(file.name, {
      contentType: file.contentType,
      cacheControl: file.immutable ? IMMUTABLE : STABLE_NAME,
      identity: { body, etag: `"${hash}"` },
      encoded,
    })
  }
  return assets
}

/**
 * Serves the browser SDK at /sdk/v1/: tollgate.js (script tag), tollgate.mjs (module), the
 * solver worker and its WebAssembly, and the types of both (tollgate.d.ts). They are public and fetched from any site (the worker
 * cross-origin through a blob bootstrap, the WebAssembly by fetch), hence CORS for everyone.
 * The files are read into memory once and again whenever the build's manifest changes.
 */
const sdkAssets: FastifyPluginAsyncTypebox<SdkAssetsOptions> = async (app, options) => {
  const directory = options.directory ?? defaultDirectory
  let loaded: { manifestTime: number; assets: Map<string, Asset> } | undefined

  async function currentAssets(): Promise<Map<string, Asset> | undefined> {
    let manifestTime: number
    try {
      manifestTime = (await stat(join(directory, 'manifest.json'))).mtimeMs
    } catch {
      return undefined
    }
    if (loaded?.manifestTime !== manifestTime) loaded = { manifestTime, assets: await loadAssets(directory) }
    return loaded.assets
  }

  /**
   * Sends a file of the build, as the SDK's paths and the vendors' script paths answer it. Only
   * the build's own files are found (by their names in its manifest): no path reaches another file.
   */
  async function sendAsset(request: FastifyRequest, reply: FastifyReply, name: string, missing: ErrorCode = 'not_found') {
    // Errors too: a page's SDK reads the status when no worker started (a 5xx is the service's
    // trouble, not the page's), and reads nothing from a cross-origin answer without this.
    void reply.header('access-control-allow-origin', '*')
    const assets = await currentAssets()
    if (assets === undefined) {
      request.log.warn({ directory }, 'the SDK is not built')
      return reply.code(503).header('cache-control', 'no-store')
        .send(errorBody('service_unavailable', request.id, 'The SDK is not built; run `npm run build` (no restart needed).'))
    }
    const asset = assets.get(name)
    if (asset === undefined) {
      return reply.code(404).send(errorBody(missing, request.id, `No SDK file named ${name}.`))
    }
    const encoding = chooseContentEncoding(request.headers['accept-encoding'], ENCODINGS.filter((candidate) => asset.encoded[candidate] !== undefined))
    const sent = (encoding === 'identity' ? undefined : asset.encoded[encoding]) ?? asset.identity
    void reply.headers({
      'content-type': asset.contentType,
      'cache-control': asset.cacheControl,
      etag: sent.etag,
      vary: 'Accept-Encoding',
      'cross-origin-resource-policy': 'cross-origin',
      'x-content-type-options': 'nosniff',
    })
    if (name.startsWith('tollgate-worker.')) void reply.header('content-security-policy', WORKER_POLICY)
    if (isEtagListed(request.headers['if-none-match'], sent.etag)) return reply.code(304).send(null)
    if (encoding !== 'identity') void reply.header('content-encoding', encoding)
    return reply.send(sent.body)
  }

  const binary = { schema: Type.Unsafe<Buffer>({ type: 'string', format: 'binary' }) }
  const script = { 'text/javascript': binary }
  /** The answers of a path serving files of the build, in these media types. */
  const fileResponses = (content: Record<string, { schema: unknown }>) => ({
    200: { description: 'The file (Brotli- or gzip-encoded when the request accepts it)', content },
    304: Type.Null(),
    404: PublicErrorResponse,
    503: PublicErrorResponse,
  })

  app.get('/sdk/v1/:file', {
    schema: {
      tags: ['assets'],
      summary: 'The browser SDK: tollgate.js, tollgate.mjs, compat.js (each also under a content-hashed name), its worker and WebAssembly, its types (tollgate.d.ts), and integrity.json',
      params: FileParams,
      response: fileResponses({
        ...script,
        'application/wasm': binary,
        'text/plain': { schema: Type.Unsafe<string>({ type: 'string', description: "tollgate.d.ts: the SDK's TypeScript types" }) },
        'application/json': {
          schema: Type.Unsafe<Buffer>({
            type: 'object',
            description: "integrity.json: each entry script's content-hashed name and Subresource Integrity, by its stable name",
            additionalProperties: { type: 'object', properties: { pinnedName: { type: 'string' }, integrity: { type: 'string' } } },
          }),
        },
      }),
    },
  }, (request, reply) => sendAsset(request, reply, request.params.file))

  // The SDK fetches its texts in the visitor's language from here (sdk/src/strings.ts, loadStrings).
  app.get(`/sdk/v1/${STRINGS_FOLDER}/:file`, {
    schema: {
      tags: ['assets'],
      summary: "The browser SDK's texts in a language it speaks (de.json, pt.json, ...), every key of its English texts",
      params: FileParams,
      errorCodes: ['unsupported_language'],
      response: {
        200: {
          description: 'The texts by key (Brotli- or gzip-encoded when the request accepts it)',
          content: { 'application/json': { schema: Type.Unsafe<Buffer>({ type: 'object', additionalProperties: { type: 'string' } }) } },
        },
        304: Type.Null(),
        404: PublicErrorResponse,
        503: PublicErrorResponse,
      },
    },
  }, (request, reply) => sendAsset(request, reply, `${STRINGS_FOLDER}/${request.params.file}`, 'unsupported_language'))

  // The vendors' script paths serve compat.js, which then defines that vendor's global only: a
  // site moves its pages by changing the script's host, as it moves Siteverify.
  for (const path of VENDOR_SCRIPT_PATHS) {
    app.get(path, {
      schema: {
        tags: ['assets'],
        summary: `The vendor's page API at its own path (compat.js): ${path}`,
        querystring: Type.Object({}, { additionalProperties: true }),
        response: fileResponses(script),
      },
    }, (request, reply) => sendAsset(request, reply, COMPAT_NAME))
  }
}

export default sdkAssets

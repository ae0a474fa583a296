import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { brotliCompress, constants, gzip } from 'node:zlib'
import { promisify } from 'node:util'
import { defineConfig, type Plugin } from 'vite'

const root = fileURLToPath(new URL('.', import.meta.url))
const outDir = fileURLToPath(new URL('../dist/dashboard', import.meta.url))

const compressBrotli = promisify(brotliCompress)
const compressGzip = promisify(gzip)

/**
 * Writes .br and .gz beside each script and stylesheet; the service serves them with
 * @fastify/static's preCompressed option, so nothing is compressed per request.
 */
function precompressAssets(): Plugin {
  return {
    name: 'tollgate:precompress-assets',
    apply: 'build',
    async writeBundle(_options, bundle) {
      const files = Object.keys(bundle).filter((file) => /\.(js|css|html|svg)$/.test(file))
      await Promise.all(
        files.map(async (file) => {
          const path = join(outDir, file)
          const content = await readFile(path)
          const brotli = await compressBrotli(content, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } })
          await writeFile(`${path}.br`, brotli)
          await writeFile(`${path}.gz`, await compressGzip(content, { level: 9 }))
        }),
      )
    },
  }
}

/**
 * The dashboard is a static single-page app served by the service under /dashboard/
 * (src/routes/assets/dashboard.ts). The build must stay compatible with a strict
 * Content-Security-Policy (script-src 'self'): no inline scripts, no eval, no CDN.
 */
export default defineConfig({
  root,
  base: '/dashboard/',
  // Preact through the automatic JSX runtime; no Babel preset is needed for that.
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  plugins: [precompressAssets()],
  build: {
    outDir,
    emptyOutDir: true,
    target: 'es2022',
    // The polyfill would be injected as code; every supported browser has modulepreload.
    modulePreload: { polyfill: false },
    // Nothing is inlined as a data: URL, so img-src and font-src can stay 'self'.
    assetsInlineLimit: 0,
  },
  server: {
    // Development: `npx vite --config dashboard/vite.config.ts` with the service on :3000.
    proxy: { '/api': { target: 'http://localhost:3000' } },
  },
})

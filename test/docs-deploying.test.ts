import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from './helpers/free-port.js'
import { nginxConfig } from './helpers/nginx-config.js'
import { isCi } from './helpers/services.js'
import { buildTestApp, type TestApp } from './helpers/test-app.js'

const nginx = '/usr/sbin/nginx'
const hasNginx = existsSync(nginx)
if (!hasNginx && isCi) throw new Error('nginx (Debian package nginx) is required under CI')

/**
 * docs/deploying.md's nginx block, as a reader copies it: the instances' addresses made this
 * test's (the first a Tollgate, the second a port nothing listens on), and plain HTTP on a port of
 * its own in place of TLS (the certificate lines aside).
 */
function documentedConfig(directory: string, listenPort: number, instance: string, stopped: string): string {
  const block = /```nginx\n([\s\S]*?)```/.exec(readFileSync('docs/deploying.md', 'utf8'))?.[1]
  if (block === undefined) throw new Error('docs/deploying.md has no nginx block')
  const server = block
    .replace('10.0.0.11:3000', instance)
    .replace('10.0.0.12:3000', stopped)
    .replace('listen 443 ssl;', `listen 127.0.0.1:${listenPort};`)
    .replace(/^\s*ssl_certificate.*$/gm, '')
  return nginxConfig(directory, server)
}

describe.skipIf(!hasNginx)('nginx in front of Tollgate, configured as docs/deploying.md says', () => {
  let service: TestApp
  let proxy: ChildProcess
  let base: string
  let directory: string
  const lines: { msg?: string; proxyRequestId?: string; req?: { url?: string } }[] = []

  beforeAll(async () => {
    service = await buildTestApp({
      env: { TRUST_PROXY: '127.0.0.1', LOG_REQUESTS: 'true' },
      logStream: { write: (line: string) => lines.push(JSON.parse(line) as (typeof lines)[number]) },
    })
    await service.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = service.app.server.address() as AddressInfo
    directory = mkdtempSync(join(tmpdir(), 'tollgate-nginx-'))
    const listenPort = await freePort()
    const file = join(directory, 'nginx.conf')
    writeFileSync(file, documentedConfig(directory, listenPort, `127.0.0.1:${port}`, `127.0.0.1:${await freePort()}`))
    const checked = spawnSync(nginx, ['-t', '-p', directory, '-c', file], { encoding: 'utf8' })
    expect(checked.stderr).toContain('test is successful')
    proxy = spawn(nginx, ['-p', directory, '-c', file, '-g', 'daemon off;'], { stdio: 'ignore' })
    base = `http://127.0.0.1:${listenPort}`
    // nginx listens within moments.
    for (let tries = 0; tries < 100; tries += 1) {
      if (await fetch(`${base}/health`).then(() => true, () => false)) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }, 90_000)

  afterAll(async () => {
    proxy?.kill('SIGTERM')
    await service?.close()
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true })
  })

  it('passes requests on (past the stopped instance), keeps /metrics private, and hands its request id to the log', async () => {
    for (let index = 0; index < 4; index += 1) expect((await fetch(`${base}/ready`)).status).toBe(200)
    expect((await fetch(`${base}/metrics`)).status).toBe(404)
    const answered = await fetch(`${base}/health`)
    const id = answered.headers.get('x-request-id')
    expect(id).toMatch(/^[0-9a-f-]{36}$/)
    // The request's log line carries nginx's id ($request_id: 32 hex digits) beside the service's.
    expect(lines.find((line) => line.req?.url === '/health' && line.proxyRequestId !== undefined)?.proxyRequestId).toMatch(/^[0-9a-f]{32}$/)
  })

  it('while the instance drains, answers its requests and tells /ready 503', async () => {
    const drained = service.app.drain(1_000)
    expect((await fetch(`${base}/ready`)).status).toBe(503)
    const verify = await fetch(`${base}/api/v1/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    // Answered by the instance (a refusal of a submission without a site key), not a 502 of nginx.
    expect(verify.status).toBe(401)
    expect(verify.headers.get('x-request-id')).not.toBeNull()
    await drained
  })
})

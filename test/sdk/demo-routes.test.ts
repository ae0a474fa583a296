import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'

describe('/demo in development', () => {
  let service: TestApp
  beforeAll(async () => {
    service = await buildTestApp({ env: { NODE_ENV: 'development' } })
  })
  afterAll(() => service.close())

  it('serves two protected forms with the demo site key under a strict CSP', async () => {
    const response = await service.app.inject({ method: 'GET', url: '/demo' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8')
    const siteKey = service.app.demoSite?.siteKey ?? 'missing'
    expect(response.body).toContain(`<script src="/sdk/v1/tollgate.js" data-site-key="${siteKey}" async defer></script>`)
    expect(response.body.match(/<form [^>]*data-tollgate/g)).toHaveLength(2)
    expect(response.body).not.toMatch(/<script>|<style>| style=/)
    expect(response.headers['content-security-policy']).toContain("default-src 'none'")
  })

  it('redeems the posted token with Siteverify and shows the refusal of a bad one', async () => {
    const response = await service.app.inject({
      method: 'POST',
      url: '/demo',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'form=signup&email=a%40example.com&tollgate-token=v1.forged',
    })
    expect(response.statusCode).toBe(200)
    expect(response.body).toContain('Siteverify rejected the token.')
    expect(response.body).toMatch(/data-field="error-codes">invalid-input-response</)
  })

  it('shows a missing token as missing-input-response', async () => {
    const response = await service.app.inject({
      method: 'POST',
      url: '/demo',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'form=contact&message=hi',
    })
    expect(response.body).toMatch(/data-field="error-codes">missing-input-response</)
  })
})

describe('/demo without a demo site', () => {
  let service: TestApp
  beforeAll(async () => {
    service = await buildTestApp()
  })
  afterAll(() => service.close())

  it('explains where the demo site comes from', async () => {
    const response = await service.app.inject({ method: 'GET', url: '/demo' })
    expect(response.statusCode).toBe(200)
    expect(response.body).toContain('There is no demo site in this environment')
  })
})

describe('/demo in production', () => {
  let service: TestApp
  beforeAll(async () => {
    service = await buildTestApp({ env: { NODE_ENV: 'production' } })
  })
  afterAll(() => service.close())

  it('does not exist', async () => {
    const response = await service.app.inject({ method: 'GET', url: '/demo' })
    expect(response.statusCode).toBe(404)
  })
})

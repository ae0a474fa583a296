import { describe, expect, it } from 'vitest'
import { urlWithoutPassword } from '../../src/storage/url-without-password.js'

describe('a service URL as the logs show it', () => {
  it('keeps the host, the user and the database, and drops every password the clients would read', () => {
    expect(urlWithoutPassword('redis://:s3cret@cache.internal:6380/2')).toBe('redis://cache.internal:6380/2')
    expect(urlWithoutPassword('postgres://tollgate:s3cret@db.internal/tollgate?sslmode=require')).toBe('postgres://tollgate@db.internal/tollgate?sslmode=require')
    expect(urlWithoutPassword('redis://cache.internal?password=s3cret&db=1')).toBe('redis://cache.internal?db=1')
    // ioredis takes any option from the query, the sentinels' password among them.
    expect(urlWithoutPassword('redis://cache.internal?sentinelPassword=s3cret&name=mymaster&Password=again')).toBe('redis://cache.internal?name=mymaster')
    expect(urlWithoutPassword('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379')
  })
})

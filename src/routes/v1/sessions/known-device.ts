import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../../../config.js'
import { hmacSha256, isSameInConstantTime, type MacKey } from '../../../domain/mac.js'
import { hostCookieName } from '../../../plugins/authentication.js'

/**
 * A browser that has logged in to an account before carries a signed cookie naming that account
 * (by its e-mail key, as the budgets do) for 90 days. Its password checks skip the account-wide
 * budget, so that strangers spending it from many addresses cannot lock the owner out of their
 * own account; every other budget still applies (OWASP's "device cookies").
 */
const DEVICE_LIFETIME_MS = 90 * 86_400_000

export function deviceCookieName(config: Pick<Config, 'environment'>): string {
  return hostCookieName('tollgate_device', config)
}

function macOf(key: MacKey, emailKey: string, expiresAt: number): string {
  return hmacSha256(key, `device:${emailKey}:${expiresAt}`).toString('base64url')
}

export function rememberDevice(reply: FastifyReply, key: MacKey, emailKey: string, config: Pick<Config, 'environment'>, now = Date.now()): void {
  const expiresAt = now + DEVICE_LIFETIME_MS
  void reply.setCookie(deviceCookieName(config), `${expiresAt}.${macOf(key, emailKey, expiresAt)}`, {
    path: '/',
    httpOnly: true,
    sameSite: 'strict',
    secure: config.environment === 'production',
    expires: new Date(expiresAt),
  })
}

/** Whether the request comes from a browser that has logged in to the account of `emailKey`. */
export function isKnownDevice(request: FastifyRequest, key: MacKey, emailKey: string, config: Pick<Config, 'environment'>, now = Date.now()): boolean {
  const [expires = '', mac = ''] = (request.cookies[deviceCookieName(config)] ?? '').split('.')
  if (!/^\d{1,15}$/.test(expires) || Number(expires) < now) return false
  const expected = Buffer.from(macOf(key, emailKey, Number(expires)))
  const given = Buffer.from(mac)
  return isSameInConstantTime(expected, given)
}

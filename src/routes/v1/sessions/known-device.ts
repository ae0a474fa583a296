import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../../../config.js'
import { hmacSha256, isSameInConstantTime, type MacKey } from '../../../domain/mac.js'
import { hostCookieName } from '../../../plugins/authentication.js'

/**
 * A browser that has logged in to an account before carries a signed cookie naming that account
 * (by its e-mail key, as the budgets do) for 90 days. Its password checks skip the account-wide
 * budget, so that strangers spending it from many addresses cannot lock the owner out of their
 * own account; every other budget still applies (OWASP's "device cookies"). A second cookie of the
 * same kind names a browser that has passed the account's second factor since two-factor was
 * turned on (its time is signed in): its codes skip the second factor's account-wide budget. A
 * browser that only ever gave the password (someone who has it, say) never gets that one.
 */
const DEVICE_LIFETIME_MS = 90 * 86_400_000

/** Whom a device cookie vouches for: its name, and what its signature covers. */
export interface DeviceScope {
  cookie: 'tollgate_device' | 'tollgate_device_2fa'
  subject: string
}

/** A browser that logged in to the account of `emailKey`. */
export function passwordDevice(emailKey: string): DeviceScope {
  return { cookie: 'tollgate_device', subject: emailKey }
}

/** A browser that passed the second factor of that account since two-factor was turned on at `enabledAt`. */
export function secondFactorDevice(emailKey: string, enabledAt: Date): DeviceScope {
  return { cookie: 'tollgate_device_2fa', subject: `second-factor:${emailKey}:${enabledAt.getTime()}` }
}

export function deviceCookieName(config: Pick<Config, 'environment'>, cookie: DeviceScope['cookie'] = 'tollgate_device'): string {
  return hostCookieName(cookie, config)
}

function macOf(key: MacKey, subject: string, expiresAt: number): string {
  return hmacSha256(key, `device:${subject}:${expiresAt}`).toString('base64url')
}

export function rememberDevice(reply: FastifyReply, key: MacKey, scope: DeviceScope, config: Pick<Config, 'environment'>, now = Date.now()): void {
  const expiresAt = now + DEVICE_LIFETIME_MS
  void reply.setCookie(deviceCookieName(config, scope.cookie), `${expiresAt}.${macOf(key, scope.subject, expiresAt)}`, {
    path: '/',
    httpOnly: true,
    sameSite: 'strict',
    secure: config.environment === 'production',
    expires: new Date(expiresAt),
  })
}

/** Whether the request comes from a browser the scope's cookie vouches for. */
export function isKnownDevice(request: FastifyRequest, key: MacKey, scope: DeviceScope, config: Pick<Config, 'environment'>, now = Date.now()): boolean {
  const [expires = '', mac = ''] = (request.cookies[deviceCookieName(config, scope.cookie)] ?? '').split('.')
  if (!/^\d{1,15}$/.test(expires) || Number(expires) < now) return false
  const expected = Buffer.from(macOf(key, scope.subject, Number(expires)))
  const given = Buffer.from(mac)
  return isSameInConstantTime(expected, given)
}

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
 *
 * The first cookie also signs the account's id and credential epoch (migration 040), which a
 * password change, set-password, end-sessions, disable, enable and "log out everywhere else" bump:
 * each voids every such cookie, copies included. A cookie is a bearer value all the same, so the
 * addresses one cookie spares are capped too (rate-limits.ts knownDeviceAddressLimit).
 */
const DEVICE_LIFETIME_MS = 90 * 86_400_000

/** Whom a device cookie vouches for: its name, and what its signature covers. */
export interface DeviceScope {
  cookie: 'tollgate_device' | 'tollgate_device_2fa'
  subject: string
}

/** What of the account a known-browser cookie is bound to: it, and its credentials as they are now. */
export interface CredentialBinding {
  id: string
  credentialEpoch: number
}

/** A browser that logged in to the account of `emailKey` since its credentials last changed. */
export function passwordDevice(emailKey: string, account: CredentialBinding): DeviceScope {
  return { cookie: 'tollgate_device', subject: `${emailKey}:${account.id}:${account.credentialEpoch}` }
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

/**
 * The signature of the request's cookie for the scope when it vouches for the browser (it names
 * that cookie among its copies, for counting the addresses it comes from), else undefined.
 */
export function knownDeviceSignature(request: FastifyRequest, key: MacKey, scope: DeviceScope, config: Pick<Config, 'environment'>, now = Date.now()): string | undefined {
  const [expires = '', mac = ''] = (request.cookies[deviceCookieName(config, scope.cookie)] ?? '').split('.')
  if (!/^\d{1,15}$/.test(expires) || Number(expires) < now) return undefined
  const expected = Buffer.from(macOf(key, scope.subject, Number(expires)))
  return isSameInConstantTime(expected, Buffer.from(mac)) ? mac : undefined
}

/** Whether the request comes from a browser the scope's cookie vouches for. */
export function isKnownDevice(request: FastifyRequest, key: MacKey, scope: DeviceScope, config: Pick<Config, 'environment'>, now = Date.now()): boolean {
  return knownDeviceSignature(request, key, scope, config, now) !== undefined
}

import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { consumeRateLimit, refundRateLimit, type RateLimitRule } from '../../../domain/rate-limit.js'
import { ApiError } from '../../../errors.js'
import type { KeyValueStore } from '../../../storage/ports.js'
import type { AccountWithPassword } from '../../../storage/sql/account-repository.js'
import { isKnownDevice, knownDeviceSignature, passwordDevice, secondFactorDevice } from '../sessions/known-device.js'

/**
 * A budget an attempt is counted against: its key, its rule, and what it counts, which a refusal
 * names ("Too many <what>; retry in N seconds."), so that the owner locked out of one budget knows
 * which (this browser's address, or everywhere). Budgets of an e-mail address are counted whether
 * or not it has an account: naming one tells nothing about which addresses exist.
 */
export interface RateLimitCheck {
  key: string
  rule: RateLimitRule
  what: string
}

const MINUTE_MS = 60_000

/**
 * Budgets for the two doors that take a password. Per IP (an IPv6 /64 counts as one address)
 * slows one machine guessing many accounts. Per account (per e-mail address, so that it holds for
 * unknown addresses too and reveals nothing about which exist), log-ins have two: a tight one per
 * client, so that one machine's wrong guesses lock out that machine and not the account's owner,
 * and a ten times looser one from everywhere, which slows many machines guessing one account
 * while it takes a hundred attempts from ten or more clients to shut its owner out (a client's
 * attempts beyond its own budget are not counted there; see enforceRateLimits).
 */
export const credentialRateLimits = {
  signUpPerIp: { limit: 20, windowMs: 60 * MINUTE_MS },
  signUpPerEmail: { limit: 5, windowMs: 60 * MINUTE_MS },
  logInPerIp: { limit: 30, windowMs: 10 * MINUTE_MS },
  logInPerEmailAndIp: { limit: 10, windowMs: 10 * MINUTE_MS },
  logInPerEmail: { limit: 100, windowMs: 10 * MINUTE_MS },
  secondFactorPerEmailAndIp: { limit: 5, windowMs: 15 * MINUTE_MS },
  secondFactorPerEmail: { limit: 10, windowMs: 60 * MINUTE_MS },
} satisfies Record<string, RateLimitRule>

/**
 * How many client addresses (IPv6 /64s) one known-browser cookie spares the account's budget from
 * everywhere, per window: the owner's laptop moving between home, office and phone tethering
 * stays known, while a cookie copied to many machines spares only the first few of them; the
 * others count against that budget as strangers do.
 */
export const knownDeviceAddressLimit: RateLimitRule = { limit: 3, windowMs: 10 * MINUTE_MS }

/**
 * The client's part of a rate-limit key: its IPv4 address or IPv6 /64 under the keyed tag the
 * public routes use, so that Redis holds no address in clear.
 */
export function clientKeyOf(app: FastifyInstance, clientIp: string): string {
  return app.clientTags.ofGroup(clientIp)
}

/** Rate-limit keys hold a hash of the address, so Redis holds no e-mail addresses. */
export function emailKeyOf(email: string): string {
  return createHash('sha256').update(email.toLowerCase(), 'utf8').digest('hex').slice(0, 32)
}

/**
 * The budgets a password attempt on an account is counted against, narrowest first: log-ins, and
 * the checks of the current password before changing the account (a session someone else holds
 * must not be a guessing oracle beside the log-in's, and cannot spend the owner's own budget).
 * `emailKey` is the account's (emailKeyOf the address as the database folds it, so that every
 * spelling that reaches the account shares its budgets). A known device (a browser that has
 * logged in to the account before) skips the budget from everywhere, which strangers could
 * otherwise spend to lock the owner out.
 */
export function passwordAttemptBudgets(emailKey: string, client: string, options: { isKnownDevice?: boolean } = {}): RateLimitCheck[] {
  return [
    { key: `login:email-ip:${emailKey}:${client}`, rule: credentialRateLimits.logInPerEmailAndIp, what: 'log-in attempts for this account from this address' },
    { key: `login:ip:${client}`, rule: credentialRateLimits.logInPerIp, what: 'log-in attempts from this address' },
    ...(options.isKnownDevice === true
      ? []
      : [{ key: `login:email:${emailKey}`, rule: credentialRateLimits.logInPerEmail, what: 'log-in attempts for this account from everywhere (a browser that has logged in to it before is spared this limit)' }]),
  ]
}

/**
 * Whether the cookie with this signature is among the first knownDeviceAddressLimit addresses'
 * copies in this window: each address is numbered once, when it first shows the cookie (the
 * signature is hashed, so that the store holds nothing a cookie can be rebuilt from). Two first
 * attempts at once from one address may take two numbers: a miscount that spares fewer, not more.
 */
async function isWithinDeviceAddressLimit(store: KeyValueStore, signature: string, client: string): Promise<boolean> {
  const { limit, windowMs } = knownDeviceAddressLimit
  const window = `known-device:${createHash('sha256').update(signature).digest('hex').slice(0, 32)}:${Math.floor(store.now() / windowMs)}`
  const marker = `${window}:${client}`
  const seen = await store.get(marker)
  if (seen !== null) return Number(seen) <= limit
  const ordinal = await store.increment(window, windowMs)
  await store.setIfAbsent(marker, String(ordinal), windowMs)
  return ordinal <= limit
}

/**
 * Counts a password attempt on the account of `email` (as entered at log-in, or the account's
 * own) against its budgets, as the database folds the address and sparing a known device (one
 * whose cookie signs the account's current credential epoch, from one of the first addresses that
 * showed the cookie in this window) the budget from everywhere; answers the account's e-mail key
 * (which the known-device cookie names) and the account as it was read, if there is one. A caller
 * that has read the account already (`knownAccount`, a change confirmed from its session) passes
 * it, so that it is not read twice.
 */
export async function enforcePasswordAttemptBudgets(
  app: FastifyInstance,
  request: FastifyRequest,
  email: string,
  knownAccount?: AccountWithPassword,
): Promise<{ emailKey: string; account: AccountWithPassword | undefined; attempt: CountedAttempt }> {
  const emailKey = emailKeyOf(await app.accounts.foldEmail(email))
  const account = knownAccount ?? (await app.accounts.findByEmail(email))
  const client = clientKeyOf(app, request.ip)
  const signature = account === undefined ? undefined : knownDeviceSignature(request, app.keyRing.macKeyFor('device'), passwordDevice(emailKey, account), app.config)
  const isKnown = signature !== undefined && (await isWithinDeviceAddressLimit(app.keyValue, signature, client))
  const attempt = await enforceRateLimits(app.keyValue, passwordAttemptBudgets(emailKey, client, { isKnownDevice: isKnown }))
  return { emailKey, account, attempt }
}

/**
 * Counts an attempt at an account's second factor (an authenticator code or a recovery code, after
 * its password was right) against budgets far tighter than the password's: a code has a million
 * values, three of which are right at any moment (the steps either side of now are taken too).
 * Ten attempts an hour from everywhere give someone who has the password about one chance in 1,400
 * a day, while the owner's audit log shows the attempts. A browser that has passed the second
 * factor since two-factor was turned on at `enabledAt` (secondFactorDevice) is spared that budget,
 * so that a stranger with the password cannot lock its owner out; a browser that only ever gave
 * the password is not. A change confirmed from a logged-in session (`sessionId`) counts against
 * that session's own budget too, as large as the account's, which the cookie does not spare: a
 * browser's cookies copied whole carry the session with the cookie, and a new session needs a code.
 */
export async function enforceSecondFactorBudgets(app: FastifyInstance, request: FastifyRequest, emailKey: string, enabledAt: Date, sessionId?: string): Promise<CountedAttempt> {
  const client = clientKeyOf(app, request.ip)
  const isKnown = isKnownDevice(request, app.keyRing.macKeyFor('device'), secondFactorDevice(emailKey, enabledAt), app.config)
  return enforceRateLimits(app.keyValue, [
    { key: `second-factor:email-ip:${emailKey}:${client}`, rule: credentialRateLimits.secondFactorPerEmailAndIp, what: 'wrong two-factor codes for this account from this address' },
    ...(sessionId === undefined ? [] : [{ key: `second-factor:session:${sessionId}`, rule: credentialRateLimits.secondFactorPerEmail, what: 'wrong two-factor codes from this session' }]),
    ...(isKnown ? [] : [{ key: `second-factor:email:${emailKey}`, rule: credentialRateLimits.secondFactorPerEmail, what: 'wrong two-factor codes for this account from everywhere' }]),
  ])
}

/**
 * Counts this attempt against the budgets in order, narrowest first, and throws 429 with
 * Retry-After at the first one spent: an attempt refused by a narrow budget is not counted against
 * the broader ones, so that a client that keeps trying after its own budget is spent does not use
 * up the budget it shares with everyone (an account's log-ins from everywhere).
 */
export async function enforceRateLimits(store: KeyValueStore, checks: RateLimitCheck[]): Promise<CountedAttempt> {
  const counted: { counterKey: string; rule: RateLimitRule }[] = []
  for (const { key, rule, what } of checks) {
    const verdict = await consumeRateLimit(store, key, rule)
    if (verdict.isAllowed) {
      counted.push({ counterKey: verdict.counterKey, rule })
      continue
    }
    const retryAfter = verdict.retryAfterSeconds
    throw new ApiError('rate_limited', `Too many ${what}; retry in ${retryAfter} seconds.`, undefined, { 'retry-after': String(retryAfter) })
  }
  return { refund: () => Promise.all(counted.map(({ counterKey, rule }) => refundRateLimit(store, counterKey, rule))).then(() => undefined) }
}

/**
 * An attempt counted against its budgets, which `refund` gives back: a change the owner confirmed
 * from their session with the right password, or code, spends none of the budgets that slow
 * guessing, so that making keys or changing settings in a row does not lock its owner out of
 * logging in.
 */
export interface CountedAttempt {
  refund: () => Promise<void>
}

/**
 * Gives back an attempt that proved right. Never throws: what it confirmed may be done already
 * (a session opened, a change made), and a key-value store away for a moment costs the owner an
 * attempt, not the answer.
 */
export async function giveBack(request: FastifyRequest, attempt: CountedAttempt): Promise<void> {
  try {
    await attempt.refund()
  } catch (error) {
    request.log.warn({ err: error }, 'could not give back a confirmed attempt to its rate limits')
  }
}

/**
 * Runs `work`, which calls `proveRight` once the code it checks proved right, and then gives the
 * counted attempts back, whatever `work` answers or throws afterwards: a right code is no guess,
 * even when what it confirmed is refused for another reason, while a wrong one spends them all.
 */
export async function givenBackOnceRight<Result>(
  request: FastifyRequest,
  attempts: (CountedAttempt | undefined)[],
  work: (proveRight: () => void) => Promise<Result>,
): Promise<Result> {
  let isRight = false
  try {
    return await work(() => {
      isRight = true
    })
  } finally {
    if (isRight) await Promise.all(attempts.flatMap((attempt) => (attempt === undefined ? [] : [giveBack(request, attempt)])))
  }
}

import { describe, expect, it } from 'vitest'
import { AUDIT_ACTIONS } from '../../src/domain/audit/audit-actions.js'
import type { AuditActor, AuditEvent } from '../../dashboard/src/api/types.js'
import { auditActionGroups, describeActor, describeAuditEvent, describeOrigin } from '../../dashboard/src/lib/audit-events.js'
import { formatDateTime } from '../../dashboard/src/lib/format.js'

const session: AuditActor = {
  type: 'session',
  id: '7d0c4a52-3f1e-4b8a-9c2d-5e6f7a8b9c0d',
  name: 'you@example.com',
  keyPrefix: null,
  clientIp: '198.51.100.7',
  userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:135.0) Gecko/20100101 Firefox/135.0',
}

const shop = { id: '0b6f3c2e-1d4a-4e5b-8c7d-9e0f1a2b3c4d', name: 'Shop' }

function eventOf(action: string, details: Record<string, unknown> = {}, overrides: Partial<AuditEvent> = {}): AuditEvent {
  return { id: 'a3c1e5f7-0000-4000-8000-000000000001', createdAt: '2026-11-29T03:28:34.000Z', action, actor: session, site: shop, details, ...overrides }
}

const siteUpdate = (...changes: { field: string; from: unknown; to: unknown }[]) => describeAuditEvent(eventOf('site.updated', { changes }))

describe("the activity page's sentences", () => {
  it("name a labeled row by the reference the log shows, and the reason by the dashboard's name for it", () => {
    const details = { rowId: '1a2b3c4d-5e6f-4a1b-8c2d-3e4f5a6b7c8d', verificationId: '9f8e7d6c-5b4a-4f3e-8d2c-1b0a9f8e7d6c' }
    expect(describeAuditEvent(eventOf('verification.labeled', { ...details, label: 'legitimate', reason: 'passed_two_factor' }))).toBe(
      'Labeled verification 1a2b3c4d-5e6f of Shop legitimate (Passed two-factor)',
    )
    expect(describeAuditEvent(eventOf('verification.labeled', { ...details, label: 'fraudulent', reason: null }))).toBe('Labeled verification 1a2b3c4d-5e6f of Shop fraudulent')
    expect(describeAuditEvent(eventOf('verification.label_removed', details))).toBe('Removed the label of verification 1a2b3c4d-5e6f of Shop')
  })

  it("say how many of a visitor's verifications an erasure deleted, and by what, without the visitor's address", () => {
    expect(describeAuditEvent(eventOf('verifications.deleted', { filters: ['clientIp', 'device'], count: 3 }))).toBe(
      'Deleted 3 verifications of a visitor (by address and device) from the log of Shop',
    )
    expect(describeAuditEvent(eventOf('verifications.deleted', { filters: ['device'], count: 1 }))).toBe('Deleted 1 verification of a visitor (by device) from the log of Shop')
  })

  it("say what a site's update changed, before and after, by the settings page's names of the fields", () => {
    expect(
      siteUpdate(
        { field: 'blockThreshold', from: 70, to: 60 },
        { field: 'domains', from: ['example.com'], to: ['example.com', 'shop.example.com'] },
      ),
    ).toBe('Changed site Shop: block threshold 70 → 60; allowed domains example.com → example.com, shop.example.com')
    expect(siteUpdate({ field: 'challengeLifetimeSeconds', from: 120, to: 600 })).toBe('Changed site Shop: challenge lifetime 120 → 600 seconds')
    expect(siteUpdate({ field: 'surgeChallengesPerMinute', from: 0, to: 2 })).toBe('Changed site Shop: surge threshold 0 → 2 challenges per minute')
    expect(siteUpdate({ field: 'tokenAddressCheck', from: 'off', to: 'refuse' })).toBe('Changed site Shop: address check at Siteverify off → refuse')
    expect(siteUpdate({ field: 'requireTwoFactor', from: false, to: true })).toBe('Changed site Shop: two-factor required of members no → yes')
    expect(siteUpdate({ field: 'allowedAddresses', from: [], to: ['203.0.113.0/24'] })).toBe('Changed site Shop: allowed addresses none → 203.0.113.0/24')
    expect(siteUpdate({ field: 'name', from: 'Old shop', to: 'Shop' })).toBe('Changed site Shop: name “Old shop” → “Shop”')
    expect(siteUpdate({ field: 'webhookUrl', from: null, to: 'https://hooks.example/t' })).toBe('Changed site Shop: webhook URL none → https://hooks.example/t')
  })

  it('name a field a later server added by its key, and cut a long list short', () => {
    expect(siteUpdate({ field: 'captchaStyle', from: 'light', to: 'dark' })).toBe('Changed site Shop: captchaStyle light → dark')
    const addresses = Array.from({ length: 12 }, (_, index) => `203.0.113.${index}`)
    expect(siteUpdate({ field: 'allowedAddresses', from: [], to: addresses })).toBe(
      `Changed site Shop: allowed addresses none → ${addresses.slice(0, 10).join(', ')} and 2 more`,
    )
  })

  it("tell a webhook secret set, replaced and removed apart, never showing one (only whether one was set is recorded)", () => {
    expect(siteUpdate({ field: 'webhookSecret', from: false, to: true })).toBe('Set a webhook secret for Shop')
    expect(siteUpdate({ field: 'webhookSecret', from: true, to: true })).toBe('Replaced the webhook secret of Shop')
    expect(siteUpdate({ field: 'webhookSecret', from: true, to: false })).toBe('Removed the webhook secret of Shop')
    expect(siteUpdate({ field: 'webhookUrl', from: 'https://hooks.example/t', to: null }, { field: 'webhookSecret', from: true, to: false })).toBe(
      'Changed site Shop: webhook URL https://hooks.example/t → none; removed the webhook secret',
    )
  })

  it("tell when the replaced webhook secret stops signing, never showing one", () => {
    const until = '2026-06-08T08:09:10.000Z'
    expect(siteUpdate({ field: 'webhookSecret', from: true, to: true }, { field: 'previousWebhookSecret', from: null, to: until })).toBe(
      `Replaced the webhook secret of Shop (the previous one signs until ${formatDateTime(until)})`,
    )
    expect(siteUpdate({ field: 'previousWebhookSecret', from: until, to: null })).toBe('Stopped the previous webhook secret of Shop')
    expect(siteUpdate({ field: 'webhookSecret', from: true, to: true }, { field: 'previousWebhookSecret', from: until, to: null })).toBe(
      'Changed site Shop: replaced the webhook secret; stopped the previous webhook secret',
    )
    expect(siteUpdate({ field: 'webhookSecret', from: true, to: false }, { field: 'previousWebhookSecret', from: until, to: null })).toBe('Removed the webhook secret of Shop')
  })

  it('show an action code this dashboard does not know as it is', () => {
    expect(describeAuditEvent(eventOf('site.transferred', { to: 'someone' }))).toBe('Other event: site.transferred (site Shop)')
    expect(describeAuditEvent(eventOf('account.renamed', {}, { site: null }))).toBe('Other event: account.renamed')
  })

  it("say how long a rotated secret key's predecessor works, or that it stopped at once", () => {
    const until = '2026-11-29T05:28:34.000Z'
    expect(describeAuditEvent(eventOf('site.secret_rotated', { previousSecretExpiresAt: until }))).toBe(
      `Rotated the secret key of Shop (the old key valid until ${formatDateTime(until)})`,
    )
    expect(describeAuditEvent(eventOf('site.secret_rotated', { previousSecretExpiresAt: null }))).toBe('Rotated the secret key of Shop (the old key stopped at once)')
  })

  it("name the account's events, API keys by name and prefix, and a deleted site by the name it had", () => {
    expect(describeAuditEvent(eventOf('site.created', { domains: ['shop.example'] }))).toBe('Created site Shop for shop.example')
    expect(describeAuditEvent(eventOf('site.deleted', {}, { site: { id: shop.id, name: 'Gone shop' } }))).toBe('Deleted site Gone shop')
    expect(describeAuditEvent(eventOf('api_key.created', { name: 'deploy', prefix: 'tgak_abcdefg' }, { site: null }))).toBe('Created API key deploy (tgak_abcdefg…)')
    expect(describeAuditEvent(eventOf('account.login_failed', {}, { site: null }))).toBe('Failed log-in (wrong password)')
    expect(describeAuditEvent(eventOf('account.password_changed', { endedSessions: 2 }, { site: null }))).toBe('Changed the password (2 other sessions logged out)')
    expect(describeAuditEvent(eventOf('account.password_changed', { endedSessions: 0 }, { site: null }))).toBe('Changed the password')
    expect(describeAuditEvent(eventOf('session.ended', { sessionId: session.id }, { site: null }))).toBe('Logged out this session')
    expect(describeAuditEvent(eventOf('session.ended', { sessionId: shop.id }, { site: null }))).toBe('Logged out another session')
  })

  it("say a new API key's access and expiry, and nothing of them for a key of full access that does not expire", () => {
    const created = (details: Record<string, unknown>) => describeAuditEvent(eventOf('api_key.created', { name: 'Grafana', prefix: 'tgak_abcdefg', ...details }, { site: null }))
    const until = '2027-01-05T10:00:00.000Z'
    expect(created({ access: 'read', expiresAt: until })).toBe(`Created API key Grafana (tgak_abcdefg…), read only, expires ${formatDateTime(until)}`)
    expect(created({ access: 'read', expiresAt: null })).toBe('Created API key Grafana (tgak_abcdefg…), read only')
    expect(created({ access: 'full', expiresAt: until })).toBe(`Created API key Grafana (tgak_abcdefg…), expires ${formatDateTime(until)}`)
    expect(created({ access: 'full', expiresAt: null })).toBe('Created API key Grafana (tgak_abcdefg…)')
    // A key for some sites only says how many; one for all of them (null) says nothing of them.
    expect(created({ access: 'read', siteIds: ['a', 'b'], expiresAt: null })).toBe('Created API key Grafana (tgak_abcdefg…), read only, for 2 sites only')
    expect(created({ access: 'full', siteIds: ['a'], expiresAt: until })).toBe(`Created API key Grafana (tgak_abcdefg…), for 1 site only, expires ${formatDateTime(until)}`)
    expect(created({ access: 'full', siteIds: null, expiresAt: null })).toBe('Created API key Grafana (tgak_abcdefg…)')
    // A key for some addresses only names up to three of them, and counts a longer list.
    expect(created({ access: 'read', allowedAddresses: ['203.0.113.0/24', '2001:db8::/48'], expiresAt: null })).toBe(
      'Created API key Grafana (tgak_abcdefg…), read only, from 203.0.113.0/24, 2001:db8::/48 only',
    )
    expect(created({ access: 'full', allowedAddresses: ['198.51.100.1', '198.51.100.2', '198.51.100.3', '198.51.100.4'], expiresAt: null })).toBe(
      'Created API key Grafana (tgak_abcdefg…), from 4 addresses only',
    )
    expect(created({ access: 'full', allowedAddresses: null, expiresAt: null })).toBe('Created API key Grafana (tgak_abcdefg…)')
    // An access a later server added goes by its code.
    expect(created({ access: 'deploy', expiresAt: null })).toBe('Created API key Grafana (tgak_abcdefg…), deploy access')
  })

  it("say an API key refused from an address it may not be used from, counted over the hour", () => {
    const refused = (details: Record<string, unknown>) => describeAuditEvent(eventOf('api_key.address_refused', { name: 'deploy', prefix: 'tgak_abcdefg', ...details }, { site: null }))
    expect(refused({ count: 1, addresses: ['198.51.100.7'] })).toBe('Refused the API key: the request came from an address its allowed addresses do not hold')
    expect(refused({ count: 5, addresses: ['198.51.100.7', '198.51.100.8'] })).toBe(
      'Refused the API key: the request came from an address its allowed addresses do not hold, 5 times this hour from 2 addresses',
    )
    // The hour's other refused keys are named; the event's actor is the latest.
    const deploy = { apiKeyId: 'd', name: 'deploy', prefix: 'tgak_abcdefg' }
    expect(refused({ count: 2, addresses: ['198.51.100.7'], variants: [deploy] })).toBe(
      'Refused the API key: the request came from an address its allowed addresses do not hold, 2 times this hour',
    )
    expect(refused({ count: 3, addresses: ['198.51.100.7'], variants: [deploy, { apiKeyId: 'c', name: 'ci', prefix: 'tgak_hijklmn' }] })).toBe(
      'Refused API keys deploy (tgak_abcdefg…) and ci (tgak_hijklmn…): the requests came from addresses their allowed addresses do not hold, 3 times this hour',
    )
  })

  it("say an API key's edit field by field, its sites by count", () => {
    const until = '2027-01-05T10:00:00.000Z'
    const changes = [
      { field: 'name', from: 'ci', to: 'deploy' },
      { field: 'siteIds', from: ['a', 'b'], to: ['a'] },
      { field: 'siteIds', from: ['a'], to: null },
      { field: 'allowedAddresses', from: null, to: ['203.0.113.0/24'] },
      { field: 'expiresAt', from: until, to: null },
    ]
    expect(describeAuditEvent(eventOf('api_key.updated', { name: 'deploy', prefix: 'tgak_abcdefg', changes }, { site: null }))).toBe(
      `Changed API key deploy (tgak_abcdefg…): name ci → deploy; sites 2 sites → 1 site; sites 1 site → all; addresses any → 203.0.113.0/24; expiry ${formatDateTime(until)} → never`,
    )
  })

  it("name what a site was created with beyond the defaults, and count an hour's repeated wrong passwords", () => {
    const settings = [
      { field: 'blockThreshold', from: 70, to: 60 },
      { field: 'webhookUrl', from: null, to: 'https://hooks.slack.com/… (1a2b3c4d)' },
      { field: 'webhookSecret', from: false, to: true },
    ]
    expect(describeAuditEvent(eventOf('site.created', { domains: ['shop.example'], settings }))).toBe(
      'Created site Shop for shop.example with block threshold 60; webhook URL https://hooks.slack.com/… (1a2b3c4d); a webhook secret',
    )
    const attempts = { count: 12, firstAt: '2026-11-29T03:00:01.000Z', addresses: ['198.51.100.7', '198.51.100.8', '198.51.100.9'] }
    expect(describeAuditEvent(eventOf('account.login_failed', attempts, { site: null }))).toBe('Failed log-in (wrong password), 12 times this hour from 3 addresses')
    expect(describeAuditEvent(eventOf('account.login_failed', { count: 1, addresses: ['198.51.100.7'] }, { site: null }))).toBe('Failed log-in (wrong password)')
    const many = { count: 400, addresses: Array.from({ length: 20 }, (_, index) => `198.51.100.${index}`) }
    expect(describeAuditEvent(eventOf('account.password_check_failed', many, { site: null }))).toBe(
      'Gave a wrong current password to change the password or delete the account, 400 times this hour from 20 or more addresses',
    )
    expect(describeAuditEvent(eventOf('account.logged_out', {}, { site: null }))).toBe('Logged out')
  })

  it('name the passkey a change or a log-in concerned', () => {
    const account = (action: string, details: Record<string, unknown> = {}) => describeAuditEvent(eventOf(action, details, { site: null }))
    expect(account('account.passkey_added', { passkeyId: 'p', name: 'Work laptop' })).toBe('Added passkey Work laptop')
    expect(account('account.passkey_renamed', { passkeyId: 'p', from: 'Work laptop', to: 'Phone' })).toBe('Renamed passkey Work laptop to Phone')
    expect(account('account.passkey_removed', { passkeyId: 'p', name: 'Phone' })).toBe('Removed passkey Phone')
    expect(account('account.passkey_removed', { passkeyId: 'p', name: 'Phone', endedSessions: 2 })).toBe('Removed passkey Phone (2 sessions logged out)')
    expect(account('account.passkey_refused', { reason: 'counter', passkeyId: 'p', passkey: 'Phone', count: 1, addresses: ['198.51.100.7'] })).toBe(
      'Refused a log-in with passkey Phone (its signature counter did not go up: a copy of the authenticator?)',
    )
    expect(account('account.passkey_refused', { reason: 'signature', passkeyId: 'p', passkey: 'Phone', count: 3, addresses: ['198.51.100.7'] })).toBe(
      'Refused a log-in with passkey Phone (a signature that does not verify), 3 times this hour',
    )
    expect(account('account.passkey_refused', { reason: 'later', passkeyId: 'p' })).toBe('Refused a log-in with passkey (the answer did not verify)')
    // Every passkey and reason the hour's refusals had, not only the first's.
    const counter = { reason: 'counter', passkeyId: 'p', passkey: 'Phone' }
    const junk = { reason: 'signature', passkeyId: 'p', passkey: 'Phone' }
    const laptop = { reason: 'user_verification', passkeyId: 'l', passkey: 'Laptop' }
    expect(account('account.passkey_refused', { ...junk, count: 4, variants: [junk, counter] })).toBe(
      'Refused a log-in with passkey Phone (a signature that does not verify; its signature counter did not go up: a copy of the authenticator?), 4 times this hour',
    )
    expect(account('account.passkey_refused', { ...counter, count: 3, variants: [counter, laptop, { ...junk, passkeyId: 'q' }] })).toBe(
      'Refused log-ins with passkey Phone (its signature counter did not go up: a copy of the authenticator?), passkey Laptop (no user verification) and passkey Phone (a signature that does not verify), 3 times this hour',
    )
    expect(account('account.logged_in', { passkeyId: 'p', passkey: 'Phone' })).toBe('Logged in with passkey Phone')
    expect(account('account.logged_in')).toBe('Logged in')
  })

  it("tell two-factor authentication's events, and say when the server's operator turned it off", () => {
    const account = (action: string, details: Record<string, unknown> = {}, overrides: Partial<AuditEvent> = {}) =>
      describeAuditEvent(eventOf(action, details, { site: null, ...overrides }))
    expect(account('account.two_factor_enabled')).toBe('Turned on two-factor authentication')
    expect(account('account.two_factor_disabled')).toBe('Turned off two-factor authentication')
    const operator: AuditActor = { type: 'operator', id: null, name: null, keyPrefix: null, clientIp: null, userAgent: null }
    expect(account('account.two_factor_disabled', {}, { actor: operator })).toBe("The server's operator turned off two-factor authentication")
    expect(account('account.disabled', { endedSessions: 2 }, { actor: operator })).toBe("The server's operator disabled the account (2 sessions logged out)")
    expect(account('account.enabled', {}, { actor: operator })).toBe("The server's operator enabled the account again")
    expect(account('account.sessions_ended', { endedSessions: 1 }, { actor: operator })).toBe("The server's operator logged the account out everywhere (1 session logged out)")
    expect(account('account.recovery_codes_regenerated')).toBe('Made new recovery codes (the old ones stopped working)')
    expect(account('account.recovery_code_used', { recoveryCodesLeft: 7 })).toBe('Used a recovery code (7 left)')
    expect(account('account.recovery_code_used', { recoveryCodesLeft: 0 })).toBe('Used a recovery code (none left)')
    expect(account('account.recovery_code_used')).toBe('Used a recovery code')
    expect(account('account.two_factor_asked', { count: 3, firstAt: '2026-11-29T03:00:01.000Z', addresses: ['198.51.100.7'] })).toBe(
      'Gave the right password from a browser that has not passed two-factor, and was asked for the code, 3 times this hour',
    )
    expect(account('account.two_factor_failed', { count: 1, firstAt: '2026-11-29T03:00:01.000Z', addresses: ['198.51.100.7'] })).toBe(
      'Gave the right password but a wrong two-factor code',
    )
    expect(account('account.two_factor_failed', { count: 6, firstAt: '2026-11-29T03:00:01.000Z', addresses: ['198.51.100.7', '198.51.100.8'] })).toBe(
      'Gave the right password but a wrong two-factor code, 6 times this hour from 2 addresses',
    )
  })

  it('say who acted, and from which address and browser', () => {
    expect(describeActor(session)).toBe('you@example.com (dashboard)')
    expect(describeActor({ ...session, type: 'api-key', name: 'deploy', keyPrefix: 'tgak_abcdefg' })).toBe('API key deploy (tgak_abcdefg…)')
    // A key's name is its member's choice: the account it belongs to says whose it is.
    const aliceKey: AuditActor = { ...session, type: 'api-key', name: 'alice-laptop', keyPrefix: 'tgak_W8Xo', accountId: '5c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f', email: 'alice@example.com' }
    expect(describeActor(aliceKey)).toBe('alice@example.com via API key alice-laptop (tgak_W8Xo…)')
    expect(describeActor({ ...aliceKey, email: null })).toBe('API key alice-laptop (tgak_W8Xo…)')
    expect(describeActor({ ...session, type: 'operator', name: null })).toBe('Server operator')
    expect(describeActor({ ...session, type: 'anonymous', id: null, name: null })).toBe('Unknown (not logged in)')
    expect(describeActor({ ...session, type: 'robot' })).toBe('Unknown (robot)')
    expect(describeOrigin(session)).toEqual({ address: '198.51.100.7', browser: 'Firefox on Windows' })
    expect(describeOrigin({ ...session, clientIp: null, userAgent: null })).toEqual({ address: 'Unknown address', browser: undefined })
    expect(describeOrigin({ ...session, type: 'operator', clientIp: null, userAgent: null })).toEqual({ address: 'The server itself', browser: undefined })
  })

  it('say why an invitation was revoked with its inviter', () => {
    const details = { invitationId: 'i', role: 'admin', email: null, invitedBy: 'bob@example.com', reason: 'member_removed' }
    expect(describeAuditEvent(eventOf('site.invitation_revoked', details))).toBe('Revoked the invitation of anyone with the link to Shop (bob@example.com was removed)')
    expect(describeAuditEvent(eventOf('site.invitation_revoked', { ...details, email: 'c@example.com', reason: 'made_viewer' }))).toBe(
      'Revoked the invitation of c@example.com to Shop (bob@example.com was made a viewer)',
    )
    expect(describeAuditEvent(eventOf('site.invitation_revoked', { ...details, reason: 'inviter_disabled' }))).toBe(
      'Revoked the invitation of anyone with the link to Shop (bob@example.com was disabled)',
    )
    expect(describeAuditEvent(eventOf('site.invitation_revoked', { email: null }))).toBe('Revoked the invitation of anyone with the link to Shop')
  })

  it("say whom a site was handed to, and that its previous owner became an admin", () => {
    const details = { accountId: '5c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f', email: 'next@example.com', role: 'viewer', previousOwnerEmail: 'you@example.com' }
    expect(describeAuditEvent(eventOf('site.ownership_transferred', details))).toBe('Made next@example.com the owner of Shop (you@example.com became an admin)')
    expect(describeAuditEvent(eventOf('site.ownership_transferred', {}))).toBe('Made a member the owner of Shop')
  })

  it("offer every action the API records in the filter, once", () => {
    const offered = auditActionGroups.flatMap((group) => group.actions.map((choice) => choice.action))
    expect([...offered].sort()).toEqual([...AUDIT_ACTIONS].sort())
  })
})

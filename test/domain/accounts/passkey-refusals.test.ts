import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server'
import {
  LIBRARY_REFUSALS,
  relyingPartyOf,
  verifyPasskeyRegistration,
  verifyPasskeySignIn,
  type PasskeyRefusal,
  type StoredCredential,
} from '../../../src/domain/accounts/passkeys.js'
import { OWN_ORIGIN } from '../../helpers/dashboard-client.js'
import { createSoftwareAuthenticator, type AnswerOverrides } from '../../helpers/software-authenticator.js'

/**
 * The reasons a refused passkey sign-in is given in its owner's audit log are read from the
 * messages of the installed @simplewebauthn/server, which has no codes for its checks: each
 * message relied on is produced here by the real library, so that an upgrade that rewords one
 * fails this test instead of labelling the refusals it stands for 'other'.
 */
describe("the reasons of refused passkey sign-ins, read from @simplewebauthn/server's messages", () => {
  const party = relyingPartyOf(OWN_ORIGIN)
  const challenge = () => randomBytes(32).toString('base64url')

  /** An authenticator and its passkey as stored after it signed in with counter 5. */
  async function registered() {
    const authenticator = createSoftwareAuthenticator()
    const registrationChallenge = challenge()
    const stored = await verifyPasskeyRegistration(party, authenticator.attest({ challenge: registrationChallenge, rp: { id: party.id } }) as RegistrationResponseJSON, registrationChallenge)
    if ('problem' in stored) throw new Error(`the software authenticator's passkey does not register: ${stored.problem}`)
    return { authenticator, stored: { ...stored, counter: 5 } satisfies StoredCredential }
  }

  async function signIn(overrides: AnswerOverrides, edit: (answer: AuthenticationResponseJSON) => AuthenticationResponseJSON = (answer) => answer) {
    const { authenticator, stored } = await registered()
    const signInChallenge = challenge()
    const answer = edit(authenticator.assert({ challenge: signInChallenge, rpId: party.id }, { counter: 6, ...overrides }) as AuthenticationResponseJSON)
    return verifyPasskeySignIn(party, answer, signInChallenge, stored)
  }

  /** The answer with another type in its client data (the signature then fails too, but is checked after). */
  const withClientDataType = (type: string) => (answer: AuthenticationResponseJSON): AuthenticationResponseJSON => {
    const clientData = JSON.parse(Buffer.from(answer.response.clientDataJSON, 'base64url').toString('utf8')) as Record<string, unknown>
    return { ...answer, response: { ...answer.response, clientDataJSON: Buffer.from(JSON.stringify({ ...clientData, type }), 'utf8').toString('base64url') } }
  }

  /** The answer with `signature` (base64url, or not) in place of the authenticator's. */
  const withSignature = (signature: string) => (answer: AuthenticationResponseJSON): AuthenticationResponseJSON => ({ ...answer, response: { ...answer.response, signature } })
  /** DER of an ECDSA signature cut short: its SEQUENCE announces 68 bytes, its first INTEGER 32, and neither follows. */
  const truncatedSignature = Buffer.from([0x30, 0x44, 0x02, 0x20]).toString('base64url')

  const cases: { name: string; overrides: AnswerOverrides; edit?: Parameters<typeof signIn>[1]; reason: PasskeyRefusal }[] = [
    { name: 'a counter not above the stored one', overrides: { counter: 5 }, reason: 'counter' },
    { name: 'another origin', overrides: { origin: 'https://evil.example' }, reason: 'origin' },
    // The origin is the sender's text within the message: it does not make the refusal another check's.
    { name: 'another origin naming other checks', overrides: { origin: 'https://counter.signature.example' }, reason: 'origin' },
    { name: 'another RP ID', overrides: { rpId: 'evil.example' }, reason: 'rp_id' },
    { name: 'no user verification', overrides: { userVerified: false }, reason: 'user_verification' },
    { name: 'a signature of another key', overrides: { forgeSignature: true }, reason: 'signature' },
    { name: 'a signature that is not base64url', overrides: {}, edit: withSignature('not base64url!'), reason: 'signature' },
    { name: 'a signature that is not DER', overrides: {}, edit: withSignature('AAAA'), reason: 'signature' },
    { name: 'a signature whose DER is cut short', overrides: {}, edit: withSignature(truncatedSignature), reason: 'signature' },
    { name: 'an empty signature', overrides: {}, edit: withSignature(''), reason: 'signature' },
    // The library compares the counters first: an answer nobody signed is not a copied authenticator.
    { name: 'a counter not above the stored one, signed by another key', overrides: { counter: 5, forgeSignature: true }, reason: 'signature' },
    { name: 'a counter not above the stored one, with a signature that is not DER', overrides: { counter: 3 }, edit: withSignature('AAAA'), reason: 'signature' },
    // A check with no reason of its own (the client data's type), its message quoting the sender's words.
    { name: 'a message of no known check', overrides: {}, edit: withClientDataType('webauthn.get counter origin RP ID signature'), reason: 'other' },
  ]

  it.each(cases)('refuses $name with the reason $reason', async ({ overrides, edit, reason }) => {
    const verdict = await signIn(overrides, edit)
    expect(verdict).toEqual({ problem: expect.any(String), reason })
  })

  it('signs in with the answer none of those spoil, so that each refusal above is its own check', async () => {
    expect(await signIn({})).toEqual({ newCounter: 6 })
  })

  it('produces every message it reads a reason from with the installed library (none left untested)', async () => {
    const problems = await Promise.all(cases.map(async ({ overrides, edit }) => {
      const verdict = await signIn(overrides, edit)
      return 'problem' in verdict ? verdict.problem : ''
    }))
    for (const { reason, message } of LIBRARY_REFUSALS) expect(problems.some((problem) => message.test(problem)), `${reason}: ${message}`).toBe(true)
  })
})

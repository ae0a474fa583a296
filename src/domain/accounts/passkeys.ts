import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransportFuture,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server'

/**
 * Passkeys (WebAuthn discoverable credentials) of dashboard accounts, checked by
 * @simplewebauthn/server. Every check asks for user verification (a PIN, a fingerprint, the
 * device's lock), so that a passkey is two factors in one: what the account holder has (the
 * authenticator) and what they know or are. A passkey sign-in is therefore not asked for an
 * authenticator app's code afterwards.
 */

/** A list an owner reads at a glance, and keys for a phone, a laptop and a spare or two. */
export const MAX_PASSKEYS_PER_ACCOUNT = 10
export const PASSKEY_NAME_MAX_LENGTH = 100
/** How long the browser has to answer a challenge: the person finds the authenticator and unlocks it. */
export const PASSKEY_CHALLENGE_LIFETIME_MS = 5 * 60_000
const RELYING_PARTY_NAME = 'Tollgate'

/**
 * Who passkeys are made for: the dashboard's origin (PUBLIC_URL, else the request's) and its host
 * name as the RP ID. A passkey is bound to the RP ID: one made on another host name, or on a page
 * of another origin, does not sign for this one.
 */
export interface RelyingParty {
  id: string
  origin: string
}

export function relyingPartyOf(origin: string): RelyingParty {
  return { id: new URL(origin).hostname, origin }
}

/** The key-value store's key of an outstanding sign-in challenge: one key per challenge, taken once. */
export function passkeyChallengeKey(challenge: string): string {
  return `passkey-challenge:${challenge}`
}

/**
 * The key-value store's key of a session's outstanding registration challenge: one per session,
 * each options call overwriting the one before, so that a session keeps one challenge at a time
 * however often it asks (the store holds at most one per live session).
 */
export function passkeyRegistrationKey(sessionId: string): string {
  return `passkey-registration:${sessionId}`
}

/** What an outstanding sign-in challenge was issued for. */
export type PasskeyChallengePurpose = { purpose: 'sign-in' }

/**
 * The user handle of an account's passkeys: the bytes of its id (registrationOptionsFor's userID),
 * base64url as the browser's answer carries it.
 */
export function userHandleOf(accountId: string): string {
  return Buffer.from(new TextEncoder().encode(accountId)).toString('base64url')
}

/** Why a sign-in answer of a known passkey was refused, for the owner's audit log. */
export type PasskeyRefusal = 'counter' | 'signature' | 'user_verification' | 'origin' | 'rp_id' | 'user_handle' | 'other'

/** A passkey as stored: its credential id and public key in base64url. */
export interface StoredCredential {
  credentialId: string
  publicKey: string
  counter: number
  transports: string[]
}

/** A check that did not pass, in words for the error's message (and, for a sign-in, its kind). */
export interface PasskeyProblem {
  problem: string
  reason?: PasskeyRefusal
}

/**
 * The challenge a browser's answer was made for, read from its clientDataJSON (base64url JSON) so
 * that the outstanding challenge can be looked up and taken; undefined when it cannot be read. The
 * signature checks come after, on the challenge taken.
 */
export function challengeOfAnswer(clientDataJSON: string): string | undefined {
  try {
    const clientData: unknown = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'))
    const challenge = typeof clientData === 'object' && clientData !== null ? (clientData as { challenge?: unknown }).challenge : undefined
    return typeof challenge === 'string' && challenge !== '' ? challenge : undefined
  } catch {
    return undefined
  }
}

/** Registration options for navigator.credentials.create: a discoverable, user-verified credential. */
export function registrationOptionsFor(
  party: RelyingParty,
  account: { id: string; email: string },
  existing: Pick<StoredCredential, 'credentialId' | 'transports'>[],
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return generateRegistrationOptions({
    rpName: RELYING_PARTY_NAME,
    rpID: party.id,
    userName: account.email,
    userID: new TextEncoder().encode(account.id),
    attestationType: 'none',
    // The authenticator refuses to make a second passkey of this account where it holds one.
    excludeCredentials: existing.map(({ credentialId, transports }) => ({ id: credentialId, transports: transports as AuthenticatorTransportFuture[] })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    timeout: PASSKEY_CHALLENGE_LIFETIME_MS,
  })
}

/** Sign-in options for navigator.credentials.get: no credentials listed, the browser offers the passkeys it holds for this host. */
export function signInOptionsFor(party: RelyingParty): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return generateAuthenticationOptions({ rpID: party.id, userVerification: 'required', timeout: PASSKEY_CHALLENGE_LIFETIME_MS })
}

/**
 * The checks of @simplewebauthn/server's verifyAuthenticationResponse (13.3.3) that throw, by the
 * message each throws: the library throws plain Errors, with no code to tell them apart (its RP ID
 * check's UnexpectedRPIDHash aside, a class it does not export), so the message is what there is.
 * Each pattern is anchored at the message's start, which is the library's own text: the parts it
 * quotes from the answer (an origin, a client data type) are the sender's, and must not pick the
 * reason. A message none of them matches, such as one an upgrade reworded, is 'other', never
 * another check's reason; test/domain/accounts/passkey-refusals.test.ts pins every one against the
 * installed library, so that a reworded message fails a test rather than turning into 'other'.
 * A signature that is readable but wrong is no message (the library answers verified false); one
 * that cannot be read is: not base64url, or not the DER an EC2 key's signature is (empty,
 * truncated, another structure: the ASN.1 parser's messages, which quote nothing of the answer).
 */
export const LIBRARY_REFUSALS: readonly { reason: PasskeyRefusal; message: RegExp }[] = [
  { reason: 'counter', message: /^Response counter value \d+ was lower than expected \d+$/ },
  { reason: 'origin', message: /^Unexpected authentication response origin "/ },
  { reason: 'rp_id', message: /^Unexpected RP ID hash$/ },
  { reason: 'user_verification', message: /^User verification required, but user could not be verified$/ },
  { reason: 'signature', message: /^Credential response signature was not a base64url string$/ },
  { reason: 'signature', message: /^Data does not match to ECDSASigValue ASN1 schema\./ },
  { reason: 'signature', message: /^End of input reached before message was fully decoded( \(|$)/ },
  { reason: 'signature', message: /^Input buffer has zero length$/ },
]

/** The kind of check @simplewebauthn's message names: 'other' for a message it is not known to throw. */
function refusalOf(message: string): PasskeyRefusal {
  return LIBRARY_REFUSALS.find((refusal) => refusal.message.test(message))?.reason ?? 'other'
}

/** Why @simplewebauthn refused an answer: its message names the check (origin, RP ID, counter...). */
function problemOf(error: unknown): PasskeyProblem {
  const problem = error instanceof Error ? error.message : 'the answer could not be read'
  return { problem, reason: refusalOf(problem) }
}

/** Checks a registration answer made for `challenge`: the credential to store, or why not. */
export async function verifyPasskeyRegistration(
  party: RelyingParty,
  answer: RegistrationResponseJSON,
  challenge: string,
): Promise<StoredCredential | PasskeyProblem> {
  try {
    const { verified, registrationInfo } = await verifyRegistrationResponse({
      response: answer,
      expectedChallenge: challenge,
      expectedOrigin: party.origin,
      expectedRPID: party.id,
      requireUserVerification: true,
    })
    if (!verified || registrationInfo === undefined) return { problem: 'the attestation does not verify' }
    const { credential } = registrationInfo
    return {
      credentialId: credential.id,
      publicKey: Buffer.from(credential.publicKey).toString('base64url'),
      counter: credential.counter,
      transports: answer.response.transports ?? [],
    }
  } catch (error) {
    return problemOf(error)
  }
}

/**
 * Checks a sign-in answer made for `challenge` by the stored passkey: the signature over the
 * authenticator data and the client data, the origin, the RP ID, user verification, and the
 * signature counter (a counter not above the stored one, when either is non-zero, is refused: a
 * copy of the authenticator). Answers the counter to store, or why not.
 *
 * The library compares the counters before it checks the signature, so an answer anyone who knows
 * a credential ID can write (a low counter, any signature) would read as a copied authenticator in
 * its owner's log. A counter refusal is therefore checked again with no counter to compare (0
 * stored passes any): an answer that fails then is filed under what failed (the signature...),
 * and only one the passkey signed is filed as a counter.
 */
export async function verifyPasskeySignIn(
  party: RelyingParty,
  answer: AuthenticationResponseJSON,
  challenge: string,
  stored: StoredCredential,
): Promise<{ newCounter: number } | PasskeyProblem> {
  const verdict = await verifyAgainstCounter(party, answer, challenge, stored, stored.counter)
  if (!('problem' in verdict) || verdict.reason !== 'counter') return verdict
  const signed = await verifyAgainstCounter(party, answer, challenge, stored, 0)
  return 'problem' in signed ? signed : verdict
}

/** verifyPasskeySignIn's checks, the stored counter taken as `counter`. */
async function verifyAgainstCounter(
  party: RelyingParty,
  answer: AuthenticationResponseJSON,
  challenge: string,
  stored: StoredCredential,
  counter: number,
): Promise<{ newCounter: number } | PasskeyProblem> {
  try {
    const { verified, authenticationInfo } = await verifyAuthenticationResponse({
      response: answer,
      expectedChallenge: challenge,
      expectedOrigin: party.origin,
      expectedRPID: party.id,
      credential: {
        id: stored.credentialId,
        publicKey: new Uint8Array(Buffer.from(stored.publicKey, 'base64url')),
        counter,
        transports: stored.transports as AuthenticatorTransportFuture[],
      },
      requireUserVerification: true,
    })
    if (!verified) return { problem: 'the signature does not verify', reason: 'signature' }
    if (!authenticationInfo.userVerified) return { problem: 'the user was not verified', reason: 'user_verification' }
    return { newCounter: authenticationInfo.newCounter }
  } catch (error) {
    return problemOf(error)
  }
}

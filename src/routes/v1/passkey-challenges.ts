import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import {
  challengeOfAnswer,
  PASSKEY_CHALLENGE_LIFETIME_MS,
  passkeyChallengeKey,
  passkeyRegistrationKey,
  relyingPartyOf,
  type PasskeyChallengePurpose,
  type RelyingParty,
} from '../../domain/accounts/passkeys.js'
import { ApiError } from '../../errors.js'
import { expectedOrigin } from '../../plugins/authentication.js'

/**
 * What the passkey routes share: the relying party of a request, the schemas of the browser's
 * answers (the JSON @simplewebauthn/browser makes of a PublicKeyCredential), and the challenges
 * outstanding in the key-value store, each taken once.
 */

/** The dashboard's origin (PUBLIC_URL, else the request's scheme and Host) and its host name as the RP ID. */
export function relyingPartyOfRequest(app: FastifyInstance, request: FastifyRequest): RelyingParty {
  const origin = expectedOrigin(request, app.config)
  if (origin === undefined) throw new ApiError('validation_error', 'The request names no host that a passkey could be made for (its Host header).')
  return relyingPartyOf(origin)
}

const base64url = (maxLength: number, description: string) => Type.String({ maxLength, pattern: '^[A-Za-z0-9_-]*={0,2}$', description })

/** What both kinds of answers carry; the browser's other fields (authenticatorAttachment...) are let through. */
const answerProperties = {
  id: base64url(1400, 'The credential id, base64url'),
  rawId: base64url(1400, 'The same, as the browser gives it'),
  type: Type.Literal('public-key'),
  clientExtensionResults: Type.Optional(Type.Object({})),
  authenticatorAttachment: Type.Optional(Type.String({ maxLength: 40 })),
}

export const RegistrationAnswer = Type.Object(
  {
    ...answerProperties,
    response: Type.Object({
      clientDataJSON: base64url(4000, 'base64url'),
      attestationObject: base64url(8000, 'base64url'),
      transports: Type.Optional(Type.Array(Type.String({ maxLength: 40 }), { maxItems: 10 })),
    }),
  },
  { description: "The browser's answer to navigator.credentials.create with the registration options (PublicKeyCredential.toJSON())" },
)

export const SignInAnswer = Type.Object(
  {
    ...answerProperties,
    response: Type.Object({
      clientDataJSON: base64url(4000, 'base64url'),
      authenticatorData: base64url(4000, 'base64url'),
      signature: base64url(1000, 'base64url'),
      userHandle: Type.Optional(base64url(200, 'base64url')),
    }),
  },
  { description: "The browser's answer to navigator.credentials.get with the sign-in options (PublicKeyCredential.toJSON())" },
)

/** Options for the browser (navigator.credentials.create or get): @simplewebauthn's JSON, passed on as it is. */
export const PasskeyOptions = Type.Object(
  { challenge: Type.String({ description: 'base64url; answerable once, within 5 minutes' }), rpId: Type.Optional(Type.String()) },
  { additionalProperties: true, description: 'PublicKeyCredentialCreationOptionsJSON or PublicKeyCredentialRequestOptionsJSON, for @simplewebauthn/browser or PublicKeyCredential.parse*OptionsFromJSON' },
)

/** Keeps an issued sign-in challenge for its lifetime. */
export async function keepPasskeyChallenge(app: FastifyInstance, challenge: string, purpose: PasskeyChallengePurpose): Promise<void> {
  await app.keyValue.set(passkeyChallengeKey(challenge), JSON.stringify(purpose), PASSKEY_CHALLENGE_LIFETIME_MS)
}

/**
 * Takes the sign-in challenge an answer names, atomically (of two requests with one answer, one
 * gets it): undefined when it is unknown, expired or was taken already. Registration challenges
 * are kept under their session's key, never under a challenge's: one cannot be answered here.
 */
export async function takePasskeyChallenge(app: FastifyInstance, clientDataJSON: string): Promise<{ challenge: string; purpose: PasskeyChallengePurpose } | undefined> {
  const challenge = challengeOfAnswer(clientDataJSON)
  if (challenge === undefined) return undefined
  const value = (await app.keyValue.take(passkeyChallengeKey(challenge)))?.value
  return value === undefined || value === null ? undefined : { challenge, purpose: JSON.parse(value) as PasskeyChallengePurpose }
}

/** The stored value of a session's registration challenge: the account, then the challenge (base64url, so no ':' of its own). */
const registrationValue = (accountId: string, challenge: string) => `${accountId}:${challenge}`

/**
 * Keeps a session's registration challenge for its lifetime, in place of the one it asked for
 * before (if any): a session has one outstanding at a time, so asking again and again holds no
 * more of the store than asking once.
 */
export async function keepRegistrationChallenge(app: FastifyInstance, sessionId: string, accountId: string, challenge: string): Promise<void> {
  await app.keyValue.set(passkeyRegistrationKey(sessionId), registrationValue(accountId, challenge), PASSKEY_CHALLENGE_LIFETIME_MS)
}

/**
 * The challenge a registration answer names, when it is the session's outstanding one for this
 * account (left outstanding: a wrong password leaves the answer to be sent again); undefined when
 * it is unknown, expired, replaced by a later options call, used, or another session's.
 */
export async function peekRegistrationChallenge(app: FastifyInstance, sessionId: string, accountId: string, clientDataJSON: string): Promise<string | undefined> {
  const challenge = challengeOfAnswer(clientDataJSON)
  if (challenge === undefined) return undefined
  const value = await app.keyValue.get(passkeyRegistrationKey(sessionId))
  return value === registrationValue(accountId, challenge) ? challenge : undefined
}

/**
 * Takes the session's registration challenge, atomically and only while it is still `challenge`
 * (a later options call's is left as it is): false when it is gone, replaced or taken already.
 */
export async function takeRegistrationChallenge(app: FastifyInstance, sessionId: string, accountId: string, challenge: string): Promise<boolean> {
  return (await app.keyValue.takeIfEndsWith(passkeyRegistrationKey(sessionId), registrationValue(accountId, challenge))) !== null
}

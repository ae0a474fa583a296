import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto'
import type { App } from '../../src/app.js'
import { asBrowser, OWN_ORIGIN, randomClientAddress, type TestAccount } from './dashboard-client.js'

/**
 * A passkey authenticator in software, for API tests: an ES256 (P-256) key pair made with
 * node:crypto, answers built byte for byte as WebAuthn says (authenticator data, a "none"
 * attestation in CBOR, client data JSON) and assertions signed over authenticatorData ||
 * SHA-256(clientDataJSON). It always verifies its user (UV) and counts its signatures.
 */

/** CBOR (RFC 8949) of what an attestation holds: unsigned and negative integers, byte and text strings, maps. */
type CborValue = number | string | Uint8Array | Map<CborValue, CborValue>

function cborHead(majorType: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(majorType << 5) | length])
  if (length < 0x100) return Buffer.from([(majorType << 5) | 24, length])
  if (length < 0x10000) return Buffer.from([(majorType << 5) | 25, length >> 8, length & 0xff])
  const head = Buffer.alloc(5)
  head[0] = (majorType << 5) | 26
  head.writeUInt32BE(length, 1)
  return head
}

function cbor(value: CborValue): Buffer {
  if (typeof value === 'number') return value >= 0 ? cborHead(0, value) : cborHead(1, -1 - value)
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8')
    return Buffer.concat([cborHead(3, bytes.length), bytes])
  }
  if (value instanceof Uint8Array) return Buffer.concat([cborHead(2, value.length), value])
  return Buffer.concat([cborHead(5, value.size), ...[...value].flatMap(([key, item]) => [cbor(key), cbor(item)])])
}

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest()

const FLAG_USER_PRESENT = 0x01
const FLAG_USER_VERIFIED = 0x04
const FLAG_ATTESTED_CREDENTIAL = 0x40

export interface AnswerOverrides {
  /** The page's origin the browser writes into the client data (default: the test's own). */
  origin?: string
  /** The RP ID whose hash the authenticator data starts with (default: the options'). */
  rpId?: string
  /** The signature counter to send (default: one more than the last). */
  counter?: number
  /** Whether the user was verified (default: true). */
  userVerified?: boolean
  /** Signs with another key than the credential's (a forged answer). */
  forgeSignature?: boolean
  /** The user handle (base64url) a sign-in answer carries; none by default. */
  userHandle?: string
}

export function createSoftwareAuthenticator() {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const credentialId = randomBytes(32)
  let counter = 0

  const coseKey = (key: KeyObject) => {
    const { x, y } = key.export({ format: 'jwk' })
    // COSE_Key: kty EC2 (2), alg ES256 (-7), crv P-256 (1), x, y.
    return cbor(new Map<CborValue, CborValue>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.from(x ?? '', 'base64url')], [-3, Buffer.from(y ?? '', 'base64url')]]))
  }

  const authenticatorData = (rpId: string, flags: number, signCount: number, attested?: Buffer) => {
    const count = Buffer.alloc(4)
    count.writeUInt32BE(signCount)
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), count, ...(attested === undefined ? [] : [attested])])
  }

  const clientData = (type: string, challenge: string, origin: string) => Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }), 'utf8')
  const flagsOf = (overrides: AnswerOverrides) => FLAG_USER_PRESENT | (overrides.userVerified === false ? 0 : FLAG_USER_VERIFIED)

  return {
    credentialId: credentialId.toString('base64url'),

    /** The answer of navigator.credentials.create to registration options, as PublicKeyCredential.toJSON() gives it. */
    attest(options: { challenge: string; rp: { id?: string } }, overrides: AnswerOverrides = {}) {
      const idLength = Buffer.alloc(2)
      idLength.writeUInt16BE(credentialId.length)
      const attested = Buffer.concat([Buffer.alloc(16), idLength, credentialId, coseKey(publicKey)])
      const authData = authenticatorData(overrides.rpId ?? options.rp.id ?? 'localhost', flagsOf(overrides) | FLAG_ATTESTED_CREDENTIAL, counter, attested)
      const attestationObject = cbor(new Map<CborValue, CborValue>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]))
      return {
        id: credentialId.toString('base64url'),
        rawId: credentialId.toString('base64url'),
        type: 'public-key',
        clientExtensionResults: {},
        authenticatorAttachment: 'platform',
        response: {
          clientDataJSON: clientData('webauthn.create', options.challenge, overrides.origin ?? OWN_ORIGIN).toString('base64url'),
          attestationObject: attestationObject.toString('base64url'),
          transports: ['internal'],
        },
      }
    },

    /** The answer of navigator.credentials.get to sign-in options: a signed assertion. */
    assert(options: { challenge: string; rpId?: string }, overrides: AnswerOverrides = {}) {
      counter = overrides.counter ?? counter + 1
      const authData = authenticatorData(overrides.rpId ?? options.rpId ?? 'localhost', flagsOf(overrides), counter)
      const clientDataJSON = clientData('webauthn.get', options.challenge, overrides.origin ?? OWN_ORIGIN)
      const signingKey = overrides.forgeSignature === true ? generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey : privateKey
      const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), signingKey)
      return {
        id: credentialId.toString('base64url'),
        rawId: credentialId.toString('base64url'),
        type: 'public-key',
        clientExtensionResults: {},
        response: {
          clientDataJSON: clientDataJSON.toString('base64url'),
          authenticatorData: authData.toString('base64url'),
          signature: signature.toString('base64url'),
          ...(overrides.userHandle === undefined ? {} : { userHandle: overrides.userHandle }),
        },
      }
    },
  }
}

export type SoftwareAuthenticator = ReturnType<typeof createSoftwareAuthenticator>

interface RegistrationOptions {
  challenge: string
  rp: { id?: string }
}

/** Registration options for the account's session (POST /api/v1/me/passkeys/options). */
export async function passkeyRegistrationOptions(app: App, account: Pick<TestAccount, 'cookie'>): Promise<RegistrationOptions> {
  const response = await app.inject({ method: 'POST', url: '/api/v1/me/passkeys/options', headers: asBrowser(account), payload: {} })
  if (response.statusCode !== 200) throw new Error(`passkey options answered ${response.statusCode}: ${response.body}`)
  return response.json<RegistrationOptions>()
}

/**
 * Adds the authenticator's passkey to the account as the dashboard does (options, the
 * authenticator's answer, then the answer with the password): the answer of the last step.
 */
export async function addPasskey(
  app: App,
  account: Pick<TestAccount, 'cookie' | 'password'>,
  authenticator: SoftwareAuthenticator,
  body: { name?: string; password?: string; code?: string } = {},
  overrides: AnswerOverrides = {},
) {
  const options = await passkeyRegistrationOptions(app, account)
  return app.inject({
    method: 'POST',
    url: '/api/v1/me/passkeys',
    headers: asBrowser(account),
    payload: { name: 'Test passkey', password: account.password, ...body, credential: authenticator.attest(options, overrides) },
    // The password's check counts against the budget of the client's address: a test's own.
    remoteAddress: randomClientAddress(),
  })
}

/** Sign-in options for a browser that is not logged in (POST /api/v1/sessions/passkey/options). */
export async function passkeySignInOptions(app: App, remoteAddress = randomClientAddress()): Promise<{ challenge: string; rpId?: string }> {
  const response = await app.inject({ method: 'POST', url: '/api/v1/sessions/passkey/options', headers: { origin: OWN_ORIGIN }, payload: {}, remoteAddress })
  if (response.statusCode !== 200) throw new Error(`passkey sign-in options answered ${response.statusCode}: ${response.body}`)
  return response.json()
}

/** Sends a sign-in answer (POST /api/v1/sessions/passkey) as the login page does. */
export function sendPasskeySignIn(app: App, credential: object, remoteAddress = randomClientAddress()) {
  return app.inject({ method: 'POST', url: '/api/v1/sessions/passkey', headers: { origin: OWN_ORIGIN }, payload: { credential }, remoteAddress })
}

/** Logs in with the authenticator's passkey: fresh options, the authenticator's answer, sent. */
export async function signInWithPasskey(app: App, authenticator: SoftwareAuthenticator, overrides: AnswerOverrides = {}) {
  return sendPasskeySignIn(app, authenticator.assert(await passkeySignInOptions(app), overrides))
}

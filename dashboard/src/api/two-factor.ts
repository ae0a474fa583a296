import { request } from './client.js'
import type { TwoFactorSetup, TwoFactorStatus } from './types.js'

/** The password and a code of the second factor: an authenticator code or an unused recovery code. */
export interface TwoFactorProof {
  password: string
  code: string
}

export function fetchTwoFactorStatus(): Promise<TwoFactorStatus> {
  return request<TwoFactorStatus>('/me/two-factor')
}

/** A new key for the authenticator app; two-factor stays off until turnOnTwoFactor confirms it. */
export function beginTwoFactorSetup(): Promise<TwoFactorSetup> {
  return request<TwoFactorSetup>('/me/two-factor/setup', { method: 'POST', body: {} })
}

/** Turns two-factor on with the setup's first code; answers the recovery codes, which are shown only now. */
export async function turnOnTwoFactor(confirmation: TwoFactorProof & { setupToken: string }): Promise<string[]> {
  return (await request<{ recoveryCodes: string[] }>('/me/two-factor', { method: 'POST', body: confirmation })).recoveryCodes
}

export async function turnOffTwoFactor(proof: TwoFactorProof): Promise<void> {
  await request<unknown>('/me/two-factor', { method: 'DELETE', body: proof })
}

/** New recovery codes in place of all the old ones, which stop working. */
export async function replaceRecoveryCodes(proof: TwoFactorProof): Promise<string[]> {
  return (await request<{ recoveryCodes: string[] }>('/me/two-factor/recovery-codes', { method: 'POST', body: proof })).recoveryCodes
}

import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { firstAccountSetupCode } from '../../../domain/accounts/setup-code.js'

/** The setup code the first account's sign-up needs now (SIGNUPS=first). */
export async function currentSetupCode(app: FastifyInstance): Promise<string> {
  return firstAccountSetupCode(app.keyRing, await app.accounts.createdCount())
}

/**
 * Under SIGNUPS=first, while no account exists, logs the code the first sign-up needs: at start,
 * and when the last account is deleted (the code changes once an account has been made).
 */
export async function announceSetupCode(app: FastifyInstance, log: FastifyBaseLogger = app.log): Promise<void> {
  if (app.config.signUps !== 'first' || (await app.accounts.exists())) return
  const setupCode = await currentSetupCode(app)
  // At warn, so that a LOG_LEVEL of warn still shows it to the operator who needs it.
  log.warn({ setupCode }, `No account yet: create the first at /dashboard/ with the setup code ${setupCode} (or with npm run account -- create)`)
}

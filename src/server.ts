import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { ConfigError, loadConfig, type Config } from './config.js'
import { createKeyRing, resolveSecret } from './secret.js'
import { openStorage } from './storage/open-storage.js'

function readConfigOrExit(): Config {
  try {
    return loadConfig()
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`tollgate: invalid configuration: ${error.message}\n`)
      process.exit(78) // EX_CONFIG
    }
    throw error
  }
}

const config = readConfigOrExit()
const keyRing = createKeyRing(await resolveSecret(config))
const storage = await openStorage(config)
const app = await buildApp({ config, storage, keyRing })

// On SIGTERM or SIGINT: stop accepting, let in-flight requests finish, flush counters and logs,
// close the pools, then exit 0. A second signal, or 10 s without finishing, exits at once.
closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
  if (err !== undefined) app.log.error({ err }, 'shutting down after an error')
  else app.log.info({ signal }, 'shutting down')
  await app.close()
})

await app.listen({ port: config.port, host: config.host })
app.log.info(
  { database: storage.database.kind, keyValue: storage.keyValue.kind, environment: config.environment },
  `Tollgate is serving on http://localhost:${config.port}`,
)

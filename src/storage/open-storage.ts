import { randomUUID } from 'node:crypto'
import { constants } from 'node:fs'
import { access, chmod, link, mkdir, readdir, readFile, rm, stat, statfs, writeFile } from 'node:fs/promises'
import { setTimeout } from 'node:timers/promises'
import { join } from 'node:path'
import type { Config } from '../config.js'
import { StartupError } from '../startup-error.js'
import { DependencyRefusal } from './dependency-refusal.js'
import { openMemoryStore } from './memory/memory-store.js'
import { migrate } from './migrate.js'
import { openPgliteDatabase } from './pglite/pglite-database.js'
import type { KeyValueStore, SqlDatabase, Storage } from './ports.js'
import { openPostgresDatabase } from './postgres/postgres-database.js'
import { openRedisStore } from './redis/redis-store.js'

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * What /proc says of a pid, on Linux: which process it is (the boot and the process's start time,
 * in clock ticks since boot, field 22 of /proc/<pid>/stat; the command name before it may hold
 * spaces and parentheses) and whether it has ended (state Z or X, field 3: a process killed a
 * moment ago stays a zombie until its parent reaps it, and holds nothing by then). After a crash
 * and a restart the lock's pid may belong to another process (pids are reused, and a container
 * restarts with the same few); the start time tells them apart. Undefined where /proc does not tell.
 */
async function readProcess(pid: number): Promise<{ identity: string | undefined; hasEnded: boolean } | undefined> {
  try {
    const [stat, boot] = await Promise.all([readFile(`/proc/${pid}/stat`, 'utf8'), readFile('/proc/sys/kernel/random/boot_id', 'utf8')])
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const startTicks = fields[19]
    return { identity: startTicks === undefined ? undefined : `${boot.trim()}/${startTicks}`, hasEnded: fields[0] === 'Z' || fields[0] === 'X' }
  } catch {
    return undefined
  }
}

async function processIdentity(pid: number): Promise<string | undefined> {
  return (await readProcess(pid))?.identity
}

/**
 * Which directory this is, as the file system numbers it (device and inode): a lock file copied
 * with DATA_DIR into another directory (a backup restored beside the original, or on another
 * machine) names the directory it was written in, not this one.
 */
async function directoryIdentity(directory: string): Promise<string> {
  const { dev, ino } = await stat(directory, { bigint: true })
  return `${dev}:${ino}`
}

interface Holder {
  pid: number
  /** The process's start (processIdentity), when the file says. */
  identity: string | undefined
  /** The directory it was written in (directoryIdentity), when the file says: lock files before 2026-12-02 do not. */
  directory: string | undefined
}

/**
 * Whether the lock file's holder still runs on this directory: the file was written here (when it
 * says where), its pid is alive and, when the file says, it is the same process.
 */
async function holdsLock(holder: Holder, directory: string): Promise<boolean> {
  if (holder.directory !== undefined && holder.directory !== directory) return false
  const { pid, identity: recordedIdentity } = holder
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid || !isRunning(pid)) return false
  const found = await readProcess(pid)
  if (found?.hasEnded === true) return false
  if (recordedIdentity === undefined) return true
  return found?.identity === undefined || found.identity === recordedIdentity
}

/**
 * Creates `file` with `content` unless it exists (false then). The content is written to a file of
 * this process's first and linked into place, so the lock file never exists half-written: a
 * contender reading it at any moment reads a whole holder. Where hard links are not supported,
 * an exclusive create does instead.
 */
async function createWhole(file: string, content: string): Promise<boolean> {
  const draft = `${file}.${process.pid}.${randomUUID()}`
  await writeFile(draft, content, { flag: 'wx' })
  try {
    await link(draft, file)
    return true
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST') return false
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS' && code !== 'EXDEV') throw error
    return writeFile(file, content, { flag: 'wx' }).then(
      () => true,
      (failure: NodeJS.ErrnoException) => (failure.code === 'EEXIST' ? false : Promise.reject(failure)),
    )
  } finally {
    await rm(draft, { force: true })
  }
}

/** What a lock file says, or undefined when there is none. */
async function readLockFile(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}

/** What begins the lock file's line that names its directory. */
const DIRECTORY_PREFIX = 'directory '

/**
 * What a lock file says: the pid on its first line; the process's start on the second, empty
 * where /proc does not tell; the directory on a line `directory <device>:<inode>` (since
 * 2026-12-02; a file without it is judged by its process alone, as before).
 */
function holderOf(content: string): Holder {
  const [pidLine = '', ...rest] = content.split('\n').map((line) => line.trim())
  const directoryLine = rest.find((line) => line.startsWith(DIRECTORY_PREFIX))
  const identityLine = rest[0] === undefined || rest[0].startsWith(DIRECTORY_PREFIX) ? '' : rest[0]
  return {
    pid: Number(pidLine),
    identity: identityLine || undefined,
    directory: directoryLine === undefined ? undefined : directoryLine.slice(DIRECTORY_PREFIX.length).trim() || undefined,
  }
}

/** The lock file is removed only while it is still what was judged stale (or is ours). */
async function removeIfUnchanged(file: string, content: string): Promise<void> {
  if ((await readLockFile(file)) === content) await rm(file, { force: true })
}

/** How long an empty lock file is taken for one being written (its writer needs microseconds). */
const EMPTY_LOCK_GRACE_MS = 500

/**
 * Takes DATA_DIR's embedded database for this process: PGlite serves one process, and a second
 * one on the same files would start, answer, and lose its writes to the first. The lock is a file
 * with the holder's pid, on Linux its start (processIdentity), and the directory it was written in
 * (directoryIdentity); one left by a process that is gone (a crash, a killed container) is taken
 * over, even when its pid has been reused since, and so is one copied in from another directory
 * (a backup of a running server's DATA_DIR restored elsewhere), whatever its pid names.
 * Processes starting together get it one at a time: the file appears whole (createWhole), and a
 * stale one is removed only by whoever holds `tollgate.lock.takeover`, after reading it again.
 * Returns what releases it.
 */
export async function lockDataDirectory(directory: string): Promise<() => Promise<void>> {
  const file = join(directory, 'tollgate.lock')
  const takeover = `${file}.takeover`
  const identity = await processIdentity(process.pid)
  const here = await directoryIdentity(directory)
  const ours = `${process.pid}\n${identity ?? ''}\n${DIRECTORY_PREFIX}${here}\n`
  for (let attempt = 0; attempt < 100; attempt++) {
    if (await createWhole(file, ours)) return () => removeIfUnchanged(file, ours)
    const found = await readLockFile(file)
    if (found === undefined) continue
    // An empty lock file just created is being written by a starter on a filesystem without hard
    // links (createWhole's fallback): it is waited for. One that stays empty was cut off.
    if (found === '') {
      const writtenAt = await stat(file).then((info) => info.mtimeMs, () => undefined)
      if (writtenAt === undefined || Date.now() - writtenAt < EMPTY_LOCK_GRACE_MS) {
        await setTimeout(10)
        continue
      }
    }
    const holder = holderOf(found)
    if (await holdsLock(holder, here)) {
      throw new StartupError(
        `DATA_DIR ${directory} is in use by another Tollgate process (pid ${holder.pid}); stop it, or give this one another DATA_DIR (or DATABASE_URL)`,
      )
    }
    if (await createWhole(takeover, ours)) {
      try {
        await removeIfUnchanged(file, found)
      } finally {
        await rm(takeover, { force: true })
      }
      continue
    }
    // Another process is taking the stale lock over; a takeover file whose writer is gone (a
    // crash in that moment) is left behind, and goes.
    const taker = await readLockFile(takeover)
    if (taker !== undefined) {
      if (!(await holdsLock(holderOf(taker), here))) await removeIfUnchanged(takeover, taker)
    }
    await setTimeout(10)
  }
  throw new StartupError(`DATA_DIR ${directory}: could not take its lock file ${file}`)
}

/**
 * PostgreSQL, once it has answered: whatever stops the first connection (no answer, a refused
 * role or password, no such database, TLS the server does not speak, not PostgreSQL at all) is
 * the operator's to mend, and is told in one line.
 */
async function connectPostgres(connectionString: string): Promise<SqlDatabase> {
  const database = await openPostgresDatabase({ connectionString })
  try {
    await database.ping()
  } catch (error) {
    await database.close().catch(() => undefined)
    const cause = error instanceof DependencyRefusal && error.cause instanceof Error ? ` (${error.cause.message})` : ''
    throw new StartupError(`DATABASE_URL: PostgreSQL cannot be used: ${(error as Error).message}${cause}`)
  }
  return database
}

export async function openDatabase(config: Pick<Config, 'databaseUrl' | 'dataDirectory'>): Promise<SqlDatabase> {
  if (config.databaseUrl !== undefined) return connectPostgres(config.databaseUrl)
  const directory = join(config.dataDirectory, 'pglite')
  // PGlite writes its files readable, many of them writable, by every user of the machine (password
  // hashes and e-mail addresses among them). Like PostgreSQL's own data directory, the database's
  // is its owner's alone, which closes every file in it: a new one is made so, one made before (or
  // restored from a backup) is made so at start. A directory of another user is left to the open's
  // own error below.
  await mkdir(directory, { recursive: true, mode: 0o700 })
  await chmod(directory, 0o700).catch(() => undefined)
  const unlock = await lockDataDirectory(config.dataDirectory)
  try {
    const database = await openPgliteDatabase(directory)
    return {
      ...database,
      async close() {
        await database.close()
        await unlock()
      },
    }
  } catch (error) {
    await unlock()
    // PGlite says little of why it failed; the usual causes are files this user may not write (a
    // copy restored as root, a start once run as root) and a full disk, "ErrnoError (errno 51)"
    // (ENOSPC in the WASI numbering PGlite's file system uses), which the line names.
    const unwritable = await findUnwritable(directory)
    const isFull = /\berrno 51\b/.test((error as Error).message) || (await statfs(directory).then((space) => space.bavail === 0, () => false))
    throw new StartupError(
      `the embedded database in ${directory} could not be opened (${(error as Error).message})` +
        (unwritable !== undefined
          ? `: ${unwritable} is not writable by this user; give DATA_DIR and everything in it to the user the server runs as`
          : isFull
            ? ': the disk that holds it is full; make room there'
            : ''),
    )
  }
}

/** The first file or directory under `directory` (itself included) this process may not write, if any. */
async function findUnwritable(directory: string): Promise<string | undefined> {
  const entries = await readdir(directory, { recursive: true }).catch(() => [] as string[])
  for (const path of [directory, ...entries.map((entry) => join(directory, entry))]) {
    if (!(await access(path, constants.W_OK).then(() => true, () => false))) return path
  }
  return undefined
}

export async function openKeyValueStore(config: Pick<Config, 'redisUrl'>): Promise<KeyValueStore> {
  if (config.redisUrl !== undefined) return openRedisStore({ url: config.redisUrl, keyPrefix: 'tollgate:' })
  return openMemoryStore()
}

/** Opens both stores the configuration names and brings the schema up to date. */
export async function openStorage(config: Pick<Config, 'databaseUrl' | 'dataDirectory' | 'redisUrl'>): Promise<Storage> {
  const database = await openDatabase(config)
  try {
    await migrate(database)
    return { database, keyValue: await openKeyValueStore(config) }
  } catch (error) {
    await database.close()
    throw error
  }
}

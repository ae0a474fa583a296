import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { lockDataDirectory } from '../../src/storage/open-storage.js'

/**
 * DATA_DIR's lock file: a running holder keeps it, a gone one gives it up, including when its pid
 * now names another process (pids are reused, and a restarted container hands out the same few).
 */
const onLinux = existsSync('/proc/self/stat')

/** The lock file as a process with this pid and /proc/<pid>/stat would write it. */
function lockFileOf(pid: number, startTicks: string): string {
  const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
  return `${pid}\n${boot}/${startTicks}\n`
}

function startTicksOf(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!
}

describe.runIf(onLinux)('the DATA_DIR lock', () => {
  // Another live process, standing in for a holder (or for whoever got a dead holder's pid).
  let other: ChildProcess
  beforeAll(async () => {
    other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' })
    await once(other, 'spawn')
  })
  afterAll(() => {
    other.kill('SIGKILL')
  })

  const newDirectory = () => mkdtempSync(join(tmpdir(), 'tollgate-lock-'))

  it('names this process and its start, and is gone once released', async () => {
    const directory = newDirectory()
    const unlock = await lockDataDirectory(directory)
    expect(readFileSync(join(directory, 'tollgate.lock'), 'utf8')).toBe(lockFileOf(process.pid, startTicksOf(process.pid)))
    await unlock()
    expect(existsSync(join(directory, 'tollgate.lock'))).toBe(false)
  })

  it('is refused while the process that wrote it runs', async () => {
    const directory = newDirectory()
    writeFileSync(join(directory, 'tollgate.lock'), lockFileOf(other.pid!, startTicksOf(other.pid!)))
    await expect(lockDataDirectory(directory)).rejects.toThrow(`DATA_DIR ${directory} is in use by another Tollgate process (pid ${other.pid})`)
  })

  it('is taken over when its pid now names a process that started later', async () => {
    const directory = newDirectory()
    const earlier = String(Number(startTicksOf(other.pid!)) - 1)
    writeFileSync(join(directory, 'tollgate.lock'), lockFileOf(other.pid!, earlier))
    const unlock = await lockDataDirectory(directory)
    expect(readFileSync(join(directory, 'tollgate.lock'), 'utf8')).toMatch(new RegExp(`^${process.pid}\\n`))
    await unlock()
  })

  it('is refused when an older lock names a running pid and nothing else (it cannot tell)', async () => {
    const directory = newDirectory()
    writeFileSync(join(directory, 'tollgate.lock'), `${other.pid}\n`)
    await expect(lockDataDirectory(directory)).rejects.toThrow(`(pid ${other.pid})`)
  })

  it('is taken over when it is empty (a start cut off while writing it)', async () => {
    const directory = newDirectory()
    writeFileSync(join(directory, 'tollgate.lock'), '')
    const unlock = await lockDataDirectory(directory)
    await unlock()
  })
})

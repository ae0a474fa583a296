import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { lockDataDirectory } from '../../src/storage/open-storage.js'

/**
 * DATA_DIR's lock file: a running holder keeps it, a gone one gives it up, including when its pid
 * now names another process (pids are reused, and a restarted container hands out the same few).
 */
const onLinux = existsSync('/proc/self/stat')

/**
 * The lock file as a process with this pid and /proc/<pid>/stat would write it: in `directory`
 * (its device and inode on the third line), or as a release before 2026-12-02 wrote it (two lines).
 */
function lockFileOf(pid: number, startTicks: string, directory?: string): string {
  const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
  if (directory === undefined) return `${pid}\n${boot}/${startTicks}\n`
  const { dev, ino } = statSync(directory, { bigint: true })
  return `${pid}\n${boot}/${startTicks}\ndirectory ${dev}:${ino}\n`
}

function startTicksOf(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!
}

/**
 * Another live process for the suite, standing in for a holder (or for whoever got a dead
 * holder's pid); answers its pid.
 */
function keepAnotherProcess(): () => number {
  let other: ChildProcess | undefined
  beforeAll(async () => {
    other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' })
    await once(other, 'spawn')
  })
  afterAll(() => {
    other?.kill('SIGKILL')
  })
  return () => other!.pid!
}

describe.runIf(onLinux)('the DATA_DIR lock', () => {
  const otherPid = keepAnotherProcess()

  const newDirectory = () => mkdtempSync(join(tmpdir(), 'tollgate-lock-'))

  it('names this process, its start and its directory, and is gone once released', async () => {
    const directory = newDirectory()
    const unlock = await lockDataDirectory(directory)
    expect(readFileSync(join(directory, 'tollgate.lock'), 'utf8')).toBe(lockFileOf(process.pid, startTicksOf(process.pid), directory))
    await unlock()
    expect(existsSync(join(directory, 'tollgate.lock'))).toBe(false)
  })

  it('is taken over from a holder killed a moment ago that its parent has not reaped yet (a zombie)', async () => {
    // `sleep 1 &` ends a second later, when its parent has become `sleep 10`, which never reaps it.
    // (With `sleep 0` the shell could still be itself when it ended, and reap it: no zombie.)
    const parent = spawn('sh', ['-c', 'sleep 1 & echo $!; exec sleep 10'], { stdio: ['ignore', 'pipe', 'ignore'] })
    try {
      const [output] = (await once(parent.stdout, 'data')) as [Buffer]
      const zombie = Number(output.toString().trim())
      await vi.waitFor(() => expect(readFileSync(`/proc/${zombie}/stat`, 'utf8')).toMatch(/\) Z /), { timeout: 10_000 })
      const directory = newDirectory()
      writeFileSync(join(directory, 'tollgate.lock'), lockFileOf(zombie, startTicksOf(zombie)))
      const unlock = await lockDataDirectory(directory)
      expect(readFileSync(join(directory, 'tollgate.lock'), 'utf8')).toBe(lockFileOf(process.pid, startTicksOf(process.pid), directory))
      await unlock()
    } finally {
      parent.kill('SIGKILL')
    }
    // Its own time: the zombie may take seconds to appear on a loaded host (seen with 5 s).
  }, 20_000)

  it('is refused while the process that wrote it runs, in this directory or as a release before wrote it (no directory)', async () => {
    const directory = newDirectory()
    writeFileSync(join(directory, 'tollgate.lock'), lockFileOf(otherPid(), startTicksOf(otherPid()), directory))
    await expect(lockDataDirectory(directory)).rejects.toThrow(`DATA_DIR ${directory} is in use by another Tollgate process (pid ${otherPid()})`)
    writeFileSync(join(directory, 'tollgate.lock'), lockFileOf(otherPid(), startTicksOf(otherPid())))
    await expect(lockDataDirectory(directory)).rejects.toThrow(`DATA_DIR ${directory} is in use by another Tollgate process (pid ${otherPid()})`)
  })

  it('is taken over in a copy of the directory (a backup restored) while its process still holds the original', async () => {
    const original = newDirectory()
    writeFileSync(join(original, 'tollgate.lock'), lockFileOf(otherPid(), startTicksOf(otherPid()), original))
    const restored = join(newDirectory(), 'restored')
    cpSync(original, restored, { recursive: true })
    expect(readFileSync(join(restored, 'tollgate.lock'), 'utf8')).toBe(lockFileOf(otherPid(), startTicksOf(otherPid()), original))
    const unlock = await lockDataDirectory(restored)
    expect(readFileSync(join(restored, 'tollgate.lock'), 'utf8')).toBe(lockFileOf(process.pid, startTicksOf(process.pid), restored))
    // The original is still its process's.
    await expect(lockDataDirectory(original)).rejects.toThrow(`DATA_DIR ${original} is in use by another Tollgate process (pid ${otherPid()})`)
    await unlock()
    expect(existsSync(join(restored, 'tollgate.lock'))).toBe(false)
  })

  it('is taken over when its pid now names a process that started later', async () => {
    const directory = newDirectory()
    const earlier = String(Number(startTicksOf(otherPid())) - 1)
    writeFileSync(join(directory, 'tollgate.lock'), lockFileOf(otherPid(), earlier))
    const unlock = await lockDataDirectory(directory)
    expect(readFileSync(join(directory, 'tollgate.lock'), 'utf8')).toMatch(new RegExp(`^${process.pid}\\n`))
    await unlock()
  })

  it('is refused when an older lock names a running pid and nothing else (it cannot tell)', async () => {
    const directory = newDirectory()
    writeFileSync(join(directory, 'tollgate.lock'), `${otherPid()}\n`)
    await expect(lockDataDirectory(directory)).rejects.toThrow(`(pid ${otherPid()})`)
  })

  it('waits for an empty lock file just created (its writer may be writing it) and then respects what it says', async () => {
    const directory = newDirectory()
    const file = join(directory, 'tollgate.lock')
    writeFileSync(file, '')
    const taking = lockDataDirectory(directory)
    setTimeout(() => writeFileSync(file, lockFileOf(otherPid(), startTicksOf(otherPid()))), 100)
    await expect(taking).rejects.toThrow(`(pid ${otherPid()})`)
  })

  it('is taken over when it is empty (a start cut off while writing it)', async () => {
    const directory = newDirectory()
    writeFileSync(join(directory, 'tollgate.lock'), '')
    const unlock = await lockDataDirectory(directory)
    await unlock()
  })
})

describe.runIf(onLinux)('the DATA_DIR lock, taken by several processes at once', () => {
  const contenders = 8
  const otherPid = keepAnotherProcess()

  /**
   * Starts the contenders, lets them all try at the same moment, and answers what each got:
   * 'held' or the refusal's message. They hold what they took until the round ends.
   */
  async function race(directory: string): Promise<string[]> {
    const script = `
      const { lockDataDirectory } = await import(${JSON.stringify(new URL('../../src/storage/open-storage.ts', import.meta.url).href)})
      process.stdin.once('data', () => lockDataDirectory(${JSON.stringify(directory)}).then(
        () => process.stdout.write('held\\n'),
        (error) => process.stdout.write(error.message + '\\n'),
      ))
      process.stdout.write('ready\\n')`
    const children = Array.from({ length: contenders }, () =>
      spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] }))
    try {
      const lines = children.map((child) => {
        const received: string[] = []
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => received.push(...chunk.split('\n').filter((line) => line !== '')))
        return received
      })
      await vi.waitFor(() => expect(lines.every((received) => received[0] === 'ready')).toBe(true), { timeout: 30_000, interval: 20 })
      for (const child of children) child.stdin.write('go\n')
      await vi.waitFor(() => expect(lines.every((received) => received.length === 2)).toBe(true), { timeout: 10_000, interval: 20 })
      return lines.map((received) => received[1]!)
    } finally {
      for (const child of children) child.kill('SIGKILL')
    }
  }

  it('goes to exactly one of them, with no lock file and with a lock left by a process that is gone', { timeout: 120_000 }, async () => {
    for (let round = 0; round < 4; round++) {
      const directory = mkdtempSync(join(tmpdir(), 'tollgate-lock-race-'))
      // Every other round starts from a stale lock: its pid now names a process that started later.
      if (round % 2 === 1) writeFileSync(join(directory, 'tollgate.lock'), lockFileOf(otherPid(), String(Number(startTicksOf(otherPid())) - 1)))
      const outcomes = await race(directory).finally(() => rmSync(directory, { recursive: true, force: true }))
      expect(outcomes.filter((outcome) => outcome === 'held'), `round ${round}: ${outcomes.join(' | ')}`).toHaveLength(1)
      for (const outcome of outcomes.filter((outcome) => outcome !== 'held')) expect(outcome).toMatch(/is in use by another Tollgate process|could not take its lock file/)
    }
  })
})

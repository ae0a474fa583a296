import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

/** npm run refresh:ip-data as an operator runs it, without npm: the script with these arguments. */
function refresh(args: string[], dataDirectory = mkdtempSync(join(tmpdir(), 'tollgate-ip-data-'))) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/refresh-ip-data.ts', ...args], {
    env: { ...process.env, DATA_DIR: dataDirectory },
    encoding: 'utf8',
    timeout: 60_000,
  })
  return { status: result.status, stdout: result.stdout.trim(), stderr: result.stderr.trim() }
}

describe('npm run refresh:ip-data', () => {
  it('prints its usage for --help, and changes nothing (no npm update)', () => {
    const ran = refresh(['--help'])
    expect(ran.status).toBe(0)
    expect(ran.stdout).toMatch(/^Usage: npm run refresh:ip-data/)
    // The command the script runs is echoed before it runs (`$ npm update ...`): none was.
    expect(ran.stdout).not.toMatch(/^\$ /m)
  })

  it.each([
    [['--bogus'], "Unknown option '--bogus'"],
    [['--check-only', '--tor-exits'], "Option '--tor-exits <value>' argument missing"],
    [['--check-only', 'extra'], "Unexpected argument 'extra'. This command does not take positional arguments"],
  ])('refuses %j in one line and the usage, exit 2, before touching any package', (args, message) => {
    const ran = refresh(args)
    expect(ran.status).toBe(2)
    expect(ran.stderr.split('\n')[0]).toBe(`refresh:ip-data: ${message}`)
    expect(ran.stderr).toContain('Usage: npm run refresh:ip-data')
    expect(ran.stdout).toBe('')
  })

  it('says in one line what is wrong with a Tor exit list it cannot read, exit 1', () => {
    const ran = refresh(['--check-only', '--tor-exits', '/nonexistent/exits.txt'])
    expect(ran.status).toBe(1)
    expect(ran.stderr).toBe("refresh:ip-data: ENOENT: no such file or directory, open '/nonexistent/exits.txt'")
  })

  it('checks the installed data and installs a Tor exit list with --check-only', () => {
    const dataDirectory = mkdtempSync(join(tmpdir(), 'tollgate-ip-data-'))
    const list = join(dataDirectory, 'exits.txt')
    writeFileSync(list, Array.from({ length: 150 }, (_, index) => `ExitAddress 185.220.${Math.floor(index / 250)}.${index % 250} 2026-11-27 10:00:00`).join('\n'))
    const ran = refresh(['--check-only', '--tor-exits', list], dataDirectory)
    expect(ran.stderr).toBe('')
    expect(ran.status).toBe(0)
    expect(ran.stdout).toContain(`Installed 150 Tor exit addresses into ${join(dataDirectory, 'tor-exit-addresses.txt')}`)
    expect(ran.stdout).toMatch(/Tor exits: 150/)
    expect(ran.stdout).toContain('Network data is ready')
  }, 60_000)
})

import { encode } from 'uqr'
import { describe, expect, it } from 'vitest'
import { qrCodePath } from '../../dashboard/src/lib/qr-code.js'

/** The modules a path of qrCodePath's rectangles covers, drawn back into a grid. */
function drawPath(path: string, size: number): boolean[][] {
  const grid = Array.from({ length: size }, () => Array.from({ length: size }, () => false))
  const rectangles = [...path.matchAll(/M(\d+) (\d+)h(\d+)v1h-(\d+)z/g)]
  expect(rectangles.map((match) => match[0]).join('')).toBe(path)
  for (const [, x, y, width, back] of rectangles) {
    expect(back).toBe(width)
    for (let column = Number(x); column < Number(x) + Number(width); column += 1) {
      const row = grid[Number(y)]
      expect(row?.[column]).toBe(false)
      if (row !== undefined) row[column] = true
    }
  }
  return grid
}

describe("the QR code's path", () => {
  it("draws each row's runs of dark modules as one rectangle each", () => {
    const modules = [
      [true, true, false, true],
      [false, false, false, false],
      [false, true, true, true],
    ]
    expect(qrCodePath(modules)).toBe('M0 0h2v1h-2zM3 0h1v1h-1zM1 2h3v1h-3z')
    expect(qrCodePath([])).toBe('')
  })

  it("covers exactly the dark modules of an authenticator app's QR code", () => {
    const uri = 'otpauth://totp/Tollgate:you%40example.com?issuer=Tollgate&secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&algorithm=SHA1&digits=6&period=30'
    const { data, size } = encode(uri, { ecc: 'M', border: 0 })
    expect(drawPath(qrCodePath(data), size)).toEqual(data)
  })
})

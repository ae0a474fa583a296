/**
 * The dark modules of a QR code as one SVG path, one unit per module (`encode(text).data` of uqr,
 * rows from the top). Each row's runs of dark modules are one rectangle each, so that a code of
 * some 2,000 modules is a few hundred short commands, and no seam shows between neighbours.
 */
export function qrCodePath(modules: readonly (readonly boolean[])[]): string {
  const rectangles: string[] = []
  modules.forEach((row, y) => {
    let x = 0
    while (x < row.length) {
      if (row[x] !== true) {
        x += 1
        continue
      }
      const start = x
      while (row[x] === true) x += 1
      rectangles.push(`M${start} ${y}h${x - start}v1h-${x - start}z`)
    }
  })
  return rectangles.join('')
}

/** A colour's red, green and blue, 0 to 255. */
export type Rgb = readonly [number, number, number]

/** The channels of `#rrggbb`, or of a computed `rgb(...)` or `rgba(...)` (its alpha left out). */
export function rgbOf(color: string): Rgb {
  if (/^#[\da-f]{6}$/i.test(color)) return [1, 3, 5].map((start) => parseInt(color.slice(start, start + 2), 16)) as unknown as Rgb
  const [red = 0, green = 0, blue = 0] = (color.match(/[\d.]+/g) ?? []).map(Number)
  return [red, green, blue]
}

function relativeLuminance([red, green, blue]: Rgb): number {
  const linear = (channel: number) => {
    const value = channel / 255
    return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4
  }
  return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue)
}

/** The WCAG contrast ratio of two colours (`#rrggbb` or computed `rgb(...)`), 1 to 21. */
export function contrastOf(first: string | Rgb, second: string | Rgb): number {
  const luminances = [first, second].map((color) => relativeLuminance(typeof color === 'string' ? rgbOf(color) : color))
  const [light, dark] = luminances.sort((a, b) => b - a) as [number, number]
  return (light + 0.05) / (dark + 0.05)
}

/**
 * `color`, or the least mix of it towards `toward` that stands `ratio`:1 out from `background`
 * (`toward` itself if no mix does): a colour chosen for a light page, kept recognisable on a dark
 * one. Answers `rgb(r, g, b)`.
 */
export function standingOut(color: string, background: string, toward: string, ratio: number): string {
  const [from, target] = [rgbOf(color), rgbOf(toward)]
  for (let step = 0; step < 10; step += 1) {
    const mixed = from.map((channel, index) => Math.round(channel + (target[index]! - channel) * (step / 10))) as unknown as Rgb
    if (contrastOf(mixed, background) >= ratio) return `rgb(${mixed.join(', ')})`
  }
  return `rgb(${target.join(', ')})`
}

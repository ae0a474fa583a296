/** The WCAG contrast ratio of two computed `rgb(...)` colours (focus rings against their backgrounds). */
export function contrastOf(first: string, second: string): number {
  const luminance = (color: string) => {
    const [red = 0, green = 0, blue = 0] = (color.match(/[\d.]+/g) ?? []).map(Number).map((channel) => {
      const value = channel / 255
      return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4
    })
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue
  }
  const [light, dark] = [luminance(first), luminance(second)].sort((a, b) => b - a) as [number, number]
  return (light + 0.05) / (dark + 0.05)
}

/**
 * A computed colour with transparency as it shows over an opaque `backdrop` (`rgb(...)`): forced
 * colours' `Highlight` is `rgba(..., 0.8)` in Chromium, over the page's `Canvas`.
 */
export function overBackdrop(color: string, backdrop: string): string {
  const [red = 0, green = 0, blue = 0, alpha = 1] = (color.match(/[\d.]+/g) ?? []).map(Number)
  const [backRed = 0, backGreen = 0, backBlue = 0] = (backdrop.match(/[\d.]+/g) ?? []).map(Number)
  const mix = (front: number, back: number) => Math.round(front * alpha + back * (1 - alpha))
  return `rgb(${mix(red, backRed)}, ${mix(green, backGreen)}, ${mix(blue, backBlue)})`
}

/** The WCAG contrast ratio of two computed `rgb(...)` colours (focus rings against their backgrounds): the dashboard's own. */
export { contrastOf } from '../../dashboard/src/lib/contrast.js'

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

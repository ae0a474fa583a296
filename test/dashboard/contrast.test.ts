import { describe, expect, it } from 'vitest'
import { actionStyles } from '../../dashboard/src/lib/actions.js'
import { contrastOf, rgbOf, standingOut } from '../../dashboard/src/lib/contrast.js'

const lineColors = Object.values(actionStyles).map((style) => style.color)

/** Forced-colour themes' background and text: Chromium's dark and light, and a dark grey and a cream one as Windows has. */
const themes = [
  { name: 'black', background: 'rgb(0, 0, 0)', text: 'rgb(255, 255, 255)' },
  { name: 'dark grey', background: 'rgb(45, 50, 54)', text: 'rgb(255, 255, 255)' },
  { name: 'white', background: 'rgb(255, 255, 255)', text: 'rgb(0, 0, 0)' },
  { name: 'cream', background: 'rgb(255, 250, 239)', text: 'rgb(61, 61, 61)' },
]

describe("the chart's line colours under forced colours", () => {
  it('stand 3:1 out from every theme\'s background, and stay apart from one another', () => {
    for (const theme of themes) {
      const drawn = lineColors.map((color) => standingOut(color, theme.background, theme.text, 3))
      for (const color of drawn) expect(contrastOf(color, theme.background), `${color} on ${theme.name}`).toBeGreaterThanOrEqual(3)
      expect(new Set(drawn).size, theme.name).toBe(lineColors.length)
    }
  })

  it('keep a colour that stands out already, and mix one that does not no further than it needs', () => {
    // On white every line passes 4.5:1: drawn as chosen.
    for (const color of lineColors) expect(rgbOf(standingOut(color, 'rgb(255, 255, 255)', 'rgb(0, 0, 0)', 3))).toEqual(rgbOf(color))
    // Rejected's grey is 2.8:1 on black: lightened, to just over 3:1 (a tenth of the way towards white does it).
    const rejected = standingOut(actionStyles.rejected.color, 'rgb(0, 0, 0)', 'rgb(255, 255, 255)', 3)
    expect(contrastOf(actionStyles.rejected.color, 'rgb(0, 0, 0)')).toBeLessThan(3)
    expect(contrastOf(rejected, 'rgb(0, 0, 0)')).toBeGreaterThanOrEqual(3)
    expect(contrastOf(rejected, 'rgb(0, 0, 0)')).toBeLessThan(4)
  })

  it('is the text colour itself when no mix stands out (a background as light as the text)', () => {
    expect(standingOut('#eeeeee', 'rgb(250, 250, 250)', 'rgb(255, 255, 255)', 3)).toBe('rgb(255, 255, 255)')
  })
})

describe('the contrast ratio', () => {
  it('is WCAG\'s, from hex or computed colours', () => {
    expect(contrastOf('#000000', 'rgb(255, 255, 255)')).toBeCloseTo(21, 5)
    expect(contrastOf('#777777', '#777777')).toBe(1)
    expect(contrastOf('rgba(255, 255, 255, 0.8)', '#ffffff')).toBe(1)
  })
})

import { useEffect, useRef, useState } from 'preact/hooks'
import uPlot from 'uplot'
import 'uplot/dist/uPlot.min.css'
import { verificationActions, type StatsBucket, type VerificationAction } from '../api/types.js'
import { actionStyles } from '../lib/actions.js'
import { chartTimeFormat } from '../lib/chart-time.js'
import { standingOut } from '../lib/contrast.js'

function dataOf(series: readonly StatsBucket[]): uPlot.AlignedData {
  return [series.map((point) => Date.parse(point.bucket) / 1000), ...verificationActions.map((action) => series.map((point) => point[action]))]
}

function heightFor(width: number): number {
  return width < 480 ? 220 : 300
}

const forcedColorsQuery = '(forced-colors: active)'
const darkQuery = '(prefers-color-scheme: dark)'

/** Forced colours (Windows' high contrast) and their scheme, or 'none': the chart is drawn again when they change. */
function currentForcedColors(): 'none' | 'dark' | 'light' {
  if (!matchMedia(forcedColorsQuery).matches) return 'none'
  return matchMedia(darkQuery).matches ? 'dark' : 'light'
}

function useForcedColors(): 'none' | 'dark' | 'light' {
  const [forcedColors, setForcedColors] = useState(currentForcedColors)
  useEffect(() => {
    const lists = [matchMedia(forcedColorsQuery), matchMedia(darkQuery)]
    const update = () => setForcedColors(currentForcedColors())
    for (const list of lists) list.addEventListener('change', update)
    return () => {
      for (const list of lists) list.removeEventListener('change', update)
    }
  }, [])
  return forcedColors
}

/** A system colour (`CanvasText`, `Canvas`) as the browser computes it, read from an element since a canvas takes no system colour names. */
function systemColor(property: 'color' | 'backgroundColor', name: string): string {
  const probe = document.body.appendChild(document.createElement('span'))
  probe.style[property] = name
  const computed = getComputedStyle(probe)[property]
  probe.remove()
  return computed
}

interface ChartColors {
  axis: Pick<uPlot.Axis, 'stroke' | 'grid' | 'ticks'>
  lines: Record<VerificationAction, string>
}

/**
 * The chart's colours. The browser recolours no canvas, and colours for a light page are too
 * faint on a forced dark one (the axes' grey 2:1, the Rejected line 2.8:1 on black, every line
 * under 2.6:1 on a dark grey theme): under forced colours the axes, their ticks and the grid take
 * the system's text colour (WCAG 1.4.3, 1.4.11), the grid thin then since its colour is the
 * text's, and each line is mixed towards that colour, as little as makes it stand 3:1 out from the
 * system's background (1.4.11), so the lines keep their hues apart (and their dashes).
 */
function chartColors(forcedColors: 'none' | 'dark' | 'light'): ChartColors {
  const ownLines = Object.fromEntries(verificationActions.map((action) => [action, actionStyles[action].color])) as Record<VerificationAction, string>
  if (forcedColors === 'none') return { axis: { stroke: '#374151', grid: { stroke: '#e5e7eb' } }, lines: ownLines }
  const text = systemColor('color', 'CanvasText')
  const background = systemColor('backgroundColor', 'Canvas')
  const lines = Object.fromEntries(verificationActions.map((action) => [action, standingOut(ownLines[action], background, text, 3)])) as Record<VerificationAction, string>
  return { axis: { stroke: text, grid: { stroke: text, width: 1 }, ticks: { stroke: text } }, lines }
}

interface VerificationsChartProps {
  series: readonly StatsBucket[]
  interval: 'hour' | 'day'
}

/** Verifications per bucket, one line per action. The table under it carries the same numbers as text. */
export function VerificationsChart({ series, interval }: VerificationsChartProps) {
  const container = useRef<HTMLDivElement>(null)
  const chart = useRef<uPlot | null>(null)
  const forcedColors = useForcedColors()

  useEffect(() => {
    const element = container.current
    if (element === null) return
    const width = Math.max(element.clientWidth, 260)
    const timeFormat = chartTimeFormat(interval)
    const colors = chartColors(forcedColors)
    const options: uPlot.Options = {
      width,
      height: heightFor(width),
      scales: { x: { time: true }, y: { range: (_self, _min, max) => [0, Math.max(4, Math.ceil(max * 1.1))] } },
      // Daily buckets are UTC days: their axis is in UTC too (local time would date them a day early west of Greenwich).
      ...(interval === 'day' ? { tzDate: (seconds: number) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC') } : {}),
      series: [
        { label: timeFormat.axisLabel, value: (self, seconds) => (seconds === null ? '—' : timeFormat.bucket(seconds, self.data[0])) },
        ...verificationActions.map((action) => ({
          label: actionStyles[action].label,
          stroke: colors.lines[action],
          width: 2,
          dash: actionStyles[action].dash,
          points: { show: true, size: 5, fill: colors.lines[action] },
        })),
      ],
      axes: [
        {
          ...colors.axis,
          // In the reader's locale (uPlot's own labels are English); two lines where a day begins.
          values: (_self, ticks, _axis, _space, increment) => timeFormat.ticks(ticks, increment),
        },
        {
          ...colors.axis,
          // Counts are whole numbers: no "0.5 verifications" ticks.
          values: (_self, ticks) => ticks.map((tick) => (Number.isInteger(tick) ? String(tick) : '')),
        },
      ],
      legend: { live: true },
      cursor: { drag: { x: false, y: false } },
    }
    const plot = new uPlot(options, dataOf(series), element)
    chart.current = plot
    const observer = new ResizeObserver(() => {
      const nextWidth = Math.max(element.clientWidth, 260)
      if (nextWidth !== plot.width) plot.setSize({ width: nextWidth, height: heightFor(nextWidth) })
    })
    observer.observe(element)
    return () => {
      observer.disconnect()
      plot.destroy()
      chart.current = null
    }
    // Rebuilt only when the interval (axis label) or forced colours change; new data alone goes through setData below.
  }, [interval, forcedColors])

  useEffect(() => {
    chart.current?.setData(dataOf(series))
  }, [series])

  const note = chartTimeFormat(interval).note(Date.now())
  return (
    <>
      <div ref={container} class="chart" role="img" aria-label={`Chart of verifications over time by action; the same numbers are in the table below it. ${note}`} />
      <p class="muted chart__note">{note}</p>
    </>
  )
}

import { useEffect, useRef } from 'preact/hooks'
import uPlot from 'uplot'
import 'uplot/dist/uPlot.min.css'
import { verificationActions, type StatsBucket } from '../api/types.js'
import { actionStyles } from '../lib/actions.js'
import { chartTimeFormat } from '../lib/chart-time.js'

function dataOf(series: readonly StatsBucket[]): uPlot.AlignedData {
  return [series.map((point) => Date.parse(point.bucket) / 1000), ...verificationActions.map((action) => series.map((point) => point[action]))]
}

function heightFor(width: number): number {
  return width < 480 ? 220 : 300
}

interface VerificationsChartProps {
  series: readonly StatsBucket[]
  interval: 'hour' | 'day'
}

/** Verifications per bucket, one line per action. The table under it carries the same numbers as text. */
export function VerificationsChart({ series, interval }: VerificationsChartProps) {
  const container = useRef<HTMLDivElement>(null)
  const chart = useRef<uPlot | null>(null)

  useEffect(() => {
    const element = container.current
    if (element === null) return
    const width = Math.max(element.clientWidth, 260)
    const timeFormat = chartTimeFormat(interval)
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
          stroke: actionStyles[action].color,
          width: 2,
          dash: actionStyles[action].dash,
          points: { show: true, size: 5, fill: actionStyles[action].color },
        })),
      ],
      axes: [
        {
          stroke: '#374151',
          grid: { stroke: '#e5e7eb' },
          // In the reader's locale (uPlot's own labels are English); two lines where a day begins.
          values: (_self, ticks, _axis, _space, increment) => timeFormat.ticks(ticks, increment),
        },
        {
          stroke: '#374151',
          grid: { stroke: '#e5e7eb' },
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
    // Rebuilt only when the interval changes (axis label); new data alone goes through setData below.
  }, [interval])

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

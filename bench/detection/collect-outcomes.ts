/** One verification row of a session, oldest first. */
export interface LoggedVerification {
  action: string
  riskScore: number | null
  anomalies: string[]
}

export type SessionClass = 'people' | 'scripted' | 'automated' | 'informational' | 'forgery' | 'stealth-patched'

export interface SessionRecord {
  class: SessionClass
  variant: string
  clientIp: string
  verifications: LoggedVerification[]
  error?: string
}

export interface ClassSummary {
  sessions: number
  /** Final verdicts: what the session ended with. */
  finalAllow: number
  finalChallenge: number
  finalBlock: number
  /** No scored verification at all (the client failed or gave up before submitting). */
  noVerdict: number
  /** Sessions with at least one verdict other than allow (challenged or blocked at some point). */
  everNotAllowed: number
  meanFirstScore: number
  /** Label -> sessions whose first verification carried it. */
  labels: Record<string, number>
}

export function summarize(sessions: SessionRecord[]): ClassSummary {
  const summary: ClassSummary = {
    sessions: sessions.length, finalAllow: 0, finalChallenge: 0, finalBlock: 0, noVerdict: 0, everNotAllowed: 0, meanFirstScore: 0, labels: {},
  }
  let scored = 0
  for (const session of sessions) {
    const scoredRows = session.verifications.filter((row) => row.action === 'allow' || row.action === 'challenge' || row.action === 'block')
    const last = scoredRows.at(-1)
    if (last === undefined) {
      summary.noVerdict++
      continue
    }
    if (last.action === 'allow') summary.finalAllow++
    else if (last.action === 'challenge') summary.finalChallenge++
    else summary.finalBlock++
    if (scoredRows.some((row) => row.action !== 'allow')) summary.everNotAllowed++
    const first = scoredRows[0]
    if (first !== undefined) {
      scored++
      summary.meanFirstScore += first.riskScore ?? 0
      for (const label of first.anomalies) summary.labels[label] = (summary.labels[label] ?? 0) + 1
    }
  }
  summary.meanFirstScore = scored === 0 ? 0 : Math.round(summary.meanFirstScore / scored)
  return summary
}

const percent = (part: number, whole: number) => (whole === 0 ? '-' : `${((100 * part) / whole).toFixed(1)}%`)

/** The confusion table: rows are the true classes, columns what the service decided. */
export function renderTable(groups: { name: string; summary: ClassSummary }[]): string {
  const lines = [
    '| True class (variant) | Sessions | Final allow | Final challenge | Final block | No verdict | Challenged or blocked at least once | Mean first riskScore |',
    '|---|---|---|---|---|---|---|---|',
  ]
  for (const { name, summary: s } of groups) {
    lines.push(`| ${name} | ${s.sessions} | ${s.finalAllow} | ${s.finalChallenge} | ${s.finalBlock} | ${s.noVerdict} | ${s.everNotAllowed} (${percent(s.everNotAllowed, s.sessions)}) | ${s.meanFirstScore} |`)
  }
  return lines.join('\n')
}

export function renderLabels(groups: { name: string; summary: ClassSummary }[]): string {
  return groups.map(({ name, summary }) => {
    const labels = Object.entries(summary.labels).sort((a, b) => b[1] - a[1]).map(([label, count]) => `${label} ${count}`)
    return `- ${name}: ${labels.length === 0 ? '(none)' : labels.join(', ')}`
  }).join('\n')
}

export { percent }

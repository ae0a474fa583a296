/** Scores counted together: ten buckets of ten, the last one 90-100 (a score of 100 is rare, and its own bar would hide it). */
const BUCKET_WIDTH = 10
const BUCKETS = 10

export interface ScoreBucket {
  /** Lowest score in the bucket. */
  min: number
  /** Highest score in the bucket, included: 9, 19, ... 100. */
  max: number
  count: number
}

/**
 * All ten buckets, lowest first, zeros where nothing scored, from counts by bucket label ('0',
 * '10', ... '90', as the rollups name them); so a chart needs no gap filling, as with the series.
 */
export function buildScoreDistribution(counts: readonly { label: string; count: number }[]): ScoreBucket[] {
  const byMin = new Map(counts.map(({ label, count }) => [Number(label), count]))
  return Array.from({ length: BUCKETS }, (_, index) => {
    const min = index * BUCKET_WIDTH
    return { min, max: index === BUCKETS - 1 ? 100 : min + BUCKET_WIDTH - 1, count: byMin.get(min) ?? 0 }
  })
}

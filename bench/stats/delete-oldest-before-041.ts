import type { SqlExecutor } from '../../src/storage/ports.js'

/** deleteOldest's statement before migration 041, which left the counting of the rows to the delete trigger: the benchmarks' "before". */
export async function deleteOldestBefore041(database: SqlExecutor, siteId: string, limit: number, cutoff: Date): Promise<number> {
  const [row] = await database.query<{ count: number }>(
    `WITH gone AS (
       DELETE FROM verifications
        WHERE id = ANY (ARRAY(SELECT id FROM verifications WHERE site_id = $1 AND created_at < $3 ORDER BY created_at LIMIT $2))
       RETURNING 1
     )
     SELECT count(*)::int8 AS count FROM gone`,
    [siteId, limit, cutoff],
  )
  return row?.count ?? 0
}

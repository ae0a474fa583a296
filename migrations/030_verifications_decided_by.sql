-- Which of the site's own lists decided a verification, when one did: 'allowlist' (the address
-- allowlist, docs/risk.md: allowed at score 0 without being judged) or 'blocklist' (its addresses or
-- countries: blocked at 100 without being scored otherwise); null when the risk model decided, and
-- for rejected submissions. An allowlisted row looked like a verification the model let through at
-- 0 with no anomaly, so a fraudulent label on it counted as a detection miss (the stats' feedback
-- figures): the operator's list let it in, not the model. The log's writer sets it from the verdict
-- it already has (judge-submission.ts): one more field of the bulk load, no work per request.
--
-- The column is nullable without a default, so adding it rewrites nothing; the CHECK is added
-- NOT VALID, so the ALTER TABLE does not read the table to check existing rows (all null): new and
-- updated rows are checked all the same. The ACCESS EXCLUSIVE lock is held for an instant, and the
-- log's writers (every instance's) wait on it with their batch as for migration 028, buffering.
-- The rollups (migrations 007 to 021) count nothing of it.
--
-- verifications_site_decided serves the log's decidedBy filter (listing and export), as
-- verifications_site_device_time serves its device filter (migration 023): partial, so it starts empty
-- and holds the lists' rows only. Building it still reads the table once while the migration
-- holds it, as 023's did (measured there: 0.17 s per million rows, its pages in memory).
--
-- Rows logged before this migration have no value. The blocklist's are still known by their
-- anomalies (address_blocked, country_blocked, which judgeForBlocklisted always sets), and the
-- feedback figures read them so (verification-label-repository.ts, countLabeledScores); the
-- allowlist's cannot be told from the model's allows at 0, and count as before. Nothing is
-- backfilled: an UPDATE of every blocklisted row would rewrite them while holding the table.
--
-- Rolling upgrade: instances of an older version, still running during the upgrade, name their
-- columns in their bulk loads (COPY on PGlite, INSERT ... unnest on PostgreSQL), so their rows are
-- written as before, with no value: their allowlisted rows count as the model's until they are
-- replaced (as before this migration), their blocklisted ones are known by their anomalies. They
-- never read the column.
ALTER TABLE verifications
  ADD COLUMN decided_by text,
  ADD CONSTRAINT verifications_decided_by CHECK (decided_by IN ('allowlist', 'blocklist')) NOT VALID;

CREATE INDEX verifications_site_decided ON verifications (site_id, decided_by, created_at DESC, id DESC) WHERE decided_by IS NOT NULL;

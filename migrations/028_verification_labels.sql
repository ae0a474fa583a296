-- What a site's backend (POST /api/v1/siteverify/feedback) or its operator (the dashboard) learned
-- later about a verification: legitimate or fraudulent, why (a reason of a fixed list), a short
-- note, when and by which of the two. Relabeling overwrites: the last label wins. The columns are
-- nullable without a default, so adding them rewrites nothing; the rollups (migrations 007 to 021)
-- count nothing of them, and the writers' bulk loads (the PGlite worker's binary COPY included)
-- name their columns, so new rows simply have no label.
--
-- The columns are named feedback_*, never a bare `label`: the older releases' queries name an
-- unnested anomaly `label` (topAnomalies, and the rollups' trigger of migration 021), which a
-- column of that name would make ambiguous, failing their stats, their inserts and every delete
-- while they still run beside this release (test/storage/migration-upgrades.test.ts runs them).
--
-- Two partial indexes. verifications_site_challenge finds the scored row a token (or the id
-- Siteverify answered, metadata.verification_id: the challenge's id) came from; it holds nearly
-- every row from the start; the log's verificationId filter (listing and export) reads it too.
-- verifications_site_labeled reads a site's labels for its stats, which count the labeled rows
-- created within the range (keyed by created_at, as the stats filter them): labels are few, so it
-- stays small whatever the log's size, and starts empty.
--
-- Cost, measured on PostgreSQL 15 with a million rows of the log (437 MB), its pages in memory:
-- the ALTER TABLE reads the table once to check the two CHECK constraints (0.12-0.14 s), building
-- verifications_site_challenge takes 0.55-0.68 s and verifications_site_labeled 0.12-0.17 s: some
-- 0.8-1.0 s per million rows in all, more when the table must be read from disk. The ALTER TABLE
-- takes an ACCESS EXCLUSIVE lock on verifications held until the migration commits, so for that
-- long every read of the log waits too (the log, its export, stats over a partial hour, the
-- retention's deletes, feedback), besides the writers: each instance's verification log writer
-- waits on its INSERT with that batch (up to 500 rows) and keeps buffering the new rows in memory,
-- up to 100,000 rows (maxBufferedRows), dropping the oldest beyond that (counted as buffer_full);
-- verifications themselves are answered meanwhile, never waiting on the log.
--
-- Siteverify feedback named by verification_id alone finds its site by the secret's hash, in any
-- of the three key columns (site-repository.ts, findBySecretKeyHash): one index each, which the
-- planner combines (a BitmapOr) instead of reading every site on each unauthenticated call. The
-- sites are few: building them is instant.
--
-- Rolling upgrade: instances of an older version, still running during the upgrade, neither read
-- nor write the columns; their rows are written as before (unlabeled), and their stats show no
-- feedback until they are replaced. A feedback call that reaches one of them is a 404 of the
-- unknown route: a backend retries it later.
ALTER TABLE verifications
  ADD COLUMN feedback_label text CHECK (feedback_label IN ('legitimate', 'fraudulent')),
  ADD COLUMN feedback_reason text,
  ADD COLUMN feedback_note text,
  ADD COLUMN feedback_at timestamptz,
  ADD COLUMN feedback_source text CHECK (feedback_source IN ('siteverify', 'dashboard'));

CREATE INDEX verifications_site_challenge ON verifications (site_id, challenge_id) WHERE challenge_id IS NOT NULL AND action <> 'rejected';
CREATE INDEX verifications_site_labeled ON verifications (site_id, created_at) WHERE feedback_label IS NOT NULL;

CREATE INDEX sites_secret_key_hash ON sites (secret_key_hash);
CREATE INDEX sites_previous_secret_key_hash ON sites (previous_secret_key_hash);
CREATE INDEX sites_earlier_secret_key_hash ON sites (earlier_secret_key_hash);

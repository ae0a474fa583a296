-- The UTC hour whose repeated attempts an audit event counts (account.login_failed,
-- account.password_check_failed, account.two_factor_asked, account.two_factor_failed,
-- account.passkey_refused: one event per account, action and hour, audit-log-repository.ts
-- recordRepeated); null for every other event. The unique index makes the hour's event one row:
-- the hour's first attempts, written at once on PostgreSQL, each looked for the hour's row, found
-- none (READ COMMITTED: not one of them had committed) and inserted its own, two or more events
-- for the hour instead of one counting them. Now they insert ... ON CONFLICT on this index: one
-- inserts, the others wait for it and count in its row.
--
-- The column is nullable without a default, so adding it rewrites nothing. The index holds the
-- repeated events only; building it reads the whole log once, while the ACCESS EXCLUSIVE lock of
-- the ALTER TABLE is held until the migrations' transaction commits (migrate.ts): changes that
-- record an event wait meanwhile, as for migration 028. No API or export reads the column: the
-- log's reads name their columns (listPage).
--
-- Events of earlier hours keep null: their hour is over, nothing counts in them again. The events
-- of the hour the upgrade runs in still count attempts: written before the migration, they have
-- no hour, and the first attempt after it would start a second event for the hour. The UPDATE
-- gives each account's latest event of each repeated action of this hour (the one the earlier
-- version counted in; a race may have left more) the hour, so that counting goes on in it; it
-- reads this hour's events only (audit_events_time, migration 024).
--
-- Rolling upgrade: instances of an older version, still running during the upgrade, insert the
-- hour's event without an hour (they name their columns) and count in the hour's latest event,
-- this version's too, as before. An hour's attempts that reach both versions may then make two
-- events for the hour, their counts adding up to the attempts; once every instance runs this
-- version, an hour has one.
ALTER TABLE audit_events ADD COLUMN repeated_hour timestamptz;

UPDATE audit_events SET repeated_hour = date_trunc('hour', now(), 'UTC')
 WHERE id IN (
   SELECT DISTINCT ON (account_id, action) id FROM audit_events
    WHERE created_at >= date_trunc('hour', now(), 'UTC')
      AND action IN ('account.login_failed', 'account.password_check_failed', 'account.two_factor_asked', 'account.two_factor_failed', 'account.passkey_refused')
      AND (details->>'firstAt')::timestamptz >= date_trunc('hour', now(), 'UTC')
    ORDER BY account_id, action, created_at DESC, id DESC
 );

CREATE UNIQUE INDEX audit_events_repeated_hour ON audit_events (account_id, action, repeated_hour) WHERE repeated_hour IS NOT NULL;

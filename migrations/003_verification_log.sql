-- Every submission to /api/v1/verify, accepted or not, written in batches off the response path.
-- action is allow, challenge or block for scored submissions and rejected for those refused
-- before scoring (error_code says why). No foreign key: rows of a deleted site are removed by
-- the delete itself, and a batch must never fail because one site vanished meanwhile.
CREATE TABLE verifications (
  id uuid PRIMARY KEY,
  site_id uuid NOT NULL,
  challenge_id uuid,
  created_at timestamptz NOT NULL,
  action text NOT NULL,
  error_code text,
  risk_score smallint,
  anomalies text[] NOT NULL DEFAULT '{}',
  country_code text,
  client_ip text,
  hostname text,
  user_agent text,
  difficulty smallint,
  solve_time_ms integer
);
-- The log reads newest first per site, optionally by action; stats read a time range per site.
CREATE INDEX verifications_site_time ON verifications (site_id, created_at DESC, id DESC);
CREATE INDEX verifications_site_action_time ON verifications (site_id, action, created_at DESC, id DESC);

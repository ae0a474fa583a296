-- Every webhook delivery attempt: what was sent where and how it ended. Never the payload's
-- signature or the secret. Rows go with their site; the service keeps only the recent ones per
-- site (the newest 1000, none older than 30 days), pruning as it records.
CREATE TABLE webhook_deliveries (
  id uuid PRIMARY KEY,
  site_id uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  event text NOT NULL,
  url text NOT NULL,
  is_test boolean NOT NULL DEFAULT false,
  outcome text NOT NULL CHECK (outcome IN ('delivered', 'failed', 'timeout', 'refused')),
  status_code smallint,
  latency_ms integer NOT NULL,
  error text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_site_time ON webhook_deliveries (site_id, created_at DESC, id DESC);

-- Business counters of /metrics that survive restarts. Each instance adds its deltas.
CREATE TABLE metric_counters (
  name text NOT NULL,
  labels text NOT NULL DEFAULT '',
  value double precision NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (name, labels)
);

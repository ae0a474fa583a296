-- Step-ups the client had solved before the logged verification, so that every risk score can be
-- recomputed from its row: min(100, sum of the anomalies' weights) - 15 * step_ups, floored at 0.
ALTER TABLE verifications ADD COLUMN step_ups smallint NOT NULL DEFAULT 0;

-- How a site's tokens fared at Siteverify, per UTC hour: redeemed (success) or refused, by error
-- code (invalid-input-secret: a secret a rotation replaced; timeout-or-duplicate: spent or
-- expired; invalid-input-response: another site key named). Only its own backend's calls count
-- (src/domain/siteverify/redeem-token.ts, Redemption). Against the tokens the site issued
-- (its allowed verifications), an operator sees whether the backend redeems them at all, and
-- whether it sends an old secret after a rotation. Counted in memory by each instance and added
-- here every few seconds (src/plugins/siteverify-counts.ts); the rows go with their site, and
-- those older than the log's retention with the log's sweep.
CREATE TABLE siteverify_counts (
  site_id uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  hour timestamptz NOT NULL,
  outcome text NOT NULL,
  count bigint NOT NULL,
  PRIMARY KEY (site_id, hour, outcome)
);

-- When counting began (this migration): hours before it have tokens issued and no redemptions
-- counted, which the stats must not compare.
CREATE TABLE siteverify_counting (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  started_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO siteverify_counting DEFAULT VALUES;

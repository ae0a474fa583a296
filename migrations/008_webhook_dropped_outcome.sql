-- Events dropped because too many deliveries were in flight are listed in the site's own
-- delivery log as well (one row per site and minute, its error saying how many), so that an
-- operator sees them where the other outcomes are.
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_outcome_check;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_outcome_check
  CHECK (outcome IN ('delivered', 'failed', 'timeout', 'refused', 'dropped'));

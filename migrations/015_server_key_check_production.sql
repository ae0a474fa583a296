-- Migration 012 gained its recorded_in_production column after it had first shipped without it;
-- a database that had applied the first form never got the column, and the start that reads it
-- failed. This adds it there (and does nothing where 012 made it). A check recorded before the
-- column existed counts as production's: an instance started with another secret stops, as it
-- did when the check was recorded, and `npm run secret -- adopt` is the way to change it.
ALTER TABLE server_key_check ADD COLUMN IF NOT EXISTS recorded_in_production boolean NOT NULL DEFAULT true;
ALTER TABLE server_key_check ALTER COLUMN recorded_in_production DROP DEFAULT;

-- The device of each scored verification that described one: its ephemeral id on the site, the
-- value Siteverify answers as metadata.ephemeral_id (src/domain/token/ephemeral-id.ts), so that an
-- operator whose backend flagged a device finds its verifications, whatever their addresses. The
-- index is partial: rows without a device (rejected submissions, scripts, rows logged before this
-- migration) are not in it, so building it on a long log reads the table once and writes little.
ALTER TABLE verifications ADD COLUMN device text;

CREATE INDEX verifications_site_device_time ON verifications (site_id, device, created_at DESC, id DESC) WHERE device IS NOT NULL;

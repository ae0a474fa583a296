-- A counter of the account's credential changes, which every "known browser" cookie
-- (tollgate_device, routes/v1/sessions/known-device.ts) signs: a password change (PUT
-- /api/v1/me/password, `npm run account -- set-password`), `end-sessions`, `disable` and `enable`,
-- and "log out everywhere else" add one, so that a cookie copied before no longer spares anyone the
-- account-wide log-in limit.
--
-- NOT NULL with a constant default: adding it rewrites nothing. Rolling upgrade: instances of an
-- older version sign cookies without it, which the new version does not take: each browser is
-- known again from its next log-in.
ALTER TABLE accounts ADD COLUMN credential_epoch integer NOT NULL DEFAULT 0;

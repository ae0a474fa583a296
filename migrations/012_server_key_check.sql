-- What says which TOLLGATE_SECRET this database goes with: an HMAC of a fixed text under a key
-- derived from the secret for this purpose alone (it reveals nothing of the secret or of the other
-- keys). The first instance to start writes it; in production an instance started with another
-- secret stops at once rather than start, report ready, and refuse the other instances' tokens.
-- `npm run secret -- change` replaces it with the webhook secrets it seals again. A check recorded
-- by a development or test start (a database that production had not started on yet) gives way to
-- the first production start's, so that such a start cannot lock production out.
CREATE TABLE server_key_check (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  key_check text NOT NULL,
  recorded_in_production boolean NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now()
);

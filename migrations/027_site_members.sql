-- Sharing a site with teammates. The account that made a site stays its owner (sites.account_id);
-- site_members lists the other accounts that may open it, each with a role: 'admin' may do all the
-- owner may but delete the site, 'viewer' may only read it. Memberships go with their site and
-- with their account. The second index makes "the sites shared with this account" (the site list,
-- on every page of the dashboard) an index lookup.
CREATE TABLE site_members (
  site_id uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('admin', 'viewer')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (site_id, account_id)
);
CREATE INDEX site_members_account ON site_members (account_id, site_id);

-- Invitations to join a site, pending until accepted (the row is then deleted, in the transaction
-- that adds the member), revoked (deleted) or expired. Only the token's SHA-256 is kept: the token
-- is shown once to whoever invited. email, when set, is the only address that may accept.
-- invited_by cascades rather than being set null: an account that is deleted (or a member who is
-- removed, which the service handles itself) must not keep a way back in through a link it holds.
CREATE TABLE site_invitations (
  id uuid PRIMARY KEY,
  site_id uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  token_hash text NOT NULL UNIQUE,
  role text NOT NULL CHECK (role IN ('admin', 'viewer')),
  email text,
  invited_by uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX site_invitations_site ON site_invitations (site_id, created_at);
CREATE INDEX site_invitations_inviter ON site_invitations (invited_by);

-- Two tabs (or two scripts) that read a site and then saved it kept only the last save: a domain
-- added in one was gone after the other saved its own list. Every change of a site's row now
-- counts up its revision, which the dashboard API shows as the ETag; a PUT with If-Match is
-- refused (412) when the site has changed since.
ALTER TABLE sites ADD COLUMN revision bigint NOT NULL DEFAULT 1;

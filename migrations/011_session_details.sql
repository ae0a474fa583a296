-- What a person needs to tell their sessions apart on the Account page: the browser's User-Agent
-- and the address it logged in from (both as the log-in sent them, the User-Agent cut to 512
-- characters), and when the session was last used (to the minute). Older sessions have none.
ALTER TABLE sessions
  ADD COLUMN user_agent text,
  ADD COLUMN client_ip text,
  ADD COLUMN last_seen_at timestamptz;

-- Replacing a site's webhook secret keeps the secret it replaced signing beside the new one for a
-- while (24 hours unless the operator ends it): each delivery's webhook-signature then carries
-- both (`v1,<new> v1,<old>`, as Standard Webhooks allows), so a receiver still holding the old
-- secret keeps accepting deliveries until it is moved. Sealed as webhook_secret_ciphertext is
-- (AES-256-GCM under the key derived from TOLLGATE_SECRET, bound to the site), with the moment it
-- stops signing.
ALTER TABLE sites
  ADD COLUMN previous_webhook_secret_ciphertext text,
  ADD COLUMN previous_webhook_secret_expires_at timestamptz,
  ADD CONSTRAINT sites_previous_webhook_secret_complete
    CHECK ((previous_webhook_secret_ciphertext IS NULL) = (previous_webhook_secret_expires_at IS NULL));

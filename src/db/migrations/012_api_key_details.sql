-- What an operator needs to tell keys apart without their secrets: the secret's last four characters, and when the key
-- was last used (written at most once a minute per process, off the request path). Only adds columns.
ALTER TABLE api_keys ADD COLUMN secret_last4 text;
ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;

-- The merchant dashboard: accounts that own products, their users and roles, sessions shared by every process, the
-- audit log, invitations; keys that stop at a set time (a roll's overlap); webhook secrets sealed with a key held
-- outside the database; what a webhook endpoint answered. Adds tables and columns, and relaxes one constraint.

CREATE TABLE accounts (
  id          text PRIMARY KEY,
  name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- Products made by the operator API belong to no account and may use live mode; a signed-up account's product waits
-- for the operator to enable live mode (POST /admin/v1/products/{id}/live).
ALTER TABLE products ADD COLUMN account_id text REFERENCES accounts (id);
ALTER TABLE products ADD COLUMN live_enabled boolean NOT NULL DEFAULT true;
CREATE INDEX products_account ON products (account_id, created_at) WHERE account_id IS NOT NULL;

CREATE TABLE users (
  id                  text PRIMARY KEY,
  email               text NOT NULL UNIQUE CHECK (length(email) BETWEEN 3 AND 254 AND email = lower(email)),
  -- scrypt$<log2 N>$<r>$<p>$<salt>$<hash>: the parameters travel with the hash, so they can be raised later.
  password_hash       text NOT NULL,
  -- Failed log-ins in the current window; past the limit the account refuses log-ins until the window ends.
  login_failures      integer NOT NULL DEFAULT 0,
  login_window_start  timestamptz,
  -- The TOTP seed, sealed like webhook secrets; null without a second factor. The last time step accepted, so that
  -- a code is never taken twice; recovery codes as SHA-256 hex, each removed when used.
  totp_sealed         text,
  totp_last_step      bigint,
  recovery_codes      text[] NOT NULL DEFAULT '{}',
  created_at          timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memberships (
  account_id  text NOT NULL REFERENCES accounts (id),
  user_id     text NOT NULL REFERENCES users (id),
  role        text NOT NULL CHECK (role IN ('owner', 'developer', 'viewer')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, user_id)
);
CREATE INDEX memberships_user ON memberships (user_id);

CREATE TABLE dashboard_sessions (
  -- SHA-256 of the cookie's token: the table alone does not let anyone in.
  token_hash    bytea PRIMARY KEY,
  user_id       text NOT NULL REFERENCES users (id),
  account_id    text NOT NULL REFERENCES accounts (id),
  csrf_token    text NOT NULL,
  livemode      boolean NOT NULL DEFAULT false,
  -- A password was right and the second factor is still to come: this session opens nothing else meanwhile.
  second_factor_pending boolean NOT NULL DEFAULT false,
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL,
  revoked_at    timestamptz
);
CREATE INDEX dashboard_sessions_user ON dashboard_sessions (user_id) WHERE revoked_at IS NULL;
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);

CREATE TABLE invitations (
  token_hash   bytea PRIMARY KEY,
  id           text NOT NULL UNIQUE,
  account_id   text NOT NULL REFERENCES accounts (id),
  email        text NOT NULL CHECK (length(email) BETWEEN 3 AND 254 AND email = lower(email)),
  role         text NOT NULL CHECK (role IN ('owner', 'developer', 'viewer')),
  invited_by   text NOT NULL REFERENCES users (id),
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  accepted_at  timestamptz,
  revoked_at   timestamptz
);
CREATE INDEX invitations_account ON invitations (account_id, created_at DESC);

CREATE TABLE audit_log (
  seq         bigserial PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts (id),
  user_id     text REFERENCES users (id),
  action      text NOT NULL CHECK (length(action) <= 100),
  target      text CHECK (length(target) <= 300),
  livemode    boolean,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_log_account ON audit_log (account_id, seq DESC);

-- A rolled key keeps working until this time, then answers 401; null: until revoked.
ALTER TABLE api_keys ADD COLUMN expires_at timestamptz;

-- Signing secrets sealed with TOLOV_SECRETS_KEY (AES-256-GCM). The service seals any secret still in plain text at
-- start, and clears the plain column; processes of an earlier version must be stopped before this one starts.
ALTER TABLE webhook_endpoints ADD COLUMN secret_sealed text;
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret_sealed text;
ALTER TABLE webhook_endpoints ALTER COLUMN secret DROP NOT NULL;

-- The first bytes of what the endpoint answered, for the delivery log.
ALTER TABLE webhook_attempts ADD COLUMN response_excerpt text CHECK (length(response_excerpt) <= 1000);

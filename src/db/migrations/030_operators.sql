-- Tolov's own staff. An operator is a login (users: password, second factor, recovery codes, all as the dashboard's)
-- with a role here, and no merchant account: its sessions are dashboard_sessions without an account, which open the
-- operator's console and nothing of the dashboard's.
CREATE TABLE operators (
  user_id     text PRIMARY KEY REFERENCES users (id),
  role        text NOT NULL CHECK (role IN ('admin', 'support')),
  -- The admin who invited them; null for the first, created with the operator token.
  invited_by  text REFERENCES users (id),
  created_at  timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE dashboard_sessions ALTER COLUMN account_id DROP NOT NULL;

-- An admin's invitation of another operator, mailed to the invitee; single use, stored as the SHA-256 of the token.
CREATE TABLE operator_invitations (
  token_hash   bytea PRIMARY KEY,
  id           text NOT NULL UNIQUE,
  email        text NOT NULL CHECK (length(email) BETWEEN 3 AND 254 AND email = lower(email)),
  role         text NOT NULL CHECK (role IN ('admin', 'support')),
  invited_by   text NOT NULL REFERENCES users (id),
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  accepted_at  timestamptz,
  revoked_at   timestamptz
);
CREATE INDEX operator_invitations_open ON operator_invitations (created_at DESC) WHERE accepted_at IS NULL AND revoked_at IS NULL;

-- Every operator action, by whom, on what and when. Append-only: no statement may change or remove a row.
CREATE TABLE operator_audit (
  seq          bigserial PRIMARY KEY,
  -- The operator who acted; null when the operator token did (the API).
  operator_id  text REFERENCES users (id),
  via          text NOT NULL CHECK (via IN ('console', 'api')),
  action       text NOT NULL CHECK (length(action) BETWEEN 1 AND 100),
  target       text CHECK (length(target) <= 254),
  detail       text CHECK (length(detail) <= 1000),
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX operator_audit_target ON operator_audit (target, seq DESC);

CREATE FUNCTION operator_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the operator audit log is append-only: % refused', TG_OP USING ERRCODE = '42501';
END $$;
CREATE TRIGGER operator_audit_no_change BEFORE UPDATE OR DELETE ON operator_audit
  FOR EACH ROW EXECUTE FUNCTION operator_audit_append_only();
CREATE TRIGGER operator_audit_no_truncate BEFORE TRUNCATE ON operator_audit
  FOR EACH STATEMENT EXECUTE FUNCTION operator_audit_append_only();

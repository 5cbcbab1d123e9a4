-- Turns at guarded work (a password, a code, a sign-up), shared by every process: a turn is taken, atomically, before
-- the work it guards, so that parallel guesses never run more checks than the limit.
CREATE TABLE throttles (
  -- '<policy>:<subject>', e.g. 'password-address:203.0.113.9'; e-mails appear only as their SHA-256.
  key           text PRIMARY KEY CHECK (length(key) <= 200),
  window_start  timestamptz NOT NULL,
  -- Turns taken in the window and not given back (a success gives its turn back).
  hits          integer NOT NULL CHECK (hits >= 0),
  -- The earliest moment the next turn may start, once the window's free turns are used.
  next_at       timestamptz NOT NULL,
  -- When the row no longer holds anything back: it may be deleted.
  expires_at    timestamptz NOT NULL
);
CREATE INDEX throttles_expiry ON throttles (expires_at);

-- Failures are counted in throttles now, per address and per account, the password's apart from the second factor's.
ALTER TABLE users DROP COLUMN login_failures, DROP COLUMN login_window_start;

-- What a session proved: a session that did not pass the user's second factor cannot change it.
ALTER TABLE dashboard_sessions ADD COLUMN second_factor boolean NOT NULL DEFAULT false;

-- Mail waiting to be sent, written in the transaction of what it tells. Its body carries links that open accounts: it
-- is sealed like the other secrets, and erased once the mail is sent or given up.
CREATE TABLE mail_outbox (
  id               text PRIMARY KEY,
  recipient        text NOT NULL CHECK (length(recipient) BETWEEN 3 AND 254),
  subject          text NOT NULL CHECK (length(subject) <= 200),
  body_sealed      text,
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  sent_at          timestamptz,
  failed_at        timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at) WHERE sent_at IS NULL AND failed_at IS NULL;
CREATE INDEX mail_outbox_created ON mail_outbox (created_at);

-- A sign-up waits here until the e-mail's owner opens the link it was sent and chooses the password: only then is there
-- a user.
CREATE TABLE signups (
  token_hash     bytea PRIMARY KEY,
  email          text NOT NULL CHECK (length(email) BETWEEN 3 AND 254 AND email = lower(email)),
  business_name  text NOT NULL CHECK (length(business_name) BETWEEN 1 AND 200),
  created_at     timestamptz NOT NULL DEFAULT now(),
  expires_at     timestamptz NOT NULL,
  used_at        timestamptz
);
CREATE INDEX signups_expiry ON signups (expires_at);

-- Links that set a new password: single use, short-lived, stored as the SHA-256 of the token.
CREATE TABLE password_resets (
  token_hash  bytea PRIMARY KEY,
  user_id     text NOT NULL REFERENCES users (id),
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz
);
CREATE INDEX password_resets_user ON password_resets (user_id) WHERE used_at IS NULL;
CREATE INDEX password_resets_expiry ON password_resets (expires_at);

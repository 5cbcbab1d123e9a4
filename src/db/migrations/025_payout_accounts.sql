-- Where a product's payouts go, one account per product and mode, set by an owner in the dashboard with the second
-- factor. A change of an account already set holds payouts until `payouts_held_until`, so that a hijacked session
-- cannot send the balance to a new account before the owner notices the mail and the event.
CREATE TABLE payout_accounts (
  id                  text NOT NULL UNIQUE, -- names the product's account in its mode, whatever it is changed to
  product_id          text NOT NULL REFERENCES products (id),
  livemode            boolean NOT NULL,
  bank_mfo            text NOT NULL CHECK (bank_mfo ~ '^[0-9]{5}$'),
  account_number      text NOT NULL CHECK (account_number ~ '^[0-9]{20}$'),
  tin                 text NOT NULL CHECK (tin ~ '^[0-9]{9}$'),
  holder_name         text NOT NULL CHECK (length(holder_name) BETWEEN 1 AND 200),
  payouts_held_until  timestamptz,
  updated_at          timestamptz NOT NULL DEFAULT now(),
  created_at          timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (product_id, livemode)
);

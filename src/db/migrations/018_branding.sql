-- A product's branding on the hosted pages: the name buyers see, a brand colour, and a logo. Logos are kept once per
-- content (named by their SHA-256), so that their address never changes meaning and browsers may cache it for good.
ALTER TABLE products
  ADD COLUMN display_name text CHECK (length(display_name) BETWEEN 1 AND 100),
  ADD COLUMN brand_color  text CHECK (brand_color ~ '^#[0-9a-f]{6}$'),
  ADD COLUMN logo_digest  text;

CREATE TABLE brand_logos (
  digest       text PRIMARY KEY CHECK (digest ~ '^[0-9a-f]{64}$'),
  content_type text NOT NULL CHECK (content_type IN ('image/png', 'image/jpeg', 'image/webp')),
  body         bytea NOT NULL CHECK (length(body) <= 131072),
  created_at   timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE products ADD CONSTRAINT products_logo FOREIGN KEY (logo_digest) REFERENCES brand_logos (digest);

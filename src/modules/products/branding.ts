// A product's branding on the hosted pages: the name buyers see, its colour, its logo. Logos are images Tolov serves
// itself (the pages load nothing from another host), checked by their first bytes: PNG, JPEG or WebP, never SVG,
// which can carry script.
import { createHash } from 'node:crypto';
import { ApiError, notFound } from '../../core/errors.js';
import type { Queryable, Transaction } from '../../db/types.js';

/** The longest name buyers see in place of the product's. */
export const DISPLAY_NAME_MAX = 100;
/** A brand colour as it is given: `#RRGGBB`, either case. */
export const BRAND_COLOR_PATTERN = '^#[0-9A-Fa-f]{6}$';
/** A logo's largest size: a header image, not a photo. */
export const LOGO_MAX_BYTES = 128 * 1024;
export const LOGO_TYPES = ['image/png', 'image/jpeg', 'image/webp'] as const;
export type LogoType = (typeof LOGO_TYPES)[number];

export interface Branding {
  productId: string;
  /** What buyers see instead of the product's own name; null: the product's name. */
  displayName: string | null;
  /** `#rrggbb`, lower case; null: Tolov's colour. */
  brandColor: string | null;
  /** The SHA-256 of the logo's bytes, which names it; null: no logo. */
  logoDigest: string | null;
}

/** A logo checked by `logoOfBytes`: its type is what its bytes say, its digest names it. */
export interface Logo {
  contentType: LogoType;
  body: Buffer;
  digest: string;
}

export interface BrandingChange {
  displayName?: string | null;
  brandColor?: string | null;
  /** null removes the logo. */
  logo?: Logo | null;
}

const DATA_URL = /^data:(image\/(?:png|jpeg|webp));base64,([A-Za-z0-9+/]+={0,2})$/;

/** The image type its first bytes say, or null for anything else. */
function sniffedType(body: Buffer): LogoType | null {
  if (body.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (body.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff]))) return 'image/jpeg';
  if (body.subarray(0, 4).toString('latin1') === 'RIFF' && body.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  return null;
}

/** A logo's bytes, checked: a PNG, JPEG or WebP image (of the `declared` type, when one is) of at most LOGO_MAX_BYTES. */
function checkedLogo(body: Buffer, declared: LogoType | null): Logo {
  if (body.length > LOGO_MAX_BYTES) {
    throw new ApiError('VALIDATION_ERROR', `logo is ${body.length} bytes; at most ${LOGO_MAX_BYTES} are taken`, { param: 'logo' });
  }
  const contentType = sniffedType(body);
  if (contentType === null || (declared !== null && contentType !== declared)) {
    throw new ApiError('VALIDATION_ERROR', `logo is not a ${declared ?? 'PNG, JPEG or WebP'} image`, { param: 'logo' });
  }
  return { contentType, body, digest: createHash('sha256').update(body).digest('hex') };
}

/** An uploaded logo's bytes, of whichever of the three types they are. */
export const logoOfBytes = (body: Buffer): Logo => checkedLogo(body, null);

/** The logo of a data URL, of the type the URL says. */
export function logoOfDataUrl(dataUrl: string): Logo {
  const match = DATA_URL.exec(dataUrl);
  if (!match) throw new ApiError('VALIDATION_ERROR', 'logo must be a data: URL of a PNG, JPEG or WebP image in base64 (data:image/png;base64,…)', { param: 'logo' });
  return checkedLogo(Buffer.from(match[2]!, 'base64'), match[1] as LogoType);
}

const BRANDING_COLUMNS = 'id AS "productId", display_name AS "displayName", brand_color AS "brandColor", logo_digest AS "logoDigest"';

export async function brandingOf(db: Queryable, productId: string): Promise<Branding> {
  const [row] = await db.query<Branding>(`SELECT ${BRANDING_COLUMNS} FROM products WHERE id = $1`, [productId]);
  if (!row) throw notFound('product');
  return row;
}

/**
 * Changes what `change` names and leaves the rest. A logo is stored once per content, however many products use it,
 * and deleted when the last product using it moves on: the table holds at most one logo per product.
 */
export async function changeBranding(tx: Transaction, productId: string, change: BrandingChange): Promise<Branding> {
  const logo = change.logo ?? null;
  const [before] = await tx.query<{ logo_digest: string | null }>('SELECT logo_digest FROM products WHERE id = $1 FOR UPDATE', [productId]);
  if (!before) throw notFound('product');
  if (logo) {
    await tx.query('INSERT INTO brand_logos (digest, content_type, body) VALUES ($1, $2, $3) ON CONFLICT (digest) DO NOTHING', [
      logo.digest,
      logo.contentType,
      logo.body,
    ]);
  }
  const [row] = await tx.query<Branding>(
    `UPDATE products
        SET display_name = CASE WHEN $2 THEN $3 ELSE display_name END,
            brand_color = CASE WHEN $4 THEN lower($5) ELSE brand_color END,
            logo_digest = CASE WHEN $6 THEN $7 ELSE logo_digest END
      WHERE id = $1 RETURNING ${BRANDING_COLUMNS}`,
    [productId, 'displayName' in change, change.displayName ?? null, 'brandColor' in change, change.brandColor ?? null, 'logo' in change, logo?.digest ?? null],
  );
  if (before.logo_digest !== null && before.logo_digest !== row!.logoDigest) {
    await tx.query('DELETE FROM brand_logos l WHERE digest = $1 AND NOT EXISTS (SELECT 1 FROM products WHERE logo_digest = l.digest)', [before.logo_digest]);
  }
  return row!;
}

export async function logoOf(db: Queryable, digest: string): Promise<{ contentType: LogoType; body: Buffer } | undefined> {
  const [row] = await db.query<{ content_type: LogoType; body: Buffer }>('SELECT content_type, body FROM brand_logos WHERE digest = $1', [digest]);
  return row && { contentType: row.content_type, body: row.body };
}

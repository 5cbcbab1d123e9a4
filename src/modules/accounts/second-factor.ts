// The optional second factor: TOTP (RFC 6238, as authenticator apps make it, through the otpauth library) and
// single-use recovery codes.
import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';
import { sha256 } from '../../lib/secrets.js';

const ISSUER = 'Tolov';
const PERIOD_SECONDS = 30;
/** Codes of the step before and after are accepted too: a phone's clock a little off still works. */
const WINDOW_STEPS = 1;
export const RECOVERY_CODES = 10;
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

const totpOf = (base32: string, email = '') => new TOTP({ issuer: ISSUER, label: email, secret: Secret.fromBase32(base32), period: PERIOD_SECONDS });

/** A new seed, with what an authenticator app scans (an inline SVG QR code) or types (the seed in base32). */
export function newSeed(email: string): Promise<{ base32: string; uri: string; qrSvg: string }> {
  return seedShown(new Secret({ size: 20 }).base32, email);
}

/** A seed as its set-up shows it: its text, its otpauth URI, and that URI as a QR code. */
export async function seedShown(base32: string, email: string): Promise<{ base32: string; uri: string; qrSvg: string }> {
  const uri = totpOf(base32, email).toString();
  return { base32, uri, qrSvg: await QRCode.toString(uri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' }) };
}

/** The time step `code` belongs to if it is right for the seed now (within the window), else null. */
export function stepOf(base32: string, code: string, nowMs = Date.now()): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const delta = totpOf(base32).validate({ token: code, timestamp: nowMs, window: WINDOW_STEPS });
  return delta === null ? null : Math.floor(nowMs / 1000 / PERIOD_SECONDS) + delta;
}

/** The code an authenticator shows now (tests and the set-up check use it). */
export const codeNow = (base32: string, nowMs = Date.now()) => totpOf(base32).generate({ timestamp: nowMs });

/** Ten codes like `k7pm-x2qd`, each usable once, shown once; stored as hashes. */
export function newRecoveryCodes(): { codes: string[]; hashes: string[] } {
  const codes = Array.from({ length: RECOVERY_CODES }, () => {
    const chars = randomChars(8);
    return `${chars.slice(0, 4)}-${chars.slice(4)}`;
  });
  return { codes, hashes: codes.map(recoveryHash) };
}

/** Characters of RECOVERY_ALPHABET drawn uniformly (bytes past the last whole multiple of its size are skipped). */
function randomChars(count: number): string {
  const limit = 256 - (256 % RECOVERY_ALPHABET.length);
  let out = '';
  while (out.length < count) {
    for (const byte of randomBytes(count * 2)) if (byte < limit && out.length < count) out += RECOVERY_ALPHABET[byte % RECOVERY_ALPHABET.length];
  }
  return out;
}

export const recoveryHash = (code: string) => sha256(code.trim().toLowerCase()).toString('hex');
export const looksLikeRecoveryCode = (code: string) => /^[a-z0-9]{4}-[a-z0-9]{4}$/i.test(code.trim());

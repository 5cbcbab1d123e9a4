import { randomFillSync } from 'node:crypto';

// Base62 in ASCII order, so that ids sort the same way as the time they carry.
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const TIME_CHARS = 8; // 62^8 ms ≈ 6,900 years
const RANDOM_CHARS = 16; // ≈ 95 bits
/**
 * Bytes drawn from the system CSPRNG at a time, as `crypto.randomUUID` does: a charge makes several ids, and a call
 * into the CSPRNG for each was about 5% of the service's CPU.
 */
const POOL_BYTES = 4096;

export type IdPrefix = 'prod' | 'key' | 'ord' | 'pi' | 'card' | 'cb' | 're' | 'evt' | 'we' | 'wd' | 'req' | 'ltx';

const pool = Buffer.alloc(POOL_BYTES);
let poolUsed = POOL_BYTES;

function randomByte(): number {
  if (poolUsed === POOL_BYTES) {
    randomFillSync(pool);
    poolUsed = 0;
  }
  return pool[poolUsed++]!;
}

/** Uniformly random base62 text from the system CSPRNG (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += ALPHABET[byte % 62];
  }
  return out;
}

function encodeTime(ms: number): string {
  let out = '';
  let rest = ms;
  for (let i = 0; i < TIME_CHARS; i++) {
    out = ALPHABET[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

/** A type-prefixed, time-sortable id: `ord_` + 8 time chars + 16 random chars. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${encodeTime(Date.now())}${randomBase62(RANDOM_CHARS)}`;
}

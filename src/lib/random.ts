import { randomFillSync } from 'node:crypto';

// Base62 in ASCII order, so that ids sort the same way as the time they carry.
export const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/**
 * Bytes drawn from the system CSPRNG at a time, as `crypto.randomUUID` does: a charge makes several ids, and a call
 * into the CSPRNG for each was about 5% of the service's CPU.
 */
const POOL_BYTES = 4096;

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


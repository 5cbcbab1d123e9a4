// Passwords hashed with scrypt; the parameters are stored with each hash, so that raising them later leaves every
// existing hash verifiable.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const LOG2_COST = 15; // N = 32768: ≈ 32 MiB and tens of milliseconds per hash
const BLOCK_SIZE = 8;
const PARALLELISM = 1;
const SALT_BYTES = 16;
const HASH_BYTES = 32;
export const PASSWORD_LENGTH_MIN = 10;
export const PASSWORD_LENGTH_MAX = 200;

function derive(password: string, salt: Buffer, options: { log2Cost: number; blockSize: number; parallelism: number }): Promise<Buffer> {
  const cost = 2 ** options.log2Cost;
  const scryptOptions: ScryptOptions = {
    N: cost,
    r: options.blockSize,
    p: options.parallelism,
    maxmem: 256 * cost * options.blockSize,
  };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, HASH_BYTES, scryptOptions, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

/** `scrypt$<log2 N>$<r>$<p>$<salt>$<hash>`, base64url parts. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(password, salt, { log2Cost: LOG2_COST, blockSize: BLOCK_SIZE, parallelism: PARALLELISM });
  return ['scrypt', LOG2_COST, BLOCK_SIZE, PARALLELISM, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/** Whether `password` is the one `stored` was made from; a malformed `stored` matches nothing. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, log2Cost, blockSize, parallelism, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || salt === undefined || hash === undefined) return false;
  const expected = Buffer.from(hash, 'base64url');
  const given = await derive(password, Buffer.from(salt, 'base64url'), {
    log2Cost: Number(log2Cost),
    blockSize: Number(blockSize),
    parallelism: Number(parallelism),
  });
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** A hash of no one's password, verified against when no user has the email given, so that both take as long. */
export const UNKNOWN_USER_HASH = `scrypt$${LOG2_COST}$${BLOCK_SIZE}$${PARALLELISM}$${Buffer.alloc(SALT_BYTES).toString('base64url')}$${Buffer.alloc(HASH_BYTES).toString('base64url')}`;

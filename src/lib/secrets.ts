import { createHash, timingSafeEqual } from 'node:crypto';

export function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Constant-time equality of two secrets of any length: both are hashed first, so lengths do not leak. */
export function secretsEqual(given: string, expected: string): boolean {
  return timingSafeEqual(sha256(given), sha256(expected));
}

import { ALPHABET, randomBase62 } from '../lib/random.js';

const TIME_CHARS = 8; // 62^8 ms ≈ 6,900 years
const RANDOM_CHARS = 16; // ≈ 95 bits

export type IdPrefix = 'prod' | 'key' | 'ord' | 'pi' | 'card' | 'cb' | 're' | 'rcpt' | 'txn' | 'pacct' | 'po' | 'evt' | 'we' | 'wd' | 'req' | 'ltx' | 'acct' | 'usr' | 'inv' | 'mail' | 'plink' | 'cap' | 'rel';

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

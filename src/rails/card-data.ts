// What a buyer types, checked before any rail sees it. Pure functions: nothing here stores or logs its input.

export type Network = 'uzcard' | 'humo';

const NETWORK_BY_BIN: ReadonlyArray<[prefix: string, network: Network]> = [
  ['8600', 'uzcard'],
  ['9860', 'humo'],
];
/** Cards are issued for at most this many years ahead; a later expiry is a typo. */
const EXPIRY_YEARS_AHEAD_MAX = 20;

export type Checked<T> = { ok: true; value: T } | { ok: false; param: 'pan' | 'expiry' | 'phone'; message: string };

export function networkOf(pan: string): Network | null {
  return NETWORK_BY_BIN.find(([prefix]) => pan.startsWith(prefix))?.[1] ?? null;
}

export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

export function checkPan(pan: string): Checked<{ pan: string; network: Network }> {
  if (!/^\d{16}$/.test(pan)) return { ok: false, param: 'pan', message: 'The card number must be 16 digits' };
  if (!luhnValid(pan)) return { ok: false, param: 'pan', message: 'The card number is mistyped: its check digit is wrong' };
  const network = networkOf(pan);
  if (network === null) return { ok: false, param: 'pan', message: 'Only Uzcard (8600) and Humo (9860) cards are accepted' };
  return { ok: true, value: { pan, network } };
}

export interface Expiry {
  month: number;
  /** Four digits. */
  year: number;
}

export function formatExpiry(expiry: Expiry): string {
  return `${String(expiry.month).padStart(2, '0')}/${String(expiry.year % 100).padStart(2, '0')}`;
}

/**
 * Reads `MMYY`, `MM/YY` or `YYMM`. The last two are told apart because a current two-digit year is never a valid
 * month: of the readings that name a real month, the one that has not expired is the card's.
 */
export function checkExpiry(text: string, now: Date): Checked<Expiry> {
  const match = /^(\d{2})\/?(\d{2})$/.exec(text);
  if (!match) return { ok: false, param: 'expiry', message: 'The expiry must be MMYY, MM/YY or YYMM' };
  const [first, second] = [Number(match[1]), Number(match[2])];
  const readings: Expiry[] = [{ month: first, year: 2000 + second }];
  if (!text.includes('/')) readings.push({ month: second, year: 2000 + first });
  const real = readings.filter((reading) => reading.month >= 1 && reading.month <= 12);
  if (real.length === 0) return { ok: false, param: 'expiry', message: 'The expiry must be MMYY, MM/YY or YYMM' };
  const currentMonth = now.getUTCFullYear() * 12 + now.getUTCMonth() + 1;
  const monthIndex = (expiry: Expiry) => expiry.year * 12 + expiry.month;
  const valid = real.filter(
    (reading) => monthIndex(reading) >= currentMonth && monthIndex(reading) <= currentMonth + EXPIRY_YEARS_AHEAD_MAX * 12,
  );
  if (valid.length === 1) return { ok: true, value: valid[0]! };
  if (valid.length === 0 && real.some((reading) => monthIndex(reading) < currentMonth)) {
    return { ok: false, param: 'expiry', message: 'The card has expired' };
  }
  return { ok: false, param: 'expiry', message: 'The expiry must be MMYY, MM/YY or YYMM' };
}

/** Cards here are issued to Uzbek mobile numbers: the country code 998, then the 9 national digits. */
const UZBEK_MOBILE = /^998\d{9}$/;

export function checkPhone(phone: string): Checked<string> {
  if (!UZBEK_MOBILE.test(phone)) {
    return { ok: false, param: 'phone', message: 'The phone must be 998 and the 9 digits of an Uzbek mobile number, e.g. 998901234567' };
  }
  return { ok: true, value: phone };
}

/** First six and last four digits, the middle hidden: `860000******0007`. */
export function maskPan(pan: string): string {
  return `${pan.slice(0, 6)}${'*'.repeat(pan.length - 10)}${pan.slice(-4)}`;
}

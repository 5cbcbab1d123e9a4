// The check key of an Uzbek bank account number: its 9th digit, computed over the bank's MFO and the other digits.

/**
 * Whether the 20-digit account's 9th digit is its check key for the 5-digit MFO: over MFO + digits 1–8 + digits 10–20
 * + `9` (25 digits), the sum of the products of each pair of neighbouring digits, r = sum mod 11; the key is 9 when
 * r = 0, 0 when r = 1, else 11 − r.
 */
export function accountKeyValid(bankMfo: string, accountNumber: string): boolean {
  if (!/^\d{5}$/.test(bankMfo) || !/^\d{20}$/.test(accountNumber)) return false;
  const digits = `${bankMfo}${accountNumber.slice(0, 8)}${accountNumber.slice(9)}9`.split('').map(Number);
  let sum = 0;
  for (let index = 0; index + 1 < digits.length; index++) sum += digits[index]! * digits[index + 1]!;
  const remainder = sum % 11;
  const key = remainder === 0 ? 9 : remainder === 1 ? 0 : 11 - remainder;
  return Number(accountNumber[8]) === key;
}

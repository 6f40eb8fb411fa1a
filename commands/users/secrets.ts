import { createHash, randomBytes, randomInt } from 'node:crypto';

/** Codes sent by e-mail are kept only as hashes. */
export const hashCode = (code: string): string => createHash('sha256').update(code.trim().toUpperCase(), 'utf8').digest('hex');

// No 0/O or 1/I/L: codes are typed by people.
const ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';

/** A code a person can type: `XXXX-XXXX`, about 40 bits. */
export function newCode(): string {
  const pick = () => Array.from({ length: 4 }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');
  return `${pick()}-${pick()}`;
}

export const newCheckoutId = (): string => `co_${randomBytes(16).toString('hex')}`;

export const ACTIVATION_CODE_LIFETIME_MS = 24 * 3600 * 1000;
export const RESET_CODE_LIFETIME_MS = 3600 * 1000;

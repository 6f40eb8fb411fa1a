import { generateSecret, generateURI, verify } from 'otplib';
import { hashCode, newCode } from './secrets';

// TOTP with otplib's defaults: SHA-1, 6 digits, 30-second steps, as authenticator apps and the spec expect.

export const newTotpKey = (): string => generateSecret();

export const totpUrl = (key: string, account: string, issuer: string): string => generateURI({ issuer, label: account, secret: key });

/** The time step the token matches for this key (one step of clock drift either way), or null. */
export async function matchTotp(key: string, token: string | undefined): Promise<number | null> {
  if (!token || !/^\d{6}$/.test(token.trim())) return null;
  const result = await verify({ secret: key, token: token.trim(), epochTolerance: 30 });
  return result.valid && 'timeStep' in result ? result.timeStep : null;
}

export function newRecoveryCodes(): { codes: string[]; hashes: string[] } {
  const codes = Array.from({ length: 10 }, () => newCode());
  return { codes, hashes: codes.map(hashCode) };
}

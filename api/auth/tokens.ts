import { SignJWT, errors, jwtVerify } from 'jose';

export const TOKEN_LIFETIME_SECONDS = 30 * 24 * 3600;
const ISSUER = 'edge-ml-service';

export interface TokenClaims {
  userId: number;
  /** The user's session version when the token was issued; a password change moves it on. */
  sessionVersion: number;
  issuedAt: Date;
}

/** Session tokens: HS256 JWTs signed with the service secret (`jose`), valid for 30 days. */
export class TokenService {
  private readonly key: Uint8Array;

  constructor(secret: string) {
    this.key = new TextEncoder().encode(secret);
  }

  async issue(userId: number, sessionVersion: number, now: Date): Promise<string> {
    const iat = Math.floor(now.getTime() / 1000);
    return new SignJWT({ sv: sessionVersion })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(String(userId))
      .setIssuer(ISSUER)
      .setIssuedAt(iat)
      .setExpirationTime(iat + TOKEN_LIFETIME_SECONDS)
      .sign(this.key);
  }

  /** The claims of a valid token, or a reason why it is not one. */
  async verify(token: string): Promise<TokenClaims | { invalid: string }> {
    try {
      const { payload } = await jwtVerify(token, this.key, { issuer: ISSUER, algorithms: ['HS256'] });
      const userId = Number(payload.sub);
      const sessionVersion = payload.sv;
      if (!Number.isSafeInteger(userId) || userId <= 0 || payload.iat === undefined || typeof sessionVersion !== 'number') return { invalid: 'Invalid token' };
      return { userId, sessionVersion, issuedAt: new Date(payload.iat * 1000) };
    } catch (error) {
      if (error instanceof errors.JWTExpired) return { invalid: 'Token has expired, log in again' };
      return { invalid: 'Invalid token' };
    }
  }
}

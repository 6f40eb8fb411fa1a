import { SignJWT, errors, jwtVerify } from 'jose';
import { SocketTokenService } from '../socket/socketTokens';

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
  /** The job websocket's short-lived tokens, signed with the same secret but never valid as a session token. */
  readonly socket: SocketTokenService;

  constructor(secret: string, options: { socketTokenLifetimeSeconds?: number } = {}) {
    this.key = new TextEncoder().encode(secret);
    this.socket = new SocketTokenService(this.key, options.socketTokenLifetimeSeconds);
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
  /**
   * Tokens whose signature was checked, until they expire: a signature check costs more than the
   * rest of a small GET. Only the signature and expiry are remembered; the session version is
   * still compared with the user's on every request, so a logout or password change ends it.
   */
  private readonly verified = new Map<string, { claims: TokenClaims; expires: number }>();
  private static readonly REMEMBERED = 10_000;

  private remember(token: string, claims: TokenClaims, expires: number): void {
    // Oldest first out: Map keeps insertion order.
    if (this.verified.size >= TokenService.REMEMBERED) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(token, { claims, expires: Math.min(expires, Date.now() + 3600_000) });
  }

  async verify(token: string): Promise<TokenClaims | { invalid: string }> {
    const known = this.verified.get(token);
    if (known && known.expires > Date.now()) return known.claims;
    try {
      // Only the type issued above, and no audience: a socket token (same secret) is not a session.
      const { payload } = await jwtVerify(token, this.key, { issuer: ISSUER, algorithms: ['HS256'], typ: 'JWT' });
      const userId = Number(payload.sub);
      const sessionVersion = payload.sv;
      if (payload.aud !== undefined || !Number.isSafeInteger(userId) || userId <= 0 || payload.iat === undefined || typeof sessionVersion !== 'number') return { invalid: 'Invalid token' };
      const claims = { userId, sessionVersion, issuedAt: new Date(payload.iat * 1000) };
      this.remember(token, claims, payload.exp === undefined ? Number.POSITIVE_INFINITY : payload.exp * 1000);
      return claims;
    } catch (error) {
      if (error instanceof errors.JWTExpired) return { invalid: 'Token has expired, log in again' };
      return { invalid: 'Invalid token' };
    }
  }
}

import { SignJWT, errors, jwtVerify } from 'jose';
import type { Grant } from '../auth/grants';

/** The default lifetime (SOCKET_TOKEN_TTL_SECONDS): long enough for the SDK to fetch a token and connect (it retries for 60 s), short enough that a leaked one soon dies. */
export const SOCKET_TOKEN_LIFETIME_SECONDS = 10 * 60;

const ISSUER = 'edge-ml-service';
// Audience and header type tell the two kinds of token apart: a socket token lacks the login
// token's type, and a login token lacks this audience, so neither passes for the other even though
// one secret signs both.
const AUDIENCE = 'job-socket';
const TYPE = 'socket+jwt';
/** Far more than a token we issue (about 250 characters): a longer one is refused before any work. */
const MAX_TOKEN_LENGTH = 2048;

/** Who asked for the token, and under which grant: the websocket acts for them only while the grant holds. */
export type SocketCaller = Grant;

/** The only project, or organization, whose jobs the socket may follow. */
export type SocketTokenClaims = { caller: SocketCaller; expires: Date } & ({ projectId: number } | { organizationId: number });

const subjectOf = (caller: SocketCaller): string => (caller.kind === 'user' ? `user:${caller.userId}` : caller.kind === 'apiKey' ? `apikey:${caller.apiKeyId}` : `orgkey:${caller.apiKeyId}`);

const isId = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value > 0;

/** A user's token carries the session version it was issued under (`sv`): a token without one is no user's. */
function callerOf(subject: string | undefined, sessionVersion: unknown): SocketCaller | undefined {
  const match = /^(user|apikey|orgkey):(\d{1,15})$/.exec(subject ?? '');
  if (!match) return undefined;
  const id = Number(match[2]);
  if (!isId(id)) return undefined;
  if (match[1] === 'user') return typeof sessionVersion === 'number' && Number.isSafeInteger(sessionVersion) && sessionVersion >= 0 ? { kind: 'user', userId: id, sessionVersion } : undefined;
  if (sessionVersion !== undefined) return undefined;
  return match[1] === 'apikey' ? { kind: 'apiKey', apiKeyId: id } : { kind: 'organizationKey', apiKeyId: id };
}

/**
 * Short-lived tokens for the job websocket (`GET /api/{projectId}/socket-token`): HS256 JWTs signed
 * with the service secret, bound to the caller's grant (a user's session, a key) and one project or
 * organization. They go in a URL query, where proxies may log them; that is why they are
 * short-lived and good for nothing but the socket. A valid signature is not enough: the socket
 * server checks that the grant still holds (api/socket/socketAccess.ts).
 */
export class SocketTokenService {
  constructor(
    private readonly key: Uint8Array,
    readonly lifetimeSeconds: number = SOCKET_TOKEN_LIFETIME_SECONDS,
  ) {}

  /** A token for a project's jobs (`projectId`), or an organization's (`{ organizationId }`). */
  async issue(caller: SocketCaller, scope: number | { organizationId: number }, now: Date): Promise<{ socketToken: string; expires: Date }> {
    const iat = Math.floor(now.getTime() / 1000);
    const exp = iat + this.lifetimeSeconds;
    const claims = {
      ...(typeof scope === 'number' ? { pid: scope } : { oid: scope.organizationId }),
      ...(caller.kind === 'user' ? { sv: caller.sessionVersion } : {}),
    };
    const socketToken = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: TYPE })
      .setSubject(subjectOf(caller))
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(this.key);
    return { socketToken, expires: new Date(exp * 1000) };
  }

  /** The claims of a valid socket token, or why it is not one. */
  async verify(token: string, now: Date = new Date()): Promise<SocketTokenClaims | { invalid: string }> {
    if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) return { invalid: 'Invalid socket token' };
    try {
      const { payload } = await jwtVerify(token, this.key, {
        issuer: ISSUER,
        audience: AUDIENCE,
        typ: TYPE,
        algorithms: ['HS256'],
        currentDate: now,
        requiredClaims: ['exp', 'iat', 'sub'],
      });
      const caller = callerOf(payload.sub, payload.sv);
      const expires = new Date(payload.exp! * 1000);
      // Exactly one of the two scopes.
      if (caller && isId(payload.pid) && payload.oid === undefined) return { caller, projectId: payload.pid, expires };
      if (caller && isId(payload.oid) && payload.pid === undefined) return { caller, organizationId: payload.oid, expires };
      return { invalid: 'Invalid socket token' };
    } catch (error) {
      if (error instanceof errors.JWTExpired) return { invalid: 'Socket token has expired, get a new one' };
      return { invalid: 'Invalid socket token' };
    }
  }
}

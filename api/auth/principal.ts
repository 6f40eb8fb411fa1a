import type { Context } from 'koa';
import type { ApiKeyRole } from '../../domain/project/projectEvents';
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../../domain/shared/errors';
import type { OrganizationApiKeyRole } from '../../domain/organization/organizationEvents';
import type { ApiKeyQueries } from '../../projections/apiKeys/apiKeyQueries';
import type { OrganizationQueries } from '../../projections/organizations/organizationQueries';
import type { Project } from '../../projections/projects/projectQueries';
import type { ProjectQueries } from '../../projections/projects/projectQueries';
import { refuseWhileStalled, type ProjectionHealth } from '../../projections/projectionStatus';
import type { UserDocument } from '../../projections/users/userDocument';
import type { UserQueries } from '../../projections/users/userQueries';
import { checkCookieRequestOrigin } from './sameOrigin';
import type { TokenService } from './tokens';
import type { CommandContext } from '../../commands/commandContext';
import type { ApiKeyUsageRecorder } from '../../commands/projects/projectCommands';
import { deepFreeze } from '../../stores/readstore/deepFreeze';
import type { ReadModelMemo } from '../http/readModelMemo';

/** What an OAuth2 access token grants (issue 27): its application and scopes. */
export interface OAuthAccess {
  userId: number;
  clientId: string;
  grantId: string;
  scopes: readonly string[];
}

export type Principal =
  | { kind: 'user'; user: UserDocument; via: 'jwt' }
  /** A person's access through an application: only the operations its scopes name (`requireOAuthScope`). */
  | { kind: 'user'; user: UserDocument; via: 'oauth'; oauth: OAuthAccess }
  | { kind: 'apiKey'; apiKeyId: number; projectId: number; role: ApiKeyRole }
  /** Accepted only by the operations of its own organization (see `requirePrincipal`). */
  | { kind: 'organizationKey'; apiKeyId: number; organizationId: number; role: OrganizationApiKeyRole };

export interface AuthDeps {
  tokens: TokenService;
  apiKeys: ApiKeyQueries;
  /** Organization API keys, looked up when the key is no project's. */
  organizations?: Pick<OrganizationQueries, 'liveKey'>;
  users: UserQueries;
  /** Keeps the keys' `lastUsed`. */
  apiKeyUsage?: ApiKeyUsageRecorder;
  /** `publicUrl`: the origin that cookie-authenticated changes must come from. */
  settings: { publicUrl: string };
  /** What credentials resolved to, kept while the read models stand still (principalMemo). */
  memo?: PrincipalMemo;
  /** Whether the read models stand still behind the log (a process without the projections role): unknown credentials are then a 503. */
  health?: ProjectionHealth;
  /** The OAuth2 access tokens of the authorization server: null for none that lives. */
  oauthTokens?: { resolve(token: string): Promise<OAuthAccess | null> };
}

/** Project API keys' principals by key (with when the key expires), and token holders' user documents by id (frozen: shared by requests). */
export interface PrincipalMemo {
  apiKeys: ReadModelMemo<KeptKey>;
  users: ReadModelMemo<UserDocument>;
}

export interface KeptKey {
  principal: Principal;
  /** Epoch ms; a hard limit, checked at every use (the memo's own time is a soft one). */
  expires: number;
}

/** A safety net behind the change mark: nothing kept here depends on the clock but a key's expiry, checked apart. */
export const PRINCIPAL_MEMO_MS = 10_000;

async function projectKeyPrincipal(apiKey: string, deps: AuthDeps): Promise<Principal | undefined> {
  const now = Date.now();
  const kept = deps.memo?.apiKeys.get(apiKey, now);
  if (kept && kept.expires > now) return kept.principal;
  const mark = deps.memo?.apiKeys.mark();
  const key = await deps.apiKeys.live(apiKey, new Date(now));
  if (!key) return undefined;
  const principal: Principal = { kind: 'apiKey', apiKeyId: key.apiKeyId, projectId: key.projectId, role: key.role };
  const ends = key.expires === null ? Number.POSITIVE_INFINITY : Date.parse(key.expires);
  // An expiry that does not parse keeps nothing (live() took the key, as it did before any memo).
  if (!Number.isNaN(ends)) deps.memo?.apiKeys.set(apiKey, mark, deepFreeze({ principal, expires: ends }), 80 + apiKey.length * 2, now + PRINCIPAL_MEMO_MS);
  return principal;
}

async function userById(userId: number, deps: Pick<AuthDeps, 'users' | 'memo'>): Promise<UserDocument | null> {
  const memoKey = String(userId);
  const kept = deps.memo?.users.get(memoKey);
  if (kept) return kept;
  const mark = deps.memo?.users.mark();
  const user = await deps.users.byId(userId);
  // Weighed by the JSON it came from: near enough for a bound.
  if (user) deps.memo?.users.set(memoKey, mark, deepFreeze(user), JSON.stringify(user).length * 2, Date.now() + PRINCIPAL_MEMO_MS);
  return user;
}

/** `user:<id>` or `apikey:<id>`: the actor recorded in event metadata. */
export const actorOf = (p: Principal): string => (p.kind === 'user' ? `user:${p.user.id}` : p.kind === 'apiKey' ? `apikey:${p.apiKeyId}` : `orgkey:${p.apiKeyId}`);

/** The context of a command sent for a request: its principal as actor, its id as correlation id, now. */
export const requestContext = (principal: Principal, requestId: string): CommandContext => ({ actor: actorOf(principal), correlationId: requestId, now: new Date() });

/**
 * Credentials in the places the official SDK sends them: `x-api-key`; a JWT in `x-jwt-token` or
 * the `jwt` cookie; an OAuth2 `Authorization: Bearer` token. Credentials that are present must be
 * valid: a bad API key is refused even when a good JWT comes along with it.
 */
export async function authenticate(ctx: Context, deps: AuthDeps): Promise<Principal | null> {
  const apiKey = ctx.get('x-api-key');
  if (apiKey) {
    const key = await projectKeyPrincipal(apiKey, deps);
    if (key) return key;
    const organizationKey = await deps.organizations?.liveKey(apiKey, new Date());
    if (organizationKey) return { kind: 'organizationKey', apiKeyId: organizationKey.apiKeyId, organizationId: organizationKey.organizationId, role: organizationKey.role };
    refuseWhileStalled(deps.health, 'This API key');
    // The official CLI reads this text on GET /api/projects as "maybe an organization key".
    throw new UnauthorizedError('Invalid API key', 'INVALID_API_KEY');
  }
  const bearer = /^Bearer\s+(\S+)$/i.exec(ctx.get('authorization'))?.[1];
  const header = ctx.get('x-jwt-token');
  const cookie = header ? undefined : ctx.cookies.get('jwt');
  const jwt = header || cookie;
  // A Bearer is an OAuth2 access token and nothing else, as for the real service's clients; our
  // session JWT goes in x-jwt-token or the cookie (README, "Authentication").
  if (!jwt && bearer) return oauthPrincipal(ctx, bearer, deps);
  if (!jwt) return null;
  // Before the token is even checked: a forged cross-site request learns nothing.
  if (cookie) checkCookieRequestOrigin(ctx, deps.settings.publicUrl);
  const claims = await deps.tokens.verify(jwt);
  if ('invalid' in claims) throw new UnauthorizedError(claims.invalid, 'INVALID_TOKEN');
  const user = await sessionUser(claims.userId, claims.sessionVersion, deps);
  return { kind: 'user', user, via: 'jwt' };
}

export const OAUTH_TOKEN_INVALID = 'This access token is not valid (expired, revoked, or its application deleted)';

async function oauthPrincipal(ctx: Context, token: string, deps: AuthDeps): Promise<Principal> {
  const access = token.length <= 512 && deps.oauthTokens ? await deps.oauthTokens.resolve(token) : null;
  const user = access ? await userById(access.userId, deps) : null;
  if (!access || !user || user.suspended) {
    ctx.set('WWW-Authenticate', 'Bearer error="invalid_token"');
    throw new UnauthorizedError(OAUTH_TOKEN_INVALID, 'INVALID_TOKEN');
  }
  return { kind: 'user', user, via: 'oauth', oauth: access };
}

/**
 * An OAuth principal reaches only the operations whose scope its token holds (RFC 6750's
 * insufficient_scope); any other principal passes.
 */
export function requireOAuthScope(ctx: Pick<Context, 'set'>, principal: Principal | null, scope: string | undefined): void {
  if (principal?.kind !== 'user' || principal.via !== 'oauth') return;
  if (scope !== undefined && principal.oauth.scopes.includes(scope)) return;
  ctx.set('WWW-Authenticate', `Bearer error="insufficient_scope"${scope ? `, scope="${scope}"` : ''}`);
  throw new ForbiddenError(
    scope ? `This access token lacks the scope ${scope}` : 'OAuth access tokens are not accepted by this operation: it needs a JWT token or an API key',
    'INSUFFICIENT_SCOPE',
  );
}

export const USER_GONE = 'The user of this token no longer exists';
export const SESSION_ENDED = 'This session has ended (the password was changed): log in again';

/**
 * The user of a session issued under `sessionVersion`, while it holds: the user still exists and
 * has not changed the password since (which moves the version on). The job websocket checks its
 * tokens' sessions with this too.
 */
export async function sessionUser(userId: number, sessionVersion: number, deps: Pick<AuthDeps, 'users' | 'memo' | 'health'>): Promise<UserDocument> {
  const user = await userById(userId, deps);
  if (!user) {
    refuseWhileStalled(deps.health, "This token's user");
    throw new UnauthorizedError(USER_GONE, 'INVALID_TOKEN');
  }
  if (sessionVersion !== user.sessionVersion) throw new UnauthorizedError(SESSION_ENDED, 'SESSION_ENDED');
  return user;
}

export type AuthRequirement = 'none' | 'any' | 'jwt';

/**
 * Enforces an operation's scheme: "JWT token only" operations refuse API keys and bearer tokens;
 * an organization key works only where the operation takes one (`acceptsOrganizationKey`).
 */
export function requirePrincipal(principal: Principal | null, requirement: AuthRequirement, acceptsOrganizationKey = false): Principal | null {
  if (principal?.kind === 'organizationKey' && !acceptsOrganizationKey) {
    // An operation open to anyone serves the key's holder as anyone.
    if (requirement === 'none') return null;
    throw new UnauthorizedError("Invalid API key: an organization API key works only on its organization's routes (/api/organizations/{organizationId}/...)", 'INVALID_API_KEY');
  }
  // An application's token does not act on the open operations (logins, sign-ups) for its user.
  if (requirement === 'none') return principal?.kind === 'user' && principal.via === 'oauth' ? null : principal;
  if (!principal) throw new UnauthorizedError('Authentication required: send an API key (x-api-key) or a JWT (x-jwt-token)');
  // OAuth principals are judged by their scopes (requireOAuthScope).
  if (requirement === 'jwt' && !(principal.kind === 'user' && (principal.via === 'jwt' || principal.via === 'oauth'))) {
    throw new UnauthorizedError('This operation needs a JWT token (x-jwt-token header or jwt cookie); API keys and OAuth tokens are not accepted');
  }
  return principal;
}

/** `devices`: registering and renaming devices, which the device tools do with the key they are given. */
export type ProjectAccess = 'read' | 'write' | 'devices';

const ROLE_ACCESS: Record<ApiKeyRole, readonly ProjectAccess[]> = {
  admin: ['read', 'write', 'devices'],
  readonly: ['read'],
  // The key the official CLI makes for a device: it sends data, reads the project, registers itself.
  ingestion_deployment: ['read', 'devices'],
  ingestiononly: [],
};

const ACCESS_WORDS: Record<ProjectAccess, string> = { read: 'read', write: 'change', devices: 'register devices in' };

/**
 * The project, if the principal may reach it: an API key reaches only its own project, a user
 * only projects they collaborate on.
 */
export async function requireProject(
  projects: Pick<ProjectQueries, 'byId'>,
  principal: Principal,
  projectId: number,
  access: ProjectAccess,
): Promise<Project> {
  const project = await projects.byId(projectId);
  if (!project) throw new NotFoundError(`Project ${projectId} not found`, 'PROJECT_NOT_FOUND');
  if (principal.kind === 'organizationKey') throw new ForbiddenError(`An organization API key does not give access to project ${projectId}`);
  if (principal.kind === 'apiKey') {
    if (principal.projectId !== projectId) throw new ForbiddenError(`This API key does not give access to project ${projectId}`);
    if (!ROLE_ACCESS[principal.role].includes(access)) {
      throw new ForbiddenError(`An API key with role "${principal.role}" cannot ${ACCESS_WORDS[access]} this project`);
    }
  } else if (!project.collaboratorIds.includes(principal.user.id)) {
    throw new ForbiddenError(`You are not a collaborator on project ${projectId}`);
  }
  return project;
}

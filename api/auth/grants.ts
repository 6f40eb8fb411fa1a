// A grant is what a credential stands on, recorded by id so that a credential made from it (a socket
// token) can be checked again later without the secret: a user's session, a project key, an
// organization key.
import { UnauthorizedError } from '../../domain/shared/errors';
import { hasExpired, isLive, type ApiKeyQueries } from '../../projections/apiKeys/apiKeyQueries';
import { isLiveKey, type OrganizationQueries } from '../../projections/organizations/organizationQueries';
import { sessionUser, type AuthDeps, type Principal } from './principal';

export type Grant =
  /** `sessionVersion`: the user's when the grant was made; a password change ends it. */
  | { kind: 'user'; userId: number; sessionVersion: number }
  | { kind: 'apiKey'; apiKeyId: number }
  | { kind: 'organizationKey'; apiKeyId: number };

export const grantOf = (p: Principal): Grant =>
  p.kind === 'user' ? { kind: 'user', userId: p.user.id, sessionVersion: p.user.sessionVersion } : { kind: p.kind, apiKeyId: p.apiKeyId };

export interface GrantDeps extends Pick<AuthDeps, 'users' | 'health'> {
  apiKeys: Pick<ApiKeyQueries, 'byId'>;
  organizations: Pick<OrganizationQueries, 'keyById'>;
}

export const KEY_REVOKED = 'The API key of this socket token was revoked';
export const KEY_EXPIRED = 'The API key of this socket token has expired';

/**
 * The principal a grant stands for at `now`, as REST would resolve the credential it came from
 * (the same session check, the same liveness of keys), with the time it ends by itself (epoch ms,
 * Infinity for never); throws UnauthorizedError when it no longer holds.
 */
export async function grantPrincipal(grant: Grant, deps: GrantDeps, now: Date): Promise<{ principal: Principal; ends: number }> {
  if (grant.kind === 'user') {
    const user = await sessionUser(grant.userId, grant.sessionVersion, deps);
    return { principal: { kind: 'user', user, via: 'jwt' }, ends: Number.POSITIVE_INFINITY };
  }
  if (grant.kind === 'apiKey') {
    const key = await deps.apiKeys.byId(grant.apiKeyId);
    if (!key || !isLive(key, now)) throw keyEnded(key, now);
    return { principal: { kind: 'apiKey', apiKeyId: key.apiKeyId, projectId: key.projectId, role: key.role }, ends: endOf(key.expires) };
  }
  const key = await deps.organizations.keyById(grant.apiKeyId);
  if (!key || !isLiveKey(key, now)) throw keyEnded(key, now);
  return { principal: { kind: 'organizationKey', apiKeyId: key.apiKeyId, organizationId: key.organizationId, role: key.role }, ends: endOf(key.expires) };
}

const keyEnded = (key: { expires: string | null } | null, now: Date) =>
  new UnauthorizedError(key && hasExpired(key.expires, now) ? KEY_EXPIRED : KEY_REVOKED, 'INVALID_API_KEY');

// An expiry that cannot be read never comes, as for REST (hasExpired).
const endOf = (expires: string | null): number => (expires === null || Number.isNaN(Date.parse(expires)) ? Number.POSITIVE_INFINITY : Date.parse(expires));

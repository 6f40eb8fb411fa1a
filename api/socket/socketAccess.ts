// Whether a job websocket may still do what its token says: the grant behind the token holds
// (REST's own checks, api/auth/grants.ts) and still reaches the project or organization.
import { DomainError } from '../../domain/shared/errors';
import type { OrganizationQueries } from '../../projections/organizations/organizationQueries';
import type { ProjectQueries } from '../../projections/projects/projectQueries';
import { grantPrincipal, type GrantDeps } from '../auth/grants';
import { requireOrganization } from '../auth/organizationAccess';
import { requireProject } from '../auth/principal';
import type { SocketTokenClaims } from './socketTokens';

export interface SocketAccessDeps extends GrantDeps {
  projects: Pick<ProjectQueries, 'byId'>;
  organizations: Pick<OrganizationQueries, 'byId' | 'keyById'>;
  /** Staff read every organization's jobs, as over REST. */
  settings: { staffUsernames: ReadonlySet<string> };
}

export const TOKEN_EXPIRED = 'Socket token has expired, get a new one';

/** `until`: when access ends by itself (the token's or the key's expiry), epoch ms. */
export type SocketStanding = { holds: true; until: number } | { holds: false; reason: string };

/**
 * The standing of a socket's token at `now`, decided as a REST request with the credential behind
 * it would be: following a job's output is reading the project (or organization). A refusal's
 * reason is REST's message.
 */
export async function socketStanding(claims: SocketTokenClaims, deps: SocketAccessDeps, now: Date): Promise<SocketStanding> {
  if (claims.expires.getTime() <= now.getTime()) return { holds: false, reason: TOKEN_EXPIRED };
  try {
    const { principal, ends } = await grantPrincipal(claims.caller, deps, now);
    if ('projectId' in claims) await requireProject(deps.projects, principal, claims.projectId, 'read');
    else await requireOrganization(deps, principal, claims.organizationId, 'read');
    return { holds: true, until: Math.min(claims.expires.getTime(), ends) };
  } catch (error) {
    // Our refusals (401, 403, 404) end access; anything else (the store is away) is no answer.
    if (error instanceof DomainError && error.status < 500) return { holds: false, reason: error.message };
    throw error;
  }
}

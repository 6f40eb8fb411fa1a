// The events that end a socket's access, read straight from the log: a socket learns of its end
// from the event itself, before (and whatever) the read models say.
import type { StoredEvent } from '../../stores/eventstore/eventStore';
import { KEY_REVOKED } from '../auth/grants';
import { SESSION_ENDED, USER_GONE } from '../auth/principal';
import type { SocketTokenClaims } from './socketTokens';

/** The types `endingOf` reads; every other event leaves access as it was. */
export const ACCESS_ENDING_EVENTS: ReadonlySet<string> = new Set([
  'CollaboratorRemoved',
  'ApiKeyRevoked',
  'ProjectDeleted',
  'PasswordChanged',
  'UserDeleted',
  'OrganizationDeleted',
  'OrganizationMemberRemoved',
  'OrganizationMemberRoleSet',
  'OrganizationApiKeyRevoked',
]);

const num = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

/** Why `event` ends the access of a socket opened with `claims`, or undefined when it does not. */
export function endingOf(event: Pick<StoredEvent, 'type' | 'data'>, claims: SocketTokenClaims): string | undefined {
  const d = event.data;
  const caller = claims.caller;
  const projectId = 'projectId' in claims ? claims.projectId : undefined;
  const organizationId = 'organizationId' in claims ? claims.organizationId : undefined;
  const userId = caller.kind === 'user' ? caller.userId : undefined;
  const isUser = userId !== undefined && num(d.userId) === userId;
  switch (event.type) {
    case 'CollaboratorRemoved':
      return isUser && projectId !== undefined && num(d.projectId) === projectId ? `You are no longer a collaborator on project ${projectId}` : undefined;
    case 'ApiKeyRevoked':
      return caller.kind === 'apiKey' && num(d.apiKeyId) === caller.apiKeyId ? KEY_REVOKED : undefined;
    case 'ProjectDeleted':
      return projectId !== undefined && num(d.projectId) === projectId ? `Project ${projectId} was deleted` : undefined;
    case 'PasswordChanged':
      return isUser && caller.kind === 'user' && num(d.sessionVersion) !== caller.sessionVersion ? SESSION_ENDED : undefined;
    case 'UserDeleted':
      return isUser ? USER_GONE : undefined;
    case 'OrganizationDeleted':
      return organizationId !== undefined && num(d.organizationId) === organizationId ? `Organization ${organizationId} was deleted` : undefined;
    case 'OrganizationMemberRemoved':
      return isUser && organizationId !== undefined && num(d.organizationId) === organizationId ? `You are no longer a member of organization ${organizationId}` : undefined;
    case 'OrganizationMemberRoleSet':
      // A guest sees no jobs. (Staff would still pass REST's check: they get a new token and reconnect.)
      return isUser && organizationId !== undefined && num(d.organizationId) === organizationId && d.role === 'guest' ? `You are now a guest of organization ${organizationId}, who sees no jobs` : undefined;
    case 'OrganizationApiKeyRevoked':
      return caller.kind === 'organizationKey' && num(d.apiKeyId) === caller.apiKeyId ? KEY_REVOKED : undefined;
    default:
      return undefined;
  }
}

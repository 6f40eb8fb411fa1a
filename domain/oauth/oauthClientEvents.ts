import type { DomainEvent } from '../shared/decider';

/** One stream per registered OAuth client; client ids are random base64url strings (no `$`, no `-` needed to parse). */
export const oauthClientStream = (clientId: string): string => `oauth-client-${clientId}`;

/**
 * A user registered an application. `secretHash` is the SHA-256 (base64url) of the secret shown to
 * the owner once: the secret is 32 random bytes, so a fast hash is enough, and the log holds nothing
 * that authenticates.
 */
export type OAuthClientRegistered = DomainEvent<
  'OAuthClientRegistered',
  { clientId: string; ownerUserId: number; name: string; redirectUris: string[]; secretHash: string; registered: string }
>;

/** Every grant of the client ends with it (docs/oauth.md, "Ending access everywhere at once"). */
export type OAuthClientDeleted = DomainEvent<'OAuthClientDeleted', { clientId: string; ownerUserId: number; deleted: string }>;

export type OAuthClientEvent = OAuthClientRegistered | OAuthClientDeleted;

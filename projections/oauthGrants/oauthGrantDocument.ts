import type { IndexDeclaration } from '../../stores/readstore/indexDeclarations';

/**
 * The `oauthGrants` read model: each grant a user gave an application, by the grant's stream (the
 * hash of its id: the id itself is never in the log). What the service reads to end, for the
 * record, the grants whose access already ended elsewhere (commands/oauth/oauthGrantEndings.ts).
 * Fields oidc-provider left out or wrote in an unexpected shape are null.
 */
export interface OAuthGrantDocument {
  _id: string;
  userId: number | null;
  clientId: string | null;
  /** The user's session version when the grant was last saved: a later one means a password change. */
  sessionVersion: number | null;
  expires: string;
  ended: string | null;
  _position: string;
  [key: string]: unknown;
}

export const OAUTH_GRANTS = 'oauthGrants';

export const OAUTH_GRANT_INDEXES: readonly IndexDeclaration[] = [{ keys: { clientId: 1, ended: 1 } }, { keys: { userId: 1, ended: 1 } }];

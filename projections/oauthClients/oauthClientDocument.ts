import type { IndexDeclaration } from '../../stores/readstore/indexDeclarations';

/**
 * The `oauthClients` read model, keyed by client id: the owner's list and what the authorization
 * server needs of a client. `secretHash` never leaves the server (the list's view omits it).
 */
export interface OAuthClientDocument {
  _id: string;
  clientId: string;
  ownerUserId: number;
  name: string;
  redirectUris: string[];
  secretHash: string;
  registered: string;
  /** Kept, not removed: the id stays taken and its tokens must find it gone. */
  deleted: string | null;
  _position: string;
  [key: string]: unknown;
}

export const OAUTH_CLIENTS = 'oauthClients';

/** An owner's live clients in registration order. */
export const OAUTH_CLIENT_INDEXES: readonly IndexDeclaration[] = [{ keys: { ownerUserId: 1, deleted: 1, registered: 1, clientId: 1 } }];

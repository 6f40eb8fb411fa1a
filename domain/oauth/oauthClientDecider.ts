import type { Decider } from '../shared/decider';
import { ConflictError, NotFoundError, ValidationError, assertNever } from '../shared/errors';
import { checkDate, checkId } from '../shared/numberRules';
import { NAME_RULE, checkText } from '../shared/textRules';
import type { OAuthClientEvent } from './oauthClientEvents';
import { checkRedirectUris } from './redirectUris';

// Client ids and secret hashes are made by the command handler; the decider makes sure that what
// reaches the log has their shape (a clear secret has no business there).
const CLIENT_ID = /^[A-Za-z0-9_-]{16,64}$/;
const SHA256_BASE64URL = /^[A-Za-z0-9_-]{43}$/;

/** Applications one user may hold at once: enough for every real use, few enough that no one fills the read model with them. */
export const MAX_OAUTH_CLIENTS_PER_USER = 25;

export type OAuthClientCommand =
  | {
      type: 'RegisterOAuthClient';
      /** `liveClients`: how many clients the owner holds now (the read model; see MAX_OAUTH_CLIENTS_PER_USER). */
      data: { clientId: string; ownerUserId: number; name: string; redirectUris: readonly string[]; secretHash: string; liveClients: number; now: Date };
    }
  /** `requestedBy`: the user asking; only the owner may delete (staff tools can be added as their own command). */
  | { type: 'DeleteOAuthClient'; data: { clientId: string; requestedBy: number; now: Date } };

/** A deleted client's id stays taken: tokens and grants that name it must never name another client. */
export type OAuthClientState = { status: 'none' } | { status: 'registered'; ownerUserId: number } | { status: 'deleted' };

/** Before a stream is named after it: an id of another shape names no client. */
export function checkClientId(clientId: string): string {
  if (!CLIENT_ID.test(clientId)) throw new ValidationError('Client id must be 16 to 64 letters, digits, "-" or "_"', 'INVALID_CLIENT_ID');
  return clientId;
}

// One answer for "no such client" and "someone else's client": the caller learns nothing of other users' clients.
const notFound = (clientId: string) => new NotFoundError(`OAuth client "${clientId}" not found`, 'OAUTH_CLIENT_NOT_FOUND');

export const oauthClientDecider: Decider<OAuthClientCommand, OAuthClientEvent, OAuthClientState> = {
  initialState: () => ({ status: 'none' }),

  decide(command, state) {
    switch (command.type) {
      case 'RegisterOAuthClient': {
        const c = command.data;
        const clientId = checkClientId(c.clientId);
        if (state.status !== 'none') throw new ConflictError(`OAuth client "${clientId}" is already registered`, 'OAUTH_CLIENT_EXISTS');
        if (!SHA256_BASE64URL.test(c.secretHash)) throw new ValidationError('The client secret hash must be a base64url SHA-256 digest', 'INVALID_SECRET_HASH');
        if (c.liveClients >= MAX_OAUTH_CLIENTS_PER_USER) {
          throw new ValidationError(`You have ${c.liveClients} OAuth applications, the most one user may hold (${MAX_OAUTH_CLIENTS_PER_USER}); delete one first`, 'TOO_MANY_OAUTH_CLIENTS');
        }
        return [
          {
            type: 'OAuthClientRegistered',
            data: {
              clientId,
              ownerUserId: checkId(c.ownerUserId, 'ownerUserId'),
              name: checkText(c.name.trim(), 'Application name ("name")', NAME_RULE),
              redirectUris: checkRedirectUris(c.redirectUris),
              secretHash: c.secretHash,
              registered: checkDate(c.now, 'now'),
            },
          },
        ];
      }
      case 'DeleteOAuthClient': {
        const c = command.data;
        const clientId = checkClientId(c.clientId);
        if (state.status !== 'registered' || state.ownerUserId !== c.requestedBy) throw notFound(clientId);
        return [{ type: 'OAuthClientDeleted', data: { clientId, ownerUserId: state.ownerUserId, deleted: checkDate(c.now, 'now') } }];
      }
      default:
        return assertNever(command);
    }
  },

  evolve(_state, event) {
    switch (event.type) {
      case 'OAuthClientRegistered':
        return { status: 'registered', ownerUserId: event.data.ownerUserId };
      case 'OAuthClientDeleted':
        return { status: 'deleted' };
      default:
        return assertNever(event);
    }
  },
};

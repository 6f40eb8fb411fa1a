import type { OAuthClientEvent } from '../../domain/oauth/oauthClientEvents';
import type { ReadStore } from '../../stores/readstore/readStore';
import { defineProjection, insertOnce, updateOnce } from '../projection';
import { OAUTH_CLIENTS, type OAuthClientDocument } from './oauthClientDocument';

const clients = (store: ReadStore) => store.collection<OAuthClientDocument>(OAUTH_CLIENTS);

export const oauthClientsProjection = defineProjection<OAuthClientEvent>('oauthClients', [OAUTH_CLIENTS], {
  async OAuthClientRegistered(event, store) {
    const d = event.data;
    await insertOnce(
      clients(store),
      { _id: d.clientId, clientId: d.clientId, ownerUserId: d.ownerUserId, name: d.name, redirectUris: [...d.redirectUris], secretHash: d.secretHash, registered: d.registered, deleted: null, _position: '' },
      event,
    );
  },

  async OAuthClientDeleted(event, store) {
    await updateOnce(clients(store), event.data.clientId, { $set: { deleted: event.data.deleted } }, event);
  },
});

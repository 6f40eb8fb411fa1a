import type { ReadStore } from '../../stores/readstore/readStore';
import { OAUTH_CLIENTS, type OAuthClientDocument } from './oauthClientDocument';

export class OAuthClientQueries {
  constructor(private readonly store: ReadStore) {}

  private get clients() {
    return this.store.collection<OAuthClientDocument>(OAUTH_CLIENTS);
  }

  /** The user's clients that are not deleted, oldest first. */
  forOwner(ownerUserId: number): Promise<OAuthClientDocument[]> {
    return this.clients.find({ ownerUserId, deleted: null }, { sort: { registered: 1, clientId: 1 } });
  }

  /** The client with this id, or null when unknown or deleted. */
  live(clientId: string): Promise<OAuthClientDocument | null> {
    return this.clients.findOne({ _id: clientId, deleted: null });
  }
}

import type { ReadStore } from '../../stores/readstore/readStore';
import { OAUTH_GRANTS, type OAuthGrantDocument } from './oauthGrantDocument';

export class OAuthGrantQueries {
  constructor(private readonly store: ReadStore) {}

  private get grants() {
    return this.store.collection<OAuthGrantDocument>(OAUTH_GRANTS);
  }

  /** Grants to this client that have neither ended nor expired by `now`. */
  liveForClient(clientId: string, now: Date): Promise<OAuthGrantDocument[]> {
    return this.grants.find({ clientId, ended: null, expires: { $gt: now.toISOString() } }, { sort: { _id: 1 } });
  }

  /** This user's grants that have neither ended nor expired by `now`. */
  liveForUser(userId: number, now: Date): Promise<OAuthGrantDocument[]> {
    return this.grants.find({ userId, ended: null, expires: { $gt: now.toISOString() } }, { sort: { _id: 1 } });
  }
}

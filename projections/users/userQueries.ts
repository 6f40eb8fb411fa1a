import type { ReadStore } from '../../stores/readstore/readStore';
import { TRIALS, USERS, type TrialDocument, type UserDocument } from './userDocument';

export class UserQueries {
  constructor(private readonly store: ReadStore) {}

  private get users() {
    return this.store.collection<UserDocument>(USERS);
  }

  byId(id: number): Promise<UserDocument | null> {
    return this.users.findOne({ _id: id });
  }

  byIds(ids: readonly number[]): Promise<UserDocument[]> {
    return this.users.find({ _id: { $in: [...ids] } });
  }

  /** Login accepts either; both are compared without case. */
  byUsernameOrEmail(value: string): Promise<UserDocument | null> {
    const lower = value.trim().toLowerCase();
    return this.users.findOne({ $or: [{ usernameLower: lower }, { emailLower: lower }] });
  }

  /** A user whose current photo is the blob `sha256`, if any (photos are shared by content). */
  byPhoto(sha256: string): Promise<UserDocument | null> {
    return this.users.findOne({ photo: sha256 });
  }

  /** The pending user a third-party activation code was issued for. */
  byThirdPartyCodeHash(codeHash: string): Promise<UserDocument | null> {
    return this.users.findOne({ thirdPartyCodeHash: codeHash, pending: true });
  }

  trials(userId: number): Promise<TrialDocument[]> {
    return this.store.collection<TrialDocument>(TRIALS).find({ userId }, { sort: { created: 1, _id: 1 } });
  }

  /** Subscriptions whose billing period ended while they were set to be canceled. */
  endedSubscriptions(now: Date): Promise<UserDocument[]> {
    return this.users.find({ 'subscription.status': 'cancellation-pending', 'subscription.terminationDate': { $lte: now.toISOString() } });
  }

  count(): Promise<number> {
    return this.users.count({});
  }
}

import type { ReadStore } from '../../stores/readstore/readStore';
import { USERS, type UserDocument } from './userDocument';

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

  count(): Promise<number> {
    return this.users.count({});
  }
}

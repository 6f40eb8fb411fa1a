import type { ReadStore } from '../../stores/readstore/readStore';
import { WHITELABELS, type WhitelabelDocument } from './whitelabelDocument';

export class WhitelabelQueries {
  constructor(private readonly store: ReadStore) {}

  private get whitelabels() {
    return this.store.collection<WhitelabelDocument>(WHITELABELS);
  }

  byId(whitelabelId: number): Promise<WhitelabelDocument | null> {
    return this.whitelabels.findOne({ _id: whitelabelId, deletedDate: null });
  }

  /** The white label served at this host name (lowercase, without a port). */
  byDomain(domain: string): Promise<WhitelabelDocument | null> {
    return this.whitelabels.findOne({ domain, deletedDate: null });
  }

  /** The live white labels among these ids (a deleted one is left out: its projects keep only its id). */
  byIds(whitelabelIds: readonly number[]): Promise<WhitelabelDocument[]> {
    if (whitelabelIds.length === 0) return Promise.resolve([]);
    return this.whitelabels.find({ _id: { $in: [...new Set(whitelabelIds)] }, deletedDate: null });
  }

  /** The live white labels these organizations own, lowest id first. */
  ownedBy(organizationIds: readonly number[]): Promise<WhitelabelDocument[]> {
    if (organizationIds.length === 0) return Promise.resolve([]);
    return this.whitelabels.find({ ownerOrganizationId: { $in: [...new Set(organizationIds)] }, deletedDate: null }, { sort: { _id: 1 } });
  }

  all(): Promise<WhitelabelDocument[]> {
    return this.whitelabels.find({ deletedDate: null }, { sort: { _id: 1 } });
  }
}

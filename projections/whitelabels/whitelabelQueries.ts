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

  all(): Promise<WhitelabelDocument[]> {
    return this.whitelabels.find({ deletedDate: null }, { sort: { _id: 1 } });
  }
}

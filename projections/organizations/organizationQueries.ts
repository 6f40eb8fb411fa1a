import type { ReadStore } from '../../stores/readstore/readStore';
import { ORGANIZATIONS, type OrganizationDocument } from './organizationDocument';

export class OrganizationQueries {
  constructor(private readonly store: ReadStore) {}

  forMember(userId: number): Promise<OrganizationDocument[]> {
    return this.store.collection<OrganizationDocument>(ORGANIZATIONS).find({ memberIds: userId }, { sort: { created: 1, _id: 1 } });
  }
}

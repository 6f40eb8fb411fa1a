import { hashApiKey } from '../../domain/project/apiKeys';
import { hasExpired } from '../apiKeys/apiKeyQueries';
import type { ReadStore } from '../../stores/readstore/readStore';
import { ORGANIZATION_API_KEYS, ORGANIZATIONS, type OrganizationApiKeyDocument, type OrganizationDocument } from './organizationDocument';

export class OrganizationQueries {
  constructor(private readonly store: ReadStore) {}

  private get organizations() {
    return this.store.collection<OrganizationDocument>(ORGANIZATIONS);
  }

  private get keys() {
    return this.store.collection<OrganizationApiKeyDocument>(ORGANIZATION_API_KEYS);
  }

  /** The organizations the user is a member of, deleted ones left out. */
  forMember(userId: number): Promise<OrganizationDocument[]> {
    return this.organizations.find({ memberIds: userId, deletedDate: null }, { sort: { created: 1, _id: 1 } });
  }

  /** Live organizations with an invitation to this user that they have not answered. */
  invitingUser(userId: number): Promise<OrganizationDocument[]> {
    return this.organizations.find({ invitedUserIds: userId, deletedDate: null }, { sort: { _id: 1 } });
  }

  /** The organization unless it does not exist or was deleted. */
  byId(organizationId: number): Promise<OrganizationDocument | null> {
    return this.organizations.findOne({ _id: organizationId, deletedDate: null });
  }

  /** The organization's keys that are not revoked (expired ones included: they are listed with their date). */
  keysOf(organizationId: number): Promise<OrganizationApiKeyDocument[]> {
    return this.keys.find({ organizationId, revoked: false }, { sort: { created: 1, apiKeyId: 1 } });
  }

  /** Whether any organization key ever had this hash, live or not. */
  async everIssuedKey(hash: string): Promise<boolean> {
    return (await this.keys.findOne({ _id: hash })) !== null;
  }

  /** The live organization key with this value, or null when unknown, revoked, expired or of a deleted organization. */
  async liveKey(key: string, now: Date): Promise<OrganizationApiKeyDocument | null> {
    const doc = await this.keys.findOne({ _id: hashApiKey(key), revoked: false, organizationDeleted: false });
    return doc && isLiveKey(doc, now) ? doc : null;
  }

  /** The organization key with this id, live or not (for a grant recorded by id: a socket token's). */
  keyById(apiKeyId: number): Promise<OrganizationApiKeyDocument | null> {
    return this.keys.findOne({ apiKeyId });
  }
}

/** Whether the key works at `now`: not revoked, its organization not deleted, not expired. */
export function isLiveKey(doc: OrganizationApiKeyDocument, now: Date): boolean {
  return !doc.revoked && !doc.organizationDeleted && !hasExpired(doc.expires, now);
}

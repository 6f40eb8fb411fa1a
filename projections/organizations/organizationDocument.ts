import type { IndexDeclaration } from '../../stores/readstore/indexDeclarations';

export interface OrganizationMemberEntry {
  userId: number;
  role: 'admin' | 'member' | 'guest';
  added: string;
}

/** The `organizations` read model. */
export interface OrganizationDocument {
  _id: number;
  id: number;
  name: string;
  isDeveloperProfile: boolean;
  ownerUserId: number;
  members: OrganizationMemberEntry[];
  memberIds: number[];
  trialId: number | null;
  created: string;
  _position: string;
  [key: string]: unknown;
}

export const ORGANIZATIONS = 'organizations';

/** A user's organizations: `memberIds` holds every member. */
export const ORGANIZATION_INDEXES: readonly IndexDeclaration[] = [{ keys: { memberIds: 1 }, array: true }];


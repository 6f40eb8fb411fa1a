import type { OrganizationApiKeyRole, OrganizationMemberRole } from '../../domain/organization/organizationEvents';
import type { IndexDeclaration } from '../../stores/readstore/indexDeclarations';

export interface OrganizationMemberEntry {
  userId: number;
  role: OrganizationMemberRole;
  /** The datasets a guest may see (kept for every role; only guests are limited by them). */
  datasets: string[];
  added: string;
  /** Added by an e-mail invitation. */
  invited: boolean;
}

/** An invitation the invitee has not answered: what the admin typed and offered, never the invitee's profile. */
export interface OrganizationInvitationEntry {
  invitationId: number;
  userId: number;
  /** Sealed in the log with the invitee's key; null once their account was deleted and the log replayed. */
  invitedAs: string | null;
  role: OrganizationMemberRole;
  datasets: string[];
  invitedByUserId: number;
  acceptedOnActivation: boolean;
  invited: string;
}

/** The `organizations` read model. Deleted organizations stay, with `deletedDate`, out of every listing. */
export interface OrganizationDocument {
  _id: number;
  id: number;
  name: string;
  isDeveloperProfile: boolean;
  ownerUserId: number;
  members: OrganizationMemberEntry[];
  memberIds: number[];
  /** Pending invitations (absent from documents built before invitations existed). */
  invitations?: OrganizationInvitationEntry[];
  /** For "which organizations invite this user" queries. */
  invitedUserIds?: number[];
  trialId: number | null;
  readme: string;
  showHeaderImgMask: boolean;
  experiments: string[];
  created: string;
  deletedDate: string | null;
  _position: string;
  [key: string]: unknown;
}

/** The `organizationApiKeys` read model, keyed by the SHA-256 of the key, as project keys are. */
export interface OrganizationApiKeyDocument {
  _id: string;
  apiKeyId: number;
  organizationId: number;
  name: string;
  role: OrganizationApiKeyRole;
  keyHint: string;
  created: string;
  createdByUserId: number | null;
  expires: string | null;
  revoked: boolean;
  organizationDeleted: boolean;
  _position: string;
  [key: string]: unknown;
}

export const ORGANIZATIONS = 'organizations';
export const ORGANIZATION_API_KEYS = 'organizationApiKeys';

/** A user's organizations (`memberIds` holds every member) and invitations. */
export const ORGANIZATION_INDEXES: readonly IndexDeclaration[] = [
  { keys: { memberIds: 1 }, array: true },
  { keys: { invitedUserIds: 1 }, array: true },
];

/** An organization's keys, in the order they were made; a key by its id (a socket token's grant). */
export const ORGANIZATION_API_KEY_INDEXES: readonly IndexDeclaration[] = [{ keys: { organizationId: 1, created: 1 } }, { keys: { apiKeyId: 1 } }];


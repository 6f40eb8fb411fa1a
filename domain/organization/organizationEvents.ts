import type { DomainEvent } from '../shared/decider';

export const organizationStream = (organizationId: number): string => `organization-${organizationId}`;

/** Member roles (sdk-reference 5): admins manage, members read, guests see only their datasets. */
export const ORGANIZATION_MEMBER_ROLES = ['admin', 'member', 'guest'] as const;
export type OrganizationMemberRole = (typeof ORGANIZATION_MEMBER_ROLES)[number];

/** Organization API key roles: an admin key manages like an admin, a member key reads like a member. */
export const ORGANIZATION_API_KEY_ROLES = ['admin', 'member'] as const;
export type OrganizationApiKeyRole = (typeof ORGANIZATION_API_KEY_ROLES)[number];

export type OrganizationCreated = DomainEvent<
  'OrganizationCreated',
  {
    organizationId: number;
    name: string;
    /** A user's personal organization. */
    isDeveloperProfile: boolean;
    ownerUserId: number;
    trialId: number | null;
    created: string;
  }
>;

/** Only the fields that changed. */
export interface OrganizationChanges {
  name?: string;
  readme?: string;
  showHeaderImgMask?: boolean;
  experiments?: string[];
}

export type OrganizationUpdated = DomainEvent<'OrganizationUpdated', { organizationId: number; changes: OrganizationChanges; updated: string }>;

export type OrganizationDeleted = DomainEvent<'OrganizationDeleted', { organizationId: number; deletedDate: string }>;

/** `invited`: added by an e-mail invitation (the user may still be pending); only ids, no personal data. */
export type OrganizationMemberAdded = DomainEvent<
  'OrganizationMemberAdded',
  { organizationId: number; userId: number; role: OrganizationMemberRole; datasets: string[]; invited: boolean; addedByUserId: number | null; added: string }
>;

export type OrganizationMemberRemoved = DomainEvent<'OrganizationMemberRemoved', { organizationId: number; userId: number; removed: string }>;

export type OrganizationMemberRoleSet = DomainEvent<'OrganizationMemberRoleSet', { organizationId: number; userId: number; role: OrganizationMemberRole; updated: string }>;

export type OrganizationMemberDatasetsSet = DomainEvent<'OrganizationMemberDatasetsSet', { organizationId: number; userId: number; datasets: string[]; updated: string }>;

export type OrganizationApiKeyAdded = DomainEvent<
  'OrganizationApiKeyAdded',
  {
    organizationId: number;
    apiKeyId: number;
    name: string;
    role: OrganizationApiKeyRole;
    /** SHA-256 of the key: what authentication looks up. The key itself is never in the log. */
    keyHash: string;
    /** The first characters, for listings. */
    keyHint: string;
    createdByUserId: number | null;
    expires: string | null;
    created: string;
  }
>;

export type OrganizationApiKeyRevoked = DomainEvent<'OrganizationApiKeyRevoked', { organizationId: number; apiKeyId: number; revoked: string }>;

export type OrganizationEvent =
  | OrganizationCreated
  | OrganizationUpdated
  | OrganizationDeleted
  | OrganizationMemberAdded
  | OrganizationMemberRemoved
  | OrganizationMemberRoleSet
  | OrganizationMemberDatasetsSet
  | OrganizationApiKeyAdded
  | OrganizationApiKeyRevoked;

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

/**
 * `invited`: added by an invitation (before invitations needed consent: an e-mail invitation, the user
 * perhaps still pending; since: an accepted invitation). Only ids, no personal data.
 */
export type OrganizationMemberAdded = DomainEvent<
  'OrganizationMemberAdded',
  { organizationId: number; userId: number; role: OrganizationMemberRole; datasets: string[]; invited: boolean; addedByUserId: number | null; added: string }
>;

export type OrganizationMemberRemoved = DomainEvent<'OrganizationMemberRemoved', { organizationId: number; userId: number; removed: string }>;

export type OrganizationMemberRoleSet = DomainEvent<'OrganizationMemberRoleSet', { organizationId: number; userId: number; role: OrganizationMemberRole; updated: string }>;

export type OrganizationMemberDatasetsSet = DomainEvent<'OrganizationMemberDatasetsSet', { organizationId: number; userId: number; datasets: string[]; updated: string }>;

/**
 * An admin invited someone by username or e-mail to be a member with this role and these datasets.
 * Until they accept, the organization holds only what the admin typed (`invitedAs`, sealed with the
 * invitee's key) and the invitee has no access. `userId`: the invitee; for a name that no account
 * has, an id drawn from the users' own sequence that no account will ever have, so the invitation
 * reads like any other (in the admin's own history too) and nobody can accept it.
 * `acceptedOnActivation`: the invitee's account was created pending for this invitation, its
 * activation code e-mailed to the address typed; activating the account with that code accepts it.
 */
export type OrganizationMemberInvited = DomainEvent<
  'OrganizationMemberInvited',
  {
    organizationId: number;
    invitationId: number;
    userId: number;
    invitedAs: string;
    role: OrganizationMemberRole;
    datasets: string[];
    invitedByUserId: number;
    acceptedOnActivation: boolean;
    invited: string;
  }
>;

/** The invitee accepted; an `OrganizationMemberAdded` with the invitation's role and datasets follows in the same append. */
export type OrganizationMemberInvitationAccepted = DomainEvent<'OrganizationMemberInvitationAccepted', { organizationId: number; invitationId: number; userId: number; accepted: string }>;

export type OrganizationMemberInvitationDeclined = DomainEvent<'OrganizationMemberInvitationDeclined', { organizationId: number; invitationId: number; userId: number; declined: string }>;

/** Withdrawn by an admin (`withdrawnByUserId`) or an admin API key of the organization (null). */
export type OrganizationMemberInvitationWithdrawn = DomainEvent<
  'OrganizationMemberInvitationWithdrawn',
  { organizationId: number; invitationId: number; userId: number; withdrawnByUserId: number | null; withdrawn: string }
>;

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
  | OrganizationMemberInvited
  | OrganizationMemberInvitationAccepted
  | OrganizationMemberInvitationDeclined
  | OrganizationMemberInvitationWithdrawn
  | OrganizationApiKeyAdded
  | OrganizationApiKeyRevoked;

import type { DomainEvent } from '../shared/decider';
import type { ProjectSettingsChange } from './projectSettings';

export const projectStream = (projectId: number): string => `project-${projectId}`;

export const API_KEY_ROLES = ['admin', 'readonly', 'ingestiononly', 'ingestion_deployment'] as const;
export type ApiKeyRole = (typeof API_KEY_ROLES)[number];

/**
 * `whitelabelId`: the white label the project belongs to (absent: none, as in every event written
 * before white labels had projects). `ownerOrganizationId`: the organization that owns it, when it
 * was made inside one (absent: a personal project).
 */
export type ProjectCreated = DomainEvent<
  'ProjectCreated',
  { projectId: number; name: string; description: string; ownerUserId: number; isPublic: boolean; created: string; whitelabelId?: number; ownerOrganizationId?: number }
>;

export type CollaboratorAdded = DomainEvent<
  'CollaboratorAdded',
  { projectId: number; userId: number; isOwner: boolean; added: string }
>;

export type ApiKeyAdded = DomainEvent<
  'ApiKeyAdded',
  {
    projectId: number;
    apiKeyId: number;
    name: string;
    role: ApiKeyRole;
    /** SHA-256 of the key: what authentication looks up. */
    keyHash: string;
    /** The first characters, for listings of keys that are not shown in full. */
    keyHint: string;
    isDevelopmentKey: boolean;
    /** The key itself, kept only for the development key (shown to collaborators); sealed in the log. */
    apiKey: string | null;
    createdByUserId: number | null;
    created: string;
    expires: string | null;
  }
>;

export type HmacKeyAdded = DomainEvent<
  'HmacKeyAdded',
  {
    projectId: number;
    hmacKeyId: number;
    name: string;
    /** Needed in clear to verify signatures; sealed in the log. */
    hmacKey: string;
    isDevelopmentKey: boolean;
    createdByUserId: number | null;
    created: string;
  }
>;

export type CollaboratorRemoved = DomainEvent<'CollaboratorRemoved', { projectId: number; userId: number; removed: string }>;

/**
 * A collaborator of the project invited a user; until they accept, the project holds only what the
 * inviter typed (`invitedAs`, sealed with the invitee's key) and the invitee has no access.
 */
export type CollaboratorInvited = DomainEvent<
  'CollaboratorInvited',
  // `userId` null: the name typed is nobody's account. Recorded all the same, so that inviting tells
  // nobody whether a name has an account; such an invitation can only be withdrawn.
  { projectId: number; invitationId: number; userId: number | null; invitedAs: string; invitedByUserId: number; invited: string }
>;

/** The invitee accepted; a `CollaboratorAdded` follows in the same append. */
export type CollaboratorInvitationAccepted = DomainEvent<
  'CollaboratorInvitationAccepted',
  { projectId: number; invitationId: number; userId: number; accepted: string }
>;

export type CollaboratorInvitationDeclined = DomainEvent<
  'CollaboratorInvitationDeclined',
  { projectId: number; invitationId: number; userId: number; declined: string }
>;

/** Withdrawn by a collaborator (`withdrawnByUserId`) or by an API key of the project (null). */
export type CollaboratorInvitationWithdrawn = DomainEvent<
  'CollaboratorInvitationWithdrawn',
  { projectId: number; invitationId: number; userId: number | null; withdrawnByUserId: number | null; withdrawn: string }
>;

export type ApiKeyRevoked = DomainEvent<'ApiKeyRevoked', { projectId: number; apiKeyId: number; revoked: string }>;

export type HmacKeyRevoked = DomainEvent<'HmacKeyRevoked', { projectId: number; hmacKeyId: number; revoked: string }>;

/** Settings changed through updateProject, tags or target constraints: only the fields that changed. */
export type ProjectUpdated = DomainEvent<'ProjectUpdated', { projectId: number; changes: ProjectSettingsChange; updated: string }>;

/** The project is gone from listings and routes; its data stays until `scheduledFullDeletionDate`. */
export type ProjectDeleted = DomainEvent<'ProjectDeleted', { projectId: number; deletedDate: string; scheduledFullDeletionDate: string }>;

/**
 * Its samples leave the read models and its key is destroyed; the blobs only it held are set aside
 * (quarantined), to be purged once nothing else turned out to need them. Stays for auditors.
 */
export type ProjectFullyDeleted = DomainEvent<'ProjectFullyDeleted', { projectId: number; fullDeletionDate: string; quarantinedBlobs: string[] }>;

/** The set-aside blobs are gone for good, except any content another sample took meanwhile. */
export type ProjectBlobsPurged = DomainEvent<'ProjectBlobsPurged', { projectId: number; purged: string[]; restored: string[]; purgedDate: string }>;

export type ProjectEvent =
  | ProjectCreated
  | CollaboratorAdded
  | CollaboratorRemoved
  | ApiKeyAdded
  | ApiKeyRevoked
  | HmacKeyAdded
  | HmacKeyRevoked
  | ProjectUpdated
  | ProjectDeleted
  | ProjectFullyDeleted
  | ProjectBlobsPurged
  | CollaboratorInvited
  | CollaboratorInvitationAccepted
  | CollaboratorInvitationDeclined
  | CollaboratorInvitationWithdrawn;

/** Recorded when an API key is used, at most once an hour per key, on its own stream (`apikey-usage-{id}`). */
export type ApiKeyUsed = DomainEvent<'ApiKeyUsed', { projectId: number; apiKeyId: number; date: string }>;
export const apiKeyUsageStream = (apiKeyId: number): string => `apikey-usage-${apiKeyId}`;

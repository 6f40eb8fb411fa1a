import type { ProjectSettingsChange } from '../../domain/project/projectSettings';
import type { IndexDeclaration } from '../../stores/readstore/indexDeclarations';

/** An HMAC key as listed; the value is needed in clear to verify signatures (it is sealed in the log). */
export interface HmacKeyEntry {
  id: number;
  name: string;
  hmacKey: string;
  isDevelopmentKey: boolean;
  created: string;
  createdByUserId: number | null;
  revoked: boolean;
}

export interface ProjectCollaboratorEntry {
  userId: number;
  isOwner: boolean;
  added: string;
}

/** An invitation the invitee has not answered: what the inviter typed, never the invitee's profile. */
export interface ProjectInvitationEntry {
  invitationId: number;
  /** Null: the name typed is nobody's account (see CollaboratorInvited). */
  userId: number | null;
  /** Sealed in the log with the invitee's key; null once their account was deleted and the log replayed. */
  invitedAs: string | null;
  invitedByUserId: number;
  invited: string;
}

/** Per category: how many samples, how long, and how many per label (keys encoded by `labelKey`). */
export interface CategorySummary {
  dataCount: number;
  totalLengthMs: number;
  labels: Record<string, number>;
}

export const SUMMARY_KEYS = ['training', 'testing', 'validation', 'postProcessing', 'anomaly'] as const;

export const emptyData = (): Record<(typeof SUMMARY_KEYS)[number], CategorySummary> =>
  Object.fromEntries(SUMMARY_KEYS.map((k) => [k, { dataCount: 0, totalLengthMs: 0, labels: {} }])) as Record<(typeof SUMMARY_KEYS)[number], CategorySummary>;

/** The `projects` read model: one document per project (its data's summary is `projectData`'s). */
export interface ProjectDocument {
  _id: number;
  id: number;
  name: string;
  description: string;
  created: string;
  ownerUserId: number;
  isPublic: boolean;
  /** The white label the project was made in; kept when the white label is deleted (absent in documents built before). */
  whitelabelId?: number | null;
  /** The organization that owns the project (absent or null: a personal project). */
  ownerOrganizationId?: number | null;
  collaborators: ProjectCollaboratorEntry[];
  /** For "which projects can this user see" queries. */
  collaboratorIds: number[];
  /** Pending invitations (absent from documents built before invitations existed). */
  invitations?: ProjectInvitationEntry[];
  /** For "which projects invite this user" queries. */
  invitedUserIds?: number[];
  developmentApiKey: string | null;
  developmentApiKeyId: number | null;
  developmentHmacKey: string | null;
  /** By id (as a string): keys are changed in place by id. */
  hmacKeys: Record<string, HmacKeyEntry>;
  /** Every setting changed since creation; the view fills in the defaults of the others. */
  settings: ProjectSettingsChange;
  readme: { markdown: string; html: string } | null;
  deletedDate: string | null;
  scheduledFullDeletionDate: string | null;
  fullDeletionDate: string | null;
  /** Blobs set aside by the full deletion, waiting for their purge; `blobsPurged` once done. */
  quarantinedBlobs?: string[];
  blobsPurged?: boolean;
  /** The last change of the project itself; ProjectQueries shows a later sample change instead. */
  lastModified: string;
  lastModificationDetails: string;
  deleted: boolean;
  _position: string;
  /** The position of the event that set lastModified (see projectsProjection's `modified`). */
  _modifiedPosition?: string;
  [key: string]: unknown;
}

export const PROJECTS = 'projects';

/** A user's projects and invitations (arrays of user ids), and the deleted projects due for full deletion or a blob purge. */
export const PROJECT_INDEXES: readonly IndexDeclaration[] = [
  { keys: { collaboratorIds: 1 }, array: true },
  { keys: { invitedUserIds: 1 }, array: true },
  { keys: { deleted: 1, fullDeletionDate: 1, scheduledFullDeletionDate: 1 } },
  { keys: { blobsPurged: 1, fullDeletionDate: 1 } },
];


import type { DomainEvent } from '../shared/decider';

export const projectStream = (projectId: number): string => `project-${projectId}`;

export const API_KEY_ROLES = ['admin', 'readonly', 'ingestiononly', 'ingestion_deployment'] as const;
export type ApiKeyRole = (typeof API_KEY_ROLES)[number];

export type ProjectCreated = DomainEvent<
  'ProjectCreated',
  { projectId: number; name: string; description: string; ownerUserId: number; isPublic: boolean; created: string }
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

export type ProjectEvent = ProjectCreated | CollaboratorAdded | ApiKeyAdded | HmacKeyAdded;

import type { ApiKeyRole } from '../../domain/project/projectEvents';
import type { IndexDeclaration } from '../../stores/readstore/indexDeclarations';

/** The `apiKeys` read model, keyed by the SHA-256 of the key: what authentication looks up. */
export interface ApiKeyDocument {
  _id: string;
  apiKeyId: number;
  projectId: number;
  name: string;
  role: ApiKeyRole;
  keyHint: string;
  isDevelopmentKey: boolean;
  created: string;
  createdByUserId: number | null;
  expires: string | null;
  /** When the key was last used (recorded at most hourly). */
  lastUsed: string | null;
  revoked: boolean;
  projectDeleted: boolean;
  _position: string;
  [key: string]: unknown;
}

export const API_KEYS = 'apiKeys';

/** A project's keys in creation order (the key list); a key's documents by apiKeyId (revocation, use). */
export const API_KEY_INDEXES: readonly IndexDeclaration[] = [{ keys: { projectId: 1, revoked: 1, created: 1, apiKeyId: 1 } }, { keys: { apiKeyId: 1 } }];


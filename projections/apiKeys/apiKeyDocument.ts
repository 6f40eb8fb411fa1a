import type { ApiKeyRole } from '../../domain/project/projectEvents';

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

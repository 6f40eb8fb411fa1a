import type { VersionContents } from '../../domain/version/versionEvents';
import type { IndexDeclaration } from '../../stores/readstore/indexDeclarations';

/** The `versions` read model: one document per version; a deleted one stays, marked, so its number stays taken. */
export interface VersionDocument {
  /** The version id. */
  _id: number;
  versionId: number;
  projectId: number;
  number: number;
  description: string;
  /** The log position the version stands at (decimal). */
  position: string;
  jobId: number;
  contents: VersionContents;
  createdByUserId: number | null;
  created: string;
  trainingAccuracy: number | null;
  testAccuracy: number | null;
  totalSamplesCount: number;
  deleted: boolean;
  _position: string;
  [key: string]: unknown;
}

export const VERSIONS = 'versions';
export const VERSION_INDEXES: readonly IndexDeclaration[] = [{ keys: { projectId: 1, deleted: 1, number: -1 } }, { keys: { projectId: 1, number: -1 } }];

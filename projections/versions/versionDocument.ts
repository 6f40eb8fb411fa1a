import type { VersionCreated } from '../../domain/version/versionEvents';
import type { IndexDeclaration } from '../../stores/readstore/indexDeclarations';

/** The `versions` read model: one document per version; a deleted one stays, marked, so its number stays taken. */
export type VersionDocument = VersionCreated['data'] & {
  /** The version id. */
  _id: number;
  trainingAccuracy: number | null;
  testAccuracy: number | null;
  totalSamplesCount: number;
  deleted: boolean;
  _position: string;
  [key: string]: unknown;
};

export const VERSIONS = 'versions';
export const VERSION_INDEXES: readonly IndexDeclaration[] = [{ keys: { projectId: 1, deleted: 1, number: -1 } }, { keys: { projectId: 1, number: -1 } }];

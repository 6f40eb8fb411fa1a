import type { SampleIngested } from '../../domain/sample/sampleEvents';
import type { IndexDeclaration } from '../../stores/readstore/indexDeclarations';

/** The `samples` read model: one document per ingested file, kept (flagged) after deletion. */
export type SampleDocument = Omit<SampleIngested['data'], 'sampleId' | 'ingested'> & {
  _id: number;
  id: number;
  created: string;
  deleted: boolean;
  _position: string;
  [key: string]: unknown;
};

export const SAMPLES = 'samples';

/**
 * The raw-data listing and its counts (a project's samples of a category, newest first, perhaps of
 * some labels), and the lookups of a content hash within a project or anywhere.
 */
export const SAMPLE_INDEXES: readonly IndexDeclaration[] = [
  { keys: { projectId: 1, deleted: 1, category: 1, _id: -1 } },
  { keys: { projectId: 1, deleted: 1, label: 1 } },
  { keys: { sha256: 1, projectId: 1 } },
];


/** The project information's name for a category (`post-processing` → `postProcessing`). */
export const summaryKey = (category: string): string => (category === 'post-processing' ? 'postProcessing' : category);

/** Labels become keys of a MongoDB document: encoded so that dots and dollars are safe. */
export const labelKey = (label: string | null): string => Buffer.from(label ?? '', 'utf8').toString('base64url') || '_';
export const labelFromKey = (key: string): string => (key === '_' ? '' : Buffer.from(key, 'base64url').toString('utf8'));

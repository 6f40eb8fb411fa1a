import type { DomainEvent } from '../shared/decider';

// A project's versions, one stream per project. A version is a position in the log, not a copy: it
// records where the log stood and the content hashes of what it covers, so the blobs it names stay
// stored (commands/projects/projectBlobs.ts counts them as held) and a restore can check it rebuilt
// exactly that.

export const versionsStream = (projectId: number): string => `versions-${projectId}`;

/** A learn block's trained model a version covers, with its validation accuracy when it has one. */
export interface VersionedModel {
  learnId: number;
  type: 'keras' | 'anomaly';
  /** SHA-256 of the model blob, as its training event names it. */
  model: string;
  accuracy: number | null;
}

/** What a version covers, by content hash. */
export interface VersionContents {
  /** The live samples: how many, a digest over their ids, categories, labels and contents, and their distinct content blobs. */
  samples: { count: number; digest: string; blobs: string[] };
  /** A digest over the impulses with their blocks and DSP configs. */
  impulses: string;
  /** The blobs of the current features of every DSP block. */
  features: string[];
  models: VersionedModel[];
  trainingAccuracy: number | null;
  testAccuracy: number | null;
}

export type VersionCreated = DomainEvent<
  'VersionCreated',
  {
    projectId: number;
    versionId: number;
    /** 1, 2, 3... within the project; never reused, not even after a deletion. */
    number: number;
    description: string;
    /** The log position (decimal) the version stands at: every event of the project up to it. */
    position: string;
    jobId: number;
    contents: VersionContents;
    createdByUserId: number | null;
    created: string;
  }
>;

export type VersionUpdated = DomainEvent<'VersionUpdated', { projectId: number; versionId: number; description: string; updated: string }>;

export type VersionDeleted = DomainEvent<'VersionDeleted', { projectId: number; versionId: number; deleted: string }>;

/**
 * A restore into this project (the target) began: the version it restores and the ids the restore
 * gives what it writes here, allocated once, so a retried job writes the same streams again (stored
 * once) instead of new ones. Pairs are [the source's id, the target's id].
 */
export type VersionRestoreStarted = DomainEvent<
  'VersionRestoreStarted',
  {
    projectId: number;
    jobId: number;
    sourceProjectId: number;
    versionId: number;
    /** The version's log position (decimal). */
    position: string;
    sampleIds: [number, number][];
    impulseIds: [number, number][];
    blockIds: [number, number][];
    started: string;
  }
>;

export type VersionEvent = VersionCreated | VersionUpdated | VersionDeleted | VersionRestoreStarted;

/** The blobs a version keeps stored: its samples', features' and models'. */
export function blobsOfVersion(contents: VersionContents): string[] {
  return [...contents.samples.blobs, ...contents.features, ...contents.models.map((m) => m.model)];
}

import type { Logger } from 'pino';
import type { EventStore } from '../../stores/eventstore/eventStore';
import { fullyDeleteProject, purgeProjectBlobs } from '../projects/projectCommands';
import { startPeriodic, type Periodic } from './periodic';

export interface ProjectDeletionDeps {
  events: EventStore;
  /** Deleted projects whose scheduled full deletion has come by `now`. */
  due(now: Date): Promise<{ id: number }[]>;
  /** Fully deleted projects whose set-aside blobs were set aside before `before`, with those blobs. */
  duePurges(before: Date): Promise<{ id: number; quarantinedBlobs: string[] }[]>;
  /** Every content address the project ever referenced: its samples' (deleted ones included) and the blobs derived from them (projectBlobs.ts). */
  contentsOf(projectId: number): Promise<string[]>;
  /** Of these contents, those something outside the project uses (another live project's sample or derived blob, a user photo). */
  usedElsewhere(projectId: number, sha256s: readonly string[]): Promise<Set<string>>;
  blobs: {
    quarantine(sha256: string): Promise<boolean>;
    restore(sha256: string): Promise<void>;
    purge(sha256: string): Promise<void>;
  };
  /** Crypto-shredding: the project's sealed secrets (HMAC keys, development API key) become unreadable in the log. */
  destroyProjectKey(projectId: number): Promise<void>;
  log: Logger;
  intervalMs?: number;
  /** How long set-aside blobs wait before the purge looks again at who uses them. */
  purgeGraceMs?: number;
}

/** Longer than any upload takes between storing its file and recording its sample. */
export const PURGE_GRACE_MS = 10 * 60_000;

/**
 * Fully deletes projects whose scheduled deletion date has passed, in two steps, so that content
 * another project receives at that very moment is never lost:
 * 1. the blobs only this project uses (its samples' and those derived from them: features, models,
 *    test results, builds, superseded ones included) are set aside (quarantined: a new upload of the same content
 *    stores it afresh), the project's key is destroyed, and `ProjectFullyDeleted` takes its samples
 *    and devices out of the read models;
 * 2. a grace period later, each set-aside blob is purged, or restored if a sample elsewhere took the
 *    content meanwhile (an upload that found it stored just before it was set aside), and
 *    `ProjectBlobsPurged` records which.
 * Every step can be done again, so a run cut off half way is finished by the next one; commands
 * carry fixed ids. Time, not an event, triggers it: at start and then every interval.
 */
export function startProjectDeletion(deps: ProjectDeletionDeps): Periodic {
  const grace = deps.purgeGraceMs ?? PURGE_GRACE_MS;
  return startPeriodic('fully deleting projects', deps.log, deps.intervalMs ?? 60_000, async (now) => {
    for (const { id } of await deps.due(now)) {
      const quarantined: string[] = [];
      const contents = await deps.contentsOf(id);
      const elsewhere = await deps.usedElsewhere(id, contents);
      for (const sha256 of contents) {
        if (elsewhere.has(sha256)) continue;
        if (await deps.blobs.quarantine(sha256)) quarantined.push(sha256);
      }
      await deps.destroyProjectKey(id);
      const commandId = `project-full-deletion-${id}`;
      await fullyDeleteProject(deps, id, quarantined, { actor: 'system:project-deletion', correlationId: commandId, commandId, now });
      deps.log.info({ projectId: id, blobsSetAside: quarantined.length }, 'project fully deleted');
    }
    for (const { id, quarantinedBlobs } of await deps.duePurges(new Date(now.getTime() - grace))) {
      const outcome = { purged: [] as string[], restored: [] as string[] };
      // A put of the same content after this check stores it afresh: the purge removes only the set-aside copy.
      const elsewhere = await deps.usedElsewhere(id, quarantinedBlobs);
      for (const sha256 of quarantinedBlobs) {
        if (elsewhere.has(sha256)) {
          await deps.blobs.restore(sha256);
          outcome.restored.push(sha256);
        } else {
          await deps.blobs.purge(sha256);
          outcome.purged.push(sha256);
        }
      }
      const commandId = `project-blob-purge-${id}`;
      await purgeProjectBlobs(deps, id, outcome, { actor: 'system:project-deletion', correlationId: commandId, commandId, now });
      deps.log.info({ projectId: id, ...{ purged: outcome.purged.length, restored: outcome.restored.length } }, 'deleted project\'s blobs purged');
    }
  });
}

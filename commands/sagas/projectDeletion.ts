import type { Logger } from 'pino';
import type { EventStore } from '../../stores/eventstore/eventStore';
import { fullyDeleteProject } from '../projects/projectCommands';
import { startPeriodic, type Periodic } from './periodic';

export interface ProjectDeletionDeps {
  events: EventStore;
  /** Deleted projects whose scheduled full deletion has come by `now`. */
  due(now: Date): Promise<{ id: number }[]>;
  /** The content addresses of a project's samples, deleted ones included. */
  contentsOf(projectId: number): Promise<string[]>;
  /** Whether something outside the project (another project's sample, a user photo) uses this content. */
  usedElsewhere(projectId: number, sha256: string): Promise<boolean>;
  deleteBlob(sha256: string): Promise<unknown>;
  /** Crypto-shredding: the project's sealed secrets (HMAC keys, development API key) become unreadable in the log. */
  destroyProjectKey(projectId: number): Promise<void>;
  log: Logger;
  intervalMs?: number;
}

/**
 * Fully deletes projects whose scheduled deletion date has passed: their blobs (unless something
 * else stores the same content), then their key, then the `ProjectFullyDeleted` event that takes
 * their samples and devices out of the read models. Each step can be done again, so a run cut off
 * half way is finished by the next one; the command id is fixed per project, so the event is
 * appended once. Time, not an event, triggers it: at start and then every interval.
 */
export function startProjectDeletion(deps: ProjectDeletionDeps): Periodic {
  return startPeriodic('fully deleting projects', deps.log, deps.intervalMs ?? 60_000, async (now) => {
    for (const { id } of await deps.due(now)) {
      let removed = 0;
      for (const sha256 of await deps.contentsOf(id)) {
        if (await deps.usedElsewhere(id, sha256)) continue;
        await deps.deleteBlob(sha256);
        removed++;
      }
      await deps.destroyProjectKey(id);
      const commandId = `project-full-deletion-${id}`;
      await fullyDeleteProject(deps, id, { actor: 'system:project-deletion', correlationId: commandId, commandId, now });
      deps.log.info({ projectId: id, blobsRemoved: removed }, 'project fully deleted');
    }
  });
}

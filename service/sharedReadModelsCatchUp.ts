// A process that serves an API without the projections role (ROLES split) reads read models another
// process fills. At its start it waits, as a process with the projections waits for its own, until
// that process has brought them up to the log as it was: it reads the checkpoints stored beside them
// (leaving out the projections reported failed, as CheckpointPoller does), and says how far they are.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { lowestCheckpoint, StoredProjectionStatus } from '../projections/projectionStatus';
import type { Position } from '../stores/eventstore/eventStore';
import type { ReadStore } from '../stores/readstore/readStore';
import { isTransientStoreError } from '../stores/transientErrors';

export class SharedReadModelsCatchUp {
  private reached: Position | undefined;
  private readonly status: StoredProjectionStatus;

  constructor(
    private readonly readStore: ReadStore,
    private readonly projectionNames: readonly string[],
    private readonly log: Logger,
    private readonly intervalMs = 250,
  ) {
    this.status = new StoredProjectionStatus(readStore);
  }

  /** The lowest stored checkpoint of the healthy projections, as of the last look. */
  get appliedPosition(): Position | undefined {
    return this.reached;
  }

  /** Resolves once every healthy projection's stored checkpoint has reached `head`, or `stop` is aborted. */
  async reach(head: Position, stop?: AbortSignal): Promise<void> {
    while (!stop?.aborted) {
      try {
        this.reached = await lowestCheckpoint(this.readStore, this.status, this.projectionNames, head);
        if (this.reached >= head) return;
      } catch (error) {
        // A store busy a moment is no reason to fail the start; anything else is.
        if (!isTransientStoreError(error)) throw error;
        this.log.warn({ err: error }, 'the read store did not answer; looking at the checkpoints again');
      }
      await sleep(this.intervalMs, undefined, { signal: stop }).catch(() => {});
    }
  }
}

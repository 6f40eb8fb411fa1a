import { trialKey } from '../../domain/optimize/searchSpace';
import { tunerRunStream, type TunerRunEvent } from '../../domain/optimize/tunerRunEvents';
import type { RunLineage } from '../../domain/optimize/tunerRunRequest';
import type { EventStore } from '../../stores/eventstore/eventStore';

/** A lineage longer than this is taken for a broken log rather than followed further. */
const MAX_LINEAGE = 1000;

/**
 * The run `coordinatorJobId` of the project and every run it extends, from their streams: its seed
 * and space (an extension keeps its lineage's), and every impulse they planned. Null when the project
 * has no such run (a run stream is named by its project, so another project's run is never found).
 */
export async function readRunLineage(events: EventStore, projectId: number, coordinatorJobId: number): Promise<RunLineage | null> {
  const tried = new Set<string>();
  let first: { seed: number; space: RunLineage['space']; ended: boolean } | undefined;
  const seen = new Set<number>();
  for (let id: number | null = coordinatorJobId; id !== null && !seen.has(id) && seen.size < MAX_LINEAGE; ) {
    seen.add(id);
    const stream = (await events.readStream(tunerRunStream(projectId, id))) as unknown as TunerRunEvent[];
    const started = stream.find((e) => e.type === 'TunerRunStarted');
    if (!started) return first ? { ...first, tried } : null;
    first ??= { seed: started.data.seed, space: started.data.space, ended: stream.some((e) => e.type === 'TunerRunEnded') };
    for (const e of stream) if (e.type === 'TunerTrialPlanned') tried.add(trialKey(e.data.impulse));
    id = started.data.extendedFromJobId;
  }
  return first ? { ...first, tried } : null;
}

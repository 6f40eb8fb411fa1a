// The state of projections that failed on an event, kept in the read store beside the read models
// so that a process without the projections role (ROLES split) can report it and leave the failed
// read models out of its read-your-writes waits.
import type { SubscriberFailure } from '../processing/subscriberFailures';
import { ServiceUnavailableError } from '../domain/shared/errors';
import type { Position } from '../stores/eventstore/eventStore';
import type { ReadStore } from '../stores/readstore/readStore';
import { checkpointName } from './readModelVersions';

/**
 * A projection stuck on one event: what `/health` reports and the projection_status document holds;
 * the subscription's failure, named as the projection whose handler threw. A type, not an
 * interface: stored as a document, it must be assignable to Record<string, unknown>.
 */
export type ProjectionFailure = Omit<SubscriberFailure, 'name'> & { projection: string };

/** A failure as `/health` and `npm run rebuild` report it. */
export const describeProjectionFailure = (f: ProjectionFailure): string =>
  `projection ${f.projection} failed on event ${f.position} (${f.eventType} in ${f.streamId}): ${f.error}`;

/** Where a health report reads the failures from. */
export interface ProjectionHealth {
  failures(): Promise<ProjectionFailure[]>;
  /**
   * In a process that reads another's read models (service/sharedReadModelsWatch.ts): whether they
   * stand still behind the log, as of the last look.
   */
  stall?(): ReadModelsStall | undefined;
}

/** Read models behind the log that have not moved for a while. */
export interface ReadModelsStall {
  /** The lowest checkpoint of the healthy projections. */
  position: Position;
  /** The log's head at the last look. */
  head: Position;
  /** When that checkpoint was first seen (ms since the epoch). */
  since: number;
}

/** A stall as `/health` and the APIs' answers state it. */
export const describeStall = (stall: ReadModelsStall, now = Date.now()): string =>
  `the read models are at position ${stall.position} of the log's ${stall.head} and have not moved for ${Math.round((now - stall.since) / 1000)} s: no process with the projections role keeps them up to date`;

/** How long a client is asked to wait when the read models stand still: the watch looks again well before. */
const STALLED_RETRY_AFTER_SECONDS = 30;

/** Read models that stand still cannot tell a credential made since from a wrong one: the client must try again, not give up. */
export class ReadModelsStalledError extends ServiceUnavailableError {
  readonly retryAfterSeconds = STALLED_RETRY_AFTER_SECONDS;
  constructor(what: string, stall: ReadModelsStall, consequence: string) {
    super(`${what} is not known here, and ${describeStall(stall)}; ${consequence}`, 'READ_MODELS_STALLED');
  }
}

/**
 * Before answering that a credential (`what`) is unknown: a 503 when `health` reports the read
 * models stalled, since it may be one made since.
 */
export function refuseWhileStalled(health: ProjectionHealth | undefined, what: string, consequence = 'try again'): void {
  const stall = health?.stall?.();
  if (stall) throw new ReadModelsStalledError(what, stall, consequence);
}

export const PROJECTION_STATUS = 'projection_status';

type StatusDocument = { _id: string } & ProjectionFailure;

export async function storeFailure(readStore: ReadStore, failure: ProjectionFailure): Promise<void> {
  const { projection } = failure;
  await readStore.collection<StatusDocument>(PROJECTION_STATUS).updateOne({ _id: projection }, { $set: { ...failure } }, { upsert: true });
}

export async function clearFailure(readStore: ReadStore, projection: string): Promise<void> {
  await readStore.collection<StatusDocument>(PROJECTION_STATUS).deleteOne({ _id: projection });
}

/** The failures the projections process stored, for a process that does not run the projections. */
export class StoredProjectionStatus implements ProjectionHealth {
  constructor(private readonly readStore: ReadStore) {}

  async failures(): Promise<ProjectionFailure[]> {
    const docs = await this.readStore.collection<StatusDocument>(PROJECTION_STATUS).find({}, { sort: { _id: 1 } });
    return docs.map(({ _id: _ignored, ...failure }) => failure);
  }
}

/**
 * The lowest stored checkpoint of the named projections but those reported failed (they hold
 * nothing up), no higher than `ceiling`; a projection that never stored one counts as 0.
 */
export async function lowestCheckpoint(readStore: ReadStore, status: Pick<ProjectionHealth, 'failures'>, names: readonly string[], ceiling: Position): Promise<Position> {
  const failed = new Set((await status.failures()).map((f) => f.projection));
  const checkpoints = await Promise.all(names.filter((n) => !failed.has(n)).map((n) => readStore.getCheckpoint(checkpointName(n))));
  return checkpoints.reduce<Position>((low, c) => (c === undefined || c < low ? (c ?? 0n) : low), ceiling);
}

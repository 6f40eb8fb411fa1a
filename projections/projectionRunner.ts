import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { CheckpointedSubscription, HandlerFailed, type BatchApplier, type Subscriber } from '../processing/checkpointedSubscription';
import type { EventStore, Position } from '../stores/eventstore/eventStore';
import type { ReadStore } from '../stores/readstore/readStore';
import { SqliteReadStore } from '../stores/readstore/sqliteReadStore';
import { WriteBuffer } from '../stores/readstore/writeBuffer';
import { erasingEventTypes } from '../domain/personalData';
import type { Projection } from './projection';
import { clearFailure, lowestCheckpoint, storeFailure, StoredProjectionStatus, type ProjectionFailure, type ProjectionHealth } from './projectionStatus';

/** Lets a command's response wait until the read models have applied its events. */
export interface ReadModelSync {
  /** Resolves true once every projection has applied `position`, false when `timeoutMs` passed first. */
  waitFor(position: Position, timeoutMs: number): Promise<boolean>;
}

/**
 * Read your writes for an answer: waits until the read models have applied `position`, bounded by
 * `timeoutMs`. Past it the answer goes anyway (the write is durable) and the delay is logged. A
 * command that decided nothing has no position, and nothing to wait for.
 */
export function settler(sync: ReadModelSync, timeoutMs: number, log: Logger): (position: Position | undefined) => Promise<void> {
  return async (position) => {
    if (position === undefined) return;
    if (!(await sync.waitFor(position, timeoutMs))) log.warn({ position: position.toString() }, 'read models did not catch up before the answer');
  };
}

const SQLITE_BATCH_SIZE = 100;

/** Removes every copy of what the committed writes deleted from the read store's files (see ReadStore.scrubDeleted). */
type Scrub = () => Promise<void>;

function scrubberOf(readStore: ReadStore, log: Logger): Scrub {
  return async () => {
    if (!readStore.scrubDeleted || (await readStore.scrubDeleted())) return;
    log.warn("a forgotten user's data may remain in the read models' write-ahead log: readers kept it from being truncated; the next forget truncates it");
  };
}

interface ProjectionSubscriber extends Subscriber {
  readonly projection: Projection;
}

/** Each collection has one writer: a projection is its own unit of failure, checkpoint and rebuild. */
function subscribersOf(projections: readonly Projection[]): ProjectionSubscriber[] {
  const writer = new Map<string, string>();
  for (const p of projections) {
    for (const collection of p.writes) {
      const other = writer.get(collection);
      if (other !== undefined) throw new Error(`Projections ${other} and ${p.name} both write ${collection}: a collection has one writer`);
      writer.set(collection, p.name);
    }
  }
  return projections.map((projection) => ({ name: projection.name, checkpoint: projection.checkpoint, handles: projection.handles, projection }));
}

export interface ProjectionRunnerOptions {
  /** At most this many events are applied and committed together (default DEFAULT_BATCH_SIZE, SQLITE_BATCH_SIZE into SQLite). */
  batchSize?: number;
  /**
   * true (the default): a batch's writes are held in a WriteBuffer and committed with the
   * projection's checkpoint in one ReadStore.commit. false: each handler writes straight to the store and each
   * applied event's checkpoint is stored after it (how the runner worked before batches).
   */
  buffered?: boolean;
}

/**
 * Applies a batch through a WriteBuffer over the projection's own collections: one commit of every
 * changed document and the checkpoint. A handler that throws has its changes to the buffer rolled
 * back; what came before its event is committed, so the failure is reported, and retried, at its
 * own event.
 */
function bufferedApplier(readStore: ReadStore, scrub: Scrub): BatchApplier<ProjectionSubscriber> {
  return async (at, events, commit) => {
    const { projection } = at.subscriber;
    const buffer = new WriteBuffer(readStore, projection.name, projection.writes, (ops) => commit(ops));
    let reached = at.applied;
    let handled = false;
    let erased = false;
    for (const event of events) {
      if (reached !== undefined && event.position <= reached) continue;
      if (projection.handles.has(event.type)) {
        handled = true;
        const savepoint = buffer.savepoint();
        try {
          await projection.apply(event, buffer);
        } catch (error) {
          buffer.rollback(savepoint);
          await commit(buffer.takeOps(), reached !== at.applied ? reached : undefined);
          if (erased) await scrub();
          throw new HandlerFailed(event, error);
        }
        erased ||= erasingEventTypes.has(event.type);
      }
      reached = event.position;
    }
    const ops = buffer.takeOps();
    // Nothing handled: the checkpoint moves with the next flush, not with a write per batch.
    if (!handled && ops.length === 0) {
      at.applied = reached;
      return;
    }
    await commit(ops, reached);
    // Before the runner counts the batch applied: an answer that waited for it finds the bytes gone.
    if (erased) await scrub();
  };
}

/** Each handler writes to the store directly, each applied event's checkpoint stored right after it. */
function directApplier(readStore: ReadStore, scrub: Scrub): BatchApplier<ProjectionSubscriber> {
  return async (at, events, commit) => {
    const { projection } = at.subscriber;
    for (const event of events) {
      if (at.applied !== undefined && event.position <= at.applied) continue;
      if (!projection.handles.has(event.type)) {
        at.applied = event.position;
        continue;
      }
      try {
        await projection.apply(event, readStore);
      } catch (error) {
        throw new HandlerFailed(event, error);
      }
      await commit([], event.position);
      if (erasingEventTypes.has(event.type)) await scrub();
    }
  };
}

/**
 * Runs projections over one checkpointed subscription to the whole log (CheckpointedSubscription),
 * each with its own checkpoint, applying events in batches: what the subscription has delivered,
 * up to `batchSize`, with one commit per projection and batch (see bufferedApplier).
 *
 * A projection whose handler fails on an event is isolated; the others go on. The failure is logged
 * once at error level and reported by `failures()` and in the read store (projection_status), with
 * the event's position, type and stream; the projection is retried from its own checkpoint with a
 * doubling backoff, so nothing is ever skipped.
 *
 * A projection without a checkpoint (new, or its version bumped: see readModelVersions) starts from
 * empty collections and applies the whole log.
 *
 * Read your writes waits (`waitFor`, and so `start()`) leave failed projections out: a write whose own
 * read model is failed is durable and answers once the healthy read models have applied it; its
 * own read model shows it when the failure is fixed, and /health reports the failure meanwhile.
 */
export class ProjectionRunner implements ReadModelSync, ProjectionHealth {
  private readonly subscription: CheckpointedSubscription<ProjectionSubscriber>;
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly events: EventStore,
    private readonly readStore: ReadStore,
    private readonly projections: readonly Projection[],
    private readonly log: Logger,
    retryDelayMs = 1000,
    maxRetryDelayMs = 60_000,
    options: ProjectionRunnerOptions = {},
  ) {
    const scrub = scrubberOf(readStore, log);
    this.subscription = new CheckpointedSubscription({
      events,
      readStore,
      subscribers: subscribersOf(projections),
      apply: options.buffered === false ? directApplier(readStore, scrub) : bufferedApplier(readStore, scrub),
      log,
      kind: 'projection',
      retryDelayMs,
      maxRetryDelayMs,
      // Into SQLite (no round trips to amortize), batches of 100 took 8% less CPU than 500 in a
      // rebuild and 11% less in a first start: fewer documents held across young-generation GCs.
      ...(options.batchSize !== undefined ? { batchSize: options.batchSize } : readStore instanceof SqliteReadStore ? { batchSize: SQLITE_BATCH_SIZE } : {}),
      failures: {
        load: async () => (await new StoredProjectionStatus(readStore).failures()).map((f) => ({ name: f.projection, position: BigInt(f.position) })),
        store: ({ name, ...failure }) => storeFailure(readStore, { projection: name, ...failure }),
        clear: (name) => clearFailure(readStore, name),
      },
    });
  }

  /**
   * Starts the run and resolves once the read models have caught up with the log as it was at the
   * call; a projection that fails on the way does not hold it up (see `failures()`). A checkpoint
   * of another log (ForeignCheckpointError) stops the start, saying why.
   */
  async start(): Promise<void> {
    const head = await this.events.headPosition();
    // A first start into an empty SQLite store (no checkpoint, no document) fills the tables first
    // and builds their indexes once, at the end of the catch-up, as a rebuild does.
    // A start stopped before it caught up leaves them deferred: the next start builds them at its end,
    // rather than this stop spend seconds on them.
    await this.emptyThoseWithoutCheckpoint();
    const deferred = head !== undefined && this.readStore instanceof SqliteReadStore && this.readStore.deferIndexesWhileEmpty();
    await this.subscription.start();
    const caughtUp = head === undefined || (await this.waitFor(head, Number.POSITIVE_INFINITY));
    if (deferred && caughtUp) (this.readStore as SqliteReadStore).buildDeferredIndexes();
  }

  /** A projection that has no checkpoint applies the whole log: to empty collections, not over documents of an older version. */
  private async emptyThoseWithoutCheckpoint(): Promise<void> {
    for (const projection of this.projections) {
      if (await this.readStore.readCheckpoint(projection.checkpoint)) continue;
      let emptied = 0;
      for (const name of projection.writes) emptied += await this.readStore.collection(name).deleteMany({});
      if (emptied > 0) this.log.warn({ projection: projection.name, documents: emptied }, `projection ${projection.name} has no checkpoint ${projection.checkpoint} (its version changed): its collections are emptied and built again from the log`);
    }
  }

  /** Stops after the batch being applied, its checkpoint stored; later calls wait for the same stop. */
  stop(): Promise<void> {
    return (this.stopping ??= this.subscription.stop());
  }

  /** The position every healthy projection has applied, or undefined before the first event. */
  get appliedPosition(): Position | undefined {
    return this.subscription.appliedPosition;
  }

  async failures(): Promise<ProjectionFailure[]> {
    return this.subscription.failures().map(({ name, ...failure }) => ({ projection: name, ...failure }));
  }

  waitFor(position: Position, timeoutMs: number): Promise<boolean> {
    return this.subscription.waitFor(position, timeoutMs);
  }
}

/**
 * Read-your-writes for a process that serves the API without running the projections itself
 * (ROLES split): polls the checkpoints the projection process stores in the shared read store.
 */
export class CheckpointPoller implements ReadModelSync {
  private readonly status: StoredProjectionStatus;

  /**
   * `elsewhere`: how far the read models go, as the thread keeping them says (THREAD_ROLES): a wait it
   * answers needs no look at the stored checkpoints.
   */
  constructor(
    private readonly readStore: ReadStore,
    private readonly projectionNames: readonly string[],
    private readonly intervalMs = 20,
    private readonly elsewhere?: { position(): Position | undefined; onChange(listener: () => void): () => void; want(position: Position): void },
  ) {
    this.status = new StoredProjectionStatus(readStore);
  }

  /**
   * Leaves out the projections the projections process reports failed, as its own runner does. Looks
   * again every `intervalMs`, and at once when the thread keeping the read models tells of progress.
   */
  async waitFor(position: Position, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    const told = () => {
      const at = this.elsewhere?.position();
      return at !== undefined && at >= position;
    };
    if (told()) return true;
    this.elsewhere?.want(position);
    for (;;) {
      if (told() || (await lowestCheckpoint(this.readStore, this.status, this.projectionNames, position)) >= position) return true;
      if (Date.now() >= deadline) return false;
      await this.nextLook();
    }
  }

  private nextLook(): Promise<void> {
    const elsewhere = this.elsewhere;
    if (!elsewhere) return sleep(this.intervalMs);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        stopListening();
        resolve();
      };
      const timer = setTimeout(done, this.intervalMs);
      const stopListening = elsewhere.onChange(done);
    });
  }
}

import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { concatMap, filter, from, lastValueFrom, tap } from 'rxjs';
import { loadCheckpoint, storeCheckpoint } from '../../stores/eventstore/checkpoint';
import type { EventStore, Position, StoredEvent, Subscription } from '../../stores/eventstore/eventStore';
import type { ReadStore } from '../../stores/readstore/readStore';
import type { CommandContext } from '../commandContext';

/**
 * A process manager: reacts to events of the types it handles by sending commands. Delivery is at
 * least once (a crash between a reaction and its checkpoint shows the event again), so a reaction
 * must cause no second effect: its commands carry ids derived from the event (`sagaContext`) and
 * the deciders ignore an outcome already recorded.
 */
export interface Saga {
  /** Names its checkpoint and its command ids: renaming a saga that has run makes it start over. */
  name: string;
  handles: ReadonlySet<string>;
  react(event: StoredEvent): Promise<void>;
  /** Releases what the saga holds (connections); called once its runner has stopped. */
  close?(): Promise<void>;
}

export const sagaCheckpointName = (sagaName: string): string => `saga:${sagaName}`;

/**
 * The context of a command a saga sends in reaction to `event`. The command id, and so the ids of
 * the events the command appends, depend only on the saga, the event and the step: sent again after
 * a restart, the same command appends the same ids and the store keeps them once.
 */
export function sagaContext(sagaName: string, event: StoredEvent, options: { step?: number; now?: Date } = {}): CommandContext {
  return {
    actor: `system:${sagaName}`,
    correlationId: event.metadata.correlationId,
    causationId: event.id,
    commandId: `saga:${sagaName}:${event.id}:${options.step ?? 0}`,
    now: options.now ?? new Date(),
  };
}

const CHECKPOINT_FLUSH_MS = 100;

/** A reaction that threw, with the event it threw on, so the runner can tell a new failure from a retry. */
class ReactionFailed extends Error {
  constructor(
    readonly event: StoredEvent,
    override readonly cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
    this.name = 'ReactionFailed';
  }
}

/**
 * Runs one saga over a subscription to the whole log, from the checkpoint it keeps in the read
 * store under `saga:<name>`. Reactions run one at a time in log order (`concatMap`); the checkpoint
 * is stored after each one succeeds, and moved past events the saga does not handle shortly after.
 * A reaction that fails stops the run: nothing after it is handled, and after a delay the runner
 * starts again from the stored checkpoint, so the failed event is retried, never skipped. The delay
 * doubles while the same event keeps failing, up to `maxRetryDelayMs`; the failure is logged at
 * error level once, the retries at debug level. Each saga has its own runner: one failing holds
 * back no other saga, and no failure ends the process.
 */
export class SagaRunner {
  private stopped = false;
  private loop: Promise<void> | undefined;
  private subscription: Subscription | undefined;
  private readonly stopping = new AbortController();
  /** Every event up to here has been reacted to (or needed no reaction): what may be stored. */
  private done: Position | undefined;
  private stored: Position | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly events: EventStore,
    private readonly readStore: ReadStore,
    readonly saga: Saga,
    private readonly log: Logger,
    private readonly retryDelayMs = 1000,
    private readonly maxRetryDelayMs = 60_000,
  ) {}

  /** Starts the run in the background; it catches up with the log, then follows it. */
  start(): void {
    if (this.loop) throw new Error(`Saga ${this.saga.name} was started already`);
    this.loop = this.runUntilStopped();
  }

  /** Lets a reaction in progress finish, leaves the events not yet reacted to for the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    await this.subscription?.close();
    await this.loop;
    await this.flush();
  }

  private async runUntilStopped(): Promise<void> {
    let delay = this.retryDelayMs;
    let failedOn: Position | undefined;
    while (!this.stopped) {
      try {
        await this.runOnce();
      } catch (error) {
        const event = error instanceof ReactionFailed ? error.event : undefined;
        if (event !== undefined && event.position === failedOn) {
          delay = Math.min(delay * 2, this.maxRetryDelayMs);
          this.log.debug({ err: error, saga: this.saga.name, position: event.position.toString(), retryInMs: delay }, 'saga failed again on the same event');
        } else {
          delay = this.retryDelayMs;
          const where = event && { position: event.position.toString(), eventType: event.type, streamId: event.streamId, eventId: event.id };
          this.log.error({ err: error instanceof ReactionFailed ? error.cause : error, saga: this.saga.name, ...where, retryInMs: delay }, `saga ${this.saga.name} failed${event ? ` on event ${event.position} (${event.type} in ${event.streamId})` : ''}; retrying from its stored checkpoint with backoff`);
        }
        failedOn = event?.position;
        await this.subscription?.close();
        await this.flush().catch((e: unknown) => this.log.error({ err: e, saga: this.saga.name }, 'storing the saga checkpoint failed'));
        if (!this.stopped) await sleep(delay, undefined, { signal: this.stopping.signal }).catch(() => undefined);
      }
    }
  }

  private async runOnce(): Promise<void> {
    const checkpoint = await loadCheckpoint(this.readStore, sagaCheckpointName(this.saga.name), this.events);
    this.done = checkpoint;
    this.stored = checkpoint;
    if (this.stopped) return;
    const subscription = this.events.subscribeToAll(checkpoint === undefined ? {} : { after: checkpoint });
    this.subscription = subscription;
    if (this.stopped) {
      await subscription.close();
      return;
    }
    let lastSeen = checkpoint;
    /** Handled events emitted but not yet reacted to: while there are any, `done` must not pass them. */
    let pending = 0;
    // `from` reads the subscription ahead of the reactions; the filter keeps only the events the saga
    // handles waiting in concatMap's buffer, so catching up on a long log holds few of them in memory.
    await lastValueFrom(
      from(subscription).pipe(
        tap((event) => {
          lastSeen = event.position;
          if (pending === 0 && !this.saga.handles.has(event.type)) {
            this.done = event.position;
            this.scheduleFlush();
          }
        }),
        filter((event) => this.saga.handles.has(event.type)),
        tap(() => {
          pending += 1;
        }),
        concatMap(async (event) => {
          // Stopping: what is still buffered is left for the next start, unreacted and unstored.
          if (this.stopped) return;
          try {
            await this.saga.react(event);
          } catch (error) {
            throw new ReactionFailed(event, error);
          }
          pending -= 1;
          this.done = pending === 0 ? lastSeen : event.position;
          await this.persist();
        }),
      ),
      { defaultValue: undefined },
    );
    if (!this.stopped) throw new Error('The subscription to the log ended while the saga was running');
  }

  private scheduleFlush(): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      this.persist().catch((error: unknown) => this.log.error({ err: error, saga: this.saga.name }, 'storing the saga checkpoint failed'));
    }, CHECKPOINT_FLUSH_MS);
    this.flushTimer.unref();
  }

  private flush(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    return this.persist();
  }

  /** One write at a time, each with the latest `done` when its turn comes: the checkpoint never moves backwards. */
  private persist(): Promise<void> {
    const write = this.writes.then(async () => {
      const done = this.done;
      if (done === undefined || (this.stored !== undefined && done <= this.stored)) return;
      await storeCheckpoint(this.readStore, sagaCheckpointName(this.saga.name), done, this.events);
      this.stored = done;
    });
    this.writes = write.catch(() => undefined);
    return write;
  }
}

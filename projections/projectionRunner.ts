import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { loadCheckpoint, storeCheckpoint } from '../stores/eventstore/checkpoint';
import type { EventStore, Position, Subscription } from '../stores/eventstore/eventStore';
import type { ReadStore } from '../stores/readstore/readStore';
import type { Projection } from './projection';

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

interface Waiter {
  position: Position;
  resolve(caughtUp: boolean): void;
}

const CHECKPOINT_FLUSH_MS = 100;

/**
 * Runs projections over one subscription to the whole log. Each projection keeps its own
 * checkpoint: stored right after a handler succeeds, and for events it does not handle, flushed
 * shortly after (replaying those is harmless). A handler that fails stops the run; it restarts from
 * the stored checkpoints after a delay, so nothing is skipped.
 */
export class ProjectionRunner implements ReadModelSync {
  private readonly checkpoints = new Map<string, Position | undefined>();
  private readonly dirty = new Set<string>();
  private position: Position | undefined;
  private waiters: Waiter[] = [];
  private subscription: Subscription | undefined;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly events: EventStore,
    private readonly readStore: ReadStore,
    private readonly projections: readonly Projection[],
    private readonly log: Logger,
    private readonly retryDelayMs = 1000,
  ) {}

  /** Starts the run and resolves once the read models have caught up with the log as it was at the call. */
  async start(): Promise<void> {
    const head = await this.events.headPosition();
    this.loop = this.runUntilStopped();
    if (head !== undefined) await this.waitFor(head, Number.POSITIVE_INFINITY);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.subscription?.close();
    await this.loop;
    await this.flushCheckpoints();
    for (const w of this.waiters) w.resolve(false);
    this.waiters = [];
  }

  /** The position every projection has applied, or undefined before the first event. */
  get appliedPosition(): Position | undefined {
    return this.position;
  }

  waitFor(position: Position, timeoutMs: number): Promise<boolean> {
    if (this.position !== undefined && this.position >= position) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter: Waiter = { position, resolve };
      this.waiters.push(waiter);
      if (Number.isFinite(timeoutMs)) {
        setTimeout(() => {
          this.waiters = this.waiters.filter((w) => w !== waiter);
          resolve(false);
        }, timeoutMs).unref();
      }
    });
  }

  private async runUntilStopped(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.runOnce();
      } catch (error) {
        this.log.error({ err: error }, 'projection handler failed; restarting from the stored checkpoints');
        await this.subscription?.close();
        if (!this.stopped) await sleep(this.retryDelayMs);
      }
    }
  }

  private async runOnce(): Promise<void> {
    let from: Position | undefined;
    let fromStart = false;
    for (const p of this.projections) {
      const checkpoint = await loadCheckpoint(this.readStore, p.name, this.events);
      this.checkpoints.set(p.name, checkpoint);
      if (checkpoint === undefined) fromStart = true;
      else if (from === undefined || checkpoint < from) from = checkpoint;
    }
    if (!fromStart) {
      // Everything up to the lowest checkpoint is applied already, even if no new event ever comes.
      if (this.position === undefined || this.position < from!) this.position = from!;
      this.releaseWaiters();
    }
    this.subscription = this.events.subscribeToAll(fromStart ? {} : { after: from! });
    for await (const event of this.subscription) {
      for (const p of this.projections) {
        const checkpoint = this.checkpoints.get(p.name);
        if (checkpoint !== undefined && event.position <= checkpoint) continue;
        // The in-memory checkpoint moves only once the handler succeeded: a flush must never
        // store the position of an event whose handler failed.
        if (p.handles.has(event.type)) {
          await p.apply(event, this.readStore);
          this.checkpoints.set(p.name, event.position);
          await this.persist([p.name]);
        } else {
          this.checkpoints.set(p.name, event.position);
          this.dirty.add(p.name);
        }
      }
      this.position = event.position;
      this.releaseWaiters();
      this.scheduleFlush();
      if (this.stopped) break;
    }
  }

  private releaseWaiters(): void {
    const position = this.position;
    if (position === undefined) return;
    const ready = this.waiters.filter((w) => w.position <= position);
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((w) => w.position > position);
    for (const w of ready) w.resolve(true);
  }

  private scheduleFlush(): void {
    if (this.flushTimer || this.dirty.size === 0) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      this.flushCheckpoints().catch((error: unknown) => this.log.error({ err: error }, 'storing projection checkpoints failed'));
    }, CHECKPOINT_FLUSH_MS);
    this.flushTimer.unref();
  }

  private async flushCheckpoints(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    await this.persist([...this.dirty]);
  }

  /**
   * Stores checkpoints one write at a time, each with the latest applied position when its turn
   * comes: a flush and the loop never overlap, so a stored checkpoint never moves backwards.
   */
  private persist(names: readonly string[]): Promise<void> {
    const write = this.writes.then(async () => {
      for (const name of names) {
        this.dirty.delete(name);
        const checkpoint = this.checkpoints.get(name);
        if (checkpoint !== undefined) await storeCheckpoint(this.readStore, name, checkpoint, this.events);
      }
    });
    this.writes = write.catch(() => undefined);
    return write;
  }
}

/**
 * Read-your-writes for a process that serves the API without running the projections itself
 * (ROLES split): polls the checkpoints the projection process stores in the shared read store.
 */
export class CheckpointPoller implements ReadModelSync {
  constructor(
    private readonly readStore: ReadStore,
    private readonly projectionNames: readonly string[],
    private readonly intervalMs = 20,
  ) {}

  async waitFor(position: Position, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const checkpoints = await Promise.all(this.projectionNames.map((n) => this.readStore.getCheckpoint(n)));
      if (checkpoints.every((c) => c !== undefined && c >= position)) return true;
      if (Date.now() >= deadline) return false;
      await sleep(this.intervalMs);
    }
  }
}

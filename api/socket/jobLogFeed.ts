import type { Logger } from 'pino';
import type { EventStore, Position, StoredEvent, Subscription } from '../../stores/eventstore/eventStore';

/** Called with each new event of a followed stream, in log order; must not block. */
export type StreamListener = (event: StoredEvent) => void;

export interface JobLogFeedOptions {
  /** How long the subscription stays open once nobody follows a stream, so reconnects do not churn it. */
  idleStopMs: number;
  /** Wait before resubscribing after the subscription failed (the event store went away). */
  retryDelayMs: number;
}

interface Run {
  stopped: boolean;
  /** Resolves once the starting position is fixed: what is appended later reaches the listeners. */
  ready: Promise<void>;
  subscription: Subscription | undefined;
  /** The last position seen: a failed subscription resumes after it, so nothing is missed. */
  position: Position | undefined;
  wakeRetry: (() => void) | undefined;
}

/**
 * One subscription to the whole log per process, from its head, shared by every socket that
 * follows a job, and by the watch on the events that end sockets' access (socketAccessGuard); events
 * of the streams nobody follows are dropped at once. The log is the only
 * source of live output, so a job run by a worker in another process (or on another host sharing
 * the event store) reaches the sockets of this one. It runs only while someone follows a stream or watches.
 *
 * Delivery is at least once (a resubscription after a failure may repeat events): listeners keep
 * the next revision they expect and drop what they already have.
 */
export class JobLogFeed {
  private readonly listeners = new Map<string, Set<StreamListener>>();
  /** Listeners to every event of the log (the sockets' access watch). */
  private readonly watchers = new Set<StreamListener>();
  private run: Run | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Subscriptions opened so far (tests check that sockets share one). */
  subscriptionsOpened = 0;

  constructor(
    private readonly events: EventStore,
    private readonly log: Logger,
    private readonly options: JobLogFeedOptions = { idleStopMs: 30_000, retryDelayMs: 1_000 },
  ) {}

  /** Streams followed now, with their listener counts. */
  followed(): Map<string, number> {
    return new Map([...this.listeners].map(([stream, set]) => [stream, set.size]));
  }

  /**
   * Calls `listener` with every event appended to `streamId` from (at the latest) the moment this
   * resolves; read the stream after that, not before, and nothing falls between the read and the feed.
   */
  async follow(streamId: string, listener: StreamListener): Promise<() => void> {
    if (this.closed) throw new Error('The job log feed is closed');
    let set = this.listeners.get(streamId);
    if (!set) this.listeners.set(streamId, (set = new Set()));
    set.add(listener);
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    const unfollow = () => {
      const current = this.listeners.get(streamId);
      if (!current?.delete(listener)) return;
      if (current.size === 0) this.listeners.delete(streamId);
      this.stopWhenIdle();
    };
    return this.started(unfollow);
  }

  /** Like `follow`, for every event of the log, whatever its stream. */
  async watch(listener: StreamListener): Promise<() => void> {
    if (this.closed) throw new Error('The job log feed is closed');
    this.watchers.add(listener);
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    return this.started(() => {
      if (this.watchers.delete(listener)) this.stopWhenIdle();
    });
  }

  private async started(stop: () => void): Promise<() => void> {
    try {
      await (this.run ??= this.startRun()).ready;
    } catch (error) {
      stop();
      throw error;
    }
    return stop;
  }

  private stopWhenIdle(): void {
    if (this.listeners.size > 0 || this.watchers.size > 0 || this.closed) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.stopRun(), this.options.idleStopMs);
    this.idleTimer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idleTimer);
    this.listeners.clear();
    this.watchers.clear();
    await this.stopRun();
  }

  private startRun(): Run {
    const run: Run = { stopped: false, ready: Promise.resolve(), subscription: undefined, position: undefined, wakeRetry: undefined };
    run.ready = (async () => {
      run.position = await this.events.headPosition();
      if (run.stopped) return;
      // Opened before `ready` resolves, from the head read above: the starting point is fixed.
      run.subscription = this.subscribe(run);
      void this.consume(run);
    })();
    // A failed start is reported to the follower that awaited it; the next follow tries again.
    run.ready.catch(() => {
      if (this.run === run) this.run = undefined;
    });
    return run;
  }

  private subscribe(run: Run): Subscription {
    this.subscriptionsOpened += 1;
    return this.events.subscribeToAll(run.position === undefined ? {} : { after: run.position });
  }

  private async consume(run: Run): Promise<void> {
    while (!run.stopped) {
      const subscription = (run.subscription ??= this.subscribe(run));
      try {
        for await (const event of subscription) {
          if (run.stopped) break;
          run.position = event.position;
          this.deliver(event);
        }
      } catch (error) {
        if (run.stopped) break;
        this.log.warn({ err: error }, 'the job websocket lost its subscription to the log; subscribing again');
        await subscription.close().catch(() => undefined);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.options.retryDelayMs);
          run.wakeRetry = () => (clearTimeout(timer), resolve());
        });
        run.wakeRetry = undefined;
      }
      run.subscription = undefined;
    }
  }

  private deliver(event: StoredEvent): void {
    // Watchers first: an event that ends a socket's access closes it before anything after it is sent.
    const set = this.listeners.get(event.streamId);
    if (!set && this.watchers.size === 0) return;
    for (const listener of [...this.watchers, ...(set ?? [])]) {
      try {
        listener(event);
      } catch (error) {
        // One socket's failure must not stop the feed for the others.
        this.log.error({ err: error, streamId: event.streamId }, 'a job log listener failed');
      }
    }
  }

  private async stopRun(): Promise<void> {
    const run = this.run;
    this.run = undefined;
    if (!run) return;
    run.stopped = true;
    run.wakeRetry?.();
    await run.ready.catch(() => undefined);
    await run.subscription?.close();
  }
}

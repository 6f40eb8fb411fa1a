import type { Logger } from 'pino';
import type { ReadModelSync } from '../../projections/projectionRunner';
import type { EventStore, Position, StoredEvent } from '../../stores/eventstore/eventStore';
import { ACCESS_ENDING_EVENTS, endingOf } from './accessEndings';
import type { JobLogFeed } from './jobLogFeed';
import { socketStanding, TOKEN_EXPIRED, type SocketAccessDeps, type SocketStanding } from './socketAccess';
import type { SocketTokenClaims } from './socketTokens';

/** Where the guard stood when a handshake was answered. */
export interface Mark {
  generation: number;
  endingsSeen: number;
}

/** An open socket as the guard sees it. */
export interface GuardedSocket {
  readonly claims: SocketTokenClaims;
  /** Tells the client why its access ended and closes it; called at most once. */
  end(reason: string): void;
}

export interface SocketAccessGuardDeps {
  access: SocketAccessDeps;
  events: Pick<EventStore, 'headPosition'>;
  feed: Pick<JobLogFeed, 'watch'>;
  /** The read models' progress: checks wait for them to have applied the endings seen in the log. */
  sync?: ReadModelSync;
  settleTimeoutMs: number;
  /** How often every open socket's standing is checked again (for what no event announces). */
  recheckMs: number;
  /** How long the watch outlives the last socket, so that a reconnecting client finds it running. */
  releaseAfterMs: number;
  log: Logger;
}

/** Endings kept for sockets between their handshake and their registration. */
const RECENT_ENDINGS = 256;
/** setTimeout's largest delay. */
const MAX_DELAY_MS = 2 ** 31 - 1;

/**
 * Keeps the job websockets' access true to the grants behind their tokens, from the handshake to
 * the close: a socket is ended (told, then closed) as soon as the log shows an event that ends its
 * access, when its token or key expires (a timer at the earliest of the two), and at any periodic
 * check that REST would refuse it. The events come through the feed the sockets already share, so
 * every process serving sockets sees every ending, wherever it was written.
 */
export class SocketAccessGuard {
  private readonly timers = new Map<GuardedSocket, NodeJS.Timeout | undefined>();
  private watch: Promise<() => void> | undefined;
  /** Counts the watches started: endings seen under another one than a socket's handshake say nothing of the gap between. */
  private generation = 0;
  private releaseTimer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private sweeping = false;
  /** Ending events seen so far, and the last ones (for sockets admitted before they were registered). */
  private endingsSeen = 0;
  private readonly recent: Pick<StoredEvent, 'type' | 'data'>[] = [];
  private lastEnding: Position | undefined;
  private closed = false;

  constructor(private readonly deps: SocketAccessGuardDeps) {}

  /**
   * The standing of a token at the handshake. The watch on the log runs before the read models are
   * asked, so an ending written after the answer still reaches the socket: pass `mark` to `register`.
   */
  async admit(claims: SocketTokenClaims): Promise<{ standing: SocketStanding; mark: Mark }> {
    await this.watching();
    const mark = { generation: this.generation, endingsSeen: this.endingsSeen };
    try {
      return { standing: await this.standing(claims), mark };
    } finally {
      // A refused handshake (or one that never connects) keeps no watch running.
      this.releaseWhenIdle();
    }
  }

  /** Watches an admitted socket until it closes (`unregister`) or its access ends. */
  register(socket: GuardedSocket, until: number, mark: Mark): void {
    if (this.closed) return socket.end('The service is stopping');
    this.timers.set(socket, undefined);
    clearTimeout(this.releaseTimer);
    this.releaseTimer = undefined;
    const missed = this.endingsSeen - mark.endingsSeen;
    if (!this.watch || mark.generation !== this.generation || missed > this.recent.length) {
      // The watch stopped meanwhile, or too much to replay: watch again, then ask the read models.
      this.expireAt(socket, until);
      this.watching()
        .then(() => this.check(socket))
        .catch((error: unknown) => this.deps.log.warn({ err: error }, 'could not check the access of a new job websocket; checking at its expiry'));
    } else {
      for (const event of this.recent.slice(this.recent.length - missed)) {
        const reason = endingOf(event, socket.claims);
        if (reason !== undefined) return this.end(socket, reason);
      }
      this.expireAt(socket, until);
    }
    this.sweepTimer ??= setInterval(() => void this.sweep(), this.deps.recheckMs).unref();
  }

  unregister(socket: GuardedSocket): void {
    clearTimeout(this.timers.get(socket));
    this.timers.delete(socket);
    if (this.timers.size > 0) return;
    clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
    this.releaseWhenIdle();
  }

  /** Ends the watch once no socket is open for a while (the next handshake would start it again). */
  private releaseWhenIdle(): void {
    if (this.timers.size > 0 || this.closed) return;
    clearTimeout(this.releaseTimer);
    this.releaseTimer = setTimeout(() => {
      if (this.timers.size === 0) void this.release();
    }, this.deps.releaseAfterMs).unref();
  }

  /**
   * Whether the socket may still act now (asked before every request it makes); ends it when not.
   * Throws when the read models cannot be asked.
   */
  async check(socket: GuardedSocket): Promise<boolean> {
    const standing = await this.standing(socket.claims);
    if (!this.timers.has(socket)) return false;
    if (!standing.holds) {
      this.end(socket, standing.reason);
      return false;
    }
    this.expireAt(socket, standing.until);
    return true;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    clearInterval(this.sweepTimer);
    clearTimeout(this.releaseTimer);
    await this.release();
  }

  private async standing(claims: SocketTokenClaims): Promise<SocketStanding> {
    // What the log has already said must not be contradicted by read models that lag behind it.
    if (this.lastEnding !== undefined) await this.deps.sync?.waitFor(this.lastEnding, this.deps.settleTimeoutMs);
    return socketStanding(claims, this.deps.access, new Date());
  }

  private end(socket: GuardedSocket, reason: string): void {
    if (!this.timers.has(socket)) return;
    this.unregister(socket);
    socket.end(reason);
  }

  /** Checks again when the token or key expires (early wakes check and wait again). */
  private expireAt(socket: GuardedSocket, until: number): void {
    clearTimeout(this.timers.get(socket));
    if (!Number.isFinite(until)) return void this.timers.set(socket, undefined);
    const delay = Math.min(Math.max(0, until - Date.now()), MAX_DELAY_MS);
    const timer = setTimeout(() => {
      this.check(socket).catch((error: unknown) => {
        this.deps.log.warn({ err: error }, 'could not check the access of a job websocket at its expiry; ending it');
        // The expiry itself is known without the read models.
        if (Date.now() >= socket.claims.expires.getTime()) this.end(socket, TOKEN_EXPIRED);
        else this.expireAt(socket, Date.now() + 1_000);
      });
    }, delay);
    timer.unref();
    this.timers.set(socket, timer);
  }

  private onEvent(event: StoredEvent): void {
    if (!ACCESS_ENDING_EVENTS.has(event.type)) return;
    this.endingsSeen += 1;
    this.lastEnding = event.position;
    this.recent.push({ type: event.type, data: event.data });
    if (this.recent.length > RECENT_ENDINGS) this.recent.shift();
    for (const socket of [...this.timers.keys()]) {
      const reason = endingOf(event, socket.claims);
      if (reason !== undefined) this.end(socket, reason);
    }
  }

  /** One pass over the open sockets, one at a time: a safety net, not a burst on the read store. */
  private async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      for (const socket of [...this.timers.keys()]) {
        await this.check(socket).catch((error: unknown) => this.deps.log.warn({ err: error }, 'could not check the access of a job websocket'));
      }
    } finally {
      this.sweeping = false;
    }
  }

  /**
   * Starts the watch once: from the log's head, after the read models applied everything before it,
   * so that no ending falls between what they say and what the watch sees.
   */
  private watching(): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('The job websocket is closing'));
    if (!this.watch) {
      this.generation += 1;
      const watch = (async () => {
        const head = await this.deps.events.headPosition();
        const unwatch = await this.deps.feed.watch((event) => this.onEvent(event));
        if (head !== undefined) await this.deps.sync?.waitFor(head, this.deps.settleTimeoutMs);
        return unwatch;
      })();
      this.watch = watch;
      watch.catch(() => {
        if (this.watch === watch) this.watch = undefined;
      });
    }
    return this.watch;
  }

  private async release(): Promise<void> {
    const watch = this.watch;
    this.watch = undefined;
    (await watch?.catch(() => undefined))?.();
  }
}

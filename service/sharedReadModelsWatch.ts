// A process without the projections role serves read models another process keeps (ROLES split).
// When none does (that process is down or stuck, or it was started on another read store: MONGO_URL
// set for one process and not the other), the read models stand still while the log grows, and
// every API key or project made since is unknown here: devices would be told their key is invalid,
// and drop their samples. The watch compares the read models' checkpoints with the log's head every
// few seconds. Behind the log and not moving for `stallMs`, they count as stalled: the log says so
// once (and again when they move), `GET /health` answers 503 "stalled", and the ingestion API answers
// a key or project it does not know with 503 and Retry-After rather than 401.
import type { Logger } from 'pino';
import { lowestCheckpoint, StoredProjectionStatus, type ReadModelsStall } from '../projections/projectionStatus';
import type { EventStore, Position } from '../stores/eventstore/eventStore';
import type { ReadStore } from '../stores/readstore/readStore';
import { isTransientStoreError } from '../stores/transientErrors';

export interface WatchOptions {
  /** How often it looks. */
  intervalMs?: number;
  /** How long behind the log without moving before the read models count as stalled. */
  stallMs?: number;
  now?: () => number;
}

const INTERVAL_MS = 5_000;
const STALL_MS = 30_000;

export class SharedReadModelsWatch {
  private readonly status: StoredProjectionStatus;
  private readonly intervalMs: number;
  private readonly stallMs: number;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private looking: Promise<void> | undefined;
  private seen: { position: Position; at: number } | undefined;
  private stalled: ReadModelsStall | undefined;

  constructor(
    private readonly events: EventStore,
    private readonly readStore: ReadStore,
    private readonly projectionNames: readonly string[],
    private readonly log: Logger,
    options: WatchOptions = {},
  ) {
    this.status = new StoredProjectionStatus(readStore);
    this.intervalMs = options.intervalMs ?? INTERVAL_MS;
    this.stallMs = options.stallMs ?? STALL_MS;
    this.now = options.now ?? Date.now;
  }

  start(): this {
    this.timer ??= setInterval(() => {
      // One look at a time: a slow store must not pile them up.
      this.looking ??= this.look().finally(() => (this.looking = undefined));
    }, this.intervalMs);
    this.timer.unref();
    return this;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.looking;
  }

  /** The stall as of the last look; undefined while the read models follow the log. */
  stall(): ReadModelsStall | undefined {
    return this.stalled;
  }

  /** One look (the timer's; tests call it directly). */
  async look(): Promise<void> {
    let head: Position;
    let position: Position;
    try {
      head = (await this.events.headPosition()) ?? 0n;
      position = await lowestCheckpoint(this.readStore, this.status, this.projectionNames, head);
    } catch (error) {
      // Busy a moment: the next look will tell. Anything else is worth a line, not the process.
      if (!isTransientStoreError(error)) this.log.warn({ err: error }, "could not compare the read models' checkpoints with the log");
      return;
    }
    const at = this.now();
    if (position >= head || this.seen?.position !== position) {
      this.seen = { position, at };
      this.moved(position);
      return;
    }
    if (at - this.seen.at < this.stallMs) return;
    const first = this.stalled === undefined;
    this.stalled = { position, head, since: this.seen.at };
    if (first) {
      this.log.warn(
        { position: position.toString(), head: head.toString(), stalledSeconds: Math.round((at - this.seen.at) / 1000) },
        'the read models have not moved while the log is ahead of them: is a process with the projections role running on the same read store (READ_STORE, MONGO_URL, MONGO_DB, DATA_DIR)? Until they move, unknown API keys get 503, not 401',
      );
    }
  }

  private moved(position: Position): void {
    if (!this.stalled) return;
    this.log.info({ position: position.toString() }, 'the read models move again');
    this.stalled = undefined;
  }
}

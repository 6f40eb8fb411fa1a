import type { Logger } from 'pino';
import { jobStream } from '../../domain/job/jobEvents';
import type { EventStore, Revision, StoredEvent } from '../../stores/eventstore/eventStore';
import type { JobLogFeed } from './jobLogFeed';

/** Where a follower's messages go: one client socket, shared by the jobs it follows. */
export interface JobLogSink {
  send(event: string, payload: Record<string, unknown>): void;
  /** Bytes handed to the socket and not yet written to the network. */
  pendingBytes(): number;
  /** Resolves true once at most `bytes` are pending, false if the socket closed or made no progress for too long. */
  drained(bytes: number): Promise<boolean>;
  /** Ends the socket: used when the client stopped reading. */
  drop(reason: string): void;
}

export interface JobFollowerLimits {
  /** Events read from the stream at once while replaying or catching up. */
  pageSize: number;
  /** Pending bytes above which the follower stops sending and waits for the client to read. */
  highWaterBytes: number;
}

/** Output lines written at or before this time (milliseconds since the epoch) are not replayed. */
export type Since = number;

/**
 * Streams one job's output to one socket (sdk-reference 3): the lines of `JobOutputWritten` events
 * as `job-data-{jobId}`, then `job-finished-{jobId}` on `JobFinished`. The job's stream is the
 * only buffer: the follower keeps the next revision to send, reads pages from the stream while it
 * is behind (the replay, a client that reads slowly, a gap in the feed), and sends live events
 * from the feed directly only when it is caught up and the socket is not backed up. Memory per
 * follower is one page, whatever the size of the log or the speed of the client.
 */
export class JobFollower {
  private nextRevision: Revision = 0n;
  private catchingUp = false;
  /** The feed announced events past what was read: read again once the current pass ends. */
  private behind = false;
  private stopped = false;
  private unfollow: (() => void) | undefined;
  private readonly stream: string;

  constructor(
    readonly jobId: number,
    private readonly since: Since,
    private readonly sink: JobLogSink,
    private readonly deps: { events: EventStore; feed: JobLogFeed; log: Logger; limits: JobFollowerLimits },
  ) {
    this.stream = jobStream(jobId);
  }

  /**
   * Starts following if the job belongs to the project (a number) or the organization; an unknown
   * job and another's job answer alike, so a client learns nothing about jobs it may not see.
   */
  async start(scope: number | { organizationId: number }): Promise<'following' | 'not-found'> {
    const [first] = await this.deps.events.readStream(this.stream, { maxCount: 1 });
    const owned = typeof scope === 'number' ? first?.data.projectId === scope : first?.data.organizationId === scope.organizationId;
    if (!first || first.type !== 'JobRequested' || !owned || this.stopped) return 'not-found';
    // Follow before reading the rest: whatever is appended meanwhile comes through the feed.
    const unfollow = await this.deps.feed.follow(this.stream, (event) => this.onLive(event));
    if (this.stopped) {
      unfollow();
      return 'following';
    }
    this.unfollow = unfollow;
    void this.catchUp();
    return 'following';
  }

  /** False once the job finished, the socket went or the follower was replaced. */
  get active(): boolean {
    return !this.stopped;
  }

  stop(): void {
    this.stopped = true;
    this.unfollow?.();
    this.unfollow = undefined;
  }

  private onLive(event: StoredEvent): void {
    if (this.stopped || event.revision < this.nextRevision) return;
    if (this.catchingUp || event.revision > this.nextRevision || this.sink.pendingBytes() > this.deps.limits.highWaterBytes) {
      // Read it from the stream in order, at the client's pace.
      this.behind = true;
      if (!this.catchingUp) void this.catchUp();
      return;
    }
    this.emit(event);
  }

  private async catchUp(): Promise<void> {
    // One pass at a time: a second caller only asks the running one to read again.
    if (this.catchingUp) {
      this.behind = true;
      return;
    }
    this.catchingUp = true;
    try {
      do {
        this.behind = false;
        for (;;) {
          if (this.stopped) return;
          const page = await this.deps.events.readStream(this.stream, { fromRevision: this.nextRevision, maxCount: this.deps.limits.pageSize });
          for (const event of page) {
            if (this.stopped) return;
            if (event.revision < this.nextRevision) continue;
            this.emit(event);
            if (this.sink.pendingBytes() > this.deps.limits.highWaterBytes && !(await this.sink.drained(this.deps.limits.highWaterBytes / 2))) {
              this.sink.drop('the client does not read its job output');
              this.stop();
              return;
            }
          }
          if (page.length < this.deps.limits.pageSize) break;
        }
      } while (this.behind && !this.stopped);
    } catch (error) {
      this.deps.log.warn({ err: error, jobId: this.jobId }, 'could not read the output of a job for a websocket');
      this.sink.send(`job-error-${this.jobId}`, { error: 'Could not read the job output, try again' });
      this.stop();
    } finally {
      this.catchingUp = false;
    }
  }

  private emit(event: StoredEvent): void {
    this.nextRevision = event.revision + 1n;
    if (event.type === 'JobOutputWritten') {
      const lines = event.data.lines;
      if (!Array.isArray(lines)) return;
      for (const line of lines as unknown[]) {
        if (typeof line !== 'object' || line === null) continue;
        const { data, created, logLevel } = line as Record<string, unknown>;
        if (typeof data !== 'string') continue;
        // Lines with a time that cannot be read are sent rather than lost.
        if (typeof created === 'string' && Date.parse(created) <= this.since) continue;
        this.sink.send(`job-data-${this.jobId}`, { data, ...(typeof logLevel === 'string' ? { logLevel } : {}), ...(typeof created === 'string' ? { created } : {}) });
      }
    } else if (event.type === 'JobFinished') {
      this.sink.send(`job-finished-${this.jobId}`, { success: event.data.finishedSuccessful === true });
      this.stop();
    }
  }
}

// Who commits the log's writes (LOG_WRITER). Inline, the log's own connection commits a turn's
// writes at the end of the turn, the event loop waiting for the WAL's sync. On the writer thread
// (sqliteLogWriterThread.ts), a turn's writes go to that thread as one message, and the loop goes on
// serving requests while they are committed and synced; the writes resolve once they are durable.
// Either way, a write resolves only after the commit that holds it is on disk.
import type { Worker } from 'node:worker_threads';
import { startServiceThread } from '../../commands/jobs/threadPool';
import { TurnBatcher } from '../turnBatcher';
import { fromWire, isHostedWrite, type LogAppends, type LogWriteItem, type LogWriteOutcome } from './sqliteLogAppends';
import type { FromLogWriter, LogWriterThreadData, ToLogWriter } from './sqliteLogWriterThread';

export interface LogWriter {
  /** Resolves with the item's outcome once its commit is durable; rejects with its own error, or the commit's. */
  submit(item: LogWriteItem): Promise<Exclude<LogWriteOutcome, Error>>;
  /** Commits what is queued now, and resolves once every write submitted so far is answered. */
  flush(): Promise<void>;
  /** Flushes, then lets go of what it holds (the thread). */
  close(): Promise<void>;
}

/** Told after a commit that stored events: the log's readers look. */
type OnCommitted = () => void;

const storedEvents = (outcomes: readonly LogWriteOutcome[]) => outcomes.some((o) => o !== undefined && !(o instanceof Error));

/** The log's own connection commits, at the end of each turn (TurnBatcher). */
export class InlineLogWriter implements LogWriter {
  private readonly batcher;

  constructor(appends: LogAppends, onCommitted: OnCommitted) {
    this.batcher = new TurnBatcher<LogWriteItem, Exclude<LogWriteOutcome, Error>>((batch) => {
      const outcomes = appends.commit(batch);
      // Writes alone (undefined) give the log's readers nothing new.
      if (storedEvents(outcomes)) onCommitted();
      return outcomes;
    });
  }

  submit(item: LogWriteItem): Promise<Exclude<LogWriteOutcome, Error>> {
    return this.batcher.submit(item);
  }

  async flush(): Promise<void> {
    this.batcher.flush();
  }

  async close(): Promise<void> {
    this.batcher.flush();
  }
}

export class LogWriterError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LogWriterError';
  }
}

interface Waiting {
  item: LogWriteItem;
  resolve: (outcome: Exclude<LogWriteOutcome, Error>) => void;
  reject: (error: unknown) => void;
}

/** How long a closing writer thread may take to end once it has committed what it had. */
const END_WITHIN_MS = 5_000;

/** The thread's module, by its path from the service's root (service/build.ts lists it). */
const THREAD_MODULE = 'stores/eventstore/sqliteLogWriterThread';

/** The writer thread commits (sqliteLogWriterThread.ts); this side sends a turn's writes as one message. */
export class ThreadLogWriter implements LogWriter {
  private queued: Waiting[] = [];
  private readonly inFlight = new Map<number, { waiting: Waiting[]; answered: Promise<void>; answer: () => void }>();
  private nextId = 1;
  /** Set once the thread is gone (closed, or ended on its own): every write from then on fails with it. */
  private ended: Error | undefined;
  private readonly exited: Promise<void>;

  private constructor(
    private readonly worker: Worker,
    private readonly onCommitted: OnCommitted,
    private readonly onEnded: (error: Error) => void,
  ) {
    this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
    worker.on('message', (message: FromLogWriter) => this.answer(message));
    worker.on('error', (error) => this.end(new LogWriterError(`The log's writer thread failed: ${error.message}`)));
    worker.on('exit', (code) => this.end(new LogWriterError(`The log's writer thread ended (exit code ${code})`)));
    // Idle, it keeps no process alive; with writes in flight it does (ref in send).
    worker.unref();
  }

  /**
   * Starts the writer thread on the log's `file` (already laid out by the log's own connection) and
   * resolves once its connection is open. `onEnded` is told if the thread ends or fails before a close:
   * the log then takes no more writes, and the service should stop.
   */
  static async start(file: string, onCommitted: OnCommitted, onEnded: (error: Error) => void): Promise<ThreadLogWriter> {
    const worker = startServiceThread(THREAD_MODULE, { logWriter: { file } } satisfies LogWriterThreadData);
    const listening: [string, (...args: any[]) => void][] = []; // eslint-disable-line @typescript-eslint/no-explicit-any
    try {
      await new Promise<void>((resolve, reject) => {
        const onMessage = (message: FromLogWriter) =>
          message.kind === 'ready' ? resolve() : reject(message.kind === 'open-failed' ? fromWire(message.error) : new LogWriterError(`The log's writer thread said ${message.kind} first`));
        const onExit = (code: number) => reject(new LogWriterError(`The log's writer thread ended while opening the log (exit code ${code})`));
        listening.push(['message', onMessage], ['error', reject], ['exit', onExit]);
        for (const [event, listener] of listening) worker.on(event, listener);
      });
    } catch (error) {
      await worker.terminate();
      throw error;
    } finally {
      // Only these: the worker's own listeners stay.
      for (const [event, listener] of listening) worker.off(event, listener);
    }
    return new ThreadLogWriter(worker, onCommitted, onEnded);
  }

  submit(item: LogWriteItem): Promise<Exclude<LogWriteOutcome, Error>> {
    if (this.ended) return Promise.reject(this.ended);
    return new Promise((resolve, reject) => {
      this.queued.push({ item: forTheThread(item), resolve, reject });
      if (this.queued.length === 1 && this.inFlight.size === 0) setImmediate(() => this.send());
    });
  }

  /**
   * Sends what is queued as one commit. One commit at a time is in flight: what comes meanwhile waits
   * for its answer and goes as the next, so the commits (and the syncs, whose CPU in the kernel is paid
   * per commit) are as few as when the loop itself waited for each.
   */
  private send(): void {
    if (this.inFlight.size > 0) return;
    const waiting = this.queued;
    this.queued = [];
    if (waiting.length === 0) return;
    if (this.ended) {
      for (const w of waiting) w.reject(this.ended);
      return;
    }
    const id = this.nextId++;
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    this.inFlight.set(id, { waiting, answered, answer });
    if (this.inFlight.size === 1) this.worker.ref();
    this.post({ kind: 'commit', id, items: waiting.map((w) => w.item) });
  }

  private post(message: ToLogWriter): void {
    this.worker.postMessage(message);
  }

  private answer(message: FromLogWriter): void {
    if (message.kind === 'committed') {
      let stored = false;
      for (const { id, outcomes } of message.replies) {
        const sent = this.take(id);
        sent?.forEach((w, i) => {
          const outcome = outcomes[i];
          if (outcome === undefined) w.reject(new LogWriterError('The log\'s writer thread answered fewer outcomes than it was sent writes'));
          else if (outcome !== null && 'error' in outcome) w.reject(fromWire(outcome.error));
          else {
            if (outcome !== null) stored = true;
            w.resolve(outcome ?? undefined);
          }
        });
      }
      if (stored) this.onCommitted();
    } else if (message.kind === 'failed') {
      const error = fromWire(message.error);
      for (const id of message.ids) for (const w of this.take(id) ?? []) w.reject(error);
    }
    this.send();
  }

  private take(id: number): Waiting[] | undefined {
    const sent = this.inFlight.get(id);
    if (!sent) return undefined;
    this.inFlight.delete(id);
    sent.answer();
    if (this.inFlight.size === 0) this.worker.unref();
    return sent.waiting;
  }

  async flush(): Promise<void> {
    while (this.queued.length > 0 || this.inFlight.size > 0) {
      this.send();
      await Promise.all([...this.inFlight.values()].map((sent) => sent.answered));
    }
  }

  async close(): Promise<void> {
    if (this.ended) return;
    await this.flush();
    this.ended = new LogWriterError('The event store is closed');
    this.post({ kind: 'close' });
    this.worker.ref();
    const timer = setTimeout(() => void this.worker.terminate(), END_WITHIN_MS);
    await this.exited;
    clearTimeout(timer);
  }

  /** The thread is gone: what waits for it fails; told unless it was closed. */
  private end(error: Error): void {
    const closing = this.ended !== undefined;
    this.ended ??= error;
    const lost = [...this.queued, ...[...this.inFlight.values()].flatMap((sent) => sent.waiting)];
    this.queued = [];
    for (const sent of this.inFlight.values()) sent.answer();
    this.inFlight.clear();
    for (const w of lost) w.reject(error);
    if (!closing) this.onEnded(error);
  }
}

/**
 * A view on part of a larger buffer (a Buffer from Node's pool, a slice of a request) would be
 * copied whole across the thread: copied here to its own bytes, it crosses as what it shows.
 */
function forTheThread(item: LogWriteItem): LogWriteItem {
  if (!isHostedWrite(item)) return item;
  const params = item.params.map((p) => (ArrayBuffer.isView(p) && (p.byteOffset !== 0 || p.byteLength !== p.buffer.byteLength) ? new Uint8Array(p.buffer.slice(p.byteOffset, p.byteOffset + p.byteLength)) : p));
  return { sql: item.sql, params };
}

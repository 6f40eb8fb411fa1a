// A SQLite file's checkpoints made on a thread of its own. SQLite checkpoints the write-ahead log on
// the connection whose commit takes it past 1,000 pages: for the event log that is the serving
// thread, which then stops for the copy into the file and its two syncs (about 7 ms here, every
// 1,000-1,500 samples) while every request waits. Here a thread with its own connection checkpoints
// every half second instead, PASSIVE (it neither waits for nor holds up a writer or a reader). The
// writer's own checkpoints stay as a backstop at ten times the bound, and come back at the usual
// bound if the thread cannot start or ends: the log never grows without bound.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

/** SQLite's own bound, in pages, for a writer's checkpoints. */
export const WRITER_CHECKPOINT_PAGES = 1000;
/** The writer's bound while the thread checkpoints: reached only if the thread falls far behind. */
export const BACKSTOP_CHECKPOINT_PAGES = 10 * WRITER_CHECKPOINT_PAGES;
/** A file that has taken fewer commits has no checkpoint worth a thread (most tests' stores). */
export const START_AFTER_COMMITS = 64;
const INTERVAL_MS = 500;
const STOP_WITHIN_MS = 2000;

// Plain CommonJS, evaluated: it runs the same under the TypeScript loader and compiled (the driver
// given by its resolved path, as the evaluated code has no module of its own to resolve from). A busy
// checkpoint (another connection's TRUNCATE, another process's checkpoint) is tried again next time.
const threadSource = (sqliteModule: string): string => `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(${JSON.stringify(sqliteModule)});
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 0');
// SQLite answers the WAL's frames and how many of them are in the file, counting those copied by
// earlier checkpoints until the WAL is reset: only a change is a checkpoint that copied something.
let last = '';
const checkpoint = () => {
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    const now = result ? result.log + '/' + result.checkpointed : '';
    if (result && result.checkpointed > 0 && now !== last) parentPort.postMessage('copied');
    last = now;
  } catch (error) {
    if (!/^SQLITE_(BUSY|LOCKED)/.test(String(error && error.code))) throw error;
  }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface WalCheckpointOptions {
  intervalMs?: number;
  startAfterCommits?: number;
  /** Told when the thread cannot start or ends before it is stopped (the writer checkpoints again). */
  onFailure?: (error: Error) => void;
}

/** The checkpoints of one writer connection's file, on a thread once the file has taken enough commits. */
export class WalCheckpoints {
  private commits = 0;
  private thread: Worker | undefined;
  private stopped = false;
  private readonly intervalMs: number;
  private readonly startAfterCommits: number;
  private readonly onFailure: (error: Error) => void;
  /** The thread's checkpoints that copied pages into the file, for the tests and the curious. */
  checkpointsMade = 0;
  /** Why the thread ended before it was stopped, if it did. */
  failure: Error | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly file: string,
    options: WalCheckpointOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? INTERVAL_MS;
    this.startAfterCommits = options.startAfterCommits ?? START_AFTER_COMMITS;
    this.onFailure = options.onFailure ?? (() => {});
  }

  /** After each commit of the writer connection: the thread starts at the file's START_AFTER_COMMITS-th. */
  committed(): void {
    if (++this.commits === this.startAfterCommits && !this.stopped) this.start();
  }

  get running(): boolean {
    return this.thread !== undefined;
  }

  private start(): void {
    let thread: Worker;
    try {
      const sqliteModule = createRequire(import.meta.url).resolve('better-sqlite3');
      thread = new Worker(threadSource(sqliteModule), { eval: true, workerData: { file: this.file, intervalMs: this.intervalMs } });
    } catch (error) {
      this.failed(error as Error);
      return;
    }
    this.thread = thread;
    this.db.pragma(`wal_autocheckpoint = ${BACKSTOP_CHECKPOINT_PAGES}`);
    thread.on('message', () => (this.checkpointsMade += 1));
    const ended = (cause: Error) => {
      if (this.thread !== thread) return;
      this.thread = undefined;
      if (!this.stopped) this.failed(cause);
      // The writer checkpoints again as SQLite would have (unless it is closing, or closed).
      if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`);
    };
    thread.on('error', ended);
    thread.on('exit', (code) => ended(new Error(`the checkpoint thread exited with code ${code}`)));
    // An idle checkpointer keeps no process alive.
    thread.unref();
  }

  private failed(error: Error): void {
    this.failure = error;
    this.onFailure(error);
  }

  /** Ends the thread, its connection closed first; before the writer's own connection closes. */
  async stop(): Promise<void> {
    this.stopped = true;
    const thread = this.thread;
    if (!thread) return;
    const exited = new Promise<void>((resolve) => thread.once('exit', () => resolve()));
    thread.postMessage('stop');
    const late = setTimeout(() => void thread.terminate(), STOP_WITHIN_MS);
    await exited;
    clearTimeout(late);
  }
}

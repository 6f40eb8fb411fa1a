// Transactions and the group commit: writes within a short window share one SQLite transaction,
// each atomic in a savepoint of its own, so one commit (the costly part of a small write) serves
// many. A commit that fails loses its window: the listeners are told which checkpoints are durable,
// so the projections apply again what went with it. Also the scrubbing of deleted data from the log.
import type Database from 'better-sqlite3';
import type { CommitLostListener } from '../readStore';
import { truncateWal } from '../../sqliteErasure';
import { noteStorageFailure } from '../../storageFull';
import { durableCheckpoints } from './checkpoints';

/** The group commit window during a bulk load: no one else reads meanwhile, and each commit rewrites the pages it touched. */
const BULK_GROUP_COMMIT_MS = 1000;

/**
 * A group of writes could not be committed (a damaged file, a failing disk): they are rolled back, and
 * the store refuses every later write, for the projections already took those writes as done; their
 * checkpoints, committed with them, were rolled back too, so a restart resumes before them.
 */
export class ReadModelsWriteError extends Error {
  readonly code = 'READ_MODELS_WRITE_FAILED';
  constructor(
    readonly file: string,
    cause: unknown,
  ) {
    super(`The read models in ${file} could not be written (${cause instanceof Error ? cause.message : String(cause)}); restart the service: it checks the file at start and rebuilds a damaged one from the log`, { cause });
    this.name = 'ReadModelsWriteError';
  }
}

export interface CommitsOptions {
  /** The file's name, for the error a failed commit gives. */
  file: string;
  /** Writes within this many milliseconds share one transaction (SqliteReadStoreOptions.groupCommitMs). */
  groupCommitMs: number;
  /** Whether a rebuild's bulk load is under way (bulkLoad.ts): it writes unsynced, in long windows. */
  loadingUnsynced: () => boolean;
  /** Told when a group of writes could not be committed; the store refuses writes from then on. */
  onCommitFailure: ((error: ReadModelsWriteError) => void) | undefined;
  /** The window's writes were rolled back: what the connection knew of its tables is to be forgotten. */
  forgetTables: () => void;
  /** Told after every commit: other connections see its writes from then on. */
  onCommitted?: () => void;
}

export class Commits {
  private groupTimer: NodeJS.Timeout | undefined;
  /** When the open group window began (performance.now()), and how many savepoints are open in it. */
  private groupOpenedAt = 0;
  private depth = 0;
  private readonly lossListeners = new Set<CommitLostListener>();
  /** Set by a commit that failed: every later write is refused with it. */
  private failed: ReadModelsWriteError | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly options: CommitsOptions,
  ) {}

  /** Whether a write is running now (its transaction's writes show only on this connection). */
  get writing(): boolean {
    return this.depth > 0;
  }

  /** Runs a write atomically: alone in a transaction, or in a savepoint of the open group (see groupCommitMs). */
  transaction<R>(work: () => R, options: { group?: boolean } = {}): R {
    // The timer alone cannot end a window while writes follow one another without a pause (a
    // catch-up of the whole log runs on promises alone, and timers wait for a pause): a write
    // arriving after the window's time commits it first, so a window never outgrows its time.
    // A rebuild's load widens the window of a store that groups commits; one that does not keeps not.
    if (this.failed) throw this.failed;
    const { groupCommitMs } = this.options;
    const windowMs = this.options.loadingUnsynced() && groupCommitMs > 0 ? BULK_GROUP_COMMIT_MS : groupCommitMs;
    if (this.depth === 0 && this.groupTimer && performance.now() - this.groupOpenedAt >= windowMs) this.commitGroup();
    if (!this.db.inTransaction) {
      if (windowMs <= 0 || options.group === false) {
        const result = this.db.transaction(work).immediate();
        this.options.onCommitted?.();
        return result;
      }
      this.db.exec('BEGIN IMMEDIATE');
      this.groupOpenedAt = performance.now();
      // From the timer, a failed commit has no caller to tell: it is reported (onCommitFailure) and the
      // window's writes are lost (see lose()), never thrown where it would stop the process.
      this.groupTimer = setTimeout(() => {
        try {
          this.commitGroup();
        } catch {
          // Reported by commitGroup.
        }
      }, windowMs);
    }
    this.db.exec('SAVEPOINT write');
    this.depth += 1;
    try {
      const result = work();
      this.db.exec('RELEASE write');
      return result;
    } catch (error) {
      // SQLite may roll the whole transaction back on its own (SQLITE_FULL, an I/O error): then the
      // window's earlier writes went with it.
      if (!this.db.inTransaction) {
        if (this.groupTimer) this.lose(error);
        throw error;
      }
      this.db.exec('ROLLBACK TO write');
      this.db.exec('RELEASE write');
      throw error;
    } finally {
      this.depth -= 1;
    }
  }

  /** Commits the writes of the open group window now. */
  commitGroup(): void {
    if (this.groupTimer) clearTimeout(this.groupTimer);
    this.groupTimer = undefined;
    if (!this.db.open || !this.db.inTransaction) return;
    try {
      this.db.exec('COMMIT');
      this.options.onCommitted?.();
    } catch (error) {
      const storageFull = this.lose(error);
      const failure = new ReadModelsWriteError(this.options.file, error);
      // A full disk passes: the projections apply the window again once there is room. Anything else
      // (a damaged file) refuses every later write: the start's check rebuilds the file.
      if (!storageFull) this.failed ??= failure;
      this.options.onCommitFailure?.(failure);
      throw storageFull ? error : (this.failed ?? failure);
    }
  }

  /** Commits the open group and truncates the write-ahead log (see ReadStore.scrubDeleted). */
  scrubDeleted(): Promise<boolean> {
    return truncateWal(this.db, () => this.commitGroup());
  }

  onCommitLost(listener: CommitLostListener): () => void {
    this.lossListeners.add(listener);
    return () => this.lossListeners.delete(listener);
  }

  /**
   * The open window's writes are lost (its commit failed): rolled back, what this connection knew
   * of its tables forgotten (a table the window made is gone), and the listeners told which
   * checkpoints are durable, so that the projections apply again what went with the window.
   * Answers whether the failure was for want of space.
   */
  private lose(error: unknown): boolean {
    if (this.groupTimer) clearTimeout(this.groupTimer);
    this.groupTimer = undefined;
    if (this.db.open && this.db.inTransaction) {
      try {
        this.db.exec('ROLLBACK');
      } catch {
        // SQLite rolled it back already
      }
    }
    this.options.forgetTables();
    const storageFull = noteStorageFailure(error);
    const durable = durableCheckpoints(this.db);
    for (const listener of this.lossListeners) listener(error, durable);
    return storageFull;
  }
}

// Deleting in SQLite leaves the bytes where they were: a deleted row's cell stays in the free space
// of its page, a freed page keeps its content on the free list, and the write-ahead log keeps every
// earlier version of each page written until it is reset. For a file that may hold someone's
// personal data (read models, sealing keys, small blobs), both are closed: secure_delete zeroes
// what a write frees, as it frees it, and after a forget the log is checkpointed and truncated.
import { setTimeout as sleep } from 'node:timers/promises';
import type Database from 'better-sqlite3';

/** Makes this connection's writes zero the content they delete or replace (rows, index entries, freed pages). */
export function zeroWhatIsDeleted(db: Database.Database): void {
  db.pragma('secure_delete = ON');
}

/** How long truncateWal keeps trying while readers hold earlier snapshots. */
const TRUNCATE_WITHIN_MS = 2000;

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/**
 * Copies the write-ahead log into the file and truncates it to nothing, so that no earlier version
 * of a page (a deleted row's) is left in it. A reader on an earlier snapshot (another connection,
 * another process) holds the truncation back: it is tried without waiting on the thread, and again
 * after a pause, up to about two seconds. `beforeEach` runs before every try (a store ends its open
 * group of writes there: a connection inside a transaction cannot checkpoint). Answers whether the
 * log was truncated.
 */
export async function truncateWal(db: Database.Database, beforeEach: () => void = () => {}, withinMs = TRUNCATE_WITHIN_MS): Promise<boolean> {
  const started = Date.now();
  for (let pause = 5; ; pause = Math.min(pause * 2, 200)) {
    if (!db.open) return false;
    beforeEach();
    const busyTimeout = db.pragma('busy_timeout', { simple: true }) as number;
    db.pragma('busy_timeout = 0');
    try {
      const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number; log: number; checkpointed: number }[];
      if (result && result.busy === 0) return true;
    } catch (error) {
      if (!isBusy(error)) throw error;
    } finally {
      db.pragma(`busy_timeout = ${busyTimeout}`);
    }
    if (Date.now() - started >= withinMs) return false;
    await sleep(pause);
  }
}

// Failures of a store that say "not now" rather than "never": a busy SQLite file (another process
// holds the write lock past busy_timeout), an unreachable or overloaded MongoDB or EventStoreDB
// (FerretDB's own SQLite answers SQLITE_BUSY under a few hundred concurrent GridFS writes). The
// request changed nothing that counts (an append is all or nothing), so the honest answer is 503
// with Retry-After: the client tries again, and the log says which store was busy. Anything else
// stays a 500.
import { DeadlineExceededError, NotLeaderError, TimeoutError, UnavailableError } from '@eventstore/db-client';
import Database from 'better-sqlite3';
import { MongoError, MongoNetworkError, MongoServerSelectionError } from 'mongodb';

const SQLITE_BUSY = /^SQLITE_(BUSY|LOCKED)(_|$)/;
/** FerretDB passes its backend's error on as text. */
const BUSY_TEXT = /SQLITE_BUSY|database is locked|database table is locked/i;

/** Seconds a client should wait before trying again. */
export const RETRY_AFTER_SECONDS = 1;

export function isTransientStoreError(error: unknown): boolean {
  if (error instanceof Database.SqliteError) return SQLITE_BUSY.test(error.code);
  if (error instanceof MongoNetworkError || error instanceof MongoServerSelectionError) return true;
  if (error instanceof MongoError) {
    return error.hasErrorLabel('RetryableWriteError') || error.hasErrorLabel('TransientTransactionError') || BUSY_TEXT.test(error.message);
  }
  return error instanceof UnavailableError || error instanceof DeadlineExceededError || error instanceof TimeoutError || error instanceof NotLeaderError;
}

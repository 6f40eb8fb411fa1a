// A full disk (or a quota reached) is neither the client's fault nor a bug: the request changed
// nothing that counts (an append, a blob and a read-model commit are each all or nothing), and it
// will succeed once an operator frees space, without a restart. So it is answered 507 with
// Retry-After, /health says so, and the projections retry rather than stop (see README's health).
//
// SQLite names a full disk SQLITE_FULL when it knows, but a write that fails in the OS's own calls
// (growing the WAL index in -shm, a sync) comes back as one of the SQLITE_IOERR_* codes, which a
// failing drive gives too: those count as "full" only while a watched data folder has (nearly) no
// space left.
import { statfsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { MongoError } from 'mongodb';

/** Seconds a client is asked to wait: freeing space takes an operator, not a moment. */
export const STORAGE_FULL_RETRY_AFTER_SECONDS = 30;

/** Below this much space available to the service, a data folder counts as full. */
export const LOW_SPACE_BYTES = 1024 * 1024;

/** How long a storage-full failure keeps /health saying so after it was last seen. */
const RECENT_MS = 10_000;

/** MongoDB's OutOfDiskSpace. */
const MONGO_OUT_OF_DISK = 14031;
/** FerretDB passes its backend's error on as text. */
const FULL_TEXT = /SQLITE_FULL|database or disk is full|no space left on device|ENOSPC|EDQUOT|disk quota exceeded/i;

const watched = new Set<string>();
let lastFailure: { at: number } | undefined;

/** A folder whose free space tells a full disk from a failing one (the embedded stores' data folder). */
export function watchStorageFolder(dir: string): void {
  watched.add(dir);
}

/** The first watched folder with less than LOW_SPACE_BYTES available, with what is left. */
export function shortOfSpace(): { dir: string; available: number } | undefined {
  for (const dir of watched) {
    try {
      const stats = statfsSync(dir);
      const available = Number(stats.bavail) * Number(stats.bsize);
      if (available < LOW_SPACE_BYTES) return { dir, available };
    } catch {
      // A folder gone (a test's, removed) says nothing about space.
    }
  }
  return undefined;
}

function classify(error: unknown, depth: number): boolean {
  if (error === null || typeof error !== 'object' || depth > 3) return false;
  if (error instanceof Database.SqliteError) {
    if (error.code === 'SQLITE_FULL') return true;
    if (error.code.startsWith('SQLITE_IOERR')) return shortOfSpace() !== undefined;
    return false;
  }
  const code = (error as { code?: unknown }).code;
  if (code === 'ENOSPC' || code === 'EDQUOT') return true;
  if (error instanceof MongoError) return code === MONGO_OUT_OF_DISK || FULL_TEXT.test(error.message);
  return classify((error as { cause?: unknown }).cause, depth + 1);
}

/** Whether a store's failure means there is no space left to write (a full disk, a quota). */
export function isStorageFullError(error: unknown): boolean {
  return classify(error, 0);
}

/** Records a storage-full failure for /health; answers whether `error` was one. */
export function noteStorageFailure(error: unknown): boolean {
  if (!isStorageFullError(error)) return false;
  lastFailure = { at: Date.now() };
  return true;
}

/**
 * What /health says about the storage: undefined while there is space. Public, so no path and no
 * driver message: the log has those (every refused write is logged with its error).
 */
export function storageFullness(now = Date.now()): string | undefined {
  const short = shortOfSpace();
  if (short) return `storage full: the data folder has ${Math.floor(short.available / 1024)} KiB left; writes are refused (507) until space is freed, reads are served`;
  if (lastFailure && now - lastFailure.at < RECENT_MS) return `storage full: a write failed for want of space ${Math.round((now - lastFailure.at) / 1000)} s ago; writes are refused (507) until space is freed, reads are served`;
  return undefined;
}

/** The message a refused write answers with. */
export const STORAGE_FULL_MESSAGE = 'The service has no storage space left (disk full): nothing was stored; try again once space is freed';

/** A store's file that could not be opened for want of space: the start says which, in one line. */
export class StorageFullError extends Error {
  constructor(
    readonly file: string,
    override readonly cause: unknown,
  ) {
    const code = (cause as { code?: unknown } | null)?.code;
    super(`disk full: cannot open ${file}${typeof code === 'string' ? ` (${code})` : ''}; free space on its disk and start the service again`);
    this.name = 'StorageFullError';
  }
}

/** Opens a store's file, a failure for want of space named with the file. */
export async function openingFile<T>(file: string, open: () => T | Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (error) {
    throw isStorageFullError(error) ? new StorageFullError(file, error) : error;
  }
}

/** The one line a start that failed for want of space prints instead of a stack; undefined for other failures. */
export function storageFullLine(error: unknown): string | undefined {
  if (error instanceof StorageFullError) return error.message;
  if (!isStorageFullError(error)) return undefined;
  return `disk full: ${error instanceof Error ? error.message : String(error)}; free space in the data folder and start the service again`;
}

// The log's writer thread (LOG_WRITER=thread): its own connection to the log's file, on which it
// commits what the serving thread sends (sqliteLogWriter.ts) and syncs the WAL, so that neither the
// commit's CPU nor the wait for the disk holds up the requests. The messages that come while it
// commits are taken together as the next commit: when the disk is slow the syncs stay few.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { zeroWhatIsDeleted } from '../sqliteErasure';
import { LogAppends, toWire, type LogWriteItem, type WireError } from './sqliteLogAppends';
import type { AppendResult } from './eventStore';

export interface LogWriterThreadData {
  logWriter: { file: string };
}

export type ToLogWriter = { kind: 'commit'; id: number; items: LogWriteItem[] } | { kind: 'close' };

/** An item's outcome across the thread: an append's result, null for a hosted write, or its own error. */
export type WireOutcome = AppendResult | null | { error: WireError };

export type FromLogWriter =
  | { kind: 'ready' }
  | { kind: 'open-failed'; error: WireError }
  | { kind: 'committed'; replies: { id: number; outcomes: WireOutcome[] }[] }
  | { kind: 'failed'; ids: number[]; error: WireError }
  | { kind: 'closed' };

function run(file: string): void {
  const port = parentPort!;
  const post = (message: FromLogWriter) => port.postMessage(message);
  let db: Database.Database;
  let appends: LogAppends;
  try {
    db = new Database(file);
    db.defaultSafeIntegers(true);
    db.pragma('journal_mode = WAL');
    // FULL syncs the WAL on every commit: an acknowledged append survives a power cut. The sync blocks
    // this thread only.
    db.pragma('synchronous = FULL');
    db.pragma('temp_store = MEMORY');
    zeroWhatIsDeleted(db);
    appends = new LogAppends(db);
  } catch (error) {
    post({ kind: 'open-failed', error: toWire(error) });
    port.close();
    return;
  }

  let pending: { id: number; items: LogWriteItem[] }[] = [];
  let scheduled = false;
  const commitPending = () => {
    scheduled = false;
    const batch = pending;
    pending = [];
    if (batch.length === 0) return;
    let outcomes;
    try {
      outcomes = appends.commit(batch.flatMap((message) => message.items));
    } catch (error) {
      post({ kind: 'failed', ids: batch.map((message) => message.id), error: toWire(error) });
      return;
    }
    let at = 0;
    const replies = batch.map(({ id, items }) => ({
      id,
      outcomes: outcomes.slice(at, (at += items.length)).map((o): WireOutcome => (o instanceof Error ? { error: toWire(o) } : (o ?? null))),
    }));
    post({ kind: 'committed', replies });
  };

  port.on('message', (message: ToLogWriter) => {
    if (message.kind === 'close') {
      commitPending();
      db.close();
      post({ kind: 'closed' });
      port.close();
      return;
    }
    pending.push(message);
    // After the messages already waiting on the port: they join this commit.
    if (!scheduled) {
      scheduled = true;
      setImmediate(commitPending);
    }
  });
  post({ kind: 'ready' });
}

const data = workerData as Partial<LogWriterThreadData> | undefined;
if (parentPort && data?.logWriter) run(data.logWriter.file);

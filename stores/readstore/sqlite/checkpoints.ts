// The checkpoints table: each projection's (or saga's) last applied log position, with the identity
// of its log, in the same file as the read models so that it commits with the changes it covers.
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { Checkpoint } from '../readStore';
import type { Statements } from './statements';

interface CheckpointRow {
  position: string;
  store: string | null;
}

const checkpointOf = (row: CheckpointRow): Checkpoint => (row.store === null ? { position: BigInt(row.position) } : { position: BigInt(row.position), store: row.store });

export function readCheckpoint(statements: Statements, name: string): Checkpoint | undefined {
  const row = statements.prepare('SELECT position, store FROM checkpoints WHERE name = ?').get(name) as CheckpointRow | undefined;
  return row && checkpointOf(row);
}

export function writeCheckpoint(statements: Statements, name: string, position: bigint, store: string | undefined): void {
  // Decimal text: SQLite's integers stop at 2^63, positions need not.
  statements.prepare('INSERT INTO checkpoints (name, position, store) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET position = excluded.position, store = excluded.store').run(
    name,
    position.toString(),
    store ?? null,
  );
}

/** Every checkpoint's position as the file holds it; empty when it cannot be read. */
export function durableCheckpoints(db: Database.Database): Map<string, bigint> {
  const durable = new Map<string, bigint>();
  try {
    for (const row of db.prepare('SELECT name, position FROM checkpoints').all() as { name: string; position: string }[]) durable.set(row.name, BigInt(row.position));
  } catch {
    // Unreadable: no checkpoint is taken for durable, so the listeners start over from the log.
  }
  return durable;
}

/**
 * The named checkpoints of a read-models file, read as they are: no table is made or laid out anew
 * (a rebuild about to replace the file reads its sagas' progress so). Empty for a missing file.
 */
export function checkpointsIn(file: string, names: readonly string[], busyTimeoutMs: number): Map<string, Checkpoint> {
  const found = new Map<string, Checkpoint>();
  if (!existsSync(file)) return found;
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    const hasTable = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'checkpoints'`).get() !== undefined;
    if (!hasTable) return found;
    const read = db.prepare('SELECT position, store FROM checkpoints WHERE name = ?');
    for (const name of names) {
      const row = read.get(name) as CheckpointRow | undefined;
      if (row) found.set(name, checkpointOf(row));
    }
    return found;
  } finally {
    db.close();
  }
}

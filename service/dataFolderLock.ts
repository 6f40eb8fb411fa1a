// Who uses a data folder: every service process holds a shared lock on `DATA_DIR/service.lock`, a
// rebuild an exclusive one; the one process (or thread) with the projections role holds
// `DATA_DIR/projections.lock` alone. They are SQLite's file locks (a read transaction kept open; BEGIN
// EXCLUSIVE), which the system releases when a process dies, so a crash leaves no stale lock.
import path from 'node:path';
import Database from 'better-sqlite3';

export const LOCK_FILE = 'service.lock';
/**
 * Two projection runners on one set of read models would both apply each event, and an increment
 * applied by both counts twice (a project's data summary): the role is held by one at a time.
 */
export const PROJECTIONS_LOCK_FILE = 'projections.lock';

export class DataFolderBusyError extends Error {
  readonly code = 'DATA_FOLDER_BUSY';
  constructor(message: string) {
    super(message);
    this.name = 'DataFolderBusyError';
  }
}

const isBusy = (error: unknown): boolean => (error as { code?: string } | null)?.code === 'SQLITE_BUSY' || (error as { code?: string } | null)?.code === 'SQLITE_LOCKED';

export class DataFolderLock {
  private constructor(private readonly db: Database.Database) {}

  private static openLock(dataDir: string, file = LOCK_FILE): Database.Database {
    const db = new Database(path.join(dataDir, file));
    // No waiting: a holder keeps its lock for as long as it runs.
    db.pragma('busy_timeout = 0');
    return db;
  }

  /** Held by a service process for its lifetime; several share it. Refused while a rebuild runs. */
  static shared(dataDir: string): DataFolderLock {
    const db = DataFolderLock.openLock(dataDir);
    try {
      db.exec('BEGIN');
      // The read takes the shared lock, and the open transaction keeps it.
      db.prepare('SELECT count(*) FROM sqlite_master').get();
      return new DataFolderLock(db);
    } catch (error) {
      db.close();
      if (isBusy(error)) throw new DataFolderBusyError(`A rebuild of the read models is running on ${dataDir}: start the service when it has finished`);
      throw error;
    }
  }

  /** Held by a rebuild; refused while any service process uses the folder. */
  static exclusive(dataDir: string): DataFolderLock {
    const db = DataFolderLock.openLock(dataDir);
    try {
      db.exec('BEGIN EXCLUSIVE');
      return new DataFolderLock(db);
    } catch (error) {
      db.close();
      if (isBusy(error)) throw new DataFolderBusyError(`A service process (or another rebuild) is using ${dataDir}: stop it before rebuilding the read models`);
      throw error;
    }
  }

  /** Held by the process (or thread) that runs the projections role, for its lifetime; refused while another holds it. */
  static projections(dataDir: string): DataFolderLock {
    const db = DataFolderLock.openLock(dataDir, PROJECTIONS_LOCK_FILE);
    try {
      db.exec('BEGIN EXCLUSIVE');
      return new DataFolderLock(db);
    } catch (error) {
      db.close();
      if (isBusy(error)) {
        throw new DataFolderBusyError(
          `Another service process on ${dataDir} runs the projections role: one process keeps the read models (two would apply every event twice); leave "projections" out of ROLES here, or stop the other`,
        );
      }
      throw error;
    }
  }

  /**
   * What a service process holds for its lifetime: the folder's lock shared, and the projections'
   * alone when it runs that role. Either refused, none is held.
   */
  static forService(dataDir: string, runsProjections: boolean): { release(): void } {
    const shared = DataFolderLock.shared(dataDir);
    let projections: DataFolderLock | undefined;
    try {
      if (runsProjections) projections = DataFolderLock.projections(dataDir);
    } catch (error) {
      shared.release();
      throw error;
    }
    return {
      release: () => {
        projections?.release();
        shared.release();
      },
    };
  }

  release(): void {
    if (!this.db.open) return;
    if (this.db.inTransaction) this.db.exec('ROLLBACK');
    this.db.close();
  }
}

import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { truncateWal, zeroWhatIsDeleted } from '../sqliteErasure';
import type { KeyStore } from './keyStore';

/** Keys in their own SQLite file in the data folder, apart from the event log. */
export class SqliteKeyStore implements KeyStore {
  private constructor(private readonly db: Database.Database) {}

  static open(file: string): SqliteKeyStore {
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    // A destroyed key left in a free page or the log would make the data it sealed readable again.
    zeroWhatIsDeleted(db);
    db.exec('CREATE TABLE IF NOT EXISTS subject_keys (subject TEXT PRIMARY KEY, key BLOB NOT NULL)');
    db.exec('CREATE TABLE IF NOT EXISTS destroyed_subjects (subject TEXT PRIMARY KEY) WITHOUT ROWID');
    return new SqliteKeyStore(db);
  }

  async getOrCreate(subject: string): Promise<Buffer> {
    // INSERT OR IGNORE then SELECT: two processes racing on one file agree on the first key.
    this.db.prepare('INSERT OR IGNORE INTO subject_keys (subject, key) VALUES (?, ?)').run(subject, randomBytes(32));
    return (await this.get(subject))!;
  }

  async get(subject: string): Promise<Buffer | undefined> {
    const row = this.db.prepare('SELECT key FROM subject_keys WHERE subject = ?').get(subject) as { key: Buffer } | undefined;
    return row?.key;
  }

  /**
   * Gone from the file's pages, and from its write-ahead log unless a reader held the log for two
   * seconds (then the next destroy, or the last connection's close, empties it): the user's
   * deletion, already in the log, is not failed for that.
   */
  async destroy(subject: string): Promise<void> {
    this.db.transaction(() => {
      this.db.prepare('INSERT OR IGNORE INTO destroyed_subjects (subject) VALUES (?)').run(subject);
      this.db.prepare('DELETE FROM subject_keys WHERE subject = ?').run(subject);
    })();
    await truncateWal(this.db);
  }

  async wasDestroyed(subject: string): Promise<boolean> {
    return this.db.prepare('SELECT 1 FROM destroyed_subjects WHERE subject = ?').get(subject) !== undefined;
  }

  async close(): Promise<void> {
    this.db.close();
  }
}

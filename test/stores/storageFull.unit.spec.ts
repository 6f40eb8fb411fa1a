// Which failures mean "no space left": answered 507 with Retry-After and reported by /health.
import Database from 'better-sqlite3';
import { MongoServerError } from 'mongodb';
import Koa from 'koa';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { healthRoute } from '../../http/healthRoute';
import type { ProjectionFailure } from '../../projections/projectionStatus';
import { isStorageFullError, StorageFullError, storageFullLine } from '../../stores/storageFull';
import { isTransientStoreError } from '../../stores/transientErrors';

const errno = (code: string) => Object.assign(new Error(`${code}: no space left on device, write`), { code });

describe('a storage-full failure', () => {
  it('is told from other failures', () => {
    expect(isStorageFullError(new Database.SqliteError('database or disk is full', 'SQLITE_FULL'))).toBe(true);
    expect(isStorageFullError(errno('ENOSPC'))).toBe(true);
    expect(isStorageFullError(errno('EDQUOT'))).toBe(true);
    expect(isStorageFullError(new MongoServerError({ message: 'Out of disk space', code: 14031 }))).toBe(true);
    expect(isStorageFullError(new MongoServerError({ message: 'SQLITE_FULL: database or disk is full', code: 1 }))).toBe(true);
    expect(isStorageFullError(new Error('wrapped', { cause: errno('ENOSPC') }))).toBe(true);
    // An I/O error counts only while a watched folder is short of space: none is here.
    expect(isStorageFullError(new Database.SqliteError('disk I/O error', 'SQLITE_IOERR_SHMSIZE'))).toBe(false);
    expect(isStorageFullError(new Database.SqliteError('database is locked', 'SQLITE_BUSY'))).toBe(false);
    expect(isStorageFullError(errno('EACCES'))).toBe(false);
    expect(isStorageFullError(new Error('SQLITE_FULL'))).toBe(false);
    expect(isStorageFullError(undefined)).toBe(false);
    // Not "busy": a full disk is answered 507, not 503 with a one-second wait.
    expect(isTransientStoreError(new Database.SqliteError('database or disk is full', 'SQLITE_FULL'))).toBe(false);
  });

  it('stops a start with one line naming the file', () => {
    const line = storageFullLine(new StorageFullError('/data/events.sqlite', new Database.SqliteError('disk I/O error', 'SQLITE_IOERR_SHMSIZE')));
    expect(line).toBe('disk full: cannot open /data/events.sqlite (SQLITE_IOERR_SHMSIZE); free space on its disk and start the service again');
    expect(storageFullLine(errno('ENOSPC'))).toMatch(/^disk full: ENOSPC/);
    expect(storageFullLine(new Error('other'))).toBeUndefined();
  });
});

const failure = (projection: string): ProjectionFailure => ({
  projection, position: '7', eventType: 'X', streamId: 's-1', eventId: 'e', error: 'boom', since: new Date(0).toISOString(), attempts: 1, nextAttempt: null,
});

async function healthOf(failures: ProjectionFailure[], needs?: ReadonlySet<string>): Promise<{ status: number; body: { status: string } }> {
  const app = new Koa();
  app.use(healthRoute({ failures: async () => failures }, pino({ level: 'silent' }), needs ? { needs } : {}));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    const { port } = server.address() as { port: number };
    const response = await fetch(`http://127.0.0.1:${port}/health`);
    return { status: response.status, body: (await response.json()) as { status: string } };
  } finally {
    server.close();
  }
}

describe("the ingestion port's /health", () => {
  const ingestionNeeds = new Set(['apiKeys', 'projects']);

  it('stays 200, degraded, while only a projection ingestion does not read fails', async () => {
    expect(await healthOf([failure('jobs')], ingestionNeeds)).toMatchObject({ status: 200, body: { status: 'degraded' } });
  });

  it('is 503 when a projection it reads fails', async () => {
    expect(await healthOf([failure('apiKeys')], ingestionNeeds)).toMatchObject({ status: 503, body: { status: 'failing' } });
    expect(await healthOf([failure('projects')], ingestionNeeds)).toMatchObject({ status: 503, body: { status: 'failing' } });
  });

  it('leaves the management port 503 for any failing projection', async () => {
    expect(await healthOf([failure('jobs')])).toMatchObject({ status: 503, body: { status: 'failing' } });
  });
});

// A store that says "not now" (a SQLite file locked past busy_timeout, FerretDB's SQLITE_BUSY under
// load, an unreachable MongoDB or EventStoreDB) gets 503 with Retry-After, not 500: nothing was
// stored, and the client may try again. Other failures stay 500s.
import Database from 'better-sqlite3';
import { MongoNetworkError, MongoServerError } from 'mongodb';
import { UnavailableError } from '@eventstore/db-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTransientStoreError } from '../../stores/transientErrors';
import { signedSample } from '../support/signedSample';
import { call, registerUser, startTestService, type TestService } from '../support/testService';

const busySqlite = () => new Database.SqliteError('database is locked', 'SQLITE_BUSY');

describe('transient store failures', () => {
  it('are told from lasting ones', () => {
    expect(isTransientStoreError(busySqlite())).toBe(true);
    expect(isTransientStoreError(new Database.SqliteError('database table is locked', 'SQLITE_LOCKED_SHAREDCACHE'))).toBe(true);
    expect(isTransientStoreError(new MongoServerError({ message: 'SQLITE_BUSY: database is locked', code: 1 }))).toBe(true);
    expect(isTransientStoreError(new MongoNetworkError('connection reset'))).toBe(true);
    expect(isTransientStoreError(new UnavailableError({ code: 14, details: 'no server', metadata: undefined } as never))).toBe(true);
    expect(isTransientStoreError(new Database.SqliteError('disk I/O error', 'SQLITE_IOERR'))).toBe(false);
    expect(isTransientStoreError(new Database.SqliteError('constraint failed', 'SQLITE_CONSTRAINT'))).toBe(false);
    expect(isTransientStoreError(new MongoServerError({ message: 'E11000 duplicate key', code: 11000 }))).toBe(false);
    expect(isTransientStoreError(new Error('SQLITE_BUSY'))).toBe(false);
    expect(isTransientStoreError('busy')).toBe(false);
  });
});

describe('a busy store behind the APIs', () => {
  let service: TestService;
  let token: string;
  let projectId: number;
  let apiKey: string;

  beforeAll(async () => {
    service = await startTestService({ mongo: false });
    token = (await registerUser(service)).token;
    const project = await call(service, 'POST', '/api/projects/create', { headers: { 'x-jwt-token': token }, body: { projectName: 'Busy' } });
    projectId = Number(project.body.id);
    apiKey = String(project.body.apiKey);
  });
  afterAll(async () => {
    await service?.destroy();
  });

  const upload = () =>
    fetch(`${service.ingestionUrl}/api/training/data`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': 'busy.1.json' },
      body: signedSample('none', [[1, 2], [3, 4]], { alg: 'none' }),
    });

  it('answers an upload 503 with Retry-After while the blob store is busy, stores nothing, and takes it once the store answers', async () => {
    const blobs = service.stores.blobs;
    const put = blobs.put.bind(blobs);
    blobs.put = async () => {
      throw busySqlite();
    };
    try {
      const busy = await upload();
      expect(busy.status).toBe(503);
      expect(busy.headers.get('retry-after')).toBe('1');
      expect(await busy.text()).toMatch(/^The service is busy .*the sample was not recorded, try again/);
    } finally {
      blobs.put = put;
    }
    const count = async () => Number((await call(service, 'GET', `/api/${projectId}/raw-data/count?category=training`, { headers: { 'x-jwt-token': token } })).body.count);
    expect(await count()).toBe(0);
    const retried = await upload();
    expect(retried.status, await retried.clone().text()).toBe(200);
  });

  it('answers a management call 503 in its JSON envelope while the event store is busy', async () => {
    const events = service.stores.events;
    const append = events.appendToStream.bind(events);
    events.appendToStream = async () => {
      throw busySqlite();
    };
    try {
      const busy = await call(service, 'POST', `/api/${projectId}`, { headers: { 'x-jwt-token': token }, body: { description: 'while busy' } });
      expect(busy.status).toBe(503);
      expect(busy.body).toMatchObject({ success: false, error: expect.stringMatching(/^The service is busy/) });
    } finally {
      events.appendToStream = append;
    }
    const info = await call(service, 'GET', `/api/${projectId}`, { headers: { 'x-jwt-token': token } });
    expect((info.body.project as { description: string }).description).not.toBe('while busy');
  });
});

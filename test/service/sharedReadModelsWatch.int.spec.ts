import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { checkpointName } from '../../projections/readModelVersions';
import { loadConfig, startService, type RunningService } from '../../main';
import { storeFailure } from '../../projections/projectionStatus';
import { SharedReadModelsWatch } from '../../service/sharedReadModelsWatch';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';
import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';
import { adaWithProject, besideEnv } from '../support/testService';
import { signedSample } from '../support/signedSample';

const marker = () => ({ id: randomUUID(), type: 'TestMarker', data: {}, metadata: { actor: 'system:test', correlationId: randomUUID(), time: new Date().toISOString() } });

/** A log of `n` events in a stream of their own. */
async function logOf(n: number): Promise<SqliteEventStore> {
  const events = SqliteEventStore.open(':memory:');
  for (let i = 0; i < n; i++) await events.appendToStream(`marker-${i}`, [marker()], 'no_stream');
  return events;
}

function recordingLog(): { log: pino.Logger; lines: { level: number; msg: string; position?: string; head?: string }[] } {
  const lines: { level: number; msg: string }[] = [];
  const log = pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string }), done()) }));
  return { log, lines };
}

describe('watching read models another process keeps', () => {
  it('reports them stalled once behind the log without moving for the stall time, and says so once; moving again clears it', async () => {
    const events = await logOf(5);
    const readStore = new MemoryReadStore();
    await readStore.setCheckpoint('users', 5n);
    await readStore.setCheckpoint(checkpointName('projects'), 2n);
    let now = 1_000_000;
    const { log, lines } = recordingLog();
    const watch = new SharedReadModelsWatch(events, readStore, ['users', 'projects'], log, { stallMs: 30_000, now: () => now });

    await watch.look();
    expect(watch.stall()).toBeUndefined();
    now += 29_999;
    await watch.look();
    expect(watch.stall()).toBeUndefined();
    now += 1;
    await watch.look();
    expect(watch.stall()).toEqual({ position: 2n, head: 5n, since: 1_000_000 });
    now += 60_000;
    await watch.look();
    expect(watch.stall()).toEqual({ position: 2n, head: 5n, since: 1_000_000 });
    const warnings = lines.filter((l) => l.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ position: '2', head: '5' });
    expect(warnings[0]!.msg).toMatch(/is a process with the projections role running on the same read store/);

    // Moving, though still behind: not stalled, and the stall time starts again from here.
    await readStore.setCheckpoint(checkpointName('projects'), 3n);
    await watch.look();
    expect(watch.stall()).toBeUndefined();
    expect(lines.filter((l) => l.msg === 'the read models move again')).toHaveLength(1);
    now += 29_000;
    await watch.look();
    expect(watch.stall()).toBeUndefined();
    await events.close();
  });

  it('never reports read models that follow the log, however long the log stands still', async () => {
    const events = await logOf(3);
    const readStore = new MemoryReadStore();
    for (const name of ['users', 'projects']) await readStore.setCheckpoint(checkpointName(name), 3n);
    let now = 0;
    const watch = new SharedReadModelsWatch(events, readStore, ['users', 'projects'], pino({ level: 'silent' }), { stallMs: 10, now: () => now });
    for (let i = 0; i < 5; i++, now += 1_000) await watch.look();
    expect(watch.stall()).toBeUndefined();
    await events.close();
  });

  it('leaves out a projection reported failed: its own failure is what /health names', async () => {
    const events = await logOf(4);
    const readStore = new MemoryReadStore();
    await readStore.setCheckpoint('users', 4n);
    await readStore.setCheckpoint(checkpointName('projects'), 1n);
    await storeFailure(readStore, {
      projection: 'projects', position: '2', eventType: 'TestMarker', streamId: 'marker-1', eventId: 'e', error: 'boom', since: '2026-01-01T00:00:00.000Z', attempts: 1, nextAttempt: null,
    });
    let now = 0;
    const watch = new SharedReadModelsWatch(events, readStore, ['users', 'projects'], pino({ level: 'silent' }), { stallMs: 10, now: () => now });
    for (let i = 0; i < 3; i++, now += 1_000) await watch.look();
    expect(watch.stall()).toBeUndefined();
    await events.close();
  });

  it('keeps its last answer when the store fails a look, and says why', async () => {
    const events = await logOf(2);
    const readStore = new MemoryReadStore();
    const broken = new Proxy(readStore, {
      get: (target, key, receiver) => (key === 'getCheckpoint' ? () => Promise.reject(new Error('disk gone')) : (Reflect.get(target, key, receiver) as unknown)),
    });
    const { log, lines } = recordingLog();
    const watch = new SharedReadModelsWatch(events, broken, ['users'], log, { stallMs: 0 });
    await watch.look();
    expect(watch.stall()).toBeUndefined();
    expect(lines.find((l) => l.level === 40)?.msg).toMatch(/could not compare the read models' checkpoints with the log/);
    await events.close();
  });
});

const env = (dataDir: string, roles: string) => besideEnv(dataDir, { ROLES: roles });

describe('ingestion and API processes whose read models nobody keeps', () => {
  const running: RunningService[] = [];
  let dataDir: string | undefined;
  afterEach(async () => {
    for (const s of running.splice(0).reverse()) await s.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('answer an unknown key 503 with Retry-After (not 401) and /health 503 "stalled", keep taking known keys, and go back to 401 once a projections process runs', async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-stalled-'));
    const whole = await startService(loadConfig(env(dataDir, '')), pino({ level: 'silent' }));
    const ingestion = await startService(loadConfig(env(dataDir, 'ingestion')), pino({ level: 'silent' }), { readModelsWatch: { intervalMs: 20, stallMs: 200 } });
    const api = await startService(loadConfig(env(dataDir, 'api')), pino({ level: 'silent' }), { readModelsWatch: { intervalMs: 20, stallMs: 200 } });
    running.push(ingestion, api);
    const projects = (key: string) => fetch(`${api.apiUrl!}/v1/api/projects`, { headers: { 'x-api-key': key } });
    const { ada, apiKey, projectId } = await adaWithProject({ apiUrl: whole.apiUrl! }, 'Watched');
    const devkeys = await fetch(`${whole.apiUrl!}/v1/api/${projectId}/devkeys`, { headers: ada });
    const { hmacKey } = (await devkeys.json()) as { hmacKey: string };
    const post = (key: string, name: string) =>
      fetch(`${ingestion.ingestionUrl!}/api/training/data`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json', 'x-file-name': name }, body: signedSample(hmacKey, [[1, 2], [3, 4]]) });
    await expect.poll(async () => (await post(apiKey, 'before.json')).status).toBe(200);
    const unknownKey = `ei_${'f'.repeat(64)}`;
    expect((await post(unknownKey, 'nobody.json')).status).toBe(401);
    expect((await projects(unknownKey)).status).toBe(401);

    // The projections go away; the log moves on without them.
    await whole.stop();
    const log = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'));
    await log.appendToStream(`marker-${randomUUID()}`, [marker()], 'no_stream');
    await log.close();

    await expect.poll(async () => (await fetch(`${ingestion.ingestionUrl!}/health`)).status, { timeout: 5_000 }).toBe(503);
    const health = (await (await fetch(`${ingestion.ingestionUrl!}/health`)).json()) as { status: string; error: string; readModels: { position: string; head: string } };
    expect(health.status).toBe('stalled');
    expect(health.error).toMatch(/no process with the projections role keeps them up to date/);
    expect(BigInt(health.readModels.position)).toBeLessThan(BigInt(health.readModels.head));
    const refused = await post(unknownKey, 'nobody.json');
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('30');
    expect(await refused.text()).toMatch(/^This API key is not known here, and the read models are at position \d+ of the log's \d+ .* the sample was not recorded, try again$/);
    // A key the read models know still ingests: the log takes its sample.
    expect((await post(apiKey, 'during.json')).status).toBe(200);
    // The management API, the same.
    await expect.poll(async () => (await fetch(`${api.apiUrl!}/health`)).status, { timeout: 5_000 }).toBe(503);
    const refusedByApi = await projects(unknownKey);
    expect(refusedByApi.status).toBe(503);
    expect(refusedByApi.headers.get('retry-after')).toBe('30');
    expect(((await refusedByApi.json()) as { error: string }).error).toMatch(/^This API key is not known here, and the read models are at position \d+ .*; try again$/);
    expect((await projects(apiKey)).status).toBe(200);

    running.push(await startService(loadConfig(env(dataDir, 'projections')), pino({ level: 'silent' })));
    await expect.poll(async () => (await fetch(`${ingestion.ingestionUrl!}/health`)).status, { timeout: 5_000 }).toBe(200);
    expect((await post(unknownKey, 'nobody.json')).status).toBe(401);
    await expect.poll(async () => (await fetch(`${api.apiUrl!}/health`)).status, { timeout: 5_000 }).toBe(200);
    expect((await projects(unknownKey)).status).toBe(401);
  });
});

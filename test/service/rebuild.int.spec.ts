// `npm run rebuild` on the embedded default: it replays the log into the SQLite read models,
// showing progress, and refuses to run beside a service process on the same data folder.
import { randomUUID } from 'node:crypto';
import { copyFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { checkpointName } from '../../projections/readModelVersions';
import { startService } from '../../main';
import { SAGA_NAMES } from '../../commands/sagas/sagaNames';
import { EMAIL_DELIVERY_SAGA } from '../../commands/sagas/emailDeliverySaga';
import { sagaCheckpointName } from '../../commands/sagas/sagaRunner';
import { allProjections } from '../../projections';
import { READ_MODELS_FILE } from '../../service/composition';
import { DataFolderBusyError, DataFolderLock } from '../../service/dataFolderLock';
import { compareReadModels } from '../../projections/readModelCheck';
import { readModelIndexes } from '../../projections/readModelIndexes';
import { REBUILD_PART_PREFIX, REBUILT_FILE, rebuildReadModels } from '../../service/rebuild';
import { sampleStream } from '../../domain/sample/sampleEvents';
import { poisonedSample } from '../support/poisonedSample';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';
import { SqliteReadStore } from '../../stores/readstore/sqliteReadStore';
import { call, registerUser, startTestService, type TestService } from '../support/testService';

const silent = pino({ level: 'silent' });

function output(isTTY: boolean): { text: () => string; write(chunk: string): boolean; isTTY: boolean } {
  const chunks: string[] = [];
  return { isTTY, text: () => chunks.join(''), write: (chunk: string) => chunks.push(chunk) > 0 };
}

/** The status of Ada's read of the project's information, signed in afresh. */
async function adaReadsProject(service: TestService, projectId: number): Promise<number> {
  const ada = await call(service, 'POST', '/api-login', { body: { username: 'ada', password: 'correct horse battery' } });
  return (await call(service, 'GET', `/api/${projectId}`, { headers: { 'x-jwt-token': String(ada.body.token) } })).status;
}

/** The files of a rebuild in the data folder (with their -wal and -shm). */
const rebuildFiles = async (dir: string): Promise<string[]> => (await readdir(dir)).filter((f) => f.startsWith(REBUILT_FILE) || f.startsWith(REBUILD_PART_PREFIX));

async function someData(service: TestService): Promise<number> {
  const { token } = await registerUser(service, 'ada');
  const created = await call(service, 'POST', '/api/projects/create', { headers: { 'x-jwt-token': token }, body: { projectName: 'Gestures' } });
  expect(created.status).toBe(200);
  return Number(created.body.id);
}

describe('rebuild of the embedded read models', () => {
  let service: TestService | undefined;
  afterEach(async () => {
    await service?.destroy();
    service = undefined;
  });

  it('replays the log into the SQLite read models and reports progress and events per second', async () => {
    service = await startTestService({ mongo: false });
    const projectId = await someData(service);
    const before = await call(service, 'GET', `/api/${projectId}`, { headers: { 'x-jwt-token': (await registerUser(service, 'bob')).token } });
    await service.stop();
    const out = output(false);
    const result = await rebuildReadModels(service.config, silent, out);
    expect(result?.events).toBeGreaterThan(5);
    expect(result?.eventsPerSecond).toBeGreaterThan(0);
    expect(out.text()).toMatch(/^rebuild: 100\.0% \(position \d+ of \d+\), [\d,]+ events, [\d,]+ events\/s\n$/m);
    expect(out.text()).not.toContain('\r');
    // The rebuilt read models answer as before.
    service = await service.restart();
    const ada = await call(service, 'POST', '/api-login', { body: { username: 'ada', password: 'correct horse battery' } });
    const after = await call(service, 'GET', `/api/${projectId}`, { headers: { 'x-jwt-token': String(ada.body.token) } });
    expect(after.status).toBe(200);
    expect((after.body.project as { name: string }).name).toBe('Gestures');
    expect(before.status).toBe(403);
  });

  it('rebuilds documents identical to those the service built, the samples and the history replayed on other cores and copied in', async () => {
    service = await startTestService({ mongo: false });
    const projectId = await someData(service);
    const { token } = await registerUser(service, 'cy');
    for (const name of ['a', 'b', 'c']) expect((await call(service, 'POST', '/api/projects/create', { headers: { 'x-jwt-token': token }, body: { projectName: `P ${name}` } })).status).toBe(200);
    expect(projectId).toBeGreaterThan(0);
    // Samples, straight to the log: the service's projections apply them as they would an upload's.
    for (const sampleId of [700_001, 700_002, 700_003]) {
      const sample = { ...poisonedSample(projectId, sampleId), fileName: `s${sampleId}.json`, intervalMs: 10, totalLengthMs: 20 };
      const appended = await service.stores.events.appendToStream(sampleStream(sampleId), [{ id: randomUUID(), type: 'SampleIngested', data: sample, metadata: { actor: 'system:test', correlationId: 'samples', time: sample.ingested } }], 'no_stream');
      expect(await service.projections?.waitFor(appended.position, 10_000)).toBe(true);
    }
    await service.stop();
    const dir = service.config.dataDir;
    const live = path.join(dir, 'live-copy.sqlite');
    await copyFile(path.join(dir, READ_MODELS_FILE), live);
    // Two groups apart, one of them a projection whose checkpoint carries a version (samples@v2).
    await rebuildReadModels(service.config, silent, output(false), [['samples'], ['history']]);
    const before = SqliteReadStore.open(live, { indexes: readModelIndexes });
    const after = SqliteReadStore.open(path.join(dir, READ_MODELS_FILE), { indexes: readModelIndexes });
    try {
      const comparison = await compareReadModels(before, after, allProjections);
      expect(comparison.differences).toEqual([]);
      expect(comparison.documents).toBeGreaterThan(20);
      // The history is there, whole, with its checkpoint at the head.
      const history = await after.collection('history').count();
      expect(history).toBe(await before.collection('history').count());
      expect(history).toBeGreaterThan(10);
      expect(await after.getCheckpoint('history')).toBe(await before.getCheckpoint('history'));
      // So are the samples and their project's summary, with their checkpoint.
      expect(await after.collection('samples').count({ projectId })).toBe(3);
      expect(await after.getCheckpoint(checkpointName('samples'))).toBe(await before.getCheckpoint(checkpointName('samples')));
      // Its declared indexes were built after the copy.
      expect(after.explainFind('history', { projectId }, { sort: { _position: 1 } }).plan.join(' ')).toMatch(/USING INDEX/);
    } finally {
      await before.close();
      await after.close();
    }
    expect((await readdir(dir)).filter((f) => f.startsWith(REBUILD_PART_PREFIX))).toEqual([]);
  });

  it('leaves the read models as they were when it fails, and no file of its own behind', async () => {
    service = await startTestService({ mongo: false });
    const projectId = await someData(service);
    // An event no projection can pass, straight to the log (as an older log or a future bug could hold it).
    const poison = poisonedSample(projectId, 999_999);
    await service.stores.events.appendToStream(sampleStream(999_999), [{ id: randomUUID(), type: 'SampleIngested', data: poison, metadata: { actor: 'system:test', correlationId: 'poison', time: poison.ingested } }], 'no_stream');
    await service.stop();
    const dir = service.config.dataDir;
    // A document no replay makes: gone from read models dropped or rebuilt, kept if they are left alone.
    const marked = SqliteReadStore.open(path.join(dir, READ_MODELS_FILE), { indexes: readModelIndexes });
    await marked.collection('projects').updateOne({ _id: 'left alone' }, { $set: { name: 'marker' } }, { upsert: true });
    await marked.close();
    const copy = path.join(dir, 'live-copy.sqlite');
    await copyFile(path.join(dir, READ_MODELS_FILE), copy);
    await expect(rebuildReadModels(service.config, silent, output(false))).rejects.toThrow(/Rebuild incomplete: projection samples failed on event/);
    const before = SqliteReadStore.open(copy, { indexes: readModelIndexes });
    const after = SqliteReadStore.open(path.join(dir, READ_MODELS_FILE), { indexes: readModelIndexes });
    try {
      const comparison = await compareReadModels(before, after, allProjections);
      expect(comparison.differences).toEqual([]);
      expect(comparison.documents).toBeGreaterThan(10);
      expect(await after.collection('projects').findOne({ _id: 'left alone' })).toMatchObject({ name: 'marker' });
      expect(await after.getCheckpoint(checkpointName('projects'))).toBe(await before.getCheckpoint(checkpointName('projects')));
      // Taken out again: the test service compares its read models with a rebuild when destroyed.
      expect(await after.collection('projects').deleteOne({ _id: 'left alone' })).toBe(1);
    } finally {
      await before.close();
      await after.close();
    }
    expect(await rebuildFiles(dir)).toEqual([]);
    service = await service.restart();
    expect(await adaReadsProject(service, projectId)).toBe(200);
  });

  it('removes at the next start what a rebuild cut short left, and the live read models serve meanwhile', async () => {
    service = await startTestService({ mongo: false });
    const projectId = await someData(service);
    await service.stop();
    const dir = service.config.dataDir;
    // What a killed rebuild leaves: its file half loaded (here, a copy marked as in a bulk load) and its part's.
    const leftover = SqliteReadStore.open(path.join(dir, REBUILT_FILE));
    await leftover.dropAllForBulkLoad();
    await leftover.close();
    await writeFile(path.join(dir, `${REBUILD_PART_PREFIX}.samples.sqlite`), 'partial');
    await writeFile(path.join(dir, `${REBUILD_PART_PREFIX}.history.sqlite-wal`), 'partial');
    service = await service.restart();
    expect(await rebuildFiles(dir)).toEqual([]);
    expect(await adaReadsProject(service, projectId)).toBe(200);
  });

  it('replaces read models it cannot even open (a damaged file), the very case it is there for', async () => {
    service = await startTestService({ mongo: false });
    const projectId = await someData(service);
    await service.stop();
    const dir = service.config.dataDir;
    for (const suffix of ['-wal', '-shm']) await rm(path.join(dir, READ_MODELS_FILE + suffix), { force: true });
    await writeFile(path.join(dir, READ_MODELS_FILE), Buffer.alloc(64 * 1024, 0x5a));
    const result = await rebuildReadModels(service.config, silent, output(false));
    expect(result?.events).toBeGreaterThan(5);
    service = await service.restart();
    expect(await adaReadsProject(service, projectId)).toBe(200);
  });

  it('draws a bar on a terminal', async () => {
    service = await startTestService({ mongo: false });
    await someData(service);
    await service.stop();
    const out = output(true);
    await rebuildReadModels(service.config, silent, out);
    expect(out.text()).toMatch(/\r\[#{30}\] 100\.0% [\d,]+ events, [\d,]+ events\/s {3}\n$/);
  });

  it('refuses to run while a service process uses the data folder, and changes nothing', async () => {
    service = await startTestService({ mongo: false });
    const projectId = await someData(service);
    await expect(rebuildReadModels(service.config, silent, output(false))).rejects.toThrow(DataFolderBusyError);
    await expect(rebuildReadModels(service.config, silent, output(false))).rejects.toThrow(/stop it before rebuilding/);
    const { token } = await registerUser(service, 'carol');
    expect((await call(service, 'GET', `/api/${projectId}`, { headers: { 'x-jwt-token': token } })).status).toBe(403);
    expect(await adaReadsProject(service, projectId)).toBe(200);
  });

  it('keeps a service from starting while it runs', async () => {
    service = await startTestService({ mongo: false });
    await service.stop();
    const lock = DataFolderLock.exclusive(service.config.dataDir);
    try {
      await expect(startService(service.config, silent)).rejects.toThrow(/A rebuild of the read models is running/);
    } finally {
      lock.release();
    }
    service = await service.restart();
    expect(service.apiUrl).toMatch(/^http:/);
  });

  it("keeps the sagas' checkpoints: their progress is not a read model", async () => {
    service = await startTestService({ mongo: false });
    await someData(service);
    await service.stop();
    const sagaCheckpoints = async () => {
      const readModels = SqliteReadStore.open(path.join(service!.config.dataDir, READ_MODELS_FILE));
      try {
        return await Promise.all(SAGA_NAMES.map((saga) => readModels.readCheckpoint(sagaCheckpointName(saga))));
      } finally {
        await readModels.close();
      }
    };
    const before = await sagaCheckpoints();
    // The sign-up queued an e-mail, which the e-mail saga reacted to.
    expect(before[SAGA_NAMES.indexOf(EMAIL_DELIVERY_SAGA)]?.position).toBeGreaterThan(0n);
    await rebuildReadModels(service.config, silent, output(false));
    expect(await sagaCheckpoints()).toEqual(before);
  });

  it('leaves nothing to replay at a restart: every projection checkpoint is at the head of the log', async () => {
    service = await startTestService({ mongo: false });
    await someData(service);
    await service.stop();
    const events = SqliteEventStore.open(path.join(service.config.dataDir, 'events.sqlite'));
    const readModels = SqliteReadStore.open(path.join(service.config.dataDir, READ_MODELS_FILE));
    try {
      const head = await events.headPosition();
      const checkpoints = await Promise.all(allProjections.map((projection) => readModels.getCheckpoint(projection.checkpoint)));
      expect(checkpoints).toEqual(allProjections.map(() => head));
    } finally {
      await readModels.close();
      await events.close();
    }
  });
});

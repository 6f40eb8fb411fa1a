// A log restored from a backup taken before the last uploads is behind the read
// models' checkpoints. The start must say so and rebuild them: no sample the log no longer holds is
// served, and the uploads after the restart appear (before: their positions fell below the
// checkpoints, so they were acknowledged and never shown).
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import Database from 'better-sqlite3';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig, startService, type Config, type RunningService } from '../../main';
import { SAGA_NAMES } from '../../commands/sagas/sagaNames';
import { sagaCheckpointName } from '../../commands/sagas/sagaRunner';
import { adaWithProject, call } from '../support/testService';
import { signedSample } from '../support/signedSample';
import { readModelsCaughtUp } from '../support/readModels';

type Line = { level: number; msg?: string; eventsFile?: string; head?: string | null };

function capturingLog(lines: Line[]) {
  return pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(JSON.parse(chunk.toString()) as Line), done()) }));
}

describe('a log restored from a backup behind the read models', () => {
  const folders: string[] = [];
  const running: RunningService[] = [];
  afterEach(async () => {
    for (const s of running.splice(0)) await s.stop();
    for (const f of folders.splice(0)) await rm(f, { recursive: true, force: true });
  });

  it('is said plainly at start, the read models are rebuilt, no phantom is served and new uploads appear', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-log-behind-'));
    folders.push(dataDir);
    const config: Config = loadConfig({ DATA_DIR: dataDir, API_PORT: '0', INGESTION_PORT: '0', INGESTION_TLS_PORT: '0', REMOTE_MGMT_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' });
    const first = await startService(config, pino({ level: 'silent' }));
    running.push(first);
    const service = { apiUrl: first.apiUrl! };
    const { ada, apiKey, projectId } = await adaWithProject(service, 'Restored');
    const upload = async (url: string, name: string) =>
      fetch(`${url}/api/training/data`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': name },
        body: signedSample('', [[Math.random(), 1]], { alg: 'none' }),
      });
    for (let i = 0; i < 3; i++) expect((await upload(first.ingestionUrl!, `kept-${i}`)).status).toBe(200);
    await readModelsCaughtUp(first);

    // A backup of the log as sqlite3's .backup takes it: consistent, the write-ahead log included.
    const eventsFile = path.join(dataDir, 'events.sqlite');
    const backupFile = path.join(dataDir, 'events.backup.sqlite');
    const source = new Database(eventsFile, { readonly: true });
    await source.backup(backupFile);
    source.close();

    for (let i = 0; i < 10; i++) expect((await upload(first.ingestionUrl!, `phantom-${i}`)).status).toBe(200);
    await readModelsCaughtUp(first);
    const names = async (apiUrl: string) =>
      ((await call({ apiUrl }, 'GET', `/api/${projectId}/raw-data?category=training&limit=100`, { headers: ada })).body.samples as { filename: string }[]).map((s) => s.filename).sort();
    expect(await names(first.apiUrl!)).toHaveLength(13);
    await running.pop()!.stop();

    // The operator restores the backup.
    await Promise.all(['-wal', '-shm'].map((suffix) => rm(eventsFile + suffix, { force: true })));
    await copyFile(backupFile, eventsFile);

    const lines: Line[] = [];
    const second = await startService(config, capturingLog(lines));
    running.push(second);
    const said = lines.find((l) => l.level >= 40 && /behind the read models/.test(l.msg ?? ''));
    expect(said?.eventsFile).toBe(eventsFile);
    expect(said?.msg).toContain('rebuilding the read models');
    expect(await names(second.apiUrl!)).toEqual(['kept-0', 'kept-1', 'kept-2']);
    // The sagas come back to the log's end: they neither react again to old events nor skip new ones.
    const head = (await second.stores.events.headPosition())!;
    for (const saga of SAGA_NAMES) expect(await second.stores.readStore.getCheckpoint(sagaCheckpointName(saga))).toBeLessThanOrEqual(head);

    for (let i = 0; i < 5; i++) expect((await upload(second.ingestionUrl!, `after-${i}`)).status).toBe(200);
    await readModelsCaughtUp(second);
    expect(await names(second.apiUrl!)).toEqual(['after-0', 'after-1', 'after-2', 'after-3', 'after-4', 'kept-0', 'kept-1', 'kept-2']);
  });

  it('rebuilds, rather than calling it another log, read models beside an embedded log that was made anew', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-log-anew-'));
    folders.push(dataDir);
    const config: Config = loadConfig({ DATA_DIR: dataDir, API_PORT: '0', INGESTION_PORT: '0', INGESTION_TLS_PORT: '0', REMOTE_MGMT_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' });
    const first = await startService(config, pino({ level: 'silent' }));
    running.push(first);
    await adaWithProject({ apiUrl: first.apiUrl! }, 'Lost');
    await readModelsCaughtUp(first);
    await running.pop()!.stop();
    // The log's write-ahead log lost before its first checkpoint: the file holds nothing, not even its identity.
    const eventsFile = path.join(dataDir, 'events.sqlite');
    await Promise.all(['', '-wal', '-shm'].map((suffix) => rm(eventsFile + suffix, { force: true })));

    const lines: Line[] = [];
    const second = await startService(config, capturingLog(lines));
    running.push(second);
    expect(lines.some((l) => l.level >= 40 && /is not the one the read models .* were built from/.test(l.msg ?? ''))).toBe(true);
    expect(await second.stores.readStore.collection('users').count({})).toBe(0);
  });
});

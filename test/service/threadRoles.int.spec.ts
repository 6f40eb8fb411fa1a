// THREAD_ROLES: projections, sagas and jobs on a worker thread of the service's process. The main
// thread serves the API and the ingestion on the read models the thread keeps: a management write is
// read back at once, a device's sample shows, and the service stops (and starts again) in order.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig, ServiceStartStopped, startService, type RunningService } from '../../main';
import { adaWithProject, call } from '../support/testService';
import { signedSample } from '../support/signedSample';

const env = (dataDir: string) => ({
  DATA_DIR: dataDir,
  API_PORT: '0',
  INGESTION_PORT: '0',
  INGESTION_TLS_PORT: '0',
  REMOTE_MGMT_PORT: '0',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'info',
  THREAD_ROLES: 'projections,sagas,jobs',
});

const collecting = () => {
  const lines: { msg?: string; thread?: string; roles?: string[]; threadRoles?: string[] }[] = [];
  const log = pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(JSON.parse(chunk.toString()) as { msg?: string }), done()) }));
  return { lines, log };
};

describe('THREAD_ROLES: projections, sagas and jobs on a thread of the process', () => {
  let dataDir: string | undefined;
  const running: RunningService[] = [];
  afterEach(async () => {
    for (const s of running.splice(0)) await s.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('serves the API and the ingestion on the read models the thread keeps, and stops in order', async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-thread-roles-'));
    const { lines, log } = collecting();
    const service = await startService(loadConfig(env(dataDir)), log);
    running.push(service);
    const started = lines.find((l) => l.msg === 'service started' && l.thread === undefined);
    expect(started?.roles).toEqual(['api', 'ingestion', 'remote']);
    expect(started?.threadRoles).toEqual(['projections', 'sagas', 'jobs']);
    // No runner on this thread: the read models are the thread's.
    expect(service.projections).toBeUndefined();

    // Read-your-writes across the threads: the sign-up, login and project below each read what the one before wrote.
    const api = { apiUrl: service.apiUrl! };
    const { ada, projectId, apiKey } = await adaWithProject(api, 'Threaded');
    const key = await call(api, 'GET', `/api/${projectId}/devkeys`, { headers: ada });
    expect(key.status).toBe(200);
    const upload = await fetch(`${service.ingestionUrl!}/api/training/data`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': 'threaded.json' },
      body: signedSample(String(key.body.hmacKey), [[1, 2], [3, 4]]),
    });
    expect(upload.status).toBe(200);
    // A device's upload is acknowledged once its event is durable; the read models follow.
    await expect
      .poll(async () => Number((await call(api, 'GET', `/api/${projectId}/raw-data/count?category=training`, { headers: ada })).body.count), { timeout: 10_000 })
      .toBe(1);
    expect((await fetch(`${service.apiUrl!}/health`)).status).toBe(200);

    running.splice(0);
    await service.stop();
    // The thread has let go of the folder: the service starts on it again, without the thread too.
    const again = await startService(loadConfig({ ...env(dataDir), THREAD_ROLES: '' }), pino({ level: 'silent' }));
    running.push(again);
    expect(Number((await call({ apiUrl: again.apiUrl! }, 'GET', `/api/${projectId}/raw-data/count?category=training`, { headers: ada })).body.count)).toBe(1);
  });

  it('stops the thread when its start is stopped', async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-thread-roles-stop-'));
    const stopping = new AbortController();
    const start = startService(loadConfig(env(dataDir)), pino({ level: 'silent' }), { signal: stopping.signal });
    stopping.abort();
    await expect(start).rejects.toBeInstanceOf(ServiceStartStopped);
    // Nothing of it holds the folder: a service starts there.
    const again = await startService(loadConfig(env(dataDir)), pino({ level: 'silent' }));
    running.push(again);
    expect((await fetch(`${again.apiUrl!}/health`)).status).toBe(200);
  });
});

import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig, ServiceStartStopped, startService, type RunningService } from '../../main';
import { READ_MODELS_FILE } from '../../service/composition';
import { besideEnv, signup } from '../support/testService';

const env = (dataDir: string, roles: string) => besideEnv(dataDir, { ROLES: roles, LOG_LEVEL: 'info' });

describe('an API process without the projections role, on read models behind the log', () => {
  const running: RunningService[] = [];
  let dataDir: string | undefined;
  afterEach(async () => {
    for (const s of running.splice(0).reverse()) await s.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('answers 503 "starting" until the projections process has caught them up, then serves', async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-split-start-'));
    const first = await startService(loadConfig(env(dataDir, '')), pino({ level: 'silent' }));
    const created = await fetch(`${first.apiUrl!}/v1/api-user-create`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(signup({ username: 'ada', email: 'ada@example.com' })) });
    expect(created.status).toBe(200);
    await first.stop();
    for (const suffix of ['', '-wal', '-shm']) await rm(path.join(dataDir, READ_MODELS_FILE + suffix), { force: true });

    const lines: { msg?: string; apiUrl?: string }[] = [];
    const log = pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(JSON.parse(chunk.toString()) as { msg?: string }), done()) }));
    let apiStarted = false;
    const api = startService(loadConfig(env(dataDir, 'api')), log).then((s) => (running.push(s), (apiStarted = true), s));
    await expect.poll(() => lines.find((l) => l.msg?.startsWith('service listening'))).toBeDefined();
    const apiUrl = lines.find((l) => l.msg?.startsWith('service listening'))!.apiUrl!;

    const health = await fetch(`${apiUrl}/health`);
    expect(health.status).toBe(503);
    const body = (await health.json()) as { status: string; error: string; catchUp: { position: string } };
    expect(body.status).toBe('starting');
    expect(body.error).toMatch(/^The service is starting: waiting for the projections process to bring the read models up to the log/);
    expect(body.catchUp.position).toBe('0');
    // Still waiting a while later: nothing fills the read models.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(apiStarted).toBe(false);
    expect((await fetch(`${apiUrl}/v1/api-login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'ada', password: signup().password }) })).status).toBe(503);

    running.push(await startService(loadConfig(env(dataDir, 'projections')), pino({ level: 'silent' })));
    await api;
    expect((await fetch(`${apiUrl}/health`)).status).toBe(200);
    const login = await fetch(`${apiUrl}/v1/api-login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'ada', password: signup().password }) });
    expect(login.status).toBe(200);
  });

  it('stops waiting when its start is stopped: the ports close and the start rejects saying why', async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-split-stop-'));
    const first = await startService(loadConfig(env(dataDir, '')), pino({ level: 'silent' }));
    expect((await fetch(`${first.apiUrl!}/v1/api-user-create`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(signup({ username: 'ada', email: 'ada@example.com' })) })).status).toBe(200);
    await first.stop();
    for (const suffix of ['', '-wal', '-shm']) await rm(path.join(dataDir, READ_MODELS_FILE + suffix), { force: true });

    const lines: { msg?: string; apiUrl?: string }[] = [];
    const log = pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(JSON.parse(chunk.toString()) as { msg?: string }), done()) }));
    const stop = new AbortController();
    const api = startService(loadConfig(env(dataDir, 'api')), log, { signal: stop.signal });
    api.catch(() => {});
    await expect.poll(() => lines.find((l) => l.msg?.startsWith('service listening'))).toBeDefined();
    const apiUrl = lines.find((l) => l.msg?.startsWith('service listening'))!.apiUrl!;
    expect((await fetch(`${apiUrl}/health`)).status).toBe(503);

    stop.abort();
    await expect(api).rejects.toBeInstanceOf(ServiceStartStopped);
    await expect(fetch(`${apiUrl}/health`)).rejects.toThrow();
    // Nothing of the stopped start is in the way: a whole service starts on the folder.
    running.push(await startService(loadConfig(env(dataDir, '')), pino({ level: 'silent' })));
  });
});

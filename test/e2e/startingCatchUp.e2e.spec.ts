import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keepAliveCall, type KeptAliveAnswer } from '../support/keepAliveCall';
import { embeddedServiceEnv, fillLog, FILL_FILE, type FilledLog } from '../../bench/fillLog';
import { READ_MODELS_FILE } from '../../service/composition';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';
import { SqliteReadStore } from '../../stores/readstore/sqliteReadStore';
import { allProjections } from '../../projections';
import type { Position } from '../../stores/eventstore/eventStore';
import { killAll, startListeningServiceProcess } from '../support/serviceProcess';

// A start whose read models must be rebuilt from a long log (read-models.sqlite deleted) listens at
// once: while it catches up, /health says "starting" with the progress, every other request gets 503
// with Retry-After and changes nothing, and once caught up the same keep-alive connections get the
// real apps. The folder is filled through the command path (bench/fillLog.ts) with enough events for
// a catch-up of a few seconds here; a faster machine shortens the window the requests must fall in.
const EVENTS = 40_000;

const call = keepAliveCall;

/** An unsigned sample (`alg: none`), which the ingestion API takes with an API key alone. */
const sample = JSON.stringify({
  protected: { ver: 'v1', alg: 'none', iat: 1_700_000_000 },
  signature: '',
  payload: { device_name: 'starting-test', device_type: 'TEST', interval_ms: 10, sensors: [{ name: 'accX', units: 'm/s2' }], values: [[1], [2], [3]] },
});

describe('a start that must catch the read models up with a long log', () => {
  const children: ChildProcess[] = [];
  let folder: string;
  let filled: FilledLog;
  let log: SqliteEventStore;

  beforeAll(async () => {
    folder = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-starting-'));
    // The embedded default, as the service process below runs, even when MONGO_URL is set (CI).
    await fillLog(folder, EVENTS, undefined, embeddedServiceEnv(folder));
    filled = JSON.parse(readFileSync(path.join(folder, FILL_FILE), 'utf8')) as FilledLog;
    for (const suffix of ['', '-wal', '-shm']) await rm(path.join(folder, READ_MODELS_FILE + suffix), { force: true });
    log = SqliteEventStore.open(path.join(folder, 'events.sqlite'));
  }, 180_000); // the fill goes through the command handlers: slower while the whole suite runs beside it

  afterAll(async () => {
    await killAll(children);
    await log?.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('stops in order when signalled while catching up: exit 0 before the catch-up ends, checkpoints stored for the next start', async () => {
    const head = (await log.headPosition()) as Position;
    const service = await startListeningServiceProcess(folder, children);
    const output: string[] = [];
    service.child.stdout!.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
    let caughtUp = false;
    service.started.then(() => (caughtUp = true), () => {});
    const api = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      // Some of the log applied, not all of it.
      let position = 0n;
      for (let polls = 0; position === 0n; polls++) {
        expect(polls).toBeLessThan(300);
        const health = await call(api, `${service.apiUrl}/health`);
        expect(health.status).toBe(503);
        position = BigInt((JSON.parse(health.text) as { catchUp?: { position: string } }).catchUp?.position ?? '0');
        if (position === 0n) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const exited = new Promise<number | null>((resolve) => service.child.once('exit', (code) => resolve(code)));
      const signalled = Date.now();
      service.child.kill('SIGTERM');
      expect(await exited).toBe(0);
      const stopSeconds = (Date.now() - signalled) / 1000;
      expect(caughtUp).toBe(false);
      const logged = output.join('');
      expect(logged).toContain('"signal":"SIGTERM"');
      expect(logged).toContain('stopped while starting');
      expect(logged).not.toContain('service started');
      expect(stopSeconds).toBeLessThan(30);
    } finally {
      api.destroy();
    }
    // What was applied is kept, with its checkpoint: the next start goes on from it.
    const readModels = SqliteReadStore.open(path.join(folder, READ_MODELS_FILE));
    try {
      const checkpoints = await Promise.all(allProjections.map((p) => readModels.getCheckpoint(p.checkpoint)));
      const lowest = checkpoints.reduce<bigint>((low, c) => (c === undefined ? 0n : c < low ? c : low), head);
      expect(lowest).toBeGreaterThan(0n);
      expect(lowest).toBeLessThan(head);
    } finally {
      await readModels.close();
    }
    // The next test starts from no read models again.
    for (const suffix of ['', '-wal', '-shm']) await rm(path.join(folder, READ_MODELS_FILE + suffix), { force: true });
  }, 180_000);

  it('listens at once, answers 503 with its progress and accepts nothing while catching up, then serves on the same connections', async () => {
    const head = (await log.headPosition()) as Position;
    expect(head).toBeGreaterThanOrEqual(BigInt(EVENTS));
    const service = await startListeningServiceProcess(folder, children);
    const api = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const ingestion = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const tls = new https.Agent({ keepAlive: true, maxSockets: 1 });
    const login = JSON.stringify({ username: filled.username, password: filled.password });
    const deviceHeaders = { 'x-api-key': filled.apiKey, 'content-type': 'application/json' };
    try {
      let caughtUp = false;
      // A start that fails is reported by `await service.started` below.
      service.started.then(() => (caughtUp = true), () => {});

      const health = await call(api, `${service.apiUrl}/health`);
      const refusedLogin = await call(api, `${service.apiUrl}/v1/api-login`, 'POST', login, { 'content-type': 'application/json' });
      const refusedUpload = await call(ingestion, `${service.ingestionUrl}/api/training/data`, 'POST', sample, { ...deviceHeaders, 'x-file-name': 'during-catch-up.json' });
      const tlsHealth = await call(tls, `${service.ingestionTlsUrl}/health`);
      const headMeanwhile = await log.headPosition();
      // Every answer above came before the catch-up ended, or the test proves nothing.
      expect(caughtUp).toBe(false);

      expect(health.status).toBe(503);
      expect(Number(health.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      const starting = JSON.parse(health.text) as { success: boolean; status: string; error: string; failingProjections: unknown[]; catchUp: { position: string; head: string; percent: number } };
      expect(starting).toMatchObject({ success: false, status: 'starting', failingProjections: [] });
      expect(starting.error).toMatch(/^The service is starting: catching up the read models/);
      expect(starting.catchUp.head).toBe(head.toString());
      expect(BigInt(starting.catchUp.position)).toBeLessThan(head);
      expect(starting.catchUp.percent).toBeLessThan(100);

      expect(refusedLogin.status).toBe(503);
      expect(Number(refusedLogin.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(refusedLogin.headers['content-type']).toMatch(/^application\/json/);
      const envelope = JSON.parse(refusedLogin.text) as { success: boolean; error: string };
      expect(envelope.success).toBe(false);
      expect(envelope.error).toMatch(/^The service is starting: catching up the read models, [\d.]+% of the log applied \(position \d+ of \d+/);
      expect(envelope.error).toMatch(/Nothing was changed; try again in \d+ s$/);

      expect(refusedUpload.status).toBe(503);
      expect(refusedUpload.headers['retry-after']).toBeDefined();
      expect(refusedUpload.headers['content-type']).toMatch(/^text\/plain/);
      expect(refusedUpload.text).toMatch(/^The service is starting: .*The sample was not recorded; try again in \d+ s$/);

      expect(tlsHealth.status).toBe(503);
      expect((JSON.parse(tlsHealth.text) as { status: string }).status).toBe('starting');
      expect(headMeanwhile).toBe(head);

      // A probe's polling, on the connections opened during the catch-up, sees the start end.
      const healthAnswers: KeptAliveAnswer[] = [health];
      const ingestionAnswers: KeptAliveAnswer[] = [refusedUpload];
      for (let polls = 0; ; polls++) {
        healthAnswers.push(await call(api, `${service.apiUrl}/health`));
        ingestionAnswers.push(await call(ingestion, `${service.ingestionUrl}/health`));
        if (healthAnswers.at(-1)!.status === 200 && ingestionAnswers.at(-1)!.status === 200) break;
        expect(polls).toBeLessThan(300);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await service.started;
      // Each port says "starting" until its app is built (the management API's first), then serves.
      for (const answers of [healthAnswers, ingestionAnswers]) expect(answers.map((a) => a.status).join(' ')).toMatch(/^(503 )+(200 ?)+$/);
      expect(JSON.parse(healthAnswers.at(-1)!.text)).toEqual({ success: true, status: 'ok', failingProjections: [] });

      const loggedIn = await call(api, `${service.apiUrl}/v1/api-login`, 'POST', login, { 'content-type': 'application/json' });
      expect(loggedIn.status).toBe(200);
      expect(typeof (JSON.parse(loggedIn.text) as { token?: unknown }).token).toBe('string');
      const accepted = await call(ingestion, `${service.ingestionUrl}/api/training/data`, 'POST', sample, { ...deviceHeaders, 'x-file-name': 'after-catch-up.json' });
      expect(accepted.status, accepted.text).toBe(200);

      // One connection each, from the first starting answer to the real apps' answers.
      expect(new Set([...healthAnswers, loggedIn, refusedLogin].map((a) => a.socket)).size).toBe(1);
      expect(new Set([...ingestionAnswers, accepted].map((a) => a.socket)).size).toBe(1);

      const ingested: string[] = [];
      for await (const event of log.readAll({ after: head })) {
        if (event.type === 'SampleIngested') ingested.push(String((event.data as { fileName?: unknown }).fileName));
      }
      expect(ingested).toEqual(['after-catch-up.json']);
    } finally {
      api.destroy();
      ingestion.destroy();
      tls.destroy();
    }
  }, 180_000);
});

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildService } from '../../service/build';
import { killAll } from '../support/serviceProcess';
import { linkProductionModules } from '../support/productionNodeModules';
import { signedSample } from '../support/signedSample';
import { uploadWaveSamples, waveRows } from '../support/waveSamples';
import { call, loginToken, signup } from '../support/testService';

// The classify pool task as the image runs it (see kerasCompiled.e2e.spec.ts): built by
// service/build.ts as an entry point of its own, run by `node dist/main.js` with only the production
// node_modules, in the API's threads (GET classify/{sampleId}) and the jobs' (the classify job).
const ROOT = path.resolve(__dirname, '../..');
const impulse = {
  name: 'Motion',
  inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY'], windowSizeMs: 1000, windowIncreaseMs: 500, frequencyHz: 100 }],
  dspBlocks: [{ id: 2, type: 'spectral-analysis', name: 'Spectral features', title: 'Spectral Analysis', axes: ['accX', 'accY'], input: 1, implementationVersion: 4 }],
  learnBlocks: [{ id: 3, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [2] }],
};

describe('classification in the compiled service', () => {
  let folder: string;
  const children: ChildProcess[] = [];
  let service: { apiUrl: string; ingestionUrl: string };

  beforeAll(async () => {
    folder = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-classify-compiled-'));
    const app = path.join(folder, 'app');
    await buildService(path.join(app, 'dist'));
    await linkProductionModules(ROOT, app);
    const env = { ...process.env, NODE_OPTIONS: '', DATA_DIR: path.join(folder, 'data'), API_PORT: '0', INGESTION_PORT: '0', INGESTION_TLS_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', MONGO_URL: '', EVENTSTORE_URL: '', ROLES: '' };
    const child = spawn(process.execPath, ['--preserve-symlinks', 'dist/main.js'], { cwd: app, env, stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    service = await new Promise((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        try {
          const entry = JSON.parse(line) as { msg?: string; apiUrl?: string; ingestionUrl?: string };
          if (entry.msg === 'service started') resolve({ apiUrl: entry.apiUrl!, ingestionUrl: entry.ingestionUrl! });
        } catch {
          // not a log line
        }
      });
      child.once('exit', (code, signal) => reject(new Error(`the compiled service exited with ${code ?? signal} before it started`)));
    });
  }, 120_000);

  afterAll(async () => {
    await killAll(children);
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('classifies a stored sample and runs model testing in worker threads on compiled code', { timeout: 180_000 }, async () => {
    await call(service, 'POST', '/api-user-create', { body: signup() });
    const headers = { 'x-jwt-token': await loginToken(service, 'ada') };
    const project = await call(service, 'POST', '/api/projects/create', { headers, body: { projectName: 'Compiled classify' } });
    const projectId = Number(project.body.id);
    const apiKey = String(project.body.apiKey);
    expect((await call(service, 'POST', `/api/${projectId}/impulse`, { headers, body: impulse })).status).toBe(200);
    await uploadWaveSamples(service, { id: projectId, apiKey, headers }, 4, 600);
    const res = await fetch(`${service.ingestionUrl}/api/testing/data`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': 'wave.test.json', 'x-label': 'wave' },
      body: signedSample('none', waveRows(600, 9, 11), { alg: 'none' }),
    });
    expect(res.status).toBe(200);
    await expect.poll(async () => (await call(service, 'GET', `/api/${projectId}/raw-data/count?category=testing`, { headers })).body.count, { timeout: 30_000 }).toBe(1);
    const finish = async (jobId: number) => {
      const status = async () => (await call(service, 'GET', `/api/${projectId}/jobs/${jobId}/status`, { headers })).body.job as Record<string, unknown>;
      await expect.poll(async () => typeof (await status()).finishedSuccessful, { timeout: 90_000, interval: 200 }).toBe('boolean');
      const stdout = ((await call(service, 'GET', `/api/${projectId}/jobs/${jobId}/stdout?limit=10000`, { headers })).body.stdout as { data: string }[]).map((l) => l.data).join('');
      expect((await status()).finishedSuccessful, stdout).toBe(true);
      return stdout;
    };
    /** POSTs until the read models the request checks have caught up with the last job (a 400 meanwhile). */
    const start = async (path: string, body: unknown) => {
      let answer = await call(service, 'POST', `/api/${projectId}${path}`, { headers, body });
      for (let i = 0; i < 50 && answer.status === 400; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        answer = await call(service, 'POST', `/api/${projectId}${path}`, { headers, body });
      }
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      return finish(Number(answer.body.id));
    };
    await start('/jobs/generate-features', { dspId: 2, skipFeatureExplorer: true });
    await start('/jobs/train/keras/3', { trainingCycles: 5 });
    const sampleId = ((await call(service, 'GET', `/api/${projectId}/raw-data?category=testing`, { headers })).body.samples as { id: number }[])[0]!.id;
    let classified = await call(service, 'GET', `/api/${projectId}/classify/${sampleId}`, { headers });
    for (let i = 0; i < 50 && classified.status === 400; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      classified = await call(service, 'GET', `/api/${projectId}/classify/${sampleId}`, { headers });
    }
    expect(classified.status, JSON.stringify(classified.body).slice(0, 500)).toBe(200);
    // 600 rows at 100 Hz, windows of 100 rows every 50: 11 windows.
    expect((classified.body.classifications as { result: unknown[] }[])[0]!.result).toHaveLength(11);
    const stdout = await start('/jobs/classify', {});
    expect(stdout).toMatch(/Classified 1\/1 samples \(11 windows\)/);
    // The run's read model may trail the job's end by a moment.
    await expect.poll(async () => (await call(service, 'GET', `/api/${projectId}/classify/all/result`, { headers })).status, { timeout: 10_000, interval: 100 }).toBe(200);
    const result = await call(service, 'GET', `/api/${projectId}/classify/all/result`, { headers });
    expect(result.body.predictions).toHaveLength(11);
  });
});

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildService } from '../../service/build';
import { killAll } from '../support/serviceProcess';
import { linkProductionModules } from '../support/productionNodeModules';
import { uploadWaveSamples } from '../support/waveSamples';
import { call, loginToken, signup } from '../support/testService';

// The keras pool task as the image runs it (see compiledService.e2e.spec.ts): built by
// service/build.ts as an entry point of its own, run by `node dist/main.js` with only the production
// node_modules, TensorFlow.js and its wasm backend loaded in a worker thread from there.
const ROOT = path.resolve(__dirname, '../..');
const impulse = {
  name: 'Motion',
  inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY'], windowSizeMs: 2000, windowIncreaseMs: 500, frequencyHz: 100 }],
  dspBlocks: [{ id: 2, type: 'spectral-analysis', name: 'Spectral features', title: 'Spectral Analysis', axes: ['accX', 'accY'], input: 1, implementationVersion: 4 }],
  learnBlocks: [{ id: 3, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [2] }],
};

describe('keras training in the compiled service', () => {
  let folder: string;
  const children: ChildProcess[] = [];
  let service: { apiUrl: string; ingestionUrl: string };

  beforeAll(async () => {
    folder = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-keras-compiled-'));
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

  it('trains the keras block in a worker thread on compiled code', { timeout: 120_000 }, async () => {
    await call(service, 'POST', '/api-user-create', { body: signup() });
    const headers = { 'x-jwt-token': await loginToken(service, 'ada') };
    const project = await call(service, 'POST', '/api/projects/create', { headers, body: { projectName: 'Compiled keras' } });
    const projectId = Number(project.body.id);
    expect((await call(service, 'POST', `/api/${projectId}/impulse`, { headers, body: impulse })).status).toBe(200);
    await uploadWaveSamples(service, { id: projectId, apiKey: String(project.body.apiKey), headers }, 4, 600);
    const finish = async (jobId: number) => {
      const status = async () => (await call(service, 'GET', `/api/${projectId}/jobs/${jobId}/status`, { headers })).body.job as Record<string, unknown>;
      await expect.poll(async () => typeof (await status()).finishedSuccessful, { timeout: 90_000, interval: 200 }).toBe('boolean');
      const stdout = ((await call(service, 'GET', `/api/${projectId}/jobs/${jobId}/stdout?limit=10000`, { headers })).body.stdout as { data: string }[]).map((l) => l.data).join('');
      expect((await status()).finishedSuccessful, stdout).toBe(true);
      return stdout;
    };
    await finish(Number((await call(service, 'POST', `/api/${projectId}/jobs/generate-features`, { headers, body: { dspId: 2, skipFeatureExplorer: true } })).body.id));
    // The features' read model may trail the job's end by a moment.
    let train = await call(service, 'POST', `/api/${projectId}/jobs/train/keras/3`, { headers, body: { trainingCycles: 5 } });
    for (let i = 0; i < 50 && train.status === 400; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      train = await call(service, 'POST', `/api/${projectId}/jobs/train/keras/3`, { headers, body: { trainingCycles: 5 } });
    }
    expect(train.status, JSON.stringify(train.body)).toBe(200);
    const stdout = await finish(Number(train.body.id));
    expect(stdout).toMatch(/^Epoch 5\/5 - loss: /m);
    expect(stdout).toMatch(/Model trained \(wasm backend\)/);
  });
});

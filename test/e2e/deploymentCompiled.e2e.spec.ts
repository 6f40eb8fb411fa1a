import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { access, chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { LinuxImpulseRunner } from 'edge-impulse-linux';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildService } from '../../service/build';
import { killAll } from '../support/serviceProcess';
import { linkProductionModules } from '../support/productionNodeModules';
import { uploadWaveSamples, waveRows } from '../support/waveSamples';
import { call, loginToken, signup } from '../support/testService';

// The deployment builds as the image runs them (see compiledService.e2e.spec.ts): `node dist/main.js`
// with the production node_modules only, so no esbuild: the .eim and wasm module are made from the
// runtime bundles service/build.ts prebuilt into dist/deployment-runtime/.
const ROOT = path.resolve(__dirname, '../..');
const impulse = {
  name: 'Motion',
  inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY'], windowSizeMs: 1000, windowIncreaseMs: 500, frequencyHz: 100 }],
  dspBlocks: [{ id: 2, type: 'spectral-analysis', name: 'Spectral features', title: 'Spectral Analysis', axes: ['accX', 'accY'], input: 1, implementationVersion: 4 }],
  learnBlocks: [{ id: 3, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [2] }],
};

describe('deployment builds in the compiled service', () => {
  let folder: string;
  let app: string;
  const children: ChildProcess[] = [];
  let runner: LinuxImpulseRunner | undefined;
  let service: { apiUrl: string; ingestionUrl: string };

  beforeAll(async () => {
    folder = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-deploy-compiled-'));
    app = path.join(folder, 'app');
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
    await runner?.stop().catch(() => undefined);
    await killAll(children);
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('builds a .eim the Linux runner starts and a wasm zip, without esbuild', { timeout: 180_000 }, async () => {
    await expect(access(path.join(app, 'node_modules', 'esbuild'))).rejects.toThrow();
    await call(service, 'POST', '/api-user-create', { body: signup() });
    const headers = { 'x-jwt-token': await loginToken(service, 'ada') };
    const project = await call(service, 'POST', '/api/projects/create', { headers, body: { projectName: 'Compiled deploy' } });
    const projectId = Number(project.body.id);
    expect((await call(service, 'POST', `/api/${projectId}/impulse`, { headers, body: impulse })).status).toBe(200);
    await uploadWaveSamples(service, { id: projectId, apiKey: String(project.body.apiKey), headers }, 4, 600);
    const finish = async (jobId: number) => {
      const status = async () => (await call(service, 'GET', `/api/${projectId}/jobs/${jobId}/status`, { headers })).body.job as Record<string, unknown>;
      await expect.poll(async () => typeof (await status()).finishedSuccessful, { timeout: 90_000, interval: 200 }).toBe('boolean');
      const stdout = ((await call(service, 'GET', `/api/${projectId}/jobs/${jobId}/stdout?limit=10000`, { headers })).body.stdout as { data: string }[]).map((l) => l.data).join('');
      expect((await status()).finishedSuccessful, stdout).toBe(true);
    };
    /** Retried while the read models trail the previous job's end by a moment. */
    const start = async (p: string, body: unknown) => {
      let res = await call(service, 'POST', `/api/${projectId}${p}`, { headers, body });
      for (let i = 0; i < 50 && res.status === 400; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        res = await call(service, 'POST', `/api/${projectId}${p}`, { headers, body });
      }
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return Number(res.body.id);
    };
    await finish(await start('/jobs/generate-features', { dspId: 2, skipFeatureExplorer: true }));
    await finish(await start('/jobs/train/keras/3', { trainingCycles: 5 }));
    await finish(await start('/jobs/build-ondevice-model?type=runner-linux-x86_64', { engine: 'tflite' }));
    await finish(await start('/jobs/build-ondevice-model?type=wasm', { engine: 'tflite' }));

    const download = async (type: string) => Buffer.from(await (await fetch(`${service.apiUrl}/v1/api/${projectId}/deployment/download?type=${type}`, { headers })).arrayBuffer());
    const eim = path.join(folder, 'model.eim');
    await writeFile(eim, await download('runner-linux-x86_64'));
    await chmod(eim, 0o755);
    runner = new LinuxImpulseRunner(eim);
    const model = await runner.init();
    expect(model.modelParameters).toMatchObject({ input_features_count: 200, labels: ['idle', 'wave'] });
    const { result } = await runner.classify(waveRows(100, 9, 0.2).flat());
    expect(Object.keys(result.classification!)).toEqual(['idle', 'wave']);

    const zip = path.join(folder, 'wasm.zip');
    await writeFile(zip, await download('wasm'));
    expect(execFileSync('unzip', ['-Z1', zip]).toString().trim().split('\n').sort()).toEqual(['README.md', 'example.mjs', 'impulse.mjs']);
  });
});

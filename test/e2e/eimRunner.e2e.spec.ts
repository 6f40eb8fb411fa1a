import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import * as tf from '@tensorflow/tfjs';
import { EdgeImpulseApi } from 'edge-impulse-api';
import { LinuxImpulseRunner } from 'edge-impulse-linux';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImpulseRuntimeSpec } from '../../commands/classify/impulseRuntimeSpec';
import { createImpulseRunner, type ImpulseClassification } from '../../domain/learn/impulseRuntime';
import { AnomalyModelQueries } from '../../projections/anomalyModels/anomalyModelQueries';
import { DspFeaturesQueries } from '../../projections/dspFeatures/dspFeaturesQueries';
import { ImpulseQueries } from '../../projections/impulses/impulseQueries';
import { KerasModelQueries } from '../../projections/kerasModels/kerasModelQueries';
import { ProjectQueries } from '../../projections/projects/projectQueries';
import { SampleQueries } from '../../projections/samples/sampleQueries';
import { readModelsCaughtUp } from '../support/readModels';
import { signedSample } from '../support/signedSample';
import { startTestService, type TestService } from '../support/testService';

// A trained impulse (spectral features, a keras classifier and a K-means anomaly block) built for
// deployment through the official SDK (buildOnDeviceModelJob, runJobUntilCompletion, getDeployment,
// downloadBuild), then run where a device runs it: the .eim by the official LinuxImpulseRunner,
// unmodified, and the wasm zip's module in a Node process of its own. Each answer is compared with
// the service's own classification of the same window (the shared runtime over the service's spec).
describe('deployments run by the official Linux runner and in Node', () => {
  let service: TestService;
  let api: EdgeImpulseApi;
  let projectId: number;
  let apiKey: string;
  let dir: string;
  let eimPath: string;
  const runners: LinuxImpulseRunner[] = [];
  const children: ChildProcess[] = [];

  const signal = (f: number, n: number, phase: number) => Array.from({ length: n }, (_, i) => [Math.round(1000 * Math.sin((2 * Math.PI * f * i) / 100 + phase)) / 100, Math.round(1000 * Math.cos((2 * Math.PI * f * i) / 100 + phase)) / 200]);
  const ingest = async (label: string, values: number[][]) => {
    const res = await fetch(`${service.ingestionUrl}/api/training/data`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': `${label}.json`, 'x-label': label },
      body: signedSample('none', values, { alg: 'none' }),
    });
    expect(res.status).toBe(200);
    await readModelsCaughtUp(service);
  };
  const runJob = async (jobId: number) => {
    const lines: string[] = [];
    await api.runJobUntilCompletion({ type: 'project', projectId, jobId }, (line) => lines.push(line));
    await readModelsCaughtUp(service);
    return lines.join('');
  };
  /** Windows of 500 ms at 100 Hz: 50 rows of accX, accY interleaved. */
  const windows = [signal(1, 50, 0.3).flat(), signal(9, 50, 1.1).flat(), signal(4, 50, 2).flat()];
  /** The service's classification of a window: the shared runtime over the spec the service builds. */
  const serviceClassifications = async (): Promise<ImpulseClassification[]> => {
    const r = service.stores.readStore;
    const reads = { blobs: service.stores.blobs, projects: new ProjectQueries(r), impulses: new ImpulseQueries(r), samples: new SampleQueries(r), dspFeatures: new DspFeaturesQueries(r), kerasModels: new KerasModelQueries(r), anomalyModels: new AnomalyModelQueries(r) };
    const { spec } = await buildImpulseRuntimeSpec(reads, projectId);
    tf.enableProdMode();
    await tf.setBackend('cpu');
    const runner = await createImpulseRunner(spec, tf);
    try {
      const out: ImpulseClassification[] = [];
      for (const w of windows) out.push(await runner.classify(w));
      return out;
    } finally {
      runner.dispose();
    }
  };
  const expectSame = (got: { classification?: Record<string, number>; anomaly?: number }, want: ImpulseClassification) => {
    expect(Object.keys(got.classification ?? {})).toEqual(Object.keys(want.classification));
    for (const [label, score] of Object.entries(want.classification)) expect(Math.abs(got.classification![label]! - score), label).toBeLessThan(1e-5);
    expect(Math.abs(got.anomaly! - want.anomaly!)).toBeLessThan(1e-5);
  };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'eim-e2e-'));
    service = await startTestService({ mongo: false });
    api = new EdgeImpulseApi({ endpoint: service.apiUrl });
    await api.user.createUser({ name: 'Ada Lovelace', username: 'ada', email: 'ada@example.com', password: 'correct horse battery', privacyPolicy: true, turnstileResponse: 'ok' });
    await api.authenticate({ method: 'jwtToken', jwtToken: (await api.login.login({ username: 'ada', password: 'correct horse battery' })).token! });
    const created = await api.projects.createProject({ projectName: 'Motion on devices' });
    projectId = created.id;
    apiKey = created.apiKey;
    await api.impulse.createImpulse(projectId, {
      name: 'Motion',
      inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY'], windowSizeMs: 500, windowIncreaseMs: 250, frequencyHz: 100 }],
      dspBlocks: [{ id: 2, type: 'spectral-analysis', name: 'Spectral features', title: 'Spectral Analysis', axes: ['accX', 'accY'], input: 1, implementationVersion: 4 }],
      learnBlocks: [
        { id: 3, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [2] },
        { id: 4, type: 'anomaly', name: 'Anomaly detection', title: 'Anomaly detection (K-means)', dsp: [2] },
      ],
    } as Parameters<typeof api.impulse.createImpulse>[1]);
    await ingest('idle', signal(1, 400, 0));
    await ingest('wave', signal(9, 400, 0.5));
    await runJob((await api.jobs.generateFeaturesJob(projectId, { dspId: 2, skipFeatureExplorer: true })).id);
    await runJob((await api.jobs.trainKerasJob(projectId, 3, { trainingCycles: 30, learningRate: 0.005 })).id);
    await runJob((await api.jobs.trainAnomalyJob(projectId, 4, { axes: [0, 1, 2], clusterCount: 3, minimumConfidenceRating: 0.3 })).id);
  }, 300_000);
  afterAll(async () => {
    for (const r of runners) await r.stop().catch(() => undefined);
    for (const c of children) c.kill('SIGKILL');
    await service?.destroy();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('builds the .eim in a job, answers it in getDeployment and downloads it with its file name', async () => {
    expect(await api.deployment.getDeployment(projectId, { type: 'runner-linux-x86_64' })).toMatchObject({ hasDeployment: false });
    const build = await api.jobs.buildOnDeviceModelJob(projectId, { engine: 'tflite' }, { type: 'runner-linux-x86_64' });
    const log = await runJob(build.id);
    expect(log).toMatch(/Built motion-on-devices-v\d+-linux-x86_64\.eim: \d+ bytes/);
    expect(await api.deployment.getDeployment(projectId, { type: 'runner-linux-x86_64' })).toMatchObject({ hasDeployment: true, version: build.deploymentVersion });
    let disposition = '';
    const bytes = await api.deployment.downloadBuild(projectId, { type: 'runner-linux-x86_64' }, { headers: {}, responseHeadersCallback: (h) => (disposition = h['content-disposition'] ?? '') });
    expect(disposition).toBe(`attachment; filename="motion-on-devices-v${build.deploymentVersion}-linux-x86_64.eim"`);
    expect(bytes.subarray(0, 20).toString()).toBe('#!/usr/bin/env node\n');
    eimPath = path.join(dir, 'model.eim');
    await writeFile(eimPath, bytes);
    await chmod(eimPath, 0o755);
    expect((await stat(eimPath)).mode & 0o777).toBe(0o755);
  }, 120_000);

  it('is started by the official LinuxImpulseRunner: hello gives the model, classify the same scores as the service within 1e-5', async () => {
    const runner = new LinuxImpulseRunner(eimPath);
    runners.push(runner);
    const model = await runner.init();
    expect(model.project).toMatchObject({ id: projectId, name: 'Motion on devices' });
    expect(model.modelParameters).toMatchObject({ sensorType: 'accelerometer', frequency: 100, axis_count: 2, input_features_count: 100, interval_ms: 10, label_count: 2, labels: ['idle', 'wave'], has_anomaly: 1, model_type: 'classification' });
    const want = await serviceClassifications();
    for (const [i, w] of windows.entries()) {
      const got = await runner.classify(w);
      expectSame(got.result, want[i]!);
      expect(got.timing).toMatchObject({ dsp: expect.any(Number), classification: expect.any(Number), anomaly: expect.any(Number) });
    }
    // The classes come out right, not merely alike: the slow window is idle, the fast one wave.
    expect((await runner.classify(windows[0]!)).result.classification!.idle).toBeGreaterThan(0.5);
    expect((await runner.classify(windows[1]!)).result.classification!.wave).toBeGreaterThan(0.5);
    // A window of the wrong length is an error answer; the runner goes on.
    await expect(runner.classify([1, 2, 3])).rejects.toThrow(/expected 100 values \(input_features_count\), got 3/);
    expectSame((await runner.classify(windows[2]!)).result, want[2]!);
  }, 120_000);

  it('answers lines that are not JSON with an error and keeps serving, when started by hand on a socket', async () => {
    const socketPath = path.join(dir, 'by-hand.sock');
    const child = spawn(eimPath, [socketPath], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    for (let i = 0; i < 300; i++) {
      if (await stat(socketPath).then(() => true, () => false)) break;
      await sleep(100);
    }
    const answers = await new Promise<Record<string, unknown>[]>((resolve, reject) => {
      const socket = connect(socketPath);
      let received = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        received += chunk;
        const lines = received.split('\n').filter((l) => l !== '');
        if (lines.length === 2) {
          socket.end();
          resolve(lines.map((l) => JSON.parse(l) as Record<string, unknown>));
        }
      });
      socket.on('error', reject);
      socket.write('garbage that is not JSON\n{"hello":1,"id":7}\n');
    });
    expect(answers[0]).toMatchObject({ success: false, error: expect.stringMatching(/^Not JSON/) });
    expect(answers[1]).toMatchObject({ id: 7, success: true });
    expect(child.exitCode).toBe(null);
    child.kill('SIGINT');
    await new Promise((resolve) => child.once('exit', resolve));
    expect(await stat(socketPath).then(() => true, () => false)).toBe(false);
  }, 60_000);

  it('builds the wasm zip: its module runs in a Node process of its own with the same scores, and so does its example', async () => {
    const build = await api.jobs.buildOnDeviceModelJob(projectId, { engine: 'tflite' }, { type: 'wasm' });
    await runJob(build.id);
    const zip = path.join(dir, 'wasm.zip');
    await writeFile(zip, await api.deployment.downloadBuild(projectId, { type: 'wasm' }));
    const out = path.join(dir, 'wasm');
    execFileSync('unzip', ['-q', zip, '-d', out]);
    expect(execFileSync('unzip', ['-Z1', zip]).toString().trim().split('\n').sort()).toEqual(['README.md', 'example.mjs', 'impulse.mjs']);
    expect(await readFile(path.join(out, 'README.md'), 'utf8')).toMatch(/50 samples of accX, accY at 100 Hz/);
    const script = `import { classify, modelParameters } from ${JSON.stringify(path.join(out, 'impulse.mjs'))};
      const windows = JSON.parse(process.argv[1]);
      const results = [];
      for (const w of windows) results.push(await classify(w));
      console.log(JSON.stringify({ modelParameters, results }));`;
    // A bare Node process, outside this repository (no node_modules reachable): the module is whole.
    const answer = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(windows)], { cwd: out }).toString()) as { modelParameters: Record<string, unknown>; results: ImpulseClassification[] };
    expect(answer.modelParameters).toMatchObject({ input_features_count: 100, labels: ['idle', 'wave'], has_anomaly: 1 });
    const want = await serviceClassifications();
    answer.results.forEach((got, i) => expectSame(got, want[i]!));
    // As in a browser, as far as Node can play one: no process, Buffer, require or module globals,
    // a window and a document (no real browser is installed here to run it in).
    const browserLike = `globalThis.window = globalThis; globalThis.document = {}; globalThis.navigator ??= { userAgent: 'browser-like' };
      const windows = JSON.parse(process.argv[1]);
      delete globalThis.process; delete globalThis.Buffer; delete globalThis.global; delete globalThis.setImmediate;
      const { classify } = await import(${JSON.stringify(path.join(out, 'impulse.mjs'))});
      const results = [];
      for (const w of windows) results.push(await classify(w));
      console.log(JSON.stringify(results));`;
    const inBrowserLike = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', browserLike, JSON.stringify(windows)], { cwd: out }).toString()) as ImpulseClassification[];
    inBrowserLike.forEach((got, i) => expectSame(got, want[i]!));
    const example = JSON.parse(execFileSync(process.execPath, ['example.mjs'], { cwd: out }).toString()) as { labels: string[]; classification: Record<string, number> };
    expect(example.labels).toEqual(['idle', 'wave']);
    expect(Object.keys(example.classification)).toEqual(['idle', 'wave']);
  }, 120_000);
});

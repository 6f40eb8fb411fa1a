import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { EdgeImpulseApi } from 'edge-impulse-api';
import { LinuxImpulseRunner } from 'edge-impulse-linux';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { motionImpulse, motionRows, sdkProject, type SdkProject } from '../support/projectWithFeatures';
import { buildWasmDeployment, runWasmModule, type WasmAnswer } from '../support/wasmDeployment';
import { readModelsCaughtUp } from '../support/readModels';
import type { TestService } from '../support/testService';

// The ML loop through the official SDK, unmodified, the way a user walks it: samples in, features
// generated, a keras classifier and a K-means anomaly block trained (each job followed with
// runJobUntilCompletion), a stored sample classified (classifySample, classifySampleV2), model
// testing (startClassifyJob, getClassifyJobResult, its page, the metrics), then a deployment built
// and downloaded (buildOnDeviceModelJob, getDeployment, downloadBuild) and run where a device runs
// it: the .eim by the official LinuxImpulseRunner, unmodified, and the wasm zip's module in a Node
// process of its own. The device's answer for each window of a testing sample is the service's own
// answer for that window (GET classify/{sampleId}): same labels, scores within 1e-5.
describe('the ML loop through the official SDK: train, classify, test, deploy, run on a device', () => {
  let service: TestService;
  let api: EdgeImpulseApi;
  let projectId: number;
  let dir: string;
  let eimPath: string;
  const runners: LinuxImpulseRunner[] = [];
  const children: ChildProcess[] = [];

  let ingest: SdkProject['ingest'];
  const runJob = async (jobId: number) => {
    const lines: string[] = [];
    await api.runJobUntilCompletion({ type: 'project', projectId, jobId }, (line) => lines.push(line));
    await readModelsCaughtUp(service);
    return lines.join('');
  };

  /** A testing sample's windows as a device reads them (500 ms every 250 ms at 100 Hz: 50 rows of accX, accY), and the service's answer for each. */
  interface Window {
    raw: number[];
    classification: Record<string, number>;
    anomaly: number;
  }
  const testingWindows = async (label: 'idle' | 'wave'): Promise<Window[]> => {
    const { samples } = await api.rawData.listSamples(projectId, { category: 'testing' });
    const sample = samples.find((s) => s.label === label)!;
    const [keras, anomaly] = (await api.classify.classifySample(projectId, sample.id)).classifications;
    const rows = motionRows(label, 5);
    return keras!.result.map((classification, i) => ({ raw: rows.slice(25 * i, 25 * i + 50).flat(), classification, anomaly: anomaly!.result[i]!.anomaly! }));
  };
  const expectSame = (got: { classification?: Record<string, number>; anomaly?: number }, want: Window) => {
    expect(Object.keys(got.classification ?? {})).toEqual(Object.keys(want.classification));
    for (const [label, score] of Object.entries(want.classification)) expect(Math.abs(got.classification![label]! - score), label).toBeLessThan(1e-5);
    expect(Math.abs(got.anomaly! - want.anomaly)).toBeLessThan(1e-5);
  };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'ml-loop-e2e-'));
    ({ service, api, projectId, ingest } = await sdkProject('Motion on devices'));
    await api.impulse.createImpulse(projectId, motionImpulse as Parameters<typeof api.impulse.createImpulse>[1]);
    for (const label of ['idle', 'wave']) {
      for (const seed of [0, 1]) await ingest('training', label, motionRows(label, seed));
      await ingest('testing', label, motionRows(label, 5));
    }
    await runJob((await api.jobs.generateFeaturesJob(projectId, { dspId: 2, skipFeatureExplorer: true })).id);
    await runJob((await api.jobs.trainKerasJob(projectId, 3, { trainingCycles: 30, learningRate: 0.01 })).id);
    await runJob((await api.jobs.trainAnomalyJob(projectId, 4, { axes: [0, 1, 2], clusterCount: 2, minimumConfidenceRating: 0.3 })).id);
  }, 300_000);
  afterAll(async () => {
    for (const r of runners) await r.stop().catch(() => undefined);
    for (const c of children) c.kill('SIGKILL');
    await service?.destroy();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('classifies a testing sample, window by window, with classifySample and classifySampleV2', async () => {
    const { samples } = await api.rawData.listSamples(projectId, { category: 'testing' });
    const wave = samples.find((s) => s.label === 'wave')!;
    const answer = await api.classify.classifySample(projectId, wave.id);
    expect(answer.success).toBe(true);
    expect(answer.windowSizeMs).toBe(500);
    expect(answer.sample.sample.id).toBe(wave.id);
    const [keras, anomaly] = answer.classifications;
    expect(keras!.learnBlock.id).toBe(3);
    expect(keras!.result).toHaveLength(7);
    expect(keras!.result.filter((r) => r.wave! > r.idle!).length).toBeGreaterThanOrEqual(6);
    expect(anomaly!.learnBlock.type).toBe('anomaly');
    expect(anomaly!.result.every((r) => Number.isFinite(r.anomaly))).toBe(true);
    const v2 = await api.classify.classifySampleV2(projectId, wave.id);
    expect('classifications' in v2 && v2.classifications[0]!.result).toEqual(keras!.result);
  });

  it('runs model testing as a job and reads its results, a page of them and the metrics', async () => {
    const { id } = await api.jobs.startClassifyJob(projectId, {});
    const lines: string[] = [];
    await api.runJobUntilCompletion({ type: 'project', projectId, jobId: id }, (line) => lines.push(line));
    expect(lines.join('')).toMatch(/Classified 2\/2 samples \(14 windows\)/);
    await readModelsCaughtUp(service);
    const result = await api.classify.getClassifyJobResult(projectId);
    expect(result.result).toHaveLength(2);
    expect(result.result[0]!.sample.created).toBeInstanceOf(Date);
    expect(result.predictions).toHaveLength(14);
    const { good, bad } = result.accuracy.totalSummary;
    expect(good + bad).toBe(14);
    expect(result.accuracy.accuracyScore).toBeCloseTo(good / 14, 12);
    expect(result.accuracy.accuracyScore).toBeGreaterThan(0.5);
    const page = await api.classify.getClassifyJobResultPage(projectId, { offset: 1, limit: 5 });
    expect(page.totalCount).toBe(2);
    expect(page.result.map((r) => r.sampleId)).toEqual([result.result[1]!.sampleId]);
    const metrics = await api.classify.getClassifyMetricsAllVariants(projectId);
    expect(metrics.metrics).toEqual([{ variant: 'float32', accuracy: result.accuracy.accuracyScore }]);
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

  it('is started by the official LinuxImpulseRunner: hello gives the model, classify the service\'s scores of the same windows within 1e-5', async () => {
    const runner = new LinuxImpulseRunner(eimPath);
    runners.push(runner);
    const model = await runner.init();
    expect(model.project).toMatchObject({ id: projectId, name: 'Motion on devices' });
    expect(model.modelParameters).toMatchObject({ sensorType: 'accelerometer', frequency: 100, axis_count: 2, input_features_count: 100, interval_ms: 10, label_count: 2, labels: ['idle', 'wave'], has_anomaly: 1, model_type: 'classification' });
    for (const label of ['idle', 'wave'] as const) {
      const windows = await testingWindows(label);
      expect(windows).toHaveLength(7);
      for (const w of windows) {
        const got = await runner.classify(w.raw);
        expectSame(got.result, w);
        expect(got.timing).toMatchObject({ dsp: expect.any(Number), classification: expect.any(Number), anomaly: expect.any(Number) });
      }
      // The classes come out right, not merely alike.
      const right = windows.filter((w) => w.classification[label]! > 0.5).length;
      expect(right, label).toBeGreaterThanOrEqual(6);
    }
    // A window of the wrong length is an error answer; the runner goes on.
    await expect(runner.classify([1, 2, 3])).rejects.toThrow(/expected 100 values \(input_features_count\), got 3/);
    const [first] = await testingWindows('wave');
    expectSame((await runner.classify(first!.raw)).result, first!);
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
    const { zip, out } = await buildWasmDeployment(api, projectId, dir, runJob);
    expect(execFileSync('unzip', ['-Z1', zip]).toString().trim().split('\n').sort()).toEqual(['README.md', 'example.mjs', 'impulse.mjs']);
    expect(await readFile(path.join(out, 'README.md'), 'utf8')).toMatch(/50 samples of accX, accY at 100 Hz/);
    const want = [...(await testingWindows('idle')), ...(await testingWindows('wave'))];
    const raws = JSON.stringify(want.map((w) => w.raw));
    const answer = runWasmModule(out, want.map((w) => w.raw));
    expect(answer.modelParameters).toMatchObject({ input_features_count: 100, labels: ['idle', 'wave'], has_anomaly: 1 });
    expect(answer.results).toHaveLength(14);
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
    const inBrowserLike = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', browserLike, raws], { cwd: out }).toString()) as WasmAnswer[];
    expect(inBrowserLike).toHaveLength(14);
    inBrowserLike.forEach((got, i) => expectSame(got, want[i]!));
    const example = JSON.parse(execFileSync(process.execPath, ['example.mjs'], { cwd: out }).toString()) as { labels: string[]; classification: Record<string, number> };
    expect(example.labels).toEqual(['idle', 'wave']);
    expect(Object.keys(example.classification)).toEqual(['idle', 'wave']);
  }, 120_000);
});

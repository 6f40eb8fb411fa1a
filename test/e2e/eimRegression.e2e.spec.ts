import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
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
import { sdkProject, type SdkProject } from '../support/projectWithFeatures';
import { buildWasmDeployment, runWasmModule } from '../support/wasmDeployment';
import type { TestService } from '../support/testService';

// A trained keras-regression impulse (the label is a sine's frequency) built as a .eim through the
// official SDK and run by the official LinuxImpulseRunner, unmodified: its hello names one label,
// `value`, and each classify answers `result.classification.value`, the service's own value for the
// same window within 1e-5. The wasm module says and answers the same.
describe('a regression impulse deployed and run by the official Linux runner', () => {
  let service: TestService;
  let api: EdgeImpulseApi;
  let projectId: number;
  let dir: string;
  const runners: LinuxImpulseRunner[] = [];

  const signal = (f: number, n: number, phase: number) => Array.from({ length: n }, (_, i) => [Math.round(1000 * Math.sin((2 * Math.PI * f * i) / 100 + phase)) / 1000, Math.round(1000 * Math.cos((2 * Math.PI * f * i) / 100 + phase)) / 2000]);
  let ingest: SdkProject['ingest'];
  const runJob = async (jobId: number) => {
    const lines: string[] = [];
    await api.runJobUntilCompletion({ type: 'project', projectId, jobId }, (line) => lines.push(line));
    await readModelsCaughtUp(service);
    return lines.join('');
  };
  /** Windows of 500 ms at 100 Hz: 50 rows of accX, accY interleaved. */
  const windows = [signal(2, 50, 0.3).flat(), signal(10, 50, 1.1).flat(), signal(6, 50, 2).flat()];
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

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'eim-regression-'));
    ({ service, api, projectId, ingest } = await sdkProject('Frequency on devices'));
    await api.impulse.createImpulse(projectId, {
      name: 'Frequency',
      inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY'], windowSizeMs: 500, windowIncreaseMs: 250, frequencyHz: 100 }],
      dspBlocks: [{ id: 2, type: 'spectral-analysis', name: 'Spectral features', title: 'Spectral Analysis', axes: ['accX', 'accY'], input: 1, implementationVersion: 4 }],
      learnBlocks: [{ id: 3, type: 'keras-regression', name: 'Regression', title: 'Regression', dsp: [2] }],
    } as Parameters<typeof api.impulse.createImpulse>[1]);
    for (const f of [2, 6, 10]) for (const phase of [0, 1]) await ingest('training', String(f), signal(f, 200, phase));
    await runJob((await api.jobs.generateFeaturesJob(projectId, { dspId: 2, skipFeatureExplorer: true })).id);
    await runJob((await api.jobs.trainKerasJob(projectId, 3, { trainingCycles: 40, learningRate: 0.01 })).id);
  }, 300_000);
  afterAll(async () => {
    for (const r of runners) await r.stop().catch(() => undefined);
    await service?.destroy();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("builds the .eim; the official runner's hello names one label, value, and classify answers the service's value within 1e-5", async () => {
    const build = await api.jobs.buildOnDeviceModelJob(projectId, { engine: 'tflite' }, { type: 'runner-linux-x86_64' });
    expect(await runJob(build.id)).toMatch(/Built frequency-on-devices-v\d+-linux-x86_64\.eim/);
    const eimPath = path.join(dir, 'model.eim');
    await writeFile(eimPath, await api.deployment.downloadBuild(projectId, { type: 'runner-linux-x86_64' }));
    await chmod(eimPath, 0o755);

    const runner = new LinuxImpulseRunner(eimPath);
    runners.push(runner);
    const model = await runner.init();
    expect(model.modelParameters).toMatchObject({ model_type: 'classification', label_count: 1, labels: ['value'], has_anomaly: 0, input_features_count: 100 });
    const want = await serviceClassifications();
    for (const [i, w] of windows.entries()) {
      const got = await runner.classify(w);
      expect(Object.keys(got.result.classification ?? {})).toEqual(['value']);
      expect(Math.abs(got.result.classification!.value! - want[i]!.classification.value!), `window ${i}`).toBeLessThan(1e-5);
    }
  }, 120_000);

  it('builds the wasm zip: its module names the label value and answers the same values', async () => {
    const { out } = await buildWasmDeployment(api, projectId, dir, runJob);
    const answer = runWasmModule(out, windows);
    expect(answer.modelParameters).toMatchObject({ label_count: 1, labels: ['value'] });
    const want = await serviceClassifications();
    answer.results.forEach((got, i) => expect(Math.abs(got.classification.value! - want[i]!.classification.value!)).toBeLessThan(1e-5));
  }, 120_000);
});

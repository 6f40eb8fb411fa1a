import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { jobStream } from '../../domain/job/jobEvents';
import { kerasStream, type KerasModelTrained } from '../../domain/learn/kerasEvents';
import { unpackKerasModel } from '../../domain/learn/kerasModelBlob';
import { kerasModelToTflite } from '../../domain/learn/tfliteExport';
import { signedSample } from '../support/signedSample';
import { call, describeOn, setups, startTestService, type TestService, adaWithProject, blobBytes } from '../support/testService';
import { readModelsCaughtUp } from '../support/readModels';

// 100 Hz samples, windows of 500 ms every 250 ms: a 200-row sample gives 7 windows.
const impulse = {
  name: 'Motion',
  inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY'], windowSizeMs: 500, windowIncreaseMs: 250, frequencyHz: 100 }],
  dspBlocks: [{ id: 2, type: 'spectral-analysis', name: 'Spectral features', title: 'Spectral Analysis', axes: ['accX', 'accY'], input: 1, implementationVersion: 4 }],
  learnBlocks: [
    { id: 3, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [2] },
    { id: 4, type: 'anomaly', name: 'Anomaly detection', title: 'Anomaly detection (K-means)', dsp: [2] },
  ],
};
/** `idle` a slow sine, `wave` a fast one, each with its own phase. */
const rows = (label: string, seed: number, n = 200): number[][] =>
  Array.from({ length: n }, (_, i) => {
    const f = label === 'idle' ? 1 : 9;
    return [Math.round(1000 * Math.sin((2 * Math.PI * f * i) / 100 + seed)) / 100, Math.round(1000 * Math.cos((2 * Math.PI * f * i) / 100 + seed)) / 200];
  });

for (const setup of setups) {
  describeOn(setup, 'the keras learn block over HTTP: settings, the train job, metadata', () => {
    let service: TestService;
    let ada: Record<string, string>;
    let projectId: number;
    let apiKey: string;
    const post = (path: string, body: unknown = {}) => call(service, 'POST', `/api/${projectId}${path}`, { headers: ada, body });
    const get = (path: string) => call(service, 'GET', `/api/${projectId}${path}`, { headers: ada });
    const jobCount = async () => Number((await get('/jobs/all?limit=1000')).body.totalJobCount);
    const ingest = async (label: string, seed: number) => {
      const res = await fetch(`${service.ingestionUrl}/api/training/data`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': `${label}.${seed}.json`, 'x-label': label },
        body: signedSample('none', rows(label, seed), { alg: 'none' }),
      });
      expect(res.status, await res.text()).toBe(200);
      await readModelsCaughtUp(service);
    };
    const finished = async (jobId: number) => {
      const end = Date.now() + 120_000;
      for (;;) {
        const { job } = (await get(`/jobs/${jobId}/status`)).body as { job: { finishedSuccessful?: boolean } };
        if (job.finishedSuccessful !== undefined) {
          await service.projections!.waitFor((await service.stores.events.headPosition())!, 5000);
          return job;
        }
        if (Date.now() > end) throw new Error(`job ${jobId} did not finish`);
        await sleep(100);
      }
    };
    const stdout = async (jobId: number) => ((await get(`/jobs/${jobId}/stdout`)).body.stdout as { data: string }[]).map((l) => l.data).join('');
    const generateFeatures = async () => {
      const res = await post('/jobs/generate-features', { dspId: 2, skipFeatureExplorer: true });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect((await finished(Number(res.body.id))).finishedSuccessful).toBe(true);
    };
    const models = async () => (await service.stores.events.readStream(kerasStream(projectId, 3))).filter((e) => e.type === 'KerasModelTrained').map((e) => e as unknown as KerasModelTrained);
    const refused = async (path: string, body: unknown, status: number, error: RegExp) => {
      const res = await post(path, body);
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expect(String(res.body.error)).toMatch(error);
    };

    beforeAll(async () => {
      service = await startTestService({ mongo: setup.mongo });
      ({ ada, projectId, apiKey } = await adaWithProject(service, 'Keras'));
      expect((await post('/impulse', impulse)).status).toBe(200);
    });
    afterAll(async () => {
      await service?.destroy();
    });

    it('answers the settings with the real service defaults; a learnId that is no keras block of the impulse is a 404', async () => {
      const res = await get('/training/keras/3');
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({
        success: true,
        mode: 'visual',
        trained: false,
        name: 'Classifier',
        visualLayers: [{ type: 'dense', neurons: 20 }, { type: 'dense', neurons: 10 }],
        trainingCycles: 30,
        learningRate: 0.0005,
        batchSize: 32,
        trainTestSplit: 0.2,
        autoClassWeights: false,
        minimumConfidenceRating: 0.6,
        dependencies: { classes: [], featureCount: 0 },
      });
      expect((await get('/training/keras/4')).status).toBe(404);
      expect((await get('/training/keras/99')).status).toBe(404);
      expect((await get('/training/keras/abc')).status).toBe(400);
      expect((await post('/training/keras/4', { trainingCycles: 5 })).status).toBe(404);
      expect((await get('/training/keras/4/metadata')).status).toBe(404);
    });

    it('keeps settings changes as events; refuses bad values naming the field, and expert mode, changing nothing', async () => {
      expect((await post('/training/keras/3', { trainingCycles: 12, learningRate: 0.01, autoClassWeights: true, visualLayers: [{ type: 'dense', neurons: 16 }, { type: 'dropout', dropoutRate: 0.1 }, { type: 'dense', neurons: 8 }] })).status).toBe(200);
      await refused('/training/keras/3', { trainingCycles: -1 }, 400, /trainingCycles/);
      await refused('/training/keras/3', { learningRate: 'fast' }, 400, /learningRate/);
      await refused('/training/keras/3', { visualLayers: [{ type: 'conv1d', neurons: 0 }] }, 400, /visualLayers\[0\]\.neurons/);
      await refused('/training/keras/3', { visualLayers: [{ type: 'transfer_mobilenetv2_a35' }] }, 400, /visualLayers\[0\]\.type/);
      await refused('/training/keras/3', { mode: 'expert', script: 'import tensorflow as tf' }, 400, /visual mode is supported/);
      const res = await get('/training/keras/3');
      expect(res.body).toMatchObject({ trainingCycles: 12, learningRate: 0.01, autoClassWeights: true, batchSize: 32, visualLayers: [{ type: 'dense', neurons: 16 }, { type: 'dropout', dropoutRate: 0.1 }, { type: 'dense', neurons: 8 }] });
      const events = await service.stores.events.readStream(kerasStream(projectId, 3));
      expect(events.map((e) => e.type)).toEqual(['KerasSettingsSet']);
    });

    it('refuses to train without features, with one class, or with a stack the features cannot feed: a 400 naming it, and no job', async () => {
      await refused('/jobs/train/keras/3', {}, 400, /No features for DSP block 2: run generate-features/);
      await refused('/jobs/train/keras/4', {}, 404, /No keras learn block 4/);
      await ingest('idle', 0);
      await ingest('idle', 1);
      await generateFeatures();
      await refused('/jobs/train/keras/3', {}, 400, /one class \("idle"\)/);
      await ingest('wave', 0);
      await ingest('wave', 1);
      await generateFeatures();
      const before = await jobCount();
      await refused('/jobs/train/keras/3', { visualLayers: [{ type: 'reshape', columns: 1000 }] }, 400, /visualLayers\[0\]\.columns: \d+ values cannot be laid out in rows of 1000 columns/);
      await refused('/jobs/train/keras/3', { visualLayers: [{ type: 'conv1d', neurons: 4 }] }, 400, /visualLayers\[0\]: a 1-D convolution needs input of two axes/);
      expect(await jobCount()).toBe(before);
      // The refused stack was not saved either.
      expect((await get('/training/keras/3')).body.visualLayers).toHaveLength(3);
    });

    it('trains in a job: an Epoch line per cycle, a result naming model, features, settings and seed; the same seed gives the same model', async () => {
      expect((await get('/training/keras/3/metadata')).body).toMatchObject({ hasTrainedModel: false });
      const res = await post('/jobs/train/keras/3', { trainingCycles: 20 });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const jobId = Number(res.body.id);
      const job = await finished(jobId);
      const out = await stdout(jobId);
      expect(job.finishedSuccessful, out).toBe(true);
      expect(out).toMatch(/^Epoch 1\/20 - loss: \d+\.\d{4} - accuracy: \d\.\d{4} - val_loss: \d+\.\d{4} - val_accuracy: \d\.\d{4}$/m);
      expect(out).toMatch(/^Epoch 20\/20 - loss: /m);

      const [trained] = await models();
      const d = trained!.data;
      const features = (await service.stores.events.readStream('dsp-features-' + projectId + '-2')).at(-1)!.data as { categories: { training: { x: string; y: string } } };
      expect(d).toMatchObject({ projectId, learnId: 3, jobId, seed: 3, classes: ['idle', 'wave'], settings: { trainingCycles: 20, learningRate: 0.01, autoClassWeights: true } });
      expect(d.features).toEqual([expect.objectContaining({ dspId: 2, x: features.categories.training.x, y: features.categories.training.y })]);
      // 28 windows, 20% (6) held out for validation.
      expect(d.trainingWindowCount).toBe(22);
      expect(d.validation.windowCount).toBe(6);
      const blob = await blobBytes(service, d.model);
      expect(unpackKerasModel(blob).modelJson.format).toBe('layers-model');
      const tflite = await fetch(`${service.apiUrl}/v1/api/${projectId}/learn-data/3/model/tflite-float32`, { headers: ada });
      expect(tflite.status).toBe(200);
      expect(tflite.headers.get('content-disposition')).toMatch(/-float32\.tflite"$/);
      expect(new Uint8Array(await tflite.arrayBuffer())).toEqual(kerasModelToTflite(unpackKerasModel(blob)));

      const meta = await get('/training/keras/3/metadata');
      expect(meta.body).toMatchObject({ success: true, hasTrainedModel: true, classNames: ['idle', 'wave'], labels: ['idle', 'wave'], mode: 'classification', recommendedModelType: 'float32' });
      const [metrics] = meta.body.modelValidationMetrics as { loss: number; accuracy: number; confusionMatrix: number[][]; report: Record<string, { precision: number; recall: number; 'f1-score': number }>; onDevicePerformance: { latency: number; tflite: { modelSize: number } }[] }[];
      expect(metrics!.confusionMatrix).toHaveLength(2);
      expect(metrics!.confusionMatrix.flat().reduce((a, b) => a + b, 0)).toBe(6);
      expect(metrics!.accuracy).toBeGreaterThanOrEqual(0);
      expect(Object.keys(metrics!.report)).toEqual(['idle', 'wave']);
      expect(metrics!.onDevicePerformance[0]!.tflite.modelSize).toBeGreaterThan(4 * d.parameterCount - 1);
      expect((await get('/training/keras/3')).body).toMatchObject({ trained: true, dependencies: { classes: ['idle', 'wave'], outputClasses: ['idle', 'wave'] } });

      const again = await post('/jobs/train/keras/3');
      expect((await finished(Number(again.body.id))).finishedSuccessful).toBe(true);
      const all = await models();
      expect(all).toHaveLength(2);
      expect(all[1]!.data.model).toBe(d.model);
    });

    it('cancel stops a long training within an epoch and records no model', async () => {
      const res = await post('/jobs/train/keras/3', { trainingCycles: 10_000 });
      const jobId = Number(res.body.id);
      const end = Date.now() + 60_000;
      while (!/Epoch 1\/10000/.test(await stdout(jobId))) {
        if (Date.now() > end) throw new Error('no epoch line');
        await sleep(100);
      }
      expect((await post(`/jobs/${jobId}/cancel`)).status).toBe(200);
      const job = await finished(jobId);
      expect(job.finishedSuccessful).toBe(false);
      expect(await models()).toHaveLength(2);
    });

    it('a project deleted during training stops its job, which ends failed saying why, and records no model', async () => {
      const res = await post('/jobs/train/keras/3', { trainingCycles: 10_000 });
      const jobId = Number(res.body.id);
      const end = Date.now() + 60_000;
      while (!/Epoch 1\/10000/.test(await stdout(jobId))) {
        if (Date.now() > end) throw new Error('no epoch line');
        await sleep(100);
      }
      expect((await call(service, 'DELETE', `/api/${projectId}`, { headers: ada })).status).toBe(200);
      // The project's routes are gone with it: the job's own stream says how it ended.
      const finishedEvent = async () => (await service.stores.events.readStream(jobStream(jobId))).find((e) => e.type === 'JobFinished');
      const until = Date.now() + 30_000;
      while (!(await finishedEvent())) {
        if (Date.now() > until) throw new Error('the job of the deleted project is still running');
        await sleep(100);
      }
      expect((await finishedEvent())!.data).toMatchObject({ finishedSuccessful: false, reason: expect.stringMatching(/project was deleted/) });
      expect(await models()).toHaveLength(2);
    }, 60_000);
  });
}

import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { jobStream } from '../../domain/job/jobEvents';
import { kerasStream, type KerasModelTrained } from '../../domain/learn/kerasEvents';
import { unpackKerasModel } from '../../domain/learn/kerasModelBlob';
import { kerasModelToTflite } from '../../domain/learn/tfliteExport';
import { projectWithFeatures, type ProjectWithFeatures } from '../support/projectWithFeatures';
import { call, describeOn, setups, blobBytes } from '../support/testService';

// The motion impulse: 100 Hz samples, windows of 500 ms every 250 ms: a 200-row sample gives 7 windows.
for (const setup of setups) {
  describeOn(setup, 'the keras learn block over HTTP: settings, the train job, metadata', () => {
    let p: ProjectWithFeatures;
    const post = (path: string, body?: unknown) => p.post(path, body);
    const get = (path: string) => p.get(path);
    const ingest = (label: string, seed: number) => p.ingest('training', label, seed);
    const generateFeatures = () => p.runJob('/jobs/generate-features', { dspId: 2, skipFeatureExplorer: true });
    const models = async () => (await p.service.stores.events.readStream(kerasStream(p.projectId, 3))).filter((e) => e.type === 'KerasModelTrained').map((e) => e as unknown as KerasModelTrained);
    /** Starts a training of 10,000 cycles and waits for its first epoch line; its job id. */
    const longTrainingUnderWay = async () => {
      const res = await post('/jobs/train/keras/3', { trainingCycles: 10_000 });
      const jobId = Number(res.body.id);
      const end = Date.now() + 60_000;
      while (!/Epoch 1\/10000/.test(await p.stdout(jobId))) {
        if (Date.now() > end) throw new Error('no epoch line');
        await sleep(100);
      }
      return jobId;
    };
    const refused = async (path: string, body: unknown, status: number, error: RegExp) => {
      const res = await post(path, body);
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expect(String(res.body.error)).toMatch(error);
    };

    beforeAll(async () => {
      p = await projectWithFeatures({ mongo: setup.mongo, name: 'Keras' });
    });
    afterAll(async () => {
      await p?.service.destroy();
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
      const events = await p.service.stores.events.readStream(kerasStream(p.projectId, 3));
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
      const before = await p.jobCount();
      await refused('/jobs/train/keras/3', { visualLayers: [{ type: 'reshape', columns: 1000 }] }, 400, /visualLayers\[0\]\.columns: \d+ values cannot be laid out in rows of 1000 columns/);
      await refused('/jobs/train/keras/3', { visualLayers: [{ type: 'conv1d', neurons: 4 }] }, 400, /visualLayers\[0\]: a 1-D convolution needs input of two axes/);
      expect(await p.jobCount()).toBe(before);
      // The refused stack was not saved either.
      expect((await get('/training/keras/3')).body.visualLayers).toHaveLength(3);
    });

    it('trains in a job: an Epoch line per cycle, a result naming model, features, settings and seed; the same seed gives the same model', async () => {
      expect((await get('/training/keras/3/metadata')).body).toMatchObject({ hasTrainedModel: false });
      const res = await post('/jobs/train/keras/3', { trainingCycles: 20 });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const jobId = Number(res.body.id);
      const job = await p.finished(jobId);
      const out = await p.stdout(jobId);
      expect(job.finishedSuccessful, out).toBe(true);
      expect(out).toMatch(/^Epoch 1\/20 - loss: \d+\.\d{4} - accuracy: \d\.\d{4} - val_loss: \d+\.\d{4} - val_accuracy: \d\.\d{4}$/m);
      expect(out).toMatch(/^Epoch 20\/20 - loss: /m);

      const [trained] = await models();
      const d = trained!.data;
      const features = (await p.service.stores.events.readStream('dsp-features-' + p.projectId + '-2')).at(-1)!.data as { categories: { training: { x: string; y: string } } };
      expect(d).toMatchObject({ projectId: p.projectId, learnId: 3, jobId, seed: 3, classes: ['idle', 'wave'], settings: { trainingCycles: 20, learningRate: 0.01, autoClassWeights: true } });
      expect(d.features).toEqual([expect.objectContaining({ dspId: 2, x: features.categories.training.x, y: features.categories.training.y })]);
      // 28 windows, 20% (6) held out for validation.
      expect(d.trainingWindowCount).toBe(22);
      expect(d.validation.windowCount).toBe(6);
      const blob = await blobBytes(p.service, d.model);
      expect(unpackKerasModel(blob).modelJson.format).toBe('layers-model');
      const tflite = await fetch(`${p.service.apiUrl}/v1/api/${p.projectId}/learn-data/3/model/tflite-float32`, { headers: p.ada });
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
      expect((await p.finished(Number(again.body.id))).finishedSuccessful).toBe(true);
      const all = await models();
      expect(all).toHaveLength(2);
      expect(all[1]!.data.model).toBe(d.model);
    });

    it('cancel stops a long training within an epoch and records no model', async () => {
      const jobId = await longTrainingUnderWay();
      expect((await post(`/jobs/${jobId}/cancel`)).status).toBe(200);
      const job = await p.finished(jobId);
      expect(job.finishedSuccessful).toBe(false);
      expect(await models()).toHaveLength(2);
    });

    it('a project deleted during training stops its job, which ends failed saying why, and records no model', async () => {
      const jobId = await longTrainingUnderWay();
      expect((await call(p.service, 'DELETE', `/api/${p.projectId}`, { headers: p.ada })).status).toBe(200);
      // The project's routes are gone with it: the job's own stream says how it ended.
      const finishedEvent = async () => (await p.service.stores.events.readStream(jobStream(jobId))).find((e) => e.type === 'JobFinished');
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

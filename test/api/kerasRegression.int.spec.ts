import { afterAll, beforeAll, expect, it } from 'vitest';
import { kerasStream, type KerasModelTrained } from '../../domain/learn/kerasEvents';
import { unpackKerasModel } from '../../domain/learn/kerasModelBlob';
import { motionImpulse, projectWithFeatures, sineRows, type ProjectWithFeatures } from '../support/projectWithFeatures';
import { blobBytes, call, describeOn, setups } from '../support/testService';

// The keras-regression block: the keras block's settings, job and metadata, with one linear output
// trained on mean squared error, its labels read as the numbers to predict. Here the label is the
// frequency of the sine in the sample.
const impulse = { ...motionImpulse, name: 'Frequency', learnBlocks: [{ id: 3, type: 'keras-regression', name: 'Regression', title: 'Regression', dsp: [2] }] };

for (const setup of setups) {
  describeOn(setup, 'the keras-regression learn block over HTTP', () => {
    let p: ProjectWithFeatures;
    const post = (path: string, body?: unknown) => p.post(path, body);
    const get = (path: string) => p.get(path);
    const ingest = (label: string, f: number, phase: number): Promise<number> => p.ingestRows('training', label, sineRows(f, 200, phase), `${label}.${phase}.json`);
    const generateFeatures = () => p.runJob('/jobs/generate-features', { dspId: 2, skipFeatureExplorer: true });
    const models = async () => (await p.service.stores.events.readStream(kerasStream(p.projectId, 3))).filter((e) => e.type === 'KerasModelTrained').map((e) => e as unknown as KerasModelTrained);

    beforeAll(async () => {
      p = await projectWithFeatures({ mongo: setup.mongo, name: 'Regression', impulse });
    });
    afterAll(async () => {
      await p?.service.destroy();
    });

    it('answers its settings as a keras block of type keras-regression', async () => {
      const res = await get('/training/keras/3');
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ type: 'keras-regression', trained: false, trainingCycles: 30 });
      expect((await post('/training/keras/3', { trainingCycles: 40, learningRate: 0.01 })).status).toBe(200);
      expect((await get('/training/keras/3/metadata')).body).toMatchObject({ hasTrainedModel: false, mode: 'regression' });
    });

    it('refuses to train on a label that is not a number, naming it, with a 400 and no job', async () => {
      const idle = await ingest('idle', 1, 0);
      for (const [f, phase] of [[2, 0], [2, 1], [6, 0], [6, 1], [10, 0], [10, 1]]) await ingest(String(f), f!, phase!);
      await generateFeatures();
      const before = await p.jobCount();
      const res = await post('/jobs/train/keras/3');
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error).toMatch(/The label "idle" is not a number/);
      expect(await p.jobCount()).toBe(before);
      expect((await call(p.service, 'DELETE', `/api/${p.projectId}/raw-data/${idle}`, { headers: p.ada })).status).toBe(200);
      await generateFeatures();
    });

    it('trains one linear output on mean squared error; metadata gives the loss and the regression metrics', async () => {
      const res = await post('/jobs/train/keras/3');
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const job = await p.finished(Number(res.body.id));
      const out = await p.stdout(Number(res.body.id));
      expect(job.finishedSuccessful, out).toBe(true);
      expect(out).toMatch(/3 label values, one linear output/);
      expect(out).toMatch(/^Epoch 40\/40 - loss: \d+\.\d{4} - val_loss: \d+\.\d{4}$/m);

      const [trained] = await models();
      const d = trained!.data;
      expect(d).toMatchObject({ mode: 'regression', classes: ['10', '2', '6'], validation: { accuracy: null, confusionMatrix: [], report: {} } });
      const r = d.validation.regression!;
      expect(d.validation.loss).toBeCloseTo(r.meanSquaredError!, 5);
      // The labels span 2 to 10: a model that learnt something errs well below the spread.
      expect(r.meanAbsoluteError!).toBeLessThan(3);
      const topology = unpackKerasModel(await blobBytes(p.service, d.model)).modelJson.modelTopology as { config: { layers: { class_name: string; config: { units?: number; activation?: string } }[] } };
      expect(topology.config.layers.at(-1)!).toMatchObject({ class_name: 'Dense', config: { units: 1, activation: 'linear' } });

      const meta = await get('/training/keras/3/metadata');
      expect(meta.body).toMatchObject({ success: true, hasTrainedModel: true, mode: 'regression', recommendedModelType: 'float32', layers: [{ output: { shape: 1 } }] });
      const [metrics] = meta.body.modelValidationMetrics as { loss: number; accuracy?: number; confusionMatrix: unknown[]; additionalMetrics: { name: string; fullPrecisionValue: number; value: string }[] }[];
      expect(metrics!.loss).toBeCloseTo(r.meanSquaredError!, 5);
      expect(metrics!.accuracy).toBeUndefined();
      expect(metrics!.confusionMatrix).toEqual([]);
      expect(metrics!.additionalMetrics.map((m) => m.name)).toEqual(['Mean squared error', 'Mean absolute error', 'Explained variance score']);
      expect(metrics!.additionalMetrics[1]).toMatchObject({ fullPrecisionValue: r.meanAbsoluteError, value: r.meanAbsoluteError!.toFixed(4) });

      // It is a learn block like the others for the impulse: trained on the current features, it completes it.
      expect((await get('')).body.impulse).toMatchObject({ complete: false });
      expect((await post('/dsp/2', { config: { 'scale-axes': '1' } })).status).toBe(200);
      expect((await get('')).body.impulse).toMatchObject({ complete: true });
    }, 180_000);
  });
}

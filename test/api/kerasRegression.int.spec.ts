import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { kerasStream, type KerasModelTrained } from '../../domain/learn/kerasEvents';
import { unpackKerasModel } from '../../domain/learn/kerasModelBlob';
import { readModelsCaughtUp } from '../support/readModels';
import { signedSample } from '../support/signedSample';
import { adaWithProject, blobBytes, call, describeOn, setups, startTestService, type TestService } from '../support/testService';

// The keras-regression block: the keras block's settings, job and metadata, with one linear output
// trained on mean squared error, its labels read as the numbers to predict. Here the label is the
// frequency of the sine in the sample.
const impulse = {
  name: 'Frequency',
  inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY'], windowSizeMs: 500, windowIncreaseMs: 250, frequencyHz: 100 }],
  dspBlocks: [{ id: 2, type: 'spectral-analysis', name: 'Spectral features', title: 'Spectral Analysis', axes: ['accX', 'accY'], input: 1, implementationVersion: 4 }],
  learnBlocks: [{ id: 3, type: 'keras-regression', name: 'Regression', title: 'Regression', dsp: [2] }],
};
const rows = (f: number, phase: number) => Array.from({ length: 200 }, (_, i) => [Math.sin((2 * Math.PI * f * i) / 100 + phase), Math.cos((2 * Math.PI * f * i) / 100 + phase) / 2]);

for (const setup of setups) {
  describeOn(setup, 'the keras-regression learn block over HTTP', () => {
    let service: TestService;
    let ada: Record<string, string>;
    let projectId: number;
    let apiKey: string;
    const post = (path: string, body: unknown = {}) => call(service, 'POST', `/api/${projectId}${path}`, { headers: ada, body });
    const get = (path: string) => call(service, 'GET', `/api/${projectId}${path}`, { headers: ada });
    const ingest = async (label: string, f: number, phase: number): Promise<number> => {
      const res = await fetch(`${service.ingestionUrl}/api/training/data`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': `${label}.${phase}.json`, 'x-label': label },
        body: signedSample('none', rows(f, phase), { alg: 'none' }),
      });
      expect(res.status, await res.text()).toBe(200);
      await readModelsCaughtUp(service);
      const listed = await get('/raw-data?category=training&limit=1000');
      return Math.max(...(listed.body.samples as { id: number }[]).map((s) => s.id));
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
    const generateFeatures = async () => {
      const res = await post('/jobs/generate-features', { dspId: 2, skipFeatureExplorer: true });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect((await finished(Number(res.body.id))).finishedSuccessful).toBe(true);
    };
    const jobCount = async () => Number((await get('/jobs/all?limit=1000')).body.totalJobCount);
    const models = async () => (await service.stores.events.readStream(kerasStream(projectId, 3))).filter((e) => e.type === 'KerasModelTrained').map((e) => e as unknown as KerasModelTrained);

    beforeAll(async () => {
      service = await startTestService({ mongo: setup.mongo });
      ({ ada, projectId, apiKey } = await adaWithProject(service, 'Regression'));
      expect((await post('/impulse', impulse)).status).toBe(200);
    });
    afterAll(async () => {
      await service?.destroy();
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
      const before = await jobCount();
      const res = await post('/jobs/train/keras/3');
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error).toMatch(/The label "idle" is not a number/);
      expect(await jobCount()).toBe(before);
      expect((await call(service, 'DELETE', `/api/${projectId}/raw-data/${idle}`, { headers: ada })).status).toBe(200);
      await generateFeatures();
    });

    it('trains one linear output on mean squared error; metadata gives the loss and the regression metrics', async () => {
      const res = await post('/jobs/train/keras/3');
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const job = await finished(Number(res.body.id));
      const out = ((await get(`/jobs/${res.body.id}/stdout`)).body.stdout as { data: string }[]).map((l) => l.data).join('');
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
      const topology = unpackKerasModel(await blobBytes(service, d.model)).modelJson.modelTopology as { config: { layers: { class_name: string; config: { units?: number; activation?: string } }[] } };
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

import { setTimeout as sleep } from 'node:timers/promises';
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { decodeNpy } from '../../domain/dsp/npy';
import { kerasStream, type KerasModelTrained } from '../../domain/learn/kerasEvents';
import { unpackKerasModel } from '../../domain/learn/kerasModelBlob';
import { readModelsCaughtUp } from '../support/readModels';
import { signedSample } from '../support/signedSample';
import { adaWithProject, blobBytes, call, describeOn, setups, startTestService, type TestService } from '../support/testService';

// A trained keras-regression impulse classifying stored samples and tested: each window answers
// { value } (the real service's regression result), the model's own prediction on the window's
// stored features; model testing scores a window right when its value is within the block's
// threshold (the maximum absolute error) of its label, and measures the errors.
const impulse = {
  name: 'Frequency',
  inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY'], windowSizeMs: 500, windowIncreaseMs: 250, frequencyHz: 100 }],
  dspBlocks: [{ id: 2, type: 'spectral-analysis', name: 'Spectral features', title: 'Spectral Analysis', axes: ['accX', 'accY'], input: 1, implementationVersion: 4 }],
  learnBlocks: [{ id: 3, type: 'keras-regression', name: 'Regression', title: 'Regression', dsp: [2] }],
};
const rows = (f: number, phase: number) => Array.from({ length: 200 }, (_, i) => [Math.sin((2 * Math.PI * f * i) / 100 + phase), Math.cos((2 * Math.PI * f * i) / 100 + phase) / 2]);

type Classification = { learnBlock: { id: number; type: string }; result: Record<string, number>[]; expectedLabels: { label: string }[]; minimumConfidenceRating: number; thresholds: { key: string; value: number }[]; resultCount: number };

for (const setup of setups) {
  describeOn(setup, 'classifying and testing a keras-regression impulse over HTTP', () => {
    let service: TestService;
    let ada: Record<string, string>;
    let projectId: number;
    let apiKey: string;
    const testing: number[] = [];
    const post = (path: string, body: unknown = {}) => call(service, 'POST', `/api/${projectId}${path}`, { headers: ada, body });
    const get = (path: string) => call(service, 'GET', `/api/${projectId}${path}`, { headers: ada });
    const ingest = async (category: 'training' | 'testing', label: string, f: number, phase: number): Promise<number> => {
      const res = await fetch(`${service.ingestionUrl}/api/${category}/data`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': `${label}.${phase}.json`, 'x-label': label },
        body: signedSample('none', rows(f, phase), { alg: 'none' }),
      });
      expect(res.status, await res.text()).toBe(200);
      await readModelsCaughtUp(service);
      const listed = await get(`/raw-data?category=${category}&limit=1000`);
      return Math.max(...(listed.body.samples as { id: number }[]).map((s) => s.id));
    };
    const runJob = async (path: string, body: unknown = {}) => {
      const res = await post(path, body);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const end = Date.now() + 120_000;
      for (;;) {
        const { job } = (await get(`/jobs/${res.body.id}/status`)).body as { job: { finishedSuccessful?: boolean } };
        if (job.finishedSuccessful !== undefined) {
          await service.projections!.waitFor((await service.stores.events.headPosition())!, 5000);
          const out = ((await get(`/jobs/${res.body.id}/stdout`)).body.stdout as { data: string }[]).map((l) => l.data).join('');
          expect(job.finishedSuccessful, out).toBe(true);
          return;
        }
        if (Date.now() > end) throw new Error(`job ${res.body.id} did not finish`);
        await sleep(100);
      }
    };
    /** The trained model's predictions on the testing X generate-features stored (7 windows per testing sample, in sample order). */
    const predictedOnStoredFeatures = async (): Promise<number[]> => {
      const features = (await service.stores.events.readStream(`dsp-features-${projectId}-2`)).at(-1)!.data as { categories: { testing: { x: string } } };
      const x = decodeNpy(await blobBytes(service, features.categories.testing.x));
      const trained = (await service.stores.events.readStream(kerasStream(projectId, 3))).filter((e) => e.type === 'KerasModelTrained').at(-1) as unknown as KerasModelTrained;
      expect(trained.data.mode).toBe('regression');
      const files = unpackKerasModel(await blobBytes(service, trained.data.model));
      await tf.setBackend('cpu');
      const model = await tf.loadLayersModel(tf.io.fromMemory({ modelTopology: files.modelJson.modelTopology as object, weightSpecs: files.modelJson.weightsManifest[0]!.weights as tf.io.WeightsManifestEntry[], weightData: new Uint8Array(files.weights).buffer }));
      try {
        return Array.from((model.predict(tf.tensor2d(Float32Array.from(x.data), [x.shape[0]!, x.shape[1]!])) as tf.Tensor).dataSync());
      } finally {
        model.dispose();
      }
    };

    beforeAll(async () => {
      service = await startTestService({ mongo: setup.mongo });
      ({ ada, projectId, apiKey } = await adaWithProject(service, 'Regression'));
      expect((await post('/impulse', impulse)).status).toBe(200);
      for (const [f, phase] of [[2, 0], [2, 1], [2, 2], [6, 0], [6, 1], [6, 2], [10, 0], [10, 1], [10, 2]]) await ingest('training', String(f), f!, phase!);
      testing.push(await ingest('testing', '2', 2, 0.5));
      testing.push(await ingest('testing', '10', 10, 1.5));
      await runJob('/jobs/generate-features', { dspId: 2, skipFeatureExplorer: true });
      // The threshold of a regression block is the largest absolute error a right answer may have.
      expect((await post('/training/keras/3', { trainingCycles: 60, learningRate: 0.01, minimumConfidenceRating: 1 })).status).toBe(200);
      await runJob('/jobs/train/keras/3');
    }, 300_000);
    afterAll(async () => {
      await service?.destroy();
    });

    it("classify/{sampleId} (v1 and v2) answers { value } per window: the model's prediction on the window's features", async () => {
      const predicted = await predictedOnStoredFeatures();
      expect(predicted).toHaveLength(14);
      for (const [s, sampleId] of testing.entries()) {
        for (const path of [`/classify/${sampleId}`, `/classify/v2/${sampleId}`]) {
          const res = path.includes('/v2/') ? await post(path) : await get(path);
          expect(res.status, JSON.stringify(res.body)).toBe(200);
          const [c] = res.body.classifications as Classification[];
          expect(c!.learnBlock).toMatchObject({ id: 3, type: 'keras-regression' });
          expect(c!.resultCount).toBe(7);
          expect(c!.thresholds).toEqual([expect.objectContaining({ key: 'max_error', value: 1 })]);
          expect(c!.expectedLabels.map((l) => l.label)).toEqual(Array(7).fill(s === 0 ? '2' : '10'));
          c!.result.forEach((row, i) => {
            expect(Object.keys(row)).toEqual(['value']);
            expect(Math.abs(row.value! - predicted[7 * s + i]!), `window ${i}`).toBeLessThan(1e-5);
          });
        }
      }
    });

    it('model testing scores a window right within the maximum absolute error and gives MSE, MAE and explained variance', async () => {
      await runJob('/jobs/classify', {});
      const res = await get('/classify/all/result');
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const predicted = await predictedOnStoredFeatures();
      const expected = [...Array(7).fill(2), ...Array(7).fill(10)] as number[];
      const predictions = res.body.predictions as { sampleId: number; label: string; prediction: string; predictionCorrect: boolean }[];
      expect(predictions).toHaveLength(14);
      predictions.forEach((p, i) => {
        expect(Math.abs(Number(p.prediction) - predicted[i]!)).toBeLessThan(1e-5);
        expect(p.predictionCorrect, `window ${i}: ${p.prediction} for ${p.label}`).toBe(Math.abs(predicted[i]! - expected[i]!) <= 1);
      });
      const errors = predicted.map((v, i) => v - expected[i]!);
      const mse = errors.reduce((a, e) => a + e * e, 0) / 14;
      const mae = errors.reduce((a, e) => a + Math.abs(e), 0) / 14;
      const good = predictions.filter((p) => p.predictionCorrect).length;
      const accuracy = res.body.accuracy as { totalSummary: { good: number; bad: number }; accuracyScore: number; mseScore: number; confusionMatrixValues: object; balancedAccuracyScore?: number };
      expect(accuracy.totalSummary).toEqual({ good, bad: 14 - good });
      expect(accuracy.accuracyScore).toBeCloseTo(good / 14, 10);
      expect(accuracy.mseScore).toBeCloseTo(mse, 4);
      expect(accuracy.confusionMatrixValues).toEqual({});
      expect(accuracy.balancedAccuracyScore).toBeUndefined();
      const [block] = res.body.additionalMetricsByLearnBlock as { learnBlockId: number; learnBlockName: string; additionalMetrics: { name: string; fullPrecisionValue: number }[] }[];
      expect(block).toMatchObject({ learnBlockId: 3, learnBlockName: 'Regression' });
      expect(block!.additionalMetrics.map((m) => m.name)).toEqual(['Mean squared error', 'Mean absolute error', 'Explained variance score']);
      expect(block!.additionalMetrics[0]!.fullPrecisionValue).toBeCloseTo(mse, 4);
      expect(block!.additionalMetrics[1]!.fullPrecisionValue).toBeCloseTo(mae, 4);
      // The per-sample results answer { value } too.
      const [first] = (res.body.result as { classifications: Classification[] }[])[0]!.classifications;
      expect(Object.keys(first!.result[0]!)).toEqual(['value']);
      expect((await get('/classify/all/metrics')).body).toMatchObject({ metrics: [{ variant: 'float32', accuracy: good / 14 }] });
    }, 180_000);
  });
}

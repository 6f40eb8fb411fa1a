import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MAX_CLASSIFY_WINDOWS } from '../../commands/classify/classifySample';
import { decodeNpy } from '../../domain/dsp/npy';
import { kerasStream, type KerasModelTrained } from '../../domain/learn/kerasEvents';
import { unpackKerasModel } from '../../domain/learn/kerasModelBlob';
import { projectWithFeatures, trainBoth, withTrainingFeatures, type ProjectWithFeatures } from '../support/projectWithFeatures';
import { blobBytes, call, describeOn, setups } from '../support/testService';

type Classification = { learnBlock: { id: number; type: string }; result: Record<string, number>[]; expectedLabels: { startIndex: number; endIndex: number; label: string }[]; minimumConfidenceRating: number; resultCount: number; thresholds: { key: string; value: number }[] };

for (const setup of setups) {
  describeOn(setup, 'classifying a stored sample over HTTP', () => {
    let p: ProjectWithFeatures;
    let idleTest: number;
    let waveTest: number;

    /** The classify scores equal the trained model's on the testing X generate-features stored (the idle sample's 7 windows, then the wave sample's). */
    const expectScoresOfStoredFeatures = async (scores: Record<string, number>[]) => {
      const features = (await p.service.stores.events.readStream(`dsp-features-${p.projectId}-2`)).at(-1)!.data as { categories: { testing: { x: string } } };
      const x = decodeNpy(await blobBytes(p.service, features.categories.testing.x));
      expect(x.shape[0]).toBe(14);
      const trained = (await p.service.stores.events.readStream(kerasStream(p.projectId, 3))).filter((e) => e.type === 'KerasModelTrained').at(-1) as unknown as KerasModelTrained;
      const files = unpackKerasModel(await blobBytes(p.service, trained.data.model));
      await tf.setBackend('cpu');
      const model = await tf.loadLayersModel(tf.io.fromMemory({ modelTopology: files.modelJson.modelTopology as object, weightSpecs: files.modelJson.weightsManifest[0]!.weights as tf.io.WeightsManifestEntry[], weightData: new Uint8Array(files.weights).buffer }));
      const columns = x.shape[1]!;
      const expected = (model.predict(tf.tensor2d(Float32Array.from(x.data.subarray(7 * columns)), [7, columns])) as tf.Tensor).arraySync() as number[][];
      model.dispose();
      expect(scores).toHaveLength(7);
      scores.forEach((row, i) => {
        expect(Object.keys(row)).toEqual(['idle', 'wave']);
        expect(Math.abs(row.idle! - expected[i]![0]!)).toBeLessThan(1e-5);
        expect(Math.abs(row.wave! - expected[i]![1]!)).toBeLessThan(1e-5);
      });
    };

    beforeAll(async () => {
      p = await projectWithFeatures({ mongo: setup.mongo });
      idleTest = await p.ingest('testing', 'idle', 7);
      waveTest = await p.ingest('testing', 'wave', 7);
      await withTrainingFeatures(p);
    }, 180_000);
    afterAll(async () => {
      await p?.service.destroy();
    });

    it('refuses with a 400 naming the learn block while it has no trained model', async () => {
      const res = await p.get(`/classify/v2/${idleTest}`);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body).toMatchObject({ success: false, error: 'Learn block 3 ("Classifier") has no trained model: train it first' });
    });

    it('answers 404 for an unknown sample and for a sample of another project', async () => {
      await trainBoth(p);
      expect((await p.get('/classify/999999')).status).toBe(404);
      const other = await call(p.service, 'POST', '/api/projects/create', { headers: p.ada, body: { projectName: 'Other' } });
      const otherId = Number(other.body.id);
      const res = await call(p.service, 'GET', `/api/${otherId}/classify/${idleTest}`, { headers: p.ada });
      expect(res.status, JSON.stringify(res.body)).toBe(404);
      expect((await p.get('/classify/abc')).status).toBe(400);
    }, 180_000);

    it('classifies every window with the scores the trained model gives on the features generate-features stored for it', async () => {
      const res = await p.get(`/classify/${waveTest}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ success: true, windowSizeMs: 500, windowIncreaseMs: 250, alreadyInDatabase: true, sample: { sample: { id: waveTest }, totalPayloadLength: 200 } });
      const [keras, anomaly] = res.body.classifications as Classification[];
      expect(keras!.learnBlock).toMatchObject({ id: 3, type: 'keras' });
      expect(anomaly!.learnBlock).toMatchObject({ id: 4, type: 'anomaly' });
      // 200 rows at 100 Hz, windows of 50 rows every 25: 7 windows.
      expect(keras!.resultCount).toBe(7);
      expect(keras!.result).toHaveLength(7);
      expect(keras!.expectedLabels[0]).toEqual({ startIndex: 0, endIndex: 49, label: 'wave' });
      expect(keras!.thresholds).toEqual([expect.objectContaining({ key: 'min_score', value: 0.6 })]);
      expect(anomaly!.thresholds).toEqual([expect.objectContaining({ key: 'min_anomaly_score', value: 0.3 })]);

      await expectScoresOfStoredFeatures(keras!.result);
      expect(keras!.result.filter((s) => s.wave! > s.idle!).length).toBeGreaterThanOrEqual(6);
      for (const a of anomaly!.result) expect(Number.isFinite(a.anomaly)).toBe(true);

      // v2 answers the same; a model variant this service does not have is a 400.
      const v2 = await p.get(`/classify/v2/${waveTest}`);
      expect(v2.status).toBe(200);
      expect(v2.body.classifications).toEqual(res.body.classifications);
      // The SDK's classifySampleV2 sends POST.
      const v2Post = await p.post(`/classify/v2/${waveTest}`);
      expect(v2Post.status).toBe(200);
      expect(v2Post.body.classifications).toEqual(res.body.classifications);
      const int8 = await p.get(`/classify/v2/${waveTest}?variant=int8`);
      expect(int8.status).toBe(400);
      expect(String(int8.body.error)).toMatch(/"variant": only the float32 model/);
    });

    it('scales the features as generate-features stored them when they were normalised, before the model sees them', async () => {
      await p.runJob('/jobs/generate-features', { dspId: 2, skipFeatureExplorer: true, normalizeData: 'normalize-channel-standard-scaler' });
      await trainBoth(p);
      const res = await p.get(`/classify/${waveTest}`);
      expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
      await expectScoresOfStoredFeatures((res.body.classifications as Classification[])[0]!.result);
    }, 180_000);

    it('refuses a sample giving more windows than a request may classify, before reading it', async () => {
      // 25 rows a step: MAX_CLASSIFY_WINDOWS + 10 windows.
      const huge = await p.ingest('testing', 'idle', 99, 50 + 25 * (MAX_CLASSIFY_WINDOWS + 9));
      const res = await p.get(`/classify/${huge}`);
      expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(400);
      expect(String(res.body.error)).toMatch(new RegExp(`gives ${MAX_CLASSIFY_WINDOWS + 10} windows; at most ${MAX_CLASSIFY_WINDOWS} are classified at once`));
    }, 60_000);

    it('refuses with a 400 naming the learn block when the DSP blocks now give other features than its model was trained on', async () => {
      expect((await p.post('/dsp/2', { config: { 'fft-length': '64' } })).status).toBe(200);
      await p.runJob('/jobs/generate-features', { dspId: 2, skipFeatureExplorer: true });
      const res = await p.get(`/classify/${waveTest}`);
      expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(400);
      expect(String(res.body.error)).toMatch(/learn block 3 \("Classifier"\) was trained on \d+ features; its DSP blocks give \d+ now: train it again/);
    }, 120_000);
  });
}

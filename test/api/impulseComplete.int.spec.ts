import { afterAll, beforeAll, expect, it } from 'vitest';
import { jobFinished } from '../support/jobStatus';
import { ingestSample } from '../support/projectWithFeatures';
import { call, describeOn, setups, signup, startTestService, loginToken, type TestService } from '../support/testService';

// Two DSP blocks on one input: the impulse is complete only while both have features generated for
// the parameters and windowing they have now, and every learn block has a model trained on them.
const impulse = (windowSizeMs = 500, learnBlocks: unknown[] = []) => ({
  name: 'Motion',
  inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY'], windowSizeMs, windowIncreaseMs: 250, frequencyHz: 100 }],
  dspBlocks: [
    { id: 2, type: 'flatten', name: 'Flatten', title: 'Flatten', axes: ['accX', 'accY'], input: 1, implementationVersion: 1 },
    { id: 3, type: 'spectral-analysis', name: 'Spectral', title: 'Spectral Analysis', axes: ['accX'], input: 1, implementationVersion: 4 },
  ],
  learnBlocks,
});
const keras = { id: 4, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [2, 3] };
const anomaly = { id: 5, type: 'anomaly', name: 'Anomaly detection', title: 'Anomaly detection (K-means)', dsp: [2] };
const rows = (f: number) => Array.from({ length: 200 }, (_, i) => [Math.sin((2 * Math.PI * f * i) / 100), Math.cos((2 * Math.PI * f * i) / 100)]);

for (const setup of setups) {
  describeOn(setup, "the impulse's complete flag in project information", () => {
    let service: TestService;
    let ada: Record<string, string>;
    let projectId: number;
    const post = (path: string, body: unknown) => call(service, 'POST', `/api/${projectId}${path}`, { headers: ada, body });
    const get = (path: string) => call(service, 'GET', `/api/${projectId}${path}`, { headers: ada });
    const status = async () => (await get('')).body.impulse as { created: boolean; configured: boolean; complete: boolean };
    const generate = (dspId: number) => run('/jobs/generate-features', { dspId, skipFeatureExplorer: true });
    const trainKeras = () => run('/jobs/train/keras/4', { trainingCycles: 2 });
    const trainAnomaly = () => run('/jobs/train/anomaly/5', { axes: [0, 1], clusterCount: 2, minimumConfidenceRating: 0.3 });
    const modelType = async (path: string) => {
      const res = await get(path);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return { hasTrainedModel: res.body.hasTrainedModel, recommendedModelType: res.body.recommendedModelType };
    };
    const run = async (path: string, body: unknown) => {
      const res = await post(path, body);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect((await jobFinished(service, get, Number(res.body.id), 60_000)).finishedSuccessful).toBe(true);
    };

    beforeAll(async () => {
      service = await startTestService({ mongo: setup.mongo });
      await call(service, 'POST', '/api-user-create', { body: signup() });
      ada = { 'x-jwt-token': await loginToken(service, 'ada') };
      const project = await call(service, 'POST', '/api/projects/create', { headers: ada, body: { projectName: 'Complete' } });
      projectId = Number(project.body.id);
      for (const [label, f] of [['idle', 1], ['wave', 9]] as const) await ingestSample(service, String(project.body.apiKey), { category: 'training', label, rows: rows(f), fileName: `${label}.json` });
    });
    afterAll(async () => {
      await service?.destroy();
    });

    it('is false until every DSP block is configured and has features for its current parameters, and false again after a change', async () => {
      expect(await status()).toMatchObject({ created: false, configured: false, complete: false });
      expect((await post('/impulse', impulse())).status).toBe(200);
      expect(await status()).toMatchObject({ created: true, configured: false, complete: false });

      // Features of an unconfigured block do not make the impulse complete.
      await generate(2);
      expect(await status()).toMatchObject({ configured: false, complete: false });
      expect((await post('/dsp/2', { config: { 'scale-axes': '1' } })).status).toBe(200);
      expect((await post('/dsp/3', { config: { 'fft-length': '32' } })).status).toBe(200);
      // Block 2 was saved with its default value: its features, made with the defaults, still count.
      expect(await status()).toMatchObject({ configured: true, complete: false });
      await generate(3);
      expect(await status()).toMatchObject({ configured: true, complete: true });

      // A parameter change makes it incomplete; generating that block again completes it.
      expect((await post('/dsp/2', { config: { 'scale-axes': '2' } })).status).toBe(200);
      expect((await status()).complete).toBe(false);
      await generate(2);
      expect((await status()).complete).toBe(true);

      // A change of the input block's window keeps the configs but not the features' validity.
      expect((await post('/impulse', impulse(1000))).status).toBe(200);
      expect(await status()).toMatchObject({ configured: true, complete: false });
      await generate(2);
      expect((await status()).complete).toBe(false);
      await generate(3);
      expect((await status()).complete).toBe(true);
      // Changing back is a change too: the features were made for 1000 ms windows.
      expect((await post('/impulse', impulse())).status).toBe(200);
      expect((await status()).complete).toBe(false);
      await generate(2);
      await generate(3);
      expect((await status()).complete).toBe(true);

      // Clearing a block drops its features.
      expect((await post('/dsp/3/clear', {})).status).toBe(200);
      expect(await status()).toMatchObject({ configured: false, complete: false });
    }, 120_000);

    it('also needs every learn block trained on the current features; regenerated features make it (and the model) stale until trained again', async () => {
      expect((await post('/dsp/3', { config: { 'fft-length': '32' } })).status).toBe(200);
      expect((await post('/impulse', impulse(500, [keras, anomaly]))).status).toBe(200);
      await generate(2);
      await generate(3);
      expect(await status()).toMatchObject({ configured: true, complete: false });
      expect(await modelType('/training/keras/4/metadata')).toEqual({ hasTrainedModel: false, recommendedModelType: 'float32' });

      // One learn block trained is not enough.
      await trainKeras();
      expect((await status()).complete).toBe(false);
      await trainAnomaly();
      expect((await status()).complete).toBe(true);
      expect(await modelType('/training/keras/4/metadata')).toEqual({ hasTrainedModel: true, recommendedModelType: 'float32' });
      expect(await modelType('/training/anomaly/5/metadata')).toEqual({ hasTrainedModel: true, recommendedModelType: 'float32' });

      // Regenerating block 2 (read by both) makes both models stale, though the features are the same values.
      await generate(2);
      expect((await status()).complete).toBe(false);
      expect(await modelType('/training/keras/4/metadata')).toEqual({ hasTrainedModel: true, recommendedModelType: 'requiresRetrain' });
      expect(await modelType('/training/anomaly/5/metadata')).toEqual({ hasTrainedModel: true, recommendedModelType: 'requiresRetrain' });
      await trainKeras();
      expect((await status()).complete).toBe(false);
      expect(await modelType('/training/keras/4/metadata')).toMatchObject({ recommendedModelType: 'float32' });
      await trainAnomaly();
      expect((await status()).complete).toBe(true);

      // Block 3 is read by the classifier only: the anomaly model stays current.
      await generate(3);
      expect((await status()).complete).toBe(false);
      expect(await modelType('/training/keras/4/metadata')).toMatchObject({ recommendedModelType: 'requiresRetrain' });
      expect(await modelType('/training/anomaly/5/metadata')).toMatchObject({ recommendedModelType: 'float32' });
      await trainKeras();
      expect((await status()).complete).toBe(true);

      // A parameter change makes the features, and so the models on them, stale before any regeneration.
      expect((await post('/dsp/2', { config: { 'scale-axes': '3' } })).status).toBe(200);
      expect((await status()).complete).toBe(false);
      expect(await modelType('/training/anomaly/5/metadata')).toMatchObject({ recommendedModelType: 'requiresRetrain' });
    }, 180_000);
  });
}

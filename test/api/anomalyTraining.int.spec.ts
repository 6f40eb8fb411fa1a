import { afterAll, beforeAll, expect, it } from 'vitest';
import { dspFeaturesStream, type DspFeaturesGenerated } from '../../domain/dsp/dspFeaturesEvents';
import { decodeNpy } from '../../domain/dsp/npy';
import { anomalyStream, type AnomalyEvent, type AnomalyModelTrained } from '../../domain/learn/anomalyEvents';
import { anomalyScore, type AnomalyModel } from '../../domain/learn/anomalyKmeans';
import { DspFeaturesQueries } from '../../projections/dspFeatures/dspFeaturesQueries';
import { classifierBlock, motionImpulse, motionRows, projectWithFeatures, type ProjectWithFeatures } from '../support/projectWithFeatures';
import { blobBytes, describeOn, setups } from '../support/testService';

// The motion impulse (100 Hz, windows of 500 ms every 250 ms: a 200-row sample gives 7 windows), its
// anomaly block first.
const impulse = {
  ...motionImpulse,
  learnBlocks: [
    { id: 3, type: 'anomaly', name: 'Anomaly detection', title: 'Anomaly Detection (K-means)', dsp: [2] },
    { ...classifierBlock, id: 4 },
  ],
};

for (const setup of setups) {
  describeOn(setup, 'the K-means anomaly block over HTTP: settings, the training job, metadata', () => {
    let p: ProjectWithFeatures;
    const post = (path: string, body: unknown) => p.post(path, body);
    const get = (path: string) => p.get(path);
    const jobCount = () => p.jobCount();
    const ingest = async (label: string, values: number[][], name: string) => {
      await p.ingestRows('training', label, values, `${name}.json`);
    };
    const finished = async (jobId: number) => ({ ...(await p.finished(jobId, 60_000)), stdout: await p.stdout(jobId) });
    const trained = async () => (await p.service.stores.events.readStream(anomalyStream(p.projectId, 3))).map((e) => e as unknown as AnomalyEvent).filter((e): e is AnomalyModelTrained => e.type === 'AnomalyModelTrained');
    const refused = async (path: string, body: unknown, status: number, error: RegExp) => {
      const res = body === undefined ? await get(path) : await post(path, body);
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expect(res.body.success).toBe(false);
      expect(String(res.body.error)).toMatch(error);
    };

    beforeAll(async () => {
      p = await projectWithFeatures({ mongo: setup.mongo, name: 'Anomalies', impulse });
    });
    afterAll(async () => {
      await p?.service.destroy();
    });

    it('answers 404 for a learn block that is not a K-means anomaly block of the impulse, on every route', async () => {
      for (const learnId of [4, 99]) {
        await refused(`/training/anomaly/${learnId}`, undefined, 404, new RegExp(`No K-means anomaly block ${learnId}`));
        await refused(`/training/anomaly/${learnId}/metadata`, undefined, 404, /No K-means anomaly block/);
        await refused(`/training/anomaly/${learnId}`, { minimumConfidenceRating: 1 }, 404, /No K-means anomaly block/);
        await refused(`/jobs/train/anomaly/${learnId}`, { axes: [0], minimumConfidenceRating: 0.3 }, 404, /No K-means anomaly block/);
      }
      await refused('/training/anomaly/x', undefined, 400, /learnId/);
    });

    it('keeps the minimum confidence rating as an event, refusing a bad value with a 400 naming the field', async () => {
      const before = await get('/training/anomaly/3');
      expect(before.status).toBe(200);
      expect(before.body).toMatchObject({ success: true, name: 'Anomaly detection', trained: false, clusterCount: 32, minimumConfidenceRating: 0.3, axes: [] });
      await refused('/training/anomaly/3', { minimumConfidenceRating: 'high' }, 400, /minimumConfidenceRating/);
      await refused('/training/anomaly/3', { minimumConfidenceRating: 1e9 }, 400, /minimumConfidenceRating/);
      await refused('/training/anomaly/3', {}, 400, /Nothing to change: give minimumConfidenceRating/);
      expect(await p.service.stores.events.readStream(anomalyStream(p.projectId, 3))).toHaveLength(0);
      const set = await post('/training/anomaly/3', { minimumConfidenceRating: 1.5 });
      expect(set.status, JSON.stringify(set.body)).toBe(200);
      const after = await get('/training/anomaly/3');
      expect(after.body).toMatchObject({ minimumConfidenceRating: 1.5, thresholds: [{ key: 'min_anomaly_score', value: 1.5 }] });
      const metadata = await get('/training/anomaly/3/metadata');
      expect(metadata.body).toMatchObject({ success: true, hasTrainedModel: false, clusters: [] });
    });

    it('refuses training without features with a 400 naming the block, and requests no job', async () => {
      await refused('/jobs/train/anomaly/3', { axes: [0], clusterCount: 2, minimumConfidenceRating: 0.3 }, 400, /No features for DSP block 2: run generate-features first/);
      await refused('/jobs/train/anomaly/3', { clusterCount: 2, minimumConfidenceRating: 0.3 }, 400, /axes/);
      expect(await jobCount()).toBe(0);
    });

    it('trains on the generated features in a job: progress lines, a model blob named by its event with the features, settings and seed, and metadata that serves it', async () => {
      await ingest('idle', motionRows('idle', 0), 'idle.1');
      await ingest('idle', motionRows('idle', 1), 'idle.2');
      await ingest('wave', motionRows('wave', 0), 'wave.1');
      const features = await post('/jobs/generate-features', { dspId: 2, skipFeatureExplorer: true });
      expect(features.status).toBe(200);
      expect((await finished(Number(features.body.id))).finishedSuccessful).toBe(true);
      const [generated] = (await p.service.stores.events.readStream(dspFeaturesStream(p.projectId, 2))).map((e) => e as unknown as DspFeaturesGenerated);
      const g = generated!.data;
      const jobsBefore = await jobCount();

      // What the job would fail on is a 400 now, and no job.
      await refused('/jobs/train/anomaly/3', { axes: [0, g.featureCount], clusterCount: 2, minimumConfidenceRating: 0.3 }, 400, new RegExp(`"axes\\[1\\]": axis ${g.featureCount} is beyond the ${g.featureCount} features`));
      await refused('/jobs/train/anomaly/3', { axes: [0, 0], clusterCount: 2, minimumConfidenceRating: 0.3 }, 400, /an axis is listed twice/);
      await refused('/jobs/train/anomaly/3', { axes: [0], clusterCount: 22, minimumConfidenceRating: 0.3 }, 400, /"clusterCount": 22 clusters need at least as many training windows; there are 21/);
      await refused('/jobs/train/anomaly/3', { axes: [0], clusterCount: 0, minimumConfidenceRating: 0.3 }, 400, /clusterCount/);
      expect(await jobCount()).toBe(jobsBefore);

      const axes = [0, 1, 2, 3];
      const res = await post('/jobs/train/anomaly/3', { axes, clusterCount: 3, minimumConfidenceRating: 0.25 });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const jobId = Number(res.body.id);
      const job = await finished(jobId);
      expect(job.finishedSuccessful, job.stdout).toBe(true);
      expect(job.stdout).toMatch(/DSP block 2: 21 training windows of \d+ features/);
      expect(job.stdout).toMatch(/Training K-means: 3 clusters on axes 0, 1, 2, 3, seed 1/);
      expect(job.stdout).toMatch(/K-means (converged|stopped) after \d+ iterations on 21 windows/);
      expect(job.stdout).toMatch(/Model stored \([0-9a-f]{64}\)/);

      const [first] = await trained();
      const d = first!.data;
      expect(d).toMatchObject({ projectId: p.projectId, learnId: 3, jobId, seed: 1, settings: { axes, clusterCount: 3, minimumConfidenceRating: 0.25 } });
      expect(d.features).toEqual([{ dspId: 2, x: g.categories.training.x, windowCount: 21, featureCount: g.featureCount, sourcePosition: g.sourcePosition, position: (await new DspFeaturesQueries(p.service.stores.readStore).current(p.projectId, 2))!._position }]);
      const model = JSON.parse((await blobBytes(p.service, d.model)).toString('utf8')) as AnomalyModel;
      expect(model.axes).toEqual(axes);
      expect(model.clusters).toHaveLength(d.clusterCount);

      // Every training window scores at or below 0 with the stored model; a far outlier above.
      const x = decodeNpy(await blobBytes(p.service, g.categories.training.x));
      for (let w = 0; w < 21; w++) expect(anomalyScore(model, x.data.subarray(w * g.featureCount, (w + 1) * g.featureCount))).toBeLessThanOrEqual(0);
      expect(anomalyScore(model, new Array<number>(g.featureCount).fill(1e4))).toBeGreaterThan(0);

      const metadata = await get('/training/anomaly/3/metadata');
      expect(metadata.status).toBe(200);
      expect(metadata.body).toMatchObject({ success: true, hasTrainedModel: true, axes, created: d.trained, mean: model.scaler.mean, scale: model.scaler.scale, defaultMinimumConfidenceRating: 0.25 });
      expect(metadata.body.clusters).toEqual(model.clusters.map((c) => ({ center: c.center, maxError: c.radius })));
      const settings = await get('/training/anomaly/3');
      expect(settings.body).toMatchObject({ trained: true, selectedAxes: axes, clusterCount: 3, minimumConfidenceRating: 0.25 });
      expect((settings.body.axes as unknown[]).length).toBe(g.featureCount);
    });

    it('gives the same model for the same seed and features: a rerun names the same content hash', async () => {
      const res = await post('/jobs/train/anomaly/3', { axes: [0, 1, 2, 3], clusterCount: 3, minimumConfidenceRating: 0.25 });
      const job = await finished(Number(res.body.id));
      expect(job.finishedSuccessful, job.stdout).toBe(true);
      const [first, second] = await trained();
      expect(second!.data.jobId).toBe(Number(res.body.id));
      expect(second!.data.model).toBe(first!.data.model);
    });
  });
}

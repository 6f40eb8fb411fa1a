import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { modelTestingStream, type ModelTested } from '../../domain/learn/modelTestingEvents';
import type { ModelTestingResults } from '../../domain/learn/modelTestingResults';
import { projectWithFeatures, trainBoth, withTrainingFeatures, type ProjectWithFeatures } from '../support/projectWithFeatures';
import { blobBytes, call, describeOn, setups } from '../support/testService';

type Prediction = { sampleId: number; startMs: number; endMs: number; label?: string; prediction: string; predictionCorrect?: boolean; anomalyScores?: number[][] };
type Accuracy = { totalSummary: { good: number; bad: number }; summaryPerClass: Record<string, { good: number; bad: number }>; confusionMatrixValues: Record<string, Record<string, number>>; allLabels: string[]; accuracyScore?: number; balancedAccuracyScore?: number };

for (const setup of setups) {
  describeOn(setup, 'model testing: the classify job over the testing set and its results', () => {
    let p: ProjectWithFeatures;
    const testing: number[] = [];
    const runs = async () => (await p.service.stores.events.readStream(modelTestingStream(p.projectId))).map((e) => e as unknown as ModelTested);
    const jobCount = async () => Number((await p.get('/jobs/all?limit=1000')).body.totalJobCount);

    beforeAll(async () => {
      p = await projectWithFeatures({ mongo: setup.mongo, name: 'Model testing' });
      testing.push(await p.ingest('testing', 'idle', 7), await p.ingest('testing', 'wave', 7), await p.ingest('testing', 'idle', 8));
      await withTrainingFeatures(p);
    }, 180_000);
    afterAll(async () => {
      await p?.service.destroy();
    });

    it('refuses to start while a learn block has no model (a 400 naming it, no job); answers no results before a run', async () => {
      const before = await jobCount();
      const res = await p.post('/jobs/classify', {});
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error).toBe('Learn block 3 ("Classifier") has no trained model: train it first');
      expect(await jobCount()).toBe(before);
      expect((await p.get('/classify/all/result')).status).toBe(404);
      expect((await p.get('/classify/all/metrics')).body).toEqual({ success: true, metrics: [] });
    });

    it('classifies every testing sample in a job, keeps the run as an event naming its results blob, and answers accuracy, confusion matrix and per-sample results', async () => {
      await trainBoth(p);
      const jobId = await p.runJob('/jobs/classify', {});
      expect(await p.stdout(jobId)).toMatch(/Classified 3\/3 samples \(21 windows\)/);
      const [run] = await runs();
      expect(run!.data).toMatchObject({ projectId: p.projectId, jobId, summary: { sampleCount: 3, skippedSampleCount: 0, windowCount: 21 } });
      const blob = JSON.parse((await blobBytes(p.service, run!.data.results)).toString('utf8')) as ModelTestingResults;
      expect(blob.samples.map((s) => s.sampleId)).toEqual(testing);

      const res = await p.get('/classify/all/result');
      expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(200);
      const result = res.body.result as { sampleId: number; sample: { id: number }; classifications: { learnBlock: { id: number }; result: Record<string, number>[] }[] }[];
      const predictions = res.body.predictions as Prediction[];
      const accuracy = res.body.accuracy as Accuracy;
      expect(result.map((r) => r.sampleId)).toEqual(testing);
      expect(result[1]!.sample.id).toBe(testing[1]);
      expect(predictions).toHaveLength(21);
      expect(accuracy.totalSummary.good + accuracy.totalSummary.bad).toBe(21);
      expect(accuracy.accuracyScore).toBeCloseTo(accuracy.totalSummary.good / 21, 12);
      expect(accuracy.accuracyScore).toBe(run!.data.summary.accuracy);
      expect(accuracy.totalSummary.good).toBe(predictions.filter((x) => x.predictionCorrect).length);
      expect(Object.values(accuracy.confusionMatrixValues).flatMap((row) => Object.values(row)).reduce((a, b) => a + b, 0)).toBe(21);
      expect(accuracy.allLabels).toEqual(['idle', 'wave', 'uncertain', 'anomaly']);
      // Well-separated classes: most windows right.
      expect(accuracy.accuracyScore).toBeGreaterThan(0.8);
      expect(res.body.availableVariants).toEqual(['float32']);

      // The job classified each sample as GET classify/{sampleId} does.
      const one = await p.get(`/classify/${testing[1]}`);
      expect(result[1]!.classifications).toEqual(one.body.classifications);
      const kerasScores = (one.body.classifications as { result: Record<string, number>[] }[])[0]!.result;
      const waveWindows = predictions.filter((x) => x.sampleId === testing[1]);
      waveWindows.forEach((x, i) => {
        const top = kerasScores[i]!.wave! >= kerasScores[i]!.idle! ? 'wave' : 'idle';
        if (x.prediction !== 'anomaly' && x.prediction !== 'uncertain') expect(x.prediction).toBe(top);
        expect(x.label).toBe('wave');
      });

      const page = await p.get('/classify/all/result/page?offset=1&limit=1');
      expect(page.status).toBe(200);
      expect(page.body.totalCount).toBe(3);
      expect((page.body.result as { sampleId: number }[]).map((r) => r.sampleId)).toEqual([testing[1]]);
      expect((page.body.predictions as Prediction[]).every((x) => x.sampleId === testing[1])).toBe(true);
      expect(page.body.predictions).toHaveLength(7);
      expect((await p.get('/classify/all/result/page?limit=0')).status).toBe(400);
      expect((await p.get('/classify/all/result/page?offset=-1')).status).toBe(400);
      expect((await p.get('/classify/all/result?variant=int8')).status).toBe(400);

      expect((await p.get('/classify/all/metrics')).body).toEqual({ success: true, metrics: [{ variant: 'float32', accuracy: accuracy.accuracyScore }] });
    }, 180_000);

    it('leaves a deleted testing sample out of the answers', async () => {
      const del = await call(p.service, 'DELETE', `/api/${p.projectId}/raw-data/${testing[2]}`, { headers: p.ada });
      expect(del.status, JSON.stringify(del.body)).toBe(200);
      const res = await p.get('/classify/all/result');
      expect((res.body.result as { sampleId: number }[]).map((r) => r.sampleId)).toEqual(testing.slice(0, 2));
      expect(res.body.predictions).toHaveLength(14);
      expect((await p.get('/classify/all/result/page')).body.totalCount).toBe(2);
    });

    it('skips a testing sample whose file is lost, naming it, and scores the others', async () => {
      const lost = await p.ingest('testing', 'wave', 30);
      const sha = ((await p.get(`/raw-data/${lost}`)).body.sample as { sha256Hash: string }).sha256Hash;
      expect(await p.service.stores.blobs.delete(sha)).toBe(true);
      const jobId = await p.runJob('/jobs/classify', {});
      expect(await p.stdout(jobId)).toMatch(new RegExp(`Skipped Sample ${lost} \\("wave\\.testing\\.30[^"]*"\\): its file is missing from the blob store`));
      const last = (await runs()).at(-1)!;
      expect(last.data.summary).toMatchObject({ sampleCount: 2, skippedSampleCount: 1, windowCount: 14 });
      const deleted = await call(p.service, 'DELETE', `/api/${p.projectId}/raw-data/${lost}`, { headers: p.ada });
      expect(deleted.status).toBe(200);
    }, 120_000);

    it('cancel stops the job between samples and records no run', async () => {
      // Three long samples (about 4,000 windows each) keep the job busy long enough to cancel it.
      for (const seed of [20, 21, 22]) await p.ingest('testing', 'wave', seed, 100_000);
      const before = (await runs()).length;
      const res = await p.post('/jobs/classify', {});
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const jobId = Number(res.body.id);
      const end = Date.now() + 60_000;
      while (!/Classified 1\//.test(await p.stdout(jobId))) {
        if (Date.now() > end) throw new Error('no progress line');
        await sleep(50);
      }
      expect((await p.post(`/jobs/${jobId}/cancel`)).status).toBe(200);
      const job = await p.finished(jobId);
      expect(job.finishedSuccessful).toBe(false);
      expect(await runs()).toHaveLength(before);
    }, 120_000);
  });
}

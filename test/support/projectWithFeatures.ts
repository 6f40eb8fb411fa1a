// A project whose impulse is ready to classify: accX/accY at 100 Hz, windows of 500 ms every 250 ms
// (a 200-row sample gives 7 windows), spectral features, a keras classifier (learn block 3) and a
// K-means anomaly block (4); `idle` a slow sine, `wave` a fast one. The setup of
// test/api/kerasTraining.int.spec.ts, as helpers, plus testing samples and training both blocks.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import { readModelsCaughtUp } from './readModels';
import { signedSample } from './signedSample';
import { adaWithProject, call, startTestService, type TestService } from './testService';

export const motionImpulse = {
  name: 'Motion',
  inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY'], windowSizeMs: 500, windowIncreaseMs: 250, frequencyHz: 100 }],
  dspBlocks: [{ id: 2, type: 'spectral-analysis', name: 'Spectral features', title: 'Spectral Analysis', axes: ['accX', 'accY'], input: 1, implementationVersion: 4 }],
  learnBlocks: [
    { id: 3, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [2] },
    { id: 4, type: 'anomaly', name: 'Anomaly detection', title: 'Anomaly detection (K-means)', dsp: [2] },
  ],
};

/** `idle` a slow sine, `wave` a fast one, each with its own phase: rows of [accX, accY]. */
export const motionRows = (label: string, seed: number, n = 200): number[][] =>
  Array.from({ length: n }, (_, i) => {
    const f = label === 'idle' ? 1 : 9;
    return [Math.round(1000 * Math.sin((2 * Math.PI * f * i) / 100 + seed)) / 100, Math.round(1000 * Math.cos((2 * Math.PI * f * i) / 100 + seed)) / 200];
  });

export interface ProjectWithFeatures {
  service: TestService;
  ada: Record<string, string>;
  projectId: number;
  apiKey: string;
  post(path: string, body?: unknown): ReturnType<typeof call>;
  get(path: string): ReturnType<typeof call>;
  /** Ingests a sample into `category`; its id. */
  ingest(category: 'training' | 'testing', label: string, seed: number, n?: number): Promise<number>;
  /** Waits for a job to finish and the read models to catch up; its status. */
  finished(jobId: number, timeoutMs?: number): Promise<{ finishedSuccessful?: boolean }>;
  stdout(jobId: number): Promise<string>;
  /** Runs a job (POST path) to success. */
  runJob(path: string, body?: unknown): Promise<number>;
}

export async function projectWithFeatures(options: { mongo: boolean; name?: string }): Promise<ProjectWithFeatures> {
  const service = await startTestService({ mongo: options.mongo });
  const { ada, projectId, apiKey } = await adaWithProject(service, options.name ?? 'Classify');
  const post = (path: string, body: unknown = {}) => call(service, 'POST', `/api/${projectId}${path}`, { headers: ada, body });
  const get = (path: string) => call(service, 'GET', `/api/${projectId}${path}`, { headers: ada });
  const ingest = async (category: 'training' | 'testing', label: string, seed: number, n?: number) => {
    const fileName = `${label}.${category}.${seed}.json`;
    const res = await fetch(`${service.ingestionUrl}/api/${category}/data`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': fileName, 'x-label': label },
      body: signedSample('none', motionRows(label, seed, n), { alg: 'none' }),
    });
    expect(res.status, await res.text()).toBe(200);
    await readModelsCaughtUp(service);
    const list = await get(`/raw-data?category=${category}&limit=1000`);
    const found = (list.body.samples as { id: number; filename: string }[]).find((s) => s.filename.startsWith(`${label}.${category}.${seed}`));
    if (!found) throw new Error(`sample ${fileName} not listed`);
    return found.id;
  };
  const finished = async (jobId: number, timeoutMs = 120_000) => {
    const end = Date.now() + timeoutMs;
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
  const runJob = async (path: string, body: unknown = {}) => {
    const res = await post(path, body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const jobId = Number(res.body.id);
    const job = await finished(jobId);
    expect(job.finishedSuccessful, await stdout(jobId)).toBe(true);
    return jobId;
  };
  expect((await post('/impulse', motionImpulse)).status).toBe(200);
  return { service, ada, projectId, apiKey, post, get, ingest, finished, stdout, runJob };
}

/** Two training samples of each class, features generated: ready to train. */
export async function withTrainingFeatures(p: ProjectWithFeatures): Promise<void> {
  for (const label of ['idle', 'wave']) for (const seed of [0, 1]) await p.ingest('training', label, seed);
  await p.runJob('/jobs/generate-features', { dspId: 2, skipFeatureExplorer: true });
}

/** Trains the keras block (3) and the anomaly block (4) on the current features. */
export async function trainBoth(p: ProjectWithFeatures): Promise<void> {
  await p.runJob('/jobs/train/keras/3', { trainingCycles: 30, learningRate: 0.01 });
  await p.runJob('/jobs/train/anomaly/4', { axes: [0, 1, 2], clusterCount: 2, minimumConfidenceRating: 0.3 });
}

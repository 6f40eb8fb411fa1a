// A project whose impulse is ready to generate features and train: by default accX/accY at 100 Hz,
// windows of 500 ms every 250 ms (a 200-row sample gives 7 windows), spectral features, a keras
// classifier (learn block 3) and a K-means anomaly block (4); `idle` a slow sine, `wave` a fast one.
// Options choose another impulse (or none yet); samples of any rows, in either category, are ingested
// through the ingestion API and awaited in the read models. `sdkProject` is the same start for the
// tests that drive the service through the official SDK.
import { EdgeImpulseApi } from 'edge-impulse-api';
import { afterAll, beforeAll, expect } from 'vitest';
import { jobFinished } from './jobStatus';
import { readModelsCaughtUp } from './readModels';
import { signedSample } from './signedSample';
import { adaWithProject, call, startTestService, type TestService } from './testService';
import { waveRows } from './waveSamples';

export const motionInputBlock = { id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY'], windowSizeMs: 500, windowIncreaseMs: 250, frequencyHz: 100 };
export const spectralBlock = { id: 2, type: 'spectral-analysis', name: 'Spectral features', title: 'Spectral Analysis', axes: ['accX', 'accY'], input: 1, implementationVersion: 4 };
export const classifierBlock = { id: 3, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [2] };

export const motionImpulse = {
  name: 'Motion',
  inputBlocks: [motionInputBlock],
  dspBlocks: [spectralBlock],
  learnBlocks: [classifierBlock, { id: 4, type: 'anomaly', name: 'Anomaly detection', title: 'Anomaly detection (K-means)', dsp: [2] }],
};

/** `idle` a slow sine, `wave` a fast one, each with its own phase: rows of [accX, accY]. */
export const motionRows = (label: string, seed: number, n = 200): number[][] => waveRows(n, label === 'idle' ? 1 : 9, seed);

/** `n` unrounded rows of [sin, cos / 2] of frequency `f` (cycles per 100 rows), phase `phase`. */
export const sineRows = (f: number, n: number, phase = 0): number[][] =>
  Array.from({ length: n }, (_, i) => [Math.sin((2 * Math.PI * f * i) / 100 + phase), Math.cos((2 * Math.PI * f * i) / 100 + phase) / 2]);

/** Posts `rows` as a JSON sample to the ingestion API and waits until the read models hold it. */
export async function ingestSample(
  service: Pick<TestService, 'ingestionUrl' | 'stores' | 'readModels'>,
  apiKey: string,
  sample: { category: 'training' | 'testing'; label: string; rows: number[][]; fileName: string },
): Promise<void> {
  const res = await fetch(`${service.ingestionUrl}/api/${sample.category}/data`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': sample.fileName, 'x-label': sample.label },
    body: signedSample('none', sample.rows, { alg: 'none' }),
  });
  expect(res.status, await res.text()).toBe(200);
  // Ingestion answers on durability: jobs and views read the sample read model.
  await readModelsCaughtUp(service);
}

export interface ProjectWithFeatures {
  service: TestService;
  ada: Record<string, string>;
  projectId: number;
  apiKey: string;
  post(path: string, body?: unknown): ReturnType<typeof call>;
  get(path: string): ReturnType<typeof call>;
  /** Ingests a motion sample (motionRows) into `category`; its id. */
  ingest(category: 'training' | 'testing', label: string, seed: number, n?: number): Promise<number>;
  /** Ingests `rows` as the sample `fileName` into `category`; its id. */
  ingestRows(category: 'training' | 'testing', label: string, rows: number[][], fileName: string): Promise<number>;
  /** Waits for a job to finish and the read models to catch up; its status. */
  finished(jobId: number, timeoutMs?: number): Promise<{ finishedSuccessful?: boolean }>;
  stdout(jobId: number): Promise<string>;
  /** Runs a job (POST path) to success. */
  runJob(path: string, body?: unknown): Promise<number>;
  /** The project's job count. */
  jobCount(): Promise<number>;
}

/**
 * Starts a service with ada and her project `name`, and saves `impulse` (motionImpulse unless given;
 * null saves none).
 */
export async function projectWithFeatures(options: { mongo: boolean; name?: string; impulse?: object | null }): Promise<ProjectWithFeatures> {
  const service = await startTestService({ mongo: options.mongo });
  const { ada, projectId, apiKey } = await adaWithProject(service, options.name ?? 'Classify');
  const post = (path: string, body: unknown = {}) => call(service, 'POST', `/api/${projectId}${path}`, { headers: ada, body });
  const get = (path: string) => call(service, 'GET', `/api/${projectId}${path}`, { headers: ada });
  const ingestRows = async (category: 'training' | 'testing', label: string, rows: number[][], fileName: string) => {
    await ingestSample(service, apiKey, { category, label, rows, fileName });
    const list = await get(`/raw-data?category=${category}&limit=1000`);
    const ids = (list.body.samples as { id: number; filename: string }[]).filter((s) => s.filename === fileName).map((s) => s.id);
    if (ids.length === 0) throw new Error(`sample ${fileName} not listed`);
    return Math.max(...ids);
  };
  const ingest = (category: 'training' | 'testing', label: string, seed: number, n?: number) => ingestRows(category, label, motionRows(label, seed, n), `${label}.${category}.${seed}.json`);
  const finished = (jobId: number, timeoutMs?: number) => jobFinished(service, get, jobId, timeoutMs);
  const stdout = async (jobId: number) => ((await get(`/jobs/${jobId}/stdout`)).body.stdout as { data: string }[]).map((l) => l.data).join('');
  const runJob = async (path: string, body: unknown = {}) => {
    const res = await post(path, body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const jobId = Number(res.body.id);
    const job = await finished(jobId);
    expect(job.finishedSuccessful, await stdout(jobId)).toBe(true);
    return jobId;
  };
  const jobCount = async () => Number((await get('/jobs/all?limit=1000')).body.totalJobCount);
  const impulse = options.impulse === undefined ? motionImpulse : options.impulse;
  if (impulse) expect((await post('/impulse', impulse)).status).toBe(200);
  return { service, ada, projectId, apiKey, post, get, ingest, ingestRows, finished, stdout, runJob, jobCount };
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

export interface SdkProject {
  service: TestService;
  api: EdgeImpulseApi;
  projectId: number;
  apiKey: string;
  /** Ingests `rows` as `${label}.json` into `category`. */
  ingest(category: 'training' | 'testing', label: string, rows: number[][]): Promise<void>;
}

/** Starts a service (embedded stores, plus `env`) and, through the official SDK, signs ada up and creates her project `projectName`. */
export async function sdkProject(projectName: string, options: { env?: Record<string, string> } = {}): Promise<SdkProject> {
  const service = await startTestService({ mongo: false, env: options.env });
  const api = new EdgeImpulseApi({ endpoint: service.apiUrl });
  await api.user.createUser({ name: 'Ada Lovelace', username: 'ada', email: 'ada@example.com', password: 'correct horse battery', privacyPolicy: true, turnstileResponse: 'ok' });
  await api.authenticate({ method: 'jwtToken', jwtToken: (await api.login.login({ username: 'ada', password: 'correct horse battery' })).token! });
  const { id: projectId, apiKey } = await api.projects.createProject({ projectName });
  const ingest = (category: 'training' | 'testing', label: string, rows: number[][]) => ingestSample(service, apiKey, { category, label, rows, fileName: `${label}.json` });
  return { service, api, projectId, apiKey, ingest };
}

/** sdkProject for the enclosing describe: started before its tests, destroyed after them; the getter answers it. */
export function sdkProjectForSuite(projectName: string): () => SdkProject {
  let project: SdkProject | undefined;
  beforeAll(async () => {
    project = await sdkProject(projectName);
  });
  afterAll(async () => {
    await project?.service.destroy();
  });
  return () => {
    if (!project) throw new Error(`the project ${projectName} did not start`);
    return project;
  };
}

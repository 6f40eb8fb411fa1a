import { EdgeImpulseApi } from 'edge-impulse-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { motionImpulse, motionRows } from '../support/projectWithFeatures';
import { readModelsCaughtUp } from '../support/readModels';
import { signedSample } from '../support/signedSample';
import { startTestService, type TestService } from '../support/testService';

// The official SDK, unmodified: classify a stored sample (ClassifyApi.classifySample and
// classifySampleV2), then model testing (JobsApi.startClassifyJob followed with
// runJobUntilCompletion, getClassifyJobResult, getClassifyJobResultPage, getClassifyMetricsAllVariants).
describe('classification and model testing through the official SDK', () => {
  let service: TestService;
  let api: EdgeImpulseApi;
  let projectId: number;
  let apiKey: string;

  const ingest = async (category: 'training' | 'testing', label: string, seed: number) => {
    const res = await fetch(`${service.ingestionUrl}/api/${category}/data`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': `${label}.${seed}.json`, 'x-label': label },
      body: signedSample('none', motionRows(label, seed), { alg: 'none' }),
    });
    expect(res.status).toBe(200);
    await readModelsCaughtUp(service);
  };
  const run = async (jobId: number) => {
    await api.runJobUntilCompletion({ type: 'project', projectId, jobId }, () => undefined);
    await readModelsCaughtUp(service);
  };

  beforeAll(async () => {
    service = await startTestService({ mongo: false });
    api = new EdgeImpulseApi({ endpoint: service.apiUrl });
    await api.user.createUser({ name: 'Ada Lovelace', username: 'ada', email: 'ada@example.com', password: 'correct horse battery', privacyPolicy: true, turnstileResponse: 'ok' });
    await api.authenticate({ method: 'jwtToken', jwtToken: (await api.login.login({ username: 'ada', password: 'correct horse battery' })).token! });
    const created = await api.projects.createProject({ projectName: 'Classify through the SDK' });
    projectId = created.id;
    apiKey = created.apiKey;
    await api.impulse.createImpulse(projectId, motionImpulse as Parameters<typeof api.impulse.createImpulse>[1]);
    for (const label of ['idle', 'wave']) {
      for (const seed of [0, 1]) await ingest('training', label, seed);
      await ingest('testing', label, 5);
    }
    await run((await api.jobs.generateFeaturesJob(projectId, { dspId: 2, skipFeatureExplorer: true })).id);
    await run((await api.jobs.trainKerasJob(projectId, 3, { trainingCycles: 30, learningRate: 0.01 })).id);
    await run((await api.jobs.trainAnomalyJob(projectId, 4, { axes: [0, 1, 2], clusterCount: 2, minimumConfidenceRating: 0.3 })).id);
  }, 180_000);
  afterAll(async () => {
    await service?.destroy();
  });

  it('classifies a testing sample, window by window, with classifySample and classifySampleV2', async () => {
    const { samples } = await api.rawData.listSamples(projectId, { category: 'testing' });
    const wave = samples.find((s) => s.label === 'wave')!;
    const answer = await api.classify.classifySample(projectId, wave.id);
    expect(answer.success).toBe(true);
    expect(answer.windowSizeMs).toBe(500);
    expect(answer.sample.sample.id).toBe(wave.id);
    const [keras, anomaly] = answer.classifications;
    expect(keras!.learnBlock.id).toBe(3);
    expect(keras!.result).toHaveLength(7);
    expect(keras!.result.filter((r) => r.wave! > r.idle!).length).toBeGreaterThanOrEqual(6);
    expect(anomaly!.learnBlock.type).toBe('anomaly');
    expect(anomaly!.result.every((r) => Number.isFinite(r.anomaly))).toBe(true);
    const v2 = await api.classify.classifySampleV2(projectId, wave.id);
    expect('classifications' in v2 && v2.classifications[0]!.result).toEqual(keras!.result);
  });

  it('runs model testing as a job and reads its results, a page of them and the metrics', async () => {
    const { id } = await api.jobs.startClassifyJob(projectId, {});
    const lines: string[] = [];
    await api.runJobUntilCompletion({ type: 'project', projectId, jobId: id }, (line) => lines.push(line));
    expect(lines.join('')).toMatch(/Classified 2\/2 samples \(14 windows\)/);
    await readModelsCaughtUp(service);
    const result = await api.classify.getClassifyJobResult(projectId);
    expect(result.result).toHaveLength(2);
    expect(result.result[0]!.sample.created).toBeInstanceOf(Date);
    expect(result.predictions).toHaveLength(14);
    const { good, bad } = result.accuracy.totalSummary;
    expect(good + bad).toBe(14);
    expect(result.accuracy.accuracyScore).toBeCloseTo(good / 14, 12);
    expect(result.accuracy.accuracyScore).toBeGreaterThan(0.5);
    const page = await api.classify.getClassifyJobResultPage(projectId, { offset: 1, limit: 5 });
    expect(page.totalCount).toBe(2);
    expect(page.result.map((r) => r.sampleId)).toEqual([result.result[1]!.sampleId]);
    const metrics = await api.classify.getClassifyMetricsAllVariants(projectId);
    expect(metrics.metrics).toEqual([{ variant: 'float32', accuracy: result.accuracy.accuracyScore }]);
  });
});

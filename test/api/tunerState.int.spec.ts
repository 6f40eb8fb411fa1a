import type { OptimizeStateResponse } from 'edge-impulse-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_OPTIMIZE_SETTINGS, type OptimizeSettings } from '../../domain/optimize/optimizeConfig';
import type { TrialImpulse } from '../../domain/optimize/searchSpace';
import { tunerRunStream, type TunerRunEvent } from '../../domain/optimize/tunerRunEvents';
import { registerUser, routeSpec, type RouteSpec } from '../support/routeSpec';
import type { Wire } from '../support/sdkWire';

/**
 * The tuner state routes (OptimizationApi.getState, getTunerRunState) given runs in the log as a
 * coordinator and its trials record them: each answer is compared whole with an expected answer
 * typed as the SDK's OptimizeStateResponse, so a required field missing or mistyped fails tsc, and
 * anything else in the answer fails the comparison.
 */
describe('the tuner state over the management API', () => {
  let spec: RouteSpec;
  let ada: { token: string };
  let mallory: { token: string };
  let projectId: number;
  let emptyProjectId: number;
  let otherProjectId: number;
  let strangerProjectId: number;
  const at = '2026-11-27T10:00:00.000Z';
  const config: OptimizeSettings = { ...DEFAULT_OPTIMIZE_SETTINGS, targetDevice: { name: 'cortex-m4f-80mhz', ram: 65536, rom: 262144 }, targetLatency: 50, tuningMaxTrials: 5, tuningWorkers: 2 };
  const space = [{ inputBlocks: [{ type: 'time-series' as const, windows: [{ windowSizeMs: 1000, windowIncreaseMs: 250 }] }], dspBlocks: [{ type: 'spectral-analysis', parameters: [{ name: 'fft-length', values: ['16', '64'] }] }], learnBlocks: [{ blocks: [{ type: 'keras' as const, denseStacks: [{ neurons: [20, 10] }, { neurons: [40] }], learningRates: [0.005], trainingCycles: [10], batchSizes: [32] }] }] }];
  const impulse = (fft: string, neurons: number[]): TrialImpulse => ({ window: { windowSizeMs: 1000, windowIncreaseMs: 250 }, dsp: { type: 'spectral-analysis', config: { 'fft-length': fft } }, learn: { type: 'keras', denseLayers: neurons, learningRate: 0.005, trainingCycles: 10, batchSize: 32 } });
  const run = (project: number, coordinatorJobId: number) => ({ projectId: project, coordinatorJobId });
  const started = (project: number, coordinatorJobId: number, index: number, extendedFromJobId: number | null = null): TunerRunEvent => ({
    type: 'TunerRunStarted',
    data: { ...run(project, coordinatorJobId), index, name: `Run ${index}`, config, space, seed: coordinatorJobId, extendedFromJobId, started: at },
  });
  const planned = (project: number, coordinatorJobId: number, trial: number, i: TrialImpulse): TunerRunEvent => ({ type: 'TunerTrialPlanned', data: { ...run(project, coordinatorJobId), trial, impulse: i, round: null, planned: at } });
  const trialStarted = (project: number, coordinatorJobId: number, trial: number, jobId: number, attempt = 1): TunerRunEvent => ({ type: 'TunerTrialStarted', data: { ...run(project, coordinatorJobId), trial, jobId, attempt, started: at } });
  const asUser = (token: string, method: string, pathname: string) => spec.request(method, pathname, { headers: { 'x-jwt-token': token } });

  /** The answer for a project without a run: its config, nothing running, the first run next. */
  const noRun: Wire<OptimizeStateResponse> = {
    success: true,
    config: { targetLatency: 100, targetDevice: { name: 'cortex-m4f-80mhz', ram: 131072, rom: 1048576 }, trainingCycles: 30, tuningMaxTrials: 30, tuningWorkers: 3, tuningAlgorithm: 'random', space: [] },
    status: { numPendingTrials: 0, numRunningTrials: 0, numCompletedTrials: 0, numFailedTrials: 0, numReadyWorkers: 0, numBusyWorkers: 0, numPendingWorkers: 0, status: 'ready' },
    tuningAlgorithm: 'random',
    tunerJobIsRunning: false,
    trials: [],
    projectDataType: 'other',
    workers: [],
    nextRunIndex: 1,
    canExtendSearch: false,
    isWhitelabel: false,
    totalTrainingTimeExceeded: false,
  };

  beforeAll(async () => {
    spec = await routeSpec();
    await registerUser(spec, 'staffer');
    ada = await registerUser(spec, 'ada');
    mallory = await registerUser(spec, 'mallory');
    const create = async (token: string, projectName: string) => Number((await spec.request('POST', '/api/projects/create', { headers: { 'x-jwt-token': token }, body: { projectName } })).body.id);
    projectId = await create(ada.token, 'Tuned');
    emptyProjectId = await create(ada.token, 'Untuned');
    otherProjectId = await create(ada.token, 'Other');
    strangerProjectId = await create(mallory.token, 'Mallory');
    // Run 1 (job 40) ended; run 2 (job 50) is running: one trial within budget, one over, one failed on its second attempt, one training, one pending.
    await spec.given(tunerRunStream(projectId, 40), [started(projectId, 40, 1), { type: 'TunerRunEnded', data: { ...run(projectId, 40), status: 'completed', error: null, ended: at } }]);
    await spec.given(tunerRunStream(projectId, 50), [
      started(projectId, 50, 2, 40),
      planned(projectId, 50, 0, impulse('16', [20, 10])),
      planned(projectId, 50, 1, impulse('64', [40])),
      planned(projectId, 50, 2, impulse('16', [40])),
      planned(projectId, 50, 3, impulse('64', [20, 10])),
      planned(projectId, 50, 4, impulse('64', [])),
      trialStarted(projectId, 50, 0, 51),
      trialStarted(projectId, 50, 1, 52),
      trialStarted(projectId, 50, 2, 53),
      trialStarted(projectId, 50, 2, 55, 2),
      trialStarted(projectId, 50, 3, 54),
      { type: 'TunerTrialFinished', data: { ...run(projectId, 50), trial: 0, status: 'completed', accuracy: 0.9, loss: 0.25, estimates: { latencyMs: 3, ramBytes: 4096, romBytes: 32768 }, overBudget: false, error: null, finished: at } },
      { type: 'TunerTrialFinished', data: { ...run(projectId, 50), trial: 1, status: 'completed', accuracy: 0.95, loss: 0.125, estimates: { latencyMs: 60, ramBytes: 70000, romBytes: 32768 }, overBudget: true, error: null, finished: at } },
      { type: 'TunerTrialFinished', data: { ...run(projectId, 50), trial: 2, status: 'failed', accuracy: null, loss: null, estimates: null, overBudget: false, error: 'The worker was lost twice', finished: at } },
    ]);
    await spec.given(tunerRunStream(otherProjectId, 60), [started(otherProjectId, 60, 1)]);
  });
  afterAll(async () => {
    await spec?.close();
  });

  it('answers the saved config and no trials for a project without a run', async () => {
    const res = await asUser(ada.token, 'GET', `/api/${emptyProjectId}/optimize/state`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual(noRun);
  });

  it("answers the latest run's state: counts, each trial's impulse, status, metrics, estimates and budget", async () => {
    const res = await asUser(ada.token, 'GET', `/api/${projectId}/optimize/state`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const block = (id: number, type: 'input' | 'dsp' | 'learn', status: 'pending' | 'running' | 'completed' | 'failed', retries = 0) => ({ id, type, status, retries });
    const trialImpulse = (fft: string, dimension: number[], metrics?: { loss: number; accuracy: number }) => ({
      inputBlocks: [{ type: 'time-series', windowSizeMs: 1000, windowIncreaseMs: 250 }],
      dspBlocks: [{ type: 'spectral-analysis', 'fft-length': fft }],
      learnBlocks: [{ type: 'keras', dimension, learningRate: 0.005, trainingCycles: 10, batchSize: 32, ...(metrics ? { metadata: { modelValidationMetrics: [{ type: 'float32', ...metrics }] } } : {}) }],
    });
    const expected: Wire<OptimizeStateResponse> = {
      success: true,
      config: { name: 'Run 2', targetLatency: 50, targetDevice: { name: 'cortex-m4f-80mhz', ram: 65536, rom: 262144 }, trainingCycles: 30, tuningMaxTrials: 5, tuningWorkers: 2, tuningAlgorithm: 'random', space: [{ inputBlocks: [{ type: 'time-series', window: [{ windowSizeMs: 1000, windowIncreaseMs: 250 }] }], dspBlocks: [{ type: 'spectral-analysis', 'fft-length': ['16', '64'] }], learnBlocks: [[{ type: 'keras', dimension: [[20, 10], [40]], learningRate: [0.005], trainingCycles: [10], batchSize: [32] }]] }] },
      status: { numPendingTrials: 1, numRunningTrials: 1, numCompletedTrials: 2, numFailedTrials: 1, numReadyWorkers: 0, numBusyWorkers: 1, numPendingWorkers: 0, status: 'running' },
      tunerJobId: 50,
      tunerCoordinatorJobId: 50,
      continuationJobId: 40,
      tuningAlgorithm: 'random',
      tunerJobIsRunning: true,
      trials: [
        {
          id: '50-0', name: 'Trial 1: spectral-analysis, 1000 ms window, dense 20-10', status: 'completed', retries: 0, learnJobId: 51,
          blocks: [block(1, 'input', 'completed'), block(2, 'dsp', 'completed'), block(3, 'learn', 'completed')],
          impulse: trialImpulse('16', [20, 10], { loss: 0.25, accuracy: 0.9 }),
          devicePerformance: { 'cortex-m4f-80mhz': { latencyMs: 3, ramBytes: 4096, romBytes: 32768, overBudget: false, overBudgetReasons: [] } },
        },
        {
          id: '50-1', name: 'Trial 2: spectral-analysis, 1000 ms window, dense 40', status: 'completed', retries: 0, learnJobId: 52,
          blocks: [block(1, 'input', 'completed'), block(2, 'dsp', 'completed'), block(3, 'learn', 'completed')],
          impulse: trialImpulse('64', [40], { loss: 0.125, accuracy: 0.95 }),
          devicePerformance: { 'cortex-m4f-80mhz': { latencyMs: 60, ramBytes: 70000, romBytes: 32768, overBudget: true, overBudgetReasons: ['RAM 70000 bytes > 65536', 'latency 60 ms > 50 ms'] } },
        },
        {
          id: '50-2', name: 'Trial 3: spectral-analysis, 1000 ms window, dense 40', status: 'failed', retries: 1, learnJobId: 55,
          blocks: [block(1, 'input', 'completed', 1), block(2, 'dsp', 'failed', 1), block(3, 'learn', 'pending', 1)],
          impulse: trialImpulse('16', [40]),
        },
        {
          id: '50-3', name: 'Trial 4: spectral-analysis, 1000 ms window, dense 20-10', status: 'running', retries: 0, learnJobId: 54,
          blocks: [block(1, 'input', 'completed'), block(2, 'dsp', 'running'), block(3, 'learn', 'pending')],
          impulse: trialImpulse('64', [20, 10]),
        },
        {
          id: '50-4', name: 'Trial 5: spectral-analysis, 1000 ms window, no dense layers', status: 'pending', retries: 0,
          blocks: [block(1, 'input', 'pending'), block(2, 'dsp', 'pending'), block(3, 'learn', 'pending')],
          impulse: trialImpulse('64', []),
        },
      ],
      projectDataType: 'motion',
      workers: [{ workerId: 'job-54', status: 'busy' }],
      nextRunIndex: 3,
      canExtendSearch: false,
      isWhitelabel: false,
      totalTrainingTimeExceeded: false,
    };
    expect(res.body).toEqual(expected);
    expect((await asUser(ada.token, 'GET', `/api/${projectId}/optimize/50/state`)).body).toEqual(expected);
  });

  it('answers an ended run by its coordinator job: completed, not running, extendable while its space has untried impulses', async () => {
    const res = await asUser(ada.token, 'GET', `/api/${projectId}/optimize/40/state`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ tunerCoordinatorJobId: 40, tunerJobIsRunning: false, trials: [], status: { status: 'completed' }, nextRunIndex: 3, canExtendSearch: true, config: { name: 'Run 1' } });
    expect(res.body).not.toHaveProperty('continuationJobId');
    expect(res.body).not.toHaveProperty('jobError');
  });

  it('answers 404 for a run of another project, a run that does not exist, and 400 for an id that is not one', async () => {
    for (const id of ['60', '99', '0']) {
      const res = await asUser(ada.token, 'GET', `/api/${projectId}/optimize/${id}/state`);
      expect(res.status, id).toBe(404);
      expect(String(res.body.error)).toBe(`No tuner run ${id} in this project`);
    }
    for (const id of ['-1', '1e3', '50.0', '%2e%2e', 'state', '9'.repeat(40), "50'%20OR%201=1"]) {
      const res = await asUser(ada.token, 'GET', `/api/${projectId}/optimize/${id}/state`);
      expect(res.status, id).toBe(400);
      expect(String(res.body.error)).toMatch(/Invalid path parameter "tunerCoordinatorJobId": expected an integer/);
    }
  });

  it("refuses another user's project, answering nothing of its runs", async () => {
    for (const path of [`/api/${strangerProjectId}/optimize/state`, `/api/${projectId}/optimize/state`, `/api/${projectId}/optimize/50/state`]) {
      const token = path.startsWith(`/api/${strangerProjectId}/`) ? ada.token : mallory.token;
      const res = await asUser(token, 'GET', path);
      expect(res.status, path).toBe(403);
      expect(JSON.stringify(res.body)).not.toMatch(/trials|Run 2/);
    }
  });

  it('is listed in the OpenAPI document with setTunerPrimaryJob, as the SDK calls them', async () => {
    const paths = (await spec.request('GET', '/openapi.json')).body.paths as Record<string, Record<string, { operationId: string; parameters: { name: string; in: string; required: boolean }[]; requestBody?: object }>>;
    expect(paths['/api/{projectId}/optimize/state']?.get?.operationId).toBe('getState');
    const run = paths['/api/{projectId}/optimize/{tunerCoordinatorJobId}/state']?.get;
    expect(run?.operationId).toBe('getTunerRunState');
    expect(run?.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'tunerCoordinatorJobId', in: 'path', required: true })]));
    const primary = paths['/api/{projectId}/jobs/set-tuner-primary-job']?.post;
    expect(primary?.operationId).toBe('setTunerPrimaryJob');
    expect(primary?.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'trialId', in: 'query', required: true })]));
    expect(primary?.requestBody).toBeDefined();
  });
});

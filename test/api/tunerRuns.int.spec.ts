import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_OPTIMIZE_SETTINGS } from '../../domain/optimize/optimizeConfig';
import { tunerRunStream, type TunerRunEvent } from '../../domain/optimize/tunerRunEvents';
import { routeSpec, type RouteSpec } from '../support/routeSpec';
import { signup } from '../support/signup';

/**
 * The tuner run routes (OptimizationApi.listTunerRuns, updateTunerRun) given runs in the log as a
 * coordinator records them: listed in the SDK's TunerRun shape, renamed, and refused with the problem named.
 */
describe('tuner runs over the management API', () => {
  let spec: RouteSpec;
  let token: string;
  let projectId: number;
  let otherProjectId: number;
  const at = '2026-11-27T10:00:00.000Z';
  const space = [{ inputBlocks: [{ type: 'time-series' as const, windows: [{ windowSizeMs: 1000, windowIncreaseMs: 250 }] }], dspBlocks: [{ type: 'spectral-analysis', parameters: [{ name: 'fft-length', values: ['16', '64'] }] }], learnBlocks: [{ blocks: [{ type: 'keras' as const, denseStacks: [{ neurons: [20, 10] }], learningRates: [0.005], trainingCycles: [10], batchSizes: [32] }] }] }];
  const started = (project: number, coordinatorJobId: number, index: number): TunerRunEvent => ({
    type: 'TunerRunStarted',
    data: { projectId: project, coordinatorJobId, index, name: `Run ${index}`, config: DEFAULT_OPTIMIZE_SETTINGS, space, seed: coordinatorJobId, extendedFromJobId: null, started: at },
  });
  const asUser = (method: string, pathname: string, body?: unknown) => spec.request(method, pathname, { headers: { 'x-jwt-token': token }, ...(body === undefined ? {} : { body }) });

  beforeAll(async () => {
    spec = await routeSpec();
    await spec.request('POST', '/api-user-create', { body: signup() });
    token = String((await spec.request('POST', '/api-login', { body: { username: 'ada', password: 'correct horse battery' } })).body.token);
    projectId = Number((await asUser('POST', '/api/projects/create', { projectName: 'Tuned' })).body.id);
    otherProjectId = Number((await asUser('POST', '/api/projects/create', { projectName: 'Other' })).body.id);
    await spec.given(tunerRunStream(projectId, 40), [started(projectId, 40, 1), { type: 'TunerRunEnded', data: { projectId, coordinatorJobId: 40, status: 'cancelled', error: null, ended: at } }]);
    await spec.given(tunerRunStream(projectId, 50), [started(projectId, 50, 2)]);
    await spec.given(tunerRunStream(otherProjectId, 60), [started(otherProjectId, 60, 1)]);
  });
  afterAll(async () => {
    await spec?.close();
  });

  it('lists the project\'s runs in order, in the SDK\'s shape, with the space as the config answers it', async () => {
    const res = await asUser('GET', `/api/${projectId}/optimize/runs`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.runs).toEqual([
      { tunerJobId: 40, tunerCoordinatorJobId: 40, index: 1, name: 'Run 1', created: at, jobStatus: 'cancelled', space: [{ inputBlocks: [{ type: 'time-series', window: [{ windowSizeMs: 1000, windowIncreaseMs: 250 }] }], dspBlocks: [{ type: 'spectral-analysis', 'fft-length': ['16', '64'] }], learnBlocks: [[{ type: 'keras', dimension: [[20, 10]], learningRate: [0.005], trainingCycles: [10], batchSize: [32] }]] }], visible: true },
      expect.objectContaining({ tunerCoordinatorJobId: 50, index: 2, jobStatus: 'running' }),
    ]);
  });

  it('renames a run; the same name again appends nothing', async () => {
    const res = await asUser('POST', `/api/${projectId}/optimize/50`, { name: 'Small models' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(((await asUser('GET', `/api/${projectId}/optimize/runs`)).body.runs as { name: string }[])[1]!.name).toBe('Small models');
    const before = await spec.deps.events.headPosition();
    expect((await asUser('POST', `/api/${projectId}/optimize/50`, { name: 'Small models' })).status).toBe(200);
    expect(await spec.deps.events.headPosition()).toBe(before);
  });

  it('answers 404 for a run of another project or none, and 400 for an empty name, appending nothing', async () => {
    const before = await spec.deps.events.headPosition();
    const other = await asUser('POST', `/api/${projectId}/optimize/60`, { name: 'Mine now' });
    expect(other.status).toBe(404);
    expect(String(other.body.error)).toMatch(/No tuner run 60 in this project/);
    expect((await asUser('POST', `/api/${projectId}/optimize/99`, { name: 'x' })).status).toBe(404);
    const empty = await asUser('POST', `/api/${projectId}/optimize/50`, { name: ' ' });
    expect(empty.status).toBe(400);
    expect(String(empty.body.error)).toMatch(/name is empty/);
    expect(await spec.deps.events.headPosition()).toBe(before);
  });

  it('still saves the config at optimize/config, not as a run named "config"', async () => {
    const res = await asUser('POST', `/api/${projectId}/optimize/config`, { targetLatency: 40, targetDevice: { name: 'cortex-m4f-80mhz', ram: 65536, rom: 262144 } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await asUser('GET', `/api/${projectId}/optimize/config`)).body.targetLatency).toBe(40);
  });
});

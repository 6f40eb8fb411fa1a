import type { StartJobResponse } from 'edge-impulse-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TUNER_TRIAL_IMPULSE_JOB, trialImpulseJobRunner } from '../../commands/optimize/trialImpulseJob';
import { jobStream } from '../../domain/job/jobEvents';
import { DEFAULT_OPTIMIZE_SETTINGS } from '../../domain/optimize/optimizeConfig';
import type { TrialImpulse } from '../../domain/optimize/searchSpace';
import { tunerRunStream, type TunerRunEvent } from '../../domain/optimize/tunerRunEvents';
import { registerUser, routeSpec, type RouteSpec } from '../support/routeSpec';
import type { Wire } from '../support/sdkWire';

/**
 * JobsApi.setTunerPrimaryJob: a completed trial (runs given as events) added to the project as a new
 * impulse. The route checks and requests the job; the job (run here by hand: route specs run no job
 * worker) saves the impulse, its DSP config and its keras settings with the impulse commands, and
 * records it on the trial.
 */
describe("a tuner trial's impulse added to the project", () => {
  let spec: RouteSpec;
  let token: string;
  let strangerToken: string;
  let projectId: number;
  let bareProjectId: number;
  let otherProjectId: number;
  let templateId: number;
  const at = '2026-11-27T10:00:00.000Z';
  const motionInput = { id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY', 'accZ'], windowSizeMs: 500, windowIncreaseMs: 250, frequencyHz: 100 };
  const motionImpulse = {
    name: 'Motion',
    inputBlocks: [motionInput],
    dspBlocks: [{ id: 2, type: 'spectral-analysis', name: 'Spectral features', title: 'Spectral Analysis', axes: ['accX', 'accY'], input: 1, implementationVersion: 4 }],
    learnBlocks: [{ id: 3, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [2] }],
  };
  const trialImpulse: TrialImpulse = { window: { windowSizeMs: 2000, windowIncreaseMs: 500 }, dsp: { type: 'spectral-analysis', config: { 'fft-length': '64' } }, learn: { type: 'keras', denseLayers: [40, 8], learningRate: 0.001, trainingCycles: 25, batchSize: 16 } };
  const events = (project: number, coordinatorJobId: number): TunerRunEvent[] => {
    const run = { projectId: project, coordinatorJobId };
    return [
      { type: 'TunerRunStarted', data: { ...run, index: 1, name: 'Run 1', config: DEFAULT_OPTIMIZE_SETTINGS, space: [], seed: 1, extendedFromJobId: null, started: at } },
      ...[0, 1, 2].map((trial): TunerRunEvent => ({ type: 'TunerTrialPlanned', data: { ...run, trial, impulse: trialImpulse, round: trial === 0 ? { bracket: 0, round: 1, cycles: 9 } : null, planned: at } })),
      ...[0, 1, 2].map((trial): TunerRunEvent => ({ type: 'TunerTrialStarted', data: { ...run, trial, jobId: 100 + trial, attempt: 1, started: at } })),
      { type: 'TunerTrialFinished', data: { ...run, trial: 0, status: 'completed', accuracy: 0.9, loss: 0.2, estimates: { latencyMs: 2, ramBytes: 2048, romBytes: 16384 }, overBudget: false, error: null, finished: at } },
      { type: 'TunerTrialFinished', data: { ...run, trial: 1, status: 'failed', accuracy: null, loss: null, estimates: null, overBudget: false, error: 'Out of memory', finished: at } },
    ];
  };
  const post = (project: number, trialId: string, body: object = {}, as = token) => spec.request('POST', `/api/${project}/jobs/set-tuner-primary-job?trialId=${encodeURIComponent(trialId)}`, { headers: { 'x-jwt-token': as }, body });
  const get = (pathname: string) => spec.request('GET', pathname, { headers: { 'x-jwt-token': token } });
  const runJob = async (jobId: number, project = projectId) => {
    const [requested] = await spec.deps.events.readStream(jobStream(jobId), { maxCount: 1 });
    if (!requested) throw new Error(`job ${jobId} was not requested`);
    const runner = trialImpulseJobRunner({ events: spec.deps.events, impulses: spec.deps.impulses, tunerRuns: spec.deps.tunerRuns });
    const lines: string[] = [];
    await runner({ jobId, projectId: project, organizationId: null, parameters: requested.data.parameters as Record<string, unknown>, log: (line) => lines.push(line), signal: new AbortController().signal, pool: spec.deps.dspPool }).finally(() => spec.caughtUp());
    return lines;
  };

  beforeAll(async () => {
    spec = await routeSpec();
    await registerUser(spec, 'staffer');
    token = (await registerUser(spec, 'ada')).token;
    strangerToken = (await registerUser(spec, 'mallory')).token;
    const create = async (projectName: string) => Number((await spec.request('POST', '/api/projects/create', { headers: { 'x-jwt-token': token }, body: { projectName } })).body.id);
    projectId = await create('Tuned');
    bareProjectId = await create('No impulse');
    otherProjectId = await create('Other');
    templateId = Number((await spec.request('POST', `/api/${projectId}/impulse`, { headers: { 'x-jwt-token': token }, body: motionImpulse })).body.id);
    await spec.given(tunerRunStream(projectId, 50), events(projectId, 50));
    await spec.given(tunerRunStream(bareProjectId, 60), events(bareProjectId, 60));
    await spec.given(tunerRunStream(otherProjectId, 70), events(otherProjectId, 70));
  });
  afterAll(async () => {
    await spec?.close();
  });

  it('requests a job, then the job makes the impulse: the trial window on the project input, its DSP config and model settings', async () => {
    await spec.mark();
    const res = await post(projectId, '50-0', { name: 'Tuned motion' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const expected: Wire<StartJobResponse> = { success: true, id: expect.any(Number) as number };
    expect(res.body).toEqual(expected);
    const requested = (await spec.appended()).find((e) => e.type === 'JobRequested');
    expect(requested?.data).toMatchObject({ projectId, categoryKey: TUNER_TRIAL_IMPULSE_JOB, key: '50-0', parameters: { coordinatorJobId: 50, trial: 0, templateImpulseId: templateId, name: 'Tuned motion' } });
    // Nothing is made before the job runs.
    expect((await get(`/api/${projectId}/impulses`)).body.impulses).toHaveLength(1);

    const log = await runJob(Number(res.body.id));
    expect(log.join('')).toMatch(/Trial 50-0 is impulse \d+ \("Tuned motion"\)/);
    const impulses = (await get(`/api/${projectId}/impulses`)).body.impulses as { id: number; name: string; inputBlocks: object[]; dspBlocks: { id: number }[]; learnBlocks: { id: number }[] }[];
    expect(impulses).toHaveLength(2);
    const made = impulses.find((i) => i.id !== templateId)!;
    expect(made.id).toBe((requested!.data.parameters as { impulseId: number }).impulseId);
    expect(made).toMatchObject({
      name: 'Tuned motion',
      inputBlocks: [{ type: 'time-series', axes: ['accX', 'accY', 'accZ'], frequencyHz: 100, windowSizeMs: 2000, windowIncreaseMs: 500 }],
      dspBlocks: [{ type: 'spectral-analysis', axes: ['accX', 'accY'], implementationVersion: 4 }],
      learnBlocks: [{ type: 'keras', dsp: [made.dspBlocks[0]!.id] }],
    });
    const dspId = made.dspBlocks[0]!.id;
    expect([1, 2, 3]).not.toContain(dspId);
    expect((await spec.deps.impulses.byId(projectId, made.id))!.dspConfigs[String(dspId)]).toMatchObject({ 'fft-length': '64' });
    // The hyperband round's cycles, which the trial trained for.
    const keras = await get(`/api/${projectId}/training/keras/${made.learnBlocks[0]!.id}`);
    expect(keras.body).toMatchObject({ visualLayers: [{ type: 'dense', neurons: 40 }, { type: 'dense', neurons: 8 }], learningRate: 0.001, trainingCycles: 9, batchSize: 16 });
    // The template is untouched.
    expect(impulses.find((i) => i.id === templateId)).toMatchObject({ name: 'Motion', inputBlocks: [{ windowSizeMs: 500 }] });

    const state = await get(`/api/${projectId}/optimize/50/state`);
    expect((state.body.trials as { impulseAddedToProject?: object }[])[0]!.impulseAddedToProject).toEqual({ impulseId: made.id, link: `http://studio.test/studio/${projectId}/create-impulse/${made.id}` });

    // A retried job (its worker lost) makes no second impulse and records nothing again.
    await spec.mark();
    await runJob(Number(res.body.id));
    expect((await get(`/api/${projectId}/impulses`)).body.impulses).toHaveLength(2);
    expect((await spec.appended()).map((e) => e.type)).not.toContain('TunerTrialImpulseAdded');
    expect((await spec.appended()).map((e) => e.type)).not.toContain('ImpulseCreated');
  });

  it("names the impulse after the trial when no name is given", async () => {
    const res = await post(projectId, '50-0', { name: '  ' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    await runJob(Number(res.body.id));
    const names = ((await get(`/api/${projectId}/impulses`)).body.impulses as { name: string }[]).map((i) => i.name);
    expect(names).toContain('Trial 1: spectral-analysis, 2000 ms window, dense 40-8');
  });

  it('refuses, naming the problem and appending nothing: trials not completed or not there, bad ids, no impulse, no room, a bad name', async () => {
    await spec.mark();
    const refusals: [number, string, object, number, RegExp][] = [
      [projectId, '50-1', {}, 409, /Trial 50-1 is failed: only a completed trial's impulse can be added/],
      [projectId, '50-2', {}, 409, /Trial 50-2 is running/],
      [projectId, '50-3', {}, 404, /No tuner trial 50-3 in this project/],
      [projectId, '70-0', {}, 404, /No tuner trial 70-0 in this project/],
      [projectId, '99-0', {}, 404, /No tuner trial 99-0/],
      [bareProjectId, '60-0', {}, 409, /This project has no impulse to take the trial's input axes and frequency from/],
      [projectId, '50-0', { name: 'x'.repeat(129) }, 400, /name is 129 characters long; at most 128/],
      [projectId, '50-0', { name: 'a\u0000b' }, 400, /name contains a control character/],
      [projectId, '50-0', { name: 7 }, 400, /name/],
    ];
    for (const bad of ['', '50', '50-0-0', '-1-0', '0-0', '50-0 OR 1=1', '../50-0', '5'.repeat(64), '50-1e2', '{}']) refusals.push([projectId, bad, {}, 400, /is not a trial id|trialId/]);
    refusals.push([projectId, '5'.repeat(65), {}, 400, /trialId/]);
    for (const [project, trialId, body, status, error] of refusals) {
      const res = await post(project, trialId, body);
      expect(res.status, `${trialId} ${JSON.stringify(res.body)}`).toBe(status);
      expect(res.body.success).toBe(false);
      expect(String(res.body.error), trialId).toMatch(error);
    }
    // The project holds 3 impulses now (the template and two trials): the plan's most.
    const full = await post(projectId, '50-0');
    expect(full.status).toBe(400);
    expect(String(full.body.error)).toMatch(/already has 3 impulses, the most its plan allows \(3\); delete one first/);
    expect(await spec.appended()).toEqual([]);
  });

  it("refuses a stranger, and another project's key, before anything", async () => {
    await spec.mark();
    const res = await post(projectId, '50-0', {}, strangerToken);
    expect(res.status).toBe(403);
    expect(JSON.stringify(res.body)).not.toMatch(/Trial|impulse/);
    expect(await spec.appended()).toEqual([]);
  });

  it('leaves the project as it was when a step of the job is refused: the impulse it made is deleted', async () => {
    const other = await spec.request('POST', '/api/projects/create', { headers: { 'x-jwt-token': token }, body: { projectName: 'Changing' } });
    const changing = Number(other.body.id);
    const template = Number((await spec.request('POST', `/api/${changing}/impulse`, { headers: { 'x-jwt-token': token }, body: motionImpulse })).body.id);
    await spec.given(tunerRunStream(changing, 80), events(changing, 80));
    const res = await post(changing, '80-0');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // Between the request and the job, the template impulse becomes an image impulse.
    const replaced = await spec.request('POST', `/api/${changing}/impulse?impulseId=${template}`, {
      headers: { 'x-jwt-token': token },
      body: { inputBlocks: [{ id: 1, type: 'image', name: 'Image', title: 'Image data', imageWidth: 96, imageHeight: 96, resizeMode: 'squash' }], dspBlocks: [], learnBlocks: [] },
    });
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    await expect(runJob(Number(res.body.id), changing)).rejects.toThrow(/no time-series input block/);
    const impulses = (await get(`/api/${changing}/impulses`)).body.impulses as { id: number }[];
    expect(impulses.map((i) => i.id)).toEqual([template]);
    const state = await get(`/api/${changing}/optimize/80/state`);
    expect((state.body.trials as object[])[0]).not.toHaveProperty('impulseAddedToProject');
  });
});

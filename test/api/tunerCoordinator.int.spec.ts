// Tuner runs end to end over HTTP, with a TEST DOUBLE for the trial runner (the real one trains
// models; it is another helper's): test/support/tunerTrialDouble.ts reads its trial's impulse from the
// run stream, waits a little, and records metrics derived from the impulse, so a run's result is deterministic.
// The coordinator, the jobs it starts, the job worker and the run-end saga are the service's own.
import { randomUUID } from 'node:crypto';
import { EdgeImpulseApi } from 'edge-impulse-api';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { IdAllocator } from '../../commands/idAllocator';
import { requestJob } from '../../commands/jobs/requestJob';
import { ThreadPool } from '../../commands/jobs/threadPool';
import { TUNER_TRIAL, tunerCoordinatorRunner, type TunerCoordinatorParameters } from '../../commands/optimize/tunerCoordinator';
import { DEFAULT_OPTIMIZE_SETTINGS } from '../../domain/optimize/optimizeConfig';
import { optimizeConfigStream } from '../../domain/optimize/optimizeEvents';
import { hyperbandSurvivors, trialKey } from '../../domain/optimize/searchSpace';
import { tunerRunStream, type TunerRunEvent } from '../../domain/optimize/tunerRunEvents';
import { JobQueries } from '../../projections/jobs/jobQueries';
import { ProjectQueries } from '../../projections/projects/projectQueries';
import { TunerRunQueries } from '../../projections/tunerRuns/tunerRunQueries';
import { trialImpulseOf } from '../../projections/tunerRuns/tunerRunDocument';
import type { EventStore } from '../../stores/eventstore/eventStore';
import type { Stores } from '../../service/composition';
import { productionJobRunners } from '../../service/roles/productionJobRunners';
import { jobFinished } from '../support/jobStatus';
import { trialDoubleBehaviour, tunerTrialDouble } from '../support/tunerTrialDouble';
import { ingestSample, motionImpulse, motionRows } from '../support/projectWithFeatures';
import { adaWithProject, call, describeOn, setups, startTestService, type TestService } from '../support/testService';

const double = trialDoubleBehaviour(150);

const runners = (stores: Stores) => new Map([...productionJobRunners(stores), [TUNER_TRIAL, tunerTrialDouble(stores.events, double)]]);
const device = { name: 'cortex-m4f-80mhz', ram: 128 * 1024, rom: 1024 * 1024 };

for (const setup of setups) describeOn(setup, 'tuner runs (trials run by a test double)', () => {
  let service: TestService;
  let ada: Record<string, string>;
  let projectId: number;
  let apiKey: string;
  const post = (path: string, body?: unknown, pid = projectId) => call(service, 'POST', `/api/${pid}${path}`, { headers: ada, ...(body === undefined ? {} : { body }) });
  const get = (path: string, pid = projectId) => call(service, 'GET', `/api/${pid}${path}`, { headers: ada });
  const jobCount = async (pid = projectId) => Number((await get('/jobs/all?limit=1000', pid)).body.totalJobCount);
  const setConfig = async (config: object, pid = projectId) => expect((await post('/optimize/config', { targetLatency: 100, targetDevice: device, trainingCycles: 9, ...config }, pid)).status).toBe(200);
  const runStream = async (coordinatorJobId: number, pid = projectId) => (await service.stores.events.readStream(tunerRunStream(pid, coordinatorJobId))) as unknown as TunerRunEvent[];
  const trials = (coordinatorJobId: number, pid = projectId) => new TunerRunQueries(service.stores.readStore).trials(pid, coordinatorJobId);
  const runDoc = (coordinatorJobId: number, pid = projectId) => new TunerRunQueries(service.stores.readStore).byCoordinator(pid, coordinatorJobId);
  const children = async (coordinatorJobId: number, pid = projectId) => (await new JobQueries(service.stores.readStore).list({ projectId: pid }, {})).jobs.filter((j) => j.parentJobId === coordinatorJobId);

  async function startRun(query = '', pid = projectId): Promise<number> {
    const res = await post(`/jobs/optimize${query}`, undefined, pid);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return Number(res.body.id);
  }

  async function refused(query: string, code: string, message: RegExp, pid = projectId): Promise<void> {
    const before = await jobCount(pid);
    const res = await post(`/jobs/optimize${query}`, undefined, pid);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: expect.stringMatching(message) });
    expect(await jobCount(pid), `a refused ${code} made no job`).toBe(before);
  }

  async function ingest(pid: number, key: string, label: string, seed: number): Promise<void> {
    await ingestSample(service, key, { category: 'training', label, rows: motionRows(label, seed), fileName: `${label}.${seed}.json` });
    expect(pid).toBeGreaterThan(0);
  }

  beforeAll(async () => {
    service = await startTestService({ mongo: setup.mongo, env: { JOB_HEARTBEAT_MS: '500' }, jobRunners: runners });
    ({ ada, projectId, apiKey } = await adaWithProject(service, 'Tuner'));
    expect((await post('/impulse', motionImpulse)).status).toBe(200);
    await ingest(projectId, apiKey, 'idle', 0);
  });
  afterAll(async () => {
    await service?.destroy();
  });
  beforeEach(() => {
    Object.assign(double, trialDoubleBehaviour(150));
  });

  it('refuses, with no job, a project whose training data has one class', async () => {
    await refused('', 'NO_TRAINING_DATA', /training data of 1 class: the tuner needs at least 2 classes/);
    await ingest(projectId, apiKey, 'wave', 0);
  });

  it('refuses, with no job, a config whose target device has no RAM (a config recorded before RAM was required)', async () => {
    const config = { ...DEFAULT_OPTIMIZE_SETTINGS, targetDevice: { ...device, ram: 0 } };
    const now = new Date().toISOString();
    const { position } = await service.stores.events.appendToStream(
      optimizeConfigStream(projectId),
      [{ id: randomUUID(), type: 'OptimizeConfigSet', data: { projectId, config, set: now }, metadata: { actor: 'system:test', correlationId: 'test', time: now } }],
      'any',
    );
    await service.projections!.waitFor(position, 5000);
    await refused('', 'DEVICE_MEMORY_REQUIRED', /target device \(cortex-m4f-80mhz\) has no RAM/);
  });

  it('refuses, with no job, an extendedFromJobId that is not a run of this project', async () => {
    await setConfig({ tuningMaxTrials: 4, tuningWorkers: 2 });
    await refused('?extendedFromJobId=999999', 'EXTENDED_RUN_NOT_FOUND', /999999 is not a tuner run of this project/);
    expect((await post('/jobs/optimize?extendedFromJobId=abc')).status).toBe(400);
  });

  let otherProject = 0;

  it('refuses, with no job, a space with no valid trial for the impulse as it is now', async () => {
    const other = Number((await call(service, 'POST', '/api/projects/create', { headers: ada, body: { projectName: 'Changed impulse' } })).body.id);
    otherProject = other;
    expect((await post('/impulse', motionImpulse, other)).status).toBe(200);
    const key = String((await call(service, 'POST', `/api/${other}/apikeys`, { headers: ada, body: { name: 'ingest', role: 'admin' } })).body.apiKey);
    await ingest(other, key, 'idle', 1);
    await ingest(other, key, 'wave', 1);
    const space = [{ inputBlocks: [{ type: 'time-series', window: [{ windowSizeMs: 500, windowIncreaseMs: 250 }] }], dspBlocks: [{ type: 'spectral-analysis', 'fft-length': [16, 32] }], learnBlocks: [[{ type: 'keras', dimension: [[20]] }]] }];
    await setConfig({ space }, other);
    // The impulse's classifier becomes a regression block after the space was saved for a classifier.
    const regression = { ...motionImpulse, learnBlocks: [{ id: 3, type: 'keras-regression', name: 'Regression', title: 'Regression', dsp: [2] }] };
    expect((await post('/impulse', regression, other)).status).toBe(200);
    await refused('', 'NO_VALID_TRIAL', /no valid trial: no combination of its choices can run/, other);
  });

  let firstRun = 0;

  it('runs a 4-trial random search to completion, at most tuningWorkers trials at once, each a child job', async () => {
    await setConfig({ tuningMaxTrials: 4, tuningWorkers: 2, tuningAlgorithm: 'random' });
    firstRun = await startRun();
    const job = await jobFinished(service, get, firstRun, 60_000);
    expect(job.finishedSuccessful).toBe(true);
    const done = await trials(firstRun);
    expect(done.map((t) => [t.trial, t.status])).toEqual([0, 1, 2, 3].map((t) => [t, 'completed']));
    expect(new Set(done.map((t) => trialKey(trialImpulseOf(t.impulse!)))).size).toBe(4);
    expect(double.maxRunning).toBeLessThanOrEqual(2);
    expect(double.maxRunning).toBe(Math.min(2, new ThreadPool().size));
    expect(await runDoc(firstRun)).toMatchObject({ jobStatus: 'completed', seed: firstRun, index: 1 });
    const runs = (await get('/optimize/runs')).body.runs as { tunerCoordinatorJobId: number; jobStatus: string }[];
    expect(runs.find((r) => r.tunerCoordinatorJobId === firstRun)?.jobStatus).toBe('success');
    // Each trial one child job, linked to the coordinator; a root-only list leaves them out.
    const kids = await children(firstRun);
    expect(kids.map((k) => k.id).sort()).toEqual(done.map((t) => t.jobId).sort());
    expect(kids.every((k) => k.categoryKey === TUNER_TRIAL && k.finishedSuccessful === true)).toBe(true);
    const all = (await get('/jobs/all?limit=1000')).body.jobs as { id: number }[];
    const roots = (await get('/jobs/all?limit=1000&rootOnly=true')).body.jobs as { id: number }[];
    expect(all.length - roots.length).toBe(4);
    expect(roots.map((j) => j.id)).toContain(firstRun);
  });

  it('extends a run: same seed and space, none of its trials again', async () => {
    await setConfig({ tuningMaxTrials: 3, tuningWorkers: 2, tuningAlgorithm: 'random' });
    const extension = await startRun(`?extendedFromJobId=${firstRun}`);
    expect((await jobFinished(service, get, extension, 60_000)).finishedSuccessful).toBe(true);
    const first = await runDoc(firstRun);
    expect(await runDoc(extension)).toMatchObject({ jobStatus: 'completed', seed: first!.seed, extendedFromJobId: firstRun, space: first!.space });
    const before = new Set((await trials(firstRun)).map((t) => trialKey(trialImpulseOf(t.impulse!))));
    const after = (await trials(extension)).map((t) => trialKey(trialImpulseOf(t.impulse!)));
    expect(after).toHaveLength(3);
    expect(after.filter((k) => before.has(k))).toEqual([]);
    const runs = (await get('/optimize/runs')).body.runs as { tunerCoordinatorJobId: number; continuationJobId?: number }[];
    expect(runs.find((r) => r.tunerCoordinatorJobId === extension)?.continuationJobId).toBe(firstRun);
    // Another project's run is not that project's to extend (it has data and an impulse, so the run id is what is refused).
    await refused(`?extendedFromJobId=${firstRun}`, 'EXTENDED_RUN_NOT_FOUND', new RegExp(`${firstRun} is not a tuner run of this project`), otherProject);
  });

  it('hyperband: plans a round once the round before it ended, with the best of it, trained longer', async () => {
    // 9 cycles, 6 trainings: one bracket of 5 trials at 1 cycle, then the best one at 3.
    await setConfig({ tuningMaxTrials: 6, tuningWorkers: 2, tuningAlgorithm: 'hyperband' });
    const runId = await startRun();
    expect((await jobFinished(service, get, runId, 60_000)).finishedSuccessful).toBe(true);
    const events = await service.stores.events.readStream(tunerRunStream(projectId, runId));
    const done = await trials(runId);
    expect(done.map((t) => [t.trial, t.status, t.round])).toEqual([
      ...[0, 1, 2, 3, 4].map((t) => [t, 'completed', { bracket: 0, round: 0, cycles: 1 }]),
      [5, 'completed', { bracket: 0, round: 1, cycles: 3 }],
    ]);
    const [best] = hyperbandSurvivors(done.slice(0, 5).map((t) => ({ index: t.trial, accuracy: t.accuracy, overBudget: t.overBudget })), 1);
    expect(done[5]!.impulse).toEqual(done[best!]!.impulse);
    const lastRound0End = Math.max(...events.filter((e) => e.type === 'TunerTrialFinished' && (e.data as { trial: number }).trial < 5).map((e) => Number(e.revision)));
    const round1Planned = events.findIndex((e) => e.type === 'TunerTrialPlanned' && (e.data as { trial: number }).trial === 5);
    expect(round1Planned).toBeGreaterThan(lastRound0End);
    expect(double.maxRunning).toBeLessThanOrEqual(2);
  });

  it('a trial whose job fails is finished failed, and the run goes on to complete', async () => {
    await setConfig({ tuningMaxTrials: 4, tuningWorkers: 2, tuningAlgorithm: 'random' });
    double.failTrials = new Set([1]);
    const runId = await startRun();
    expect((await jobFinished(service, get, runId, 60_000)).finishedSuccessful).toBe(true);
    const done = await trials(runId);
    expect(done.map((t) => t.status)).toEqual(['completed', 'failed', 'completed', 'completed']);
    expect(done[1]!.error).toMatch(/test double: trial 1 fails/);
    expect((await runDoc(runId))?.jobStatus).toBe('completed');
  });

  it('a trial whose job ends from elsewhere (forced cancel, as a lost worker\'s recovery ends it) is finished failed, never left running', async () => {
    await setConfig({ tuningMaxTrials: 3, tuningWorkers: 2, tuningAlgorithm: 'random' });
    double.slowTrials = new Set([0]);
    const runId = await startRun();
    let child: number | null = null;
    for (const until = Date.now() + 20_000; child === null; ) {
      if (Date.now() > until) throw new Error('trial 0 did not start');
      child = (await children(runId)).find((k) => k.key === `${runId}:0` && k.state === 'started')?.id ?? null;
      await sleep(25);
    }
    expect((await post(`/jobs/${child}/cancel?forceCancel=true`)).status).toBe(200);
    expect((await jobFinished(service, get, runId, 60_000)).finishedSuccessful).toBe(true);
    const done = await trials(runId);
    expect(done.map((t) => t.status)).toEqual(['failed', 'completed', 'completed']);
    expect(done[0]!.error).toMatch(/Cancelled \(forced\)/);
  });

  it('cancel mid-run stops the running trials and ends the run cancelled', async () => {
    await setConfig({ tuningMaxTrials: 4, tuningWorkers: 2, tuningAlgorithm: 'random' });
    double.delayMs = 30_000;
    const runId = await startRun();
    for (const until = Date.now() + 20_000; double.running < Math.min(2, new ThreadPool().size); ) {
      if (Date.now() > until) throw new Error('no trial started');
      await sleep(25);
    }
    expect((await post(`/jobs/${runId}/cancel`)).status).toBe(200);
    const job = await jobFinished(service, get, runId, 20_000);
    expect(job.finishedSuccessful).toBe(false);
    for (const until = Date.now() + 10_000; (await runDoc(runId))?.jobStatus !== 'cancelled'; ) {
      if (Date.now() > until) throw new Error(`run not cancelled: ${JSON.stringify(await runDoc(runId))}`);
      await sleep(50);
    }
    await service.projections!.waitFor((await service.stores.events.headPosition())!, 5000);
    expect((await runDoc(runId))?.jobStatus).toBe('cancelled');
    const runs = (await get('/optimize/runs')).body.runs as { tunerCoordinatorJobId: number; jobStatus: string }[];
    expect(runs.find((r) => r.tunerCoordinatorJobId === runId)?.jobStatus).toBe('cancelled');
    const kids = await children(runId);
    expect(kids.length).toBeGreaterThan(0);
    expect(kids.every((k) => k.state === 'finished' && k.finishedSuccessful === false)).toBe(true);
    expect((await trials(runId)).every((t) => t.status === 'failed' || t.status === 'completed')).toBe(true);
    for (const until = Date.now() + 5000; double.running > 0; ) {
      if (Date.now() > until) throw new Error('a trial runner kept running');
      await sleep(25);
    }
    expect((await get('/jobs')).body.jobs).toEqual([]);
  });

  it('a coordinator that crashed mid-run is resumed from its stream and plans or starts nothing twice', async () => {
    const stores = service.stores;
    const projects = new ProjectQueries(stores.readStore);
    const config = { ...DEFAULT_OPTIMIZE_SETTINGS, targetDevice: device, tuningMaxTrials: 4, tuningWorkers: 2, trainingCycles: 9 };
    const space = (await runDoc(firstRun))!.space;
    const parameters: TunerCoordinatorParameters = { index: 9, name: 'Crashed', config, space, frequencyHz: 100, learnTypes: ['keras', 'anomaly'], extendedFromJobId: null };
    // A coordinator job no worker runs (its kind has no runner): this test runs the coordinator itself.
    const { jobId } = await requestJob(
      { events: stores.events, ids: new IdAllocator(stores.events), projects },
      { projectId, category: 'EON tuner', categoryKey: 'tuner-coordinator-by-hand', key: '9', parameters: { ...parameters }, notificationList: null, createdByUserId: null },
      { actor: 'system:test', correlationId: 'test', now: new Date() },
    );
    // The first coordinator dies when requesting its second child: trial 1 is recorded with a job id not yet requested.
    let childRequests = 0;
    const crashing: EventStore = new Proxy(stores.events, {
      get(target, prop, receiver) {
        if (prop === 'appendToStream') {
          return async (...args: Parameters<EventStore['appendToStream']>) => {
            if (args[1].some((e) => e.type === 'JobRequested') && ++childRequests === 2) throw new Error('test: the coordinator\'s process died');
            return target.appendToStream(...args);
          };
        }
        const value = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const pool = new ThreadPool(2);
    const context = { jobId, projectId, organizationId: null, parameters: { ...parameters }, log: () => undefined, signal: new AbortController().signal, pool };
    await expect(tunerCoordinatorRunner({ events: crashing, ids: new IdAllocator(crashing), projects })(context)).rejects.toThrow(/process died/);
    const atCrash = await runStream(jobId);
    expect(atCrash.filter((e) => e.type === 'TunerTrialStarted').map((e) => e.data.trial)).toEqual([0, 1]);

    await tunerCoordinatorRunner({ events: stores.events, ids: new IdAllocator(stores.events), projects })(context);
    await pool.close();
    const events = await runStream(jobId);
    const count = (type: string) => events.filter((e) => e.type === type).map((e) => (e.data as { trial: number }).trial).sort();
    expect(count('TunerTrialPlanned')).toEqual([0, 1, 2, 3]);
    expect(count('TunerTrialStarted')).toEqual([0, 1, 2, 3]);
    expect(count('TunerTrialFinished')).toEqual([0, 1, 2, 3]);
    expect(events.filter((e) => e.type === 'TunerRunStarted')).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: 'TunerRunEnded', data: { status: 'completed' } });
    await service.projections!.waitFor((await stores.events.headPosition())!, 5000);
    // One child job per trial: the trial recorded before the crash got the job id it was recorded with.
    const kids = await children(jobId);
    expect(kids).toHaveLength(4);
    expect(new Set(kids.map((k) => k.key))).toEqual(new Set([0, 1, 2, 3].map((t) => `${jobId}:${t}`)));
    const started = events.filter((e) => e.type === 'TunerTrialStarted').map((e) => (e.data as { jobId: number }).jobId).sort();
    expect(kids.map((k) => k.id).sort()).toEqual(started);
    expect(double.runs).toBe(4);
  });

  it('through the official SDK: optimizeJob starts a run (extendedFromJobId as its query), and a refusal is an error naming the problem', async () => {
    const api = new EdgeImpulseApi({ endpoint: service.apiUrl });
    await api.authenticate({ method: 'jwtToken', jwtToken: ada['x-jwt-token']! });
    await setConfig({ tuningMaxTrials: 2, tuningWorkers: 2, tuningAlgorithm: 'random' });
    const { id } = await api.jobs.optimizeJob(projectId);
    expect((await jobFinished(service, get, id, 60_000)).finishedSuccessful).toBe(true);
    const extension = await api.jobs.optimizeJob(projectId, { extendedFromJobId: id });
    expect((await jobFinished(service, get, extension.id, 60_000)).finishedSuccessful).toBe(true);
    expect((await runDoc(extension.id))?.extendedFromJobId).toBe(id);
    await expect(api.jobs.optimizeJob(projectId, { extendedFromJobId: 999_999 })).rejects.toThrow(/999999 is not a tuner run of this project/);
  });
});

// The tuner-trial job on a small real project (motion samples through the ingestion API, its own
// features generated), run by the service's job workers: a trial planned in a run's stream as the
// coordinator plans it finishes with its measures, estimates, epochs and model, the project's own
// features and impulse untouched; a cancelled trial stops.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { IdAllocator } from '../../commands/idAllocator';
import { requestJob } from '../../commands/jobs/requestJob';
import { handleCommand } from '../../commands/handleCommand';
import { systemContext } from '../../commands/commandContext';
import { TUNER_TRIAL } from '../../commands/optimize/tunerTrial';
import { dspFeaturesStream } from '../../domain/dsp/dspFeaturesEvents';
import { impulsesStream } from '../../domain/impulse/impulseEvents';
import { DEFAULT_OPTIMIZE_SETTINGS, type OptimizeSettings } from '../../domain/optimize/optimizeConfig';
import type { TrialImpulse } from '../../domain/optimize/searchSpace';
import { tunerRunDecider, type TunerRunCommand } from '../../domain/optimize/tunerRunDecider';
import { tunerRunStream, type TrialRound, type TunerTrialEpoch, type TunerTrialFinished } from '../../domain/optimize/tunerRunEvents';
import { DspFeaturesQueries } from '../../projections/dspFeatures/dspFeaturesQueries';
import { ProjectQueries } from '../../projections/projects/projectQueries';
import { TUNER_TRIALS, tunerTrialId, type TunerTrialDocument } from '../../projections/tunerRuns/tunerRunDocument';
import { motionRows, projectWithFeatures, withTrainingFeatures, type ProjectWithFeatures } from '../support/projectWithFeatures';
import { describeOn, setups } from '../support/testService';

const trialImpulse = (cycles: number): TrialImpulse => ({
  window: { windowSizeMs: 500, windowIncreaseMs: 100 },
  dsp: { type: 'spectral-analysis', config: {} },
  learn: { type: 'keras', denseLayers: [16, 8], learningRate: 0.01, trainingCycles: cycles, batchSize: 16 },
});
const roomyDevice: OptimizeSettings = { ...DEFAULT_OPTIMIZE_SETTINGS, trainingCycles: 1000, targetLatency: 1000, targetDevice: { name: 'cortex-m7-216mhz', ram: 8 * 1024 * 1024, rom: 16 * 1024 * 1024 } };
const tinyDevice: OptimizeSettings = { ...roomyDevice, targetDevice: { name: 'cortex-m4f-80mhz', ram: 1024, rom: 1024 } };

/** Runs and trials of project `project()`'s tuner, given as the coordinator gives them. */
function tunerRuns(project: () => ProjectWithFeatures) {
  let nextRun = 9000;
  const events = () => project().service.stores.events;
  const send = (coordinatorJobId: number, command: TunerRunCommand) => handleCommand(events(), tunerRunStream(project().projectId, coordinatorJobId), tunerRunDecider, command, systemContext('test'));
  const runEvents = async (coordinatorJobId: number) => events().readStream(tunerRunStream(project().projectId, coordinatorJobId));
  /** A run with one planned trial, its trial job requested and started as the coordinator does. */
  async function plannedTrial(config: OptimizeSettings, impulse: TrialImpulse, round: TrialRound | null = null): Promise<{ coordinatorJobId: number; jobId: number }> {
    const { projectId, service } = project();
    const coordinatorJobId = ++nextRun;
    const run = { projectId, coordinatorJobId };
    await send(coordinatorJobId, { type: 'StartTunerRun', data: { ...run, index: 1, name: 'Run', config, space: [], seed: 7, extendedFromJobId: null, now: new Date() } });
    await send(coordinatorJobId, { type: 'PlanTrials', data: { ...run, trials: [{ trial: 0, impulse, round }], now: new Date() } });
    const deps = { events: events(), ids: new IdAllocator(events()), projects: new ProjectQueries(service.stores.readStore) };
    const { jobId, position } = await requestJob(deps, { projectId, category: 'Tuner trial', categoryKey: TUNER_TRIAL, key: `${coordinatorJobId}/0`, parameters: { coordinatorJobId, trial: 0 }, notificationList: null, createdByUserId: null }, systemContext('test'));
    await send(coordinatorJobId, { type: 'StartTrial', data: { ...run, trial: 0, jobId, now: new Date() } });
    // The job's status is read from the read models.
    await service.projections!.waitFor(position, 10_000);
    return { coordinatorJobId, jobId };
  }
  const finishedEvent = async (coordinatorJobId: number) => (await runEvents(coordinatorJobId)).find((e) => e.type === 'TunerTrialFinished') as unknown as TunerTrialFinished | undefined;
  return { events, send, runEvents, plannedTrial, finishedEvent };
}

describe('a regression trial', () => {
  let p: ProjectWithFeatures;
  const { plannedTrial, finishedEvent } = tunerRuns(() => p);
  beforeAll(async () => {
    p = await projectWithFeatures({ mongo: false, name: 'Tuned regression' });
    for (const [label, f] of [['1.5', 1], ['4', 9]] as const) for (const seed of [0, 1]) await p.ingestRows('training', label, motionRows(f === 1 ? 'idle' : 'wave', seed), `${label}.${seed}.json`);
  }, 180_000);
  afterAll(async () => {
    await p?.service.destroy();
  });

  it('completes with its loss (mean squared error on the held-out windows) and no accuracy', async () => {
    const impulse: TrialImpulse = { ...trialImpulse(8), learn: { ...trialImpulse(8).learn, type: 'keras-regression' } };
    const { coordinatorJobId, jobId } = await plannedTrial(roomyDevice, impulse);
    const job = await p.finished(jobId);
    expect(job.finishedSuccessful, await p.stdout(jobId)).toBe(true);
    const finished = (await finishedEvent(coordinatorJobId))!;
    expect(finished.data).toMatchObject({ status: 'completed', accuracy: null, modelSha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(finished.data.loss).toBeGreaterThanOrEqual(0);
  }, 180_000);
});

for (const setup of setups) describeOn(setup, 'the tuner-trial job', () => {
  let p: ProjectWithFeatures;

  beforeAll(async () => {
    p = await projectWithFeatures({ mongo: setup.mongo, name: 'Tuned' });
    await withTrainingFeatures(p);
  }, 180_000);
  afterAll(async () => {
    await p?.service.destroy();
  });
  const { events, send, runEvents, plannedTrial, finishedEvent } = tunerRuns(() => p);

  const trialDocument = (coordinatorJobId: number) => p.service.stores.readStore.collection<TunerTrialDocument>(TUNER_TRIALS).findOne({ _id: tunerTrialId(p.projectId, coordinatorJobId, 0) });
  it('trains the planned trial to completion: accuracy, estimates, epochs and the model, the project\'s own features and impulse untouched', async () => {
    const impulseBefore = await events().readStream(impulsesStream(p.projectId));
    const featuresBefore = await events().readStream(dspFeaturesStream(p.projectId, 2));
    const featuresDocument = await new DspFeaturesQueries(p.service.stores.readStore).current(p.projectId, 2);
    expect(featuresDocument).not.toBeNull();
    const { coordinatorJobId, jobId } = await plannedTrial(roomyDevice, trialImpulse(12));

    const job = await p.finished(jobId);
    expect(job.finishedSuccessful, await p.stdout(jobId)).toBe(true);
    const finished = (await finishedEvent(coordinatorJobId))!;
    expect(finished.data).toMatchObject({ status: 'completed', error: null, overBudget: false });
    expect(finished.data.accuracy).toBeGreaterThan(0);
    expect(finished.data.accuracy).toBeLessThanOrEqual(1);
    expect(finished.data.estimates!.latencyMs).toBeGreaterThan(0);
    expect(finished.data.estimates!.ramBytes).toBeGreaterThan(0);
    expect(finished.data.estimates!.romBytes).toBeGreaterThan(0);
    // The model is kept, under the hash the run names.
    expect(finished.data.modelSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(await p.service.stores.blobs.stat(finished.data.modelSha256!)).toMatchObject({ sha256: finished.data.modelSha256 });
    const epochs = (await runEvents(coordinatorJobId)).filter((e) => e.type === 'TunerTrialEpoch') as unknown as TunerTrialEpoch[];
    expect(epochs.map((e) => e.data.epoch)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));

    const doc = (await trialDocument(coordinatorJobId))!;
    expect(doc).toMatchObject({ status: 'completed', jobId, modelSha256: finished.data.modelSha256, accuracy: finished.data.accuracy });
    expect(doc.epochs.map((e) => e.epoch)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect(doc.epochs[11]).toMatchObject({ loss: expect.any(Number), accuracy: expect.any(Number), valLoss: expect.any(Number), valAccuracy: expect.any(Number) });

    expect(await events().readStream(impulsesStream(p.projectId))).toEqual(impulseBefore);
    expect(await events().readStream(dspFeaturesStream(p.projectId, 2))).toEqual(featuresBefore);
    expect(await new DspFeaturesQueries(p.service.stores.readStore).current(p.projectId, 2)).toEqual(featuresDocument);
  }, 180_000);

  it('marks a trial over the budget of a tiny device; a hyperband trial trains for its round\'s cycles', async () => {
    const { coordinatorJobId, jobId } = await plannedTrial(tinyDevice, trialImpulse(6), { bracket: 0, round: 0, cycles: 2 });
    const job = await p.finished(jobId);
    expect(job.finishedSuccessful, await p.stdout(jobId)).toBe(true);
    const finished = (await finishedEvent(coordinatorJobId))!;
    expect(finished.data).toMatchObject({ status: 'completed', overBudget: true });
    expect(finished.data.estimates!.ramBytes).toBeGreaterThan(1024);
    expect(await trialDocument(coordinatorJobId)).toMatchObject({ overBudget: true, status: 'completed', epochs: [expect.objectContaining({ epoch: 1 }), expect.objectContaining({ epoch: 2 })] });
  }, 180_000);

  it('fails the trial naming the problem when its impulse gives no window: windows longer than every sample', async () => {
    const impulse: TrialImpulse = { ...trialImpulse(3), window: { windowSizeMs: 5000, windowIncreaseMs: 1000 } };
    const { coordinatorJobId, jobId } = await plannedTrial(roomyDevice, impulse);
    const job = await p.finished(jobId);
    expect(job.finishedSuccessful).toBe(false);
    const finished = (await finishedEvent(coordinatorJobId))!;
    expect(finished.data.status).toBe('failed');
    expect(finished.data.error).toMatch(/No training sample gave a window/);
    expect(await p.stdout(jobId)).toContain(finished.data.error!.slice(0, 40));
  }, 180_000);

  /** Waits until the trial's first epochs are recorded. */
  async function training(coordinatorJobId: number): Promise<void> {
    await vi.waitFor(async () => expect((await runEvents(coordinatorJobId)).some((e) => e.type === 'TunerTrialEpoch')).toBe(true), { timeout: 60_000, interval: 100 });
  }

  it('stops when its run ends while it trains: the next epochs are refused, the job fails saying so', async () => {
    const { coordinatorJobId, jobId } = await plannedTrial(roomyDevice, trialImpulse(1000));
    await training(coordinatorJobId);
    await send(coordinatorJobId, { type: 'EndTunerRun', data: { projectId: p.projectId, coordinatorJobId, status: 'cancelled', error: null, now: new Date() } });
    const job = await p.finished(jobId);
    expect(job.finishedSuccessful).toBe(false);
    const output = await p.stdout(jobId);
    expect(output).toMatch(/The tuner run has ended/);
    // The training itself stopped: it never reached its last cycle (the output's last lines).
    expect(output).not.toMatch(/Epoch 1000\/1000/);
    expect((await runEvents(coordinatorJobId)).filter((e) => e.type === 'TunerTrialEpoch').length).toBeLessThan(1000);
    // The run's end finished it, once.
    expect((await runEvents(coordinatorJobId)).filter((e) => e.type === 'TunerTrialFinished').map((e) => e.data.error)).toEqual(['Cancelled']);
  }, 180_000);

  it('stops when cancelled: the training ends long before its cycles, no model is recorded, the trial is not completed', async () => {
    const { coordinatorJobId, jobId } = await plannedTrial(roomyDevice, trialImpulse(1000));
    await training(coordinatorJobId);
    expect((await p.post(`/jobs/${jobId}/cancel`)).status).toBe(200);
    const job = await p.finished(jobId);
    expect(job.finishedSuccessful).toBe(false);
    const epochs = (await runEvents(coordinatorJobId)).filter((e) => e.type === 'TunerTrialEpoch');
    expect(epochs.length).toBeGreaterThan(0);
    expect(await p.stdout(jobId)).not.toMatch(/Epoch 1000\/1000/);
    expect(epochs.length).toBeLessThan(1000);
    expect(await finishedEvent(coordinatorJobId)).toBeUndefined();
    expect((await trialDocument(coordinatorJobId))!.status).toBe('running');
  }, 180_000);
});

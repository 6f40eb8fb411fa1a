import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DEFAULT_OPTIMIZE_SETTINGS } from '../../domain/optimize/optimizeConfig';
import type { TrialImpulse } from '../../domain/optimize/searchSpace';
import { tunerRunStream, type TunerRunEvent } from '../../domain/optimize/tunerRunEvents';
import { classifierBlock, motionInputBlock, sdkProjectForSuite, spectralBlock } from '../support/projectWithFeatures';

// The official SDK, unmodified: OptimizationApi.getState before any run and getTunerRunState for a
// run (appended to the service's log as its coordinator and trials would record it: those jobs are
// other modules'), then JobsApi.setTunerPrimaryJob followed with runJobUntilCompletion on the
// service's own job worker, which adds the trial to the project as a new impulse.
describe('the tuner state and a trial added to the project, through the official SDK', () => {
  const project = sdkProjectForSuite('Tuner state through the SDK');
  const at = '2026-11-27T10:00:00.000Z';
  const trialImpulse: TrialImpulse = { window: { windowSizeMs: 1000, windowIncreaseMs: 250 }, dsp: { type: 'spectral-analysis', config: { 'fft-length': '32' } }, learn: { type: 'keras', denseLayers: [24], learningRate: 0.002, trainingCycles: 12, batchSize: 32 } };

  /** Waits for the read models to show what was appended (the SDK answers what they hold; a run not projected yet is a 404). */
  const until = async <T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> => {
    for (let i = 0; ; i++) {
      const value = await read().catch((error: unknown) => {
        if (i === 100) throw error;
        return undefined;
      });
      if ((value !== undefined && done(value)) || i === 100) return value!;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  it('answers the saved config and no trials before any run', async () => {
    const { api, projectId } = project();
    const state = await api.optimization.getState(projectId);
    expect(state).toMatchObject({ success: true, tunerJobIsRunning: false, trials: [], workers: [], nextRunIndex: 1, canExtendSearch: false, status: { status: 'ready', numCompletedTrials: 0 } });
    expect(state.config).toMatchObject({ targetDevice: { name: 'cortex-m4f-80mhz' }, tuningAlgorithm: 'random' });
    expect(state.tunerCoordinatorJobId).toBeUndefined();
  });

  it("answers a run's trials, then adds a completed trial to the project as a new impulse with a job", async () => {
    const { api, projectId, service } = project();
    await api.impulse.createImpulse(projectId, { name: 'Motion', inputBlocks: [motionInputBlock], dspBlocks: [spectralBlock], learnBlocks: [classifierBlock] } as Parameters<typeof api.impulse.createImpulse>[1]);
    const run = { projectId, coordinatorJobId: 900 };
    const events: TunerRunEvent[] = [
      { type: 'TunerRunStarted', data: { ...run, index: 1, name: 'First run', config: DEFAULT_OPTIMIZE_SETTINGS, space: [], seed: 900, extendedFromJobId: null, started: at } },
      { type: 'TunerTrialPlanned', data: { ...run, trial: 0, impulse: trialImpulse, round: null, planned: at } },
      { type: 'TunerTrialStarted', data: { ...run, trial: 0, jobId: 901, attempt: 1, started: at } },
      { type: 'TunerTrialFinished', data: { ...run, trial: 0, status: 'completed', accuracy: 0.875, loss: 0.3, estimates: { latencyMs: 1, ramBytes: 2000, romBytes: 20000 }, overBudget: false, error: null, finished: at } },
      { type: 'TunerRunEnded', data: { ...run, status: 'completed', error: null, ended: at } },
    ];
    await service.stores.events.appendToStream(
      tunerRunStream(projectId, 900),
      events.map((e) => ({ id: randomUUID(), type: e.type, data: e.data as Record<string, unknown>, metadata: { actor: 'system:test', correlationId: randomUUID(), time: at } })),
      'any',
    );
    const state = await until(() => api.optimization.getTunerRunState(projectId, 900), (s) => s.trials.length === 1);
    expect(state).toMatchObject({ success: true, tunerCoordinatorJobId: 900, tunerJobIsRunning: false, status: { status: 'completed', numCompletedTrials: 1 }, config: { name: 'First run' }, nextRunIndex: 2 });
    const [trial] = state.trials;
    expect(trial).toMatchObject({ id: '900-0', status: 'completed', impulse: { dspBlocks: [{ type: 'spectral-analysis', 'fft-length': '32' }], learnBlocks: [{ dimension: [24] }] } });
    expect((await api.optimization.getState(projectId)).tunerCoordinatorJobId).toBe(900);

    const { id: jobId } = await api.jobs.setTunerPrimaryJob(projectId, { name: 'From the tuner' }, { trialId: trial!.id });
    const output: string[] = [];
    await api.runJobUntilCompletion({ type: 'project', projectId, jobId }, (line) => output.push(line));
    expect(output.join('')).toMatch(/Trial 900-0 is impulse \d+ \("From the tuner"\)/);
    const { impulses } = await until(() => api.impulse.getAllImpulses(projectId), (r) => r.impulses.length === 2);
    const made = impulses.find((i) => i.name === 'From the tuner')!;
    expect(made).toMatchObject({ inputBlocks: [{ type: 'time-series', windowSizeMs: 1000, windowIncreaseMs: 250, frequencyHz: motionInputBlock.frequencyHz }], dspBlocks: [{ type: 'spectral-analysis' }], learnBlocks: [{ type: 'keras' }] });
    const dsp = await api.dsp.getDspConfig(projectId, made.dspBlocks[0]!.id);
    expect(dsp.config?.flatMap((g) => g.items).find((item) => item.param === 'fft-length')?.value).toBe('32');
    expect(await api.learn.getKeras(projectId, made.learnBlocks[0]!.id)).toMatchObject({ visualLayers: [{ type: 'dense', neurons: 24 }], learningRate: 0.002, trainingCycles: 12 });
    const after = await until(() => api.optimization.getTunerRunState(projectId, 900), (s) => s.trials[0]?.impulseAddedToProject !== undefined);
    expect(after.trials[0]!.impulseAddedToProject).toMatchObject({ impulseId: made.id });

    await expect(api.jobs.setTunerPrimaryJob(projectId, {}, { trialId: '900-1' })).rejects.toThrow(/No tuner trial 900-1 in this project/);
  });
});

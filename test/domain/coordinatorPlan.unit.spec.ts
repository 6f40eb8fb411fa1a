import { describe, expect, it } from 'vitest';
import { candidateTrials, freshNeeded, hyperbandSchedule, nextStep, runCapacity, type RunPlan } from '../../domain/optimize/coordinatorPlan';
import { DEFAULT_OPTIMIZE_SETTINGS } from '../../domain/optimize/optimizeConfig';
import { hyperbandBrackets, trialKey, type TrialImpulse } from '../../domain/optimize/searchSpace';
import { runEndAfterCoordinator } from '../../domain/optimize/tunerRunEnd';
import type { TrialRound, TunerRunEvent } from '../../domain/optimize/tunerRunEvents';
import { foldProgress } from '../../domain/optimize/tunerRunProgress';
import type { TunerSpaceImpulse } from '../../domain/optimize/tunerSpace';

const at = '2026-11-28T01:00:00.000Z';
const run = { projectId: 3, coordinatorJobId: 40 };
const config = { ...DEFAULT_OPTIMIZE_SETTINGS, tuningMaxTrials: 4, tuningWorkers: 2 };
const impulse = (n: number): TrialImpulse => ({ window: { windowSizeMs: 500, windowIncreaseMs: 250 }, dsp: { type: 'spectral-analysis', config: { 'fft-length': String(16 * 2 ** n) } }, learn: { type: 'keras', denseLayers: [20], learningRate: 0.005, trainingCycles: 30, batchSize: 32 } });

const started: TunerRunEvent = { type: 'TunerRunStarted', data: { ...run, index: 1, name: 'Run 1', config, space: [], seed: 40, extendedFromJobId: null, started: at } };
const planned = (trial: number, round: TrialRound | null = null, n = trial): TunerRunEvent => ({ type: 'TunerTrialPlanned', data: { ...run, trial, impulse: impulse(n), round, planned: at } });
const startedTrial = (trial: number): TunerRunEvent => ({ type: 'TunerTrialStarted', data: { ...run, trial, jobId: 100 + trial, attempt: 1, started: at } });
const finished = (trial: number, accuracy: number | null, overBudget = false): TunerRunEvent => ({
  type: 'TunerTrialFinished',
  data: { ...run, trial, status: accuracy === null ? 'failed' : 'completed', accuracy, loss: null, estimates: null, overBudget, error: accuracy === null ? 'boom' : null, finished: at },
});
const randomPlan = (candidates = 4, capacity = 2): RunPlan => ({ algorithm: 'random', candidates: Array.from({ length: candidates }, (_, i) => impulse(i)), brackets: [], capacity });
const step = (events: TunerRunEvent[], plan: RunPlan) => nextStep(foldProgress([started, ...events]), plan);

describe('how many trials run at once', () => {
  it('is the config\'s workers, at most the cores, at least one', () => {
    expect(runCapacity(3, 2)).toBe(2);
    expect(runCapacity(1, 8)).toBe(1);
    expect(runCapacity(4, 0)).toBe(1);
  });
});

describe('random search', () => {
  it('plans as many trials as there are free workers, then starts them', () => {
    expect(step([], randomPlan())).toEqual({ kind: 'plan', trials: [0, 1].map((t) => ({ trial: t, impulse: impulse(t), round: null })) });
    expect(step([planned(0), planned(1)], randomPlan())).toEqual({ kind: 'start', trials: [0, 1] });
  });

  it('waits while every worker is busy, and plans the next trial when one is free', () => {
    const two = [planned(0), planned(1), startedTrial(0), startedTrial(1)];
    expect(step(two, randomPlan())).toEqual({ kind: 'wait', jobIds: [100, 101] });
    expect(step([...two, finished(0, 0.8)], randomPlan())).toEqual({ kind: 'plan', trials: [{ trial: 2, impulse: impulse(2), round: null }] });
  });

  it('plans no more than its candidates and ends completed once every trial ended', () => {
    const all = [0, 1, 2, 3].flatMap((t) => [planned(t), startedTrial(t)]);
    expect(step([...all, finished(0, 0.8), finished(1, null), finished(2, 0.7)], randomPlan())).toEqual({ kind: 'wait', jobIds: [103] });
    expect(step([...all, finished(0, 0.8), finished(1, null), finished(2, 0.7), finished(3, 0.9)], randomPlan())).toEqual({ kind: 'end', status: 'completed', error: null });
  });

  it('ends failed when every trial failed, or when there was nothing to try', () => {
    const all = [0, 1].flatMap((t) => [planned(t), startedTrial(t), finished(t, null)]);
    expect(step(all, randomPlan(2))).toEqual({ kind: 'end', status: 'failed', error: 'Every trial failed (2)' });
    expect(step([], randomPlan(0))).toMatchObject({ kind: 'end', status: 'failed', error: expect.stringMatching(/no trial/) });
  });

  it('decides the same after a restart: planned trials are started, not planned again', () => {
    // A coordinator that stopped after planning: the next one reads the plan and starts it.
    expect(step([planned(0), planned(1)], randomPlan())).toEqual({ kind: 'start', trials: [0, 1] });
    expect(step([planned(0), planned(1), startedTrial(0)], randomPlan())).toEqual({ kind: 'start', trials: [1] });
  });
});

describe('hyperband', () => {
  const r0 = { bracket: 0, round: 0, cycles: 10 };
  const r1 = { bracket: 0, round: 1, cycles: 30 };
  const plan: RunPlan = { algorithm: 'hyperband', candidates: [impulse(0), impulse(1), impulse(2)], brackets: [[{ trials: 3, cycles: 10 }, { trials: 1, cycles: 30 }]], capacity: 2 };

  it('plans a round whole, and starts it as workers are free', () => {
    expect(step([], plan)).toEqual({ kind: 'plan', trials: [0, 1, 2].map((t) => ({ trial: t, impulse: impulse(t), round: r0 })) });
    expect(step([0, 1, 2].map((t) => planned(t, r0)), plan)).toEqual({ kind: 'start', trials: [0, 1] });
  });

  it('plans the next round only once every trial of the round ended', () => {
    const round0 = [0, 1, 2].flatMap((t) => [planned(t, r0), startedTrial(t)]);
    expect(step([...round0, finished(0, 0.9), finished(1, 0.95)], plan)).toEqual({ kind: 'wait', jobIds: [102] });
    // Within the device's budget first, then accuracy: trial 1 is over budget, trial 2 is best within it.
    expect(step([...round0, finished(0, 0.9), finished(1, 0.99, true), finished(2, 0.95)], plan)).toEqual({ kind: 'plan', trials: [{ trial: 3, impulse: impulse(2), round: r1 }] });
  });

  it('ends the bracket when no trial of a round succeeded', () => {
    const round0 = [0, 1, 2].flatMap((t) => [planned(t, r0), startedTrial(t), finished(t, null)]);
    expect(step(round0, plan)).toEqual({ kind: 'end', status: 'failed', error: 'Every trial failed (3)' });
  });

  it('lets the next bracket start while a bracket waits for its round, so free workers are used', () => {
    const two: RunPlan = { ...plan, candidates: [impulse(0), impulse(1), impulse(2), impulse(3)], brackets: [[{ trials: 3, cycles: 10 }, { trials: 1, cycles: 30 }], [{ trials: 1, cycles: 30 }]], capacity: 3 };
    const events = [0, 1, 2].flatMap((t) => [planned(t, r0), startedTrial(t)]);
    expect(step([...events, finished(0, 0.5)], two)).toEqual({ kind: 'plan', trials: [{ trial: 3, impulse: impulse(3), round: { bracket: 1, round: 0, cycles: 30 } }] });
  });

  it('fits its schedule to the trials: every round of every bracket is a training', () => {
    for (const [cycles, trials] of [[27, 30], [30, 4], [9, 100], [1, 5]] as const) {
      const brackets = hyperbandSchedule(cycles, trials);
      const trainings = brackets.flat().reduce((n, r) => n + r.trials, 0);
      expect(trainings).toBeLessThanOrEqual(trials);
      expect(freshNeeded('hyperband', brackets, trials)).toBeGreaterThan(0);
      // The largest such schedule: one more fresh trial would not fit.
      const fresh = freshNeeded('hyperband', brackets, trials);
      if (fresh < trials) expect(hyperbandBrackets(cycles, fresh + 1).flat().reduce((n, r) => n + r.trials, 0)).toBeGreaterThan(trials);
    }
  });
});

describe('candidates', () => {
  const space: TunerSpaceImpulse[] = [
    {
      inputBlocks: [{ type: 'time-series', windows: [{ windowSizeMs: 500, windowIncreaseMs: 250 }] }],
      dspBlocks: [{ type: 'spectral-analysis', parameters: [{ name: 'fft-length', values: ['16', '32', '64'] }] }],
      learnBlocks: [{ blocks: [{ type: 'keras', denseStacks: [{ neurons: [20] }, { neurons: [10] }], learningRates: [0.005], trainingCycles: [5], batchSizes: [32] }] }],
    },
  ];

  it('continue a lineage where it ended: an extension tries none of its trials again', () => {
    const all = candidateTrials(space, 7, 6, 100, ['keras'], new Set());
    expect(new Set(all.map(trialKey)).size).toBe(6);
    const tried = new Set(all.slice(0, 4).map(trialKey));
    expect(candidateTrials(space, 7, 4, 100, ['keras'], tried)).toEqual(all.slice(4));
  });

  it('leave out models of a type the impulse has not', () => {
    expect(candidateTrials(space, 7, 6, 100, ['keras-regression'], new Set())).toEqual([]);
  });
});

describe('a coordinator job that ended', () => {
  const runningTwo = [started, planned(0), planned(1), planned(2), startedTrial(0), startedTrial(1), finished(0, 0.9)];

  it('cancelled: its running children are cancelled and the run ends cancelled', () => {
    expect(runEndAfterCoordinator(foldProgress(runningTwo), { finishedSuccessful: false, cancelled: true, reason: 'Cancelled' })).toEqual({ cancelJobIds: [101], status: 'cancelled', error: null });
  });

  it('failed (a lost worker, twice): the run fails with the job\'s reason', () => {
    expect(runEndAfterCoordinator(foldProgress(runningTwo), { finishedSuccessful: false, cancelled: false, reason: 'Worker w stopped responding' })).toEqual({ cancelJobIds: [101], status: 'failed', error: 'Worker w stopped responding' });
  });

  it('after its run ended, or before it started: nothing', () => {
    const ended: TunerRunEvent = { type: 'TunerRunEnded', data: { ...run, status: 'completed', error: null, ended: at } };
    expect(runEndAfterCoordinator(foldProgress([...runningTwo, ended]), { finishedSuccessful: true, cancelled: false, reason: null })).toBeNull();
    expect(runEndAfterCoordinator(foldProgress([]), { finishedSuccessful: false, cancelled: true, reason: null })).toBeNull();
  });
});

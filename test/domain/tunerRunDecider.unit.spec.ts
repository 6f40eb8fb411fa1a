import { describe, expect, it } from 'vitest';
import { DEFAULT_OPTIMIZE_SETTINGS } from '../../domain/optimize/optimizeConfig';
import type { TrialImpulse } from '../../domain/optimize/searchSpace';
import { tunerRunDecider, type TunerRunCommand } from '../../domain/optimize/tunerRunDecider';
import type { TunerRunEvent } from '../../domain/optimize/tunerRunEvents';
import { ConflictError, ValidationError } from '../../domain/shared/errors';
import { deciderSpecification } from '../support/deciderSpecification';

const spec = deciderSpecification(tunerRunDecider);
const now = new Date('2026-11-27T10:00:00.000Z');
const at = now.toISOString();
const run = { projectId: 3, coordinatorJobId: 40 };
const config = { ...DEFAULT_OPTIMIZE_SETTINGS, tuningMaxTrials: 4, targetLatency: 50, targetDevice: { name: 'cortex-m4f-80mhz', ram: 64_000, rom: 256_000 } };
const impulse: TrialImpulse = { window: { windowSizeMs: 1000, windowIncreaseMs: 250 }, dsp: { type: 'spectral-analysis', config: { 'fft-length': '16' } }, learn: { type: 'keras', denseLayers: [20, 10], learningRate: 0.005, trainingCycles: 30, batchSize: 32 } };

const started: TunerRunEvent = { type: 'TunerRunStarted', data: { ...run, index: 1, name: 'Run 1', config, space: [], seed: 40, extendedFromJobId: null, started: at } };
const planned = (trial: number): TunerRunEvent => ({ type: 'TunerTrialPlanned', data: { ...run, trial, impulse, round: null, planned: at } });
const trialStarted = (trial: number, jobId: number, attempt = 1): TunerRunEvent => ({ type: 'TunerTrialStarted', data: { ...run, trial, jobId, attempt, started: at } });
const cmd = <T extends TunerRunCommand['type']>(type: T, data: object) => ({ type, data: { ...run, now, ...data } }) as Extract<TunerRunCommand, { type: T }>;
const estimates = { latencyMs: 12, ramBytes: 20_000, romBytes: 100_000 };
const finish = (trial: number, over: object = {}) => cmd('FinishTrial', { trial, status: 'completed', accuracy: 0.9, loss: 0.3, estimates, error: null, ...over });

describe('a tuner run not started', () => {
  it('starts once; the coordinator starting it again appends nothing', () => {
    spec.given([]).when(cmd('StartTunerRun', { index: 1, name: 'Run 1', config, space: [], seed: 40, extendedFromJobId: null })).then([started]);
    spec.given([started]).when(cmd('StartTunerRun', { index: 1, name: 'Run 1', config, space: [], seed: 40, extendedFromJobId: null })).then([]);
  });

  it('plans no trial and takes no rename', () => {
    spec.given([]).when(cmd('PlanTrials', { trials: [{ trial: 0, impulse, round: null }] })).thenThrows(ConflictError, /has not started/);
    spec.given([]).when(cmd('RenameTunerRun', { name: 'x' })).thenThrows(ConflictError, /has not started/);
  });
});

describe('a running tuner run', () => {
  it('plans trials once each, up to the config\'s trials', () => {
    spec.given([started]).when(cmd('PlanTrials', { trials: [{ trial: 0, impulse, round: null }, { trial: 1, impulse, round: null }] })).then([planned(0), planned(1)]);
    spec.given([started, planned(0)]).when(cmd('PlanTrials', { trials: [{ trial: 0, impulse, round: null }, { trial: 1, impulse, round: null }] })).then([planned(1)]);
    spec.given([started, planned(0), planned(1), planned(2)]).when(cmd('PlanTrials', { trials: [{ trial: 3, impulse, round: null }, { trial: 4, impulse, round: null }] })).thenThrows(ValidationError, /at most 4 trials, got 5/);
    spec.given([started]).when(cmd('PlanTrials', { trials: [{ trial: 0, impulse, round: { bracket: 0, round: 0, cycles: 31 } }] })).thenThrows(ValidationError, /round.cycles must be from 1 to 30/);
  });

  it('starts a planned trial as a job, again with the same job appends nothing, a lost job gets one more attempt', () => {
    spec.given([started, planned(0)]).when(cmd('StartTrial', { trial: 0, jobId: 41 })).then([trialStarted(0, 41)]);
    spec.given([started, planned(0), trialStarted(0, 41)]).when(cmd('StartTrial', { trial: 0, jobId: 41 })).then([]);
    spec.given([started, planned(0), trialStarted(0, 41)]).when(cmd('StartTrial', { trial: 0, jobId: 42 })).then([trialStarted(0, 42, 2)]);
    spec.given([started, planned(0), trialStarted(0, 41), trialStarted(0, 42, 2)]).when(cmd('StartTrial', { trial: 0, jobId: 43 })).thenThrows(ConflictError, /tried 2 times already/);
    spec.given([started]).when(cmd('StartTrial', { trial: 5, jobId: 41 })).thenThrows(ConflictError, /Trial 5 was not planned/);
  });

  it('a first start of a trial another coordinator started already appends nothing', () => {
    spec.given([started, planned(0)]).when(cmd('StartTrial', { trial: 0, jobId: 41, firstAttempt: true })).then([trialStarted(0, 41)]);
    spec.given([started, planned(0), trialStarted(0, 41)]).when(cmd('StartTrial', { trial: 0, jobId: 42, firstAttempt: true })).then([]);
  });

  it('finishes a started trial once, marking it over budget by the device\'s RAM, ROM or latency', () => {
    const given = [started, planned(0), trialStarted(0, 41)];
    spec.given(given).when(finish(0)).then([{ type: 'TunerTrialFinished', data: { ...run, trial: 0, status: 'completed', accuracy: 0.9, loss: 0.3, estimates, overBudget: false, error: null, modelSha256: null, finished: at } }]);
    for (const over of [{ ramBytes: 64_001 }, { romBytes: 256_001 }, { latencyMs: 50.5 }]) {
      spec.given(given).when(finish(0, { estimates: { ...estimates, ...over } })).thenMatches((events) => expect(events[0]!.type === 'TunerTrialFinished' && events[0]!.data.overBudget).toBe(true));
    }
    spec.given([...given, { type: 'TunerTrialFinished', data: { ...run, trial: 0, status: 'completed', accuracy: 0.9, loss: 0.3, estimates, overBudget: false, error: null, modelSha256: null, finished: at } }]).when(finish(0)).then([]);
    spec.given([started, planned(0)]).when(finish(0)).thenThrows(ConflictError, /has not started/);
    spec.given(given).when(finish(0, { estimates: null })).thenThrows(ValidationError, /completed trial has its estimates/);
    spec.given(given).when(finish(0, { accuracy: 1.5 })).thenThrows(ValidationError, /accuracy must be from 0 to 1/);
  });

  it('records the trained model\'s blob with the finish, and refuses a value that is not a SHA-256', () => {
    const given = [started, planned(0), trialStarted(0, 41)];
    const sha = 'ab'.repeat(32);
    spec.given(given).when(finish(0, { modelSha256: sha })).thenMatches((events) => expect(events[0]!.type === 'TunerTrialFinished' && events[0]!.data.modelSha256).toBe(sha));
    spec.given(given).when(finish(0, { modelSha256: 'AB'.repeat(32) })).thenThrows(ValidationError, /modelSha256/);
    spec.given(given).when(finish(0, { status: 'failed', accuracy: null, loss: null, estimates: null, error: 'Out of memory' })).thenMatches((events) => expect(events[0]!.type === 'TunerTrialFinished' && events[0]!.data.modelSha256).toBeNull());
  });

  it('is finished by the job running it when that job names itself, never by an earlier attempt\'s', () => {
    const retried = [started, planned(0), trialStarted(0, 41), trialStarted(0, 42, 2)];
    spec.given(retried).when(finish(0, { jobId: 42 })).thenMatches((events) => expect(events.map((e) => e.type)).toEqual(['TunerTrialFinished']));
    spec.given(retried).when(finish(0, { jobId: 41 })).thenThrows(ConflictError, /run by job 42, not by job 41/);
  });

  it('is renamed, and a rename to the same name appends nothing', () => {
    spec.given([started]).when(cmd('RenameTunerRun', { name: 'Small models' })).then([{ type: 'TunerRunRenamed', data: { ...run, name: 'Small models', renamed: at } }]);
    spec.given([started]).when(cmd('RenameTunerRun', { name: 'Run 1' })).then([]);
    spec.given([started]).when(cmd('RenameTunerRun', { name: ' ' })).thenThrows(ValidationError, /name is empty/);
  });

  it('cancelled, ends with every open trial failed as cancelled, none left pending or running', () => {
    spec.given([started, planned(0), planned(1), trialStarted(0, 41)]).when(cmd('EndTunerRun', { status: 'cancelled', error: null })).then([
      { type: 'TunerTrialFinished', data: { ...run, trial: 0, status: 'failed', accuracy: null, loss: null, estimates: null, overBudget: false, error: 'Cancelled', modelSha256: null, finished: at } },
      { type: 'TunerTrialFinished', data: { ...run, trial: 1, status: 'failed', accuracy: null, loss: null, estimates: null, overBudget: false, error: 'Cancelled', modelSha256: null, finished: at } },
      { type: 'TunerRunEnded', data: { ...run, status: 'cancelled', error: null, ended: at } },
    ]);
  });
});

describe('a trial\'s epochs', () => {
  const given = [started, planned(0), trialStarted(0, 41)];
  const epoch = (n: number, over: object = {}) => ({ epoch: n, loss: 0.5 / n, accuracy: 0.5 + n / 100, valLoss: 0.6 / n, valAccuracy: 0.4 + n / 100, ...over });
  const recorded = (n: number, over: object = {}): TunerRunEvent => ({ type: 'TunerTrialEpoch', data: { ...run, trial: 0, ...epoch(n, over) } });
  const record = (epochs: object[], jobId = 41) => cmd('RecordTrialEpoch', { trial: 0, jobId, epochs });

  it('are recorded in a batch, one event per epoch, from the trial\'s job', () => {
    spec.given(given).when(record([epoch(1), epoch(2), epoch(3)])).then([recorded(1), recorded(2), recorded(3)]);
  });

  it('sent again append nothing; a batch that overlaps appends only the new epochs', () => {
    spec.given([...given, recorded(1), recorded(2)]).when(record([epoch(1), epoch(2)])).then([]);
    spec.given([...given, recorded(1), recorded(2)]).when(record([epoch(2), epoch(3)])).then([recorded(3)]);
  });

  it('start over from the first epoch when the trial\'s job is tried again', () => {
    spec.given([...given, recorded(1), recorded(2), trialStarted(0, 42, 2)]).when(record([epoch(1)], 42)).then([recorded(1)]);
  });

  it('keep a regression\'s missing accuracy as null', () => {
    spec.given(given).when(record([epoch(1, { accuracy: null, valAccuracy: null })])).then([recorded(1, { accuracy: null, valAccuracy: null })]);
  });

  it('are refused from another job, for a trial not started or finished, or in a run that ended', () => {
    spec.given(given).when(record([epoch(1)], 99)).thenThrows(ConflictError, /run by job 41, not by job 99/);
    spec.given([started, planned(0)]).when(record([epoch(1)])).thenThrows(ConflictError, /not started/);
    spec.given([...given, { type: 'TunerTrialFinished', data: { ...run, trial: 0, status: 'failed', accuracy: null, loss: null, estimates: null, overBudget: false, error: 'x', modelSha256: null, finished: at } }]).when(record([epoch(1)])).thenThrows(ConflictError, /has finished/);
    spec.given([...given, { type: 'TunerRunEnded', data: { ...run, status: 'cancelled', error: null, ended: at } }]).when(record([epoch(1)])).thenThrows(ConflictError, /has ended/);
  });

  it('are refused with values out of range: an epoch beyond the run\'s cycles, an accuracy over 1, a negative loss, too many at once', () => {
    spec.given(given).when(record([epoch(31)])).thenThrows(ValidationError, /epoch must be from 1 to 30/);
    spec.given(given).when(record([epoch(1, { valAccuracy: 1.2 })])).thenThrows(ValidationError, /valAccuracy must be from 0 to 1/);
    spec.given(given).when(record([epoch(1, { loss: -1 })])).thenThrows(ValidationError, /loss must be from 0/);
    spec.given(given).when(record(Array.from({ length: 101 }, (_, i) => epoch(i + 1)))).thenThrows(ValidationError, /at most 100 epochs/);
  });
});

describe('an ended tuner run', () => {
  const ended: TunerRunEvent[] = [started, planned(0), { type: 'TunerRunEnded', data: { ...run, status: 'completed', error: null, ended: at } }];
  it('plans and starts nothing more, ends once, and can still be renamed', () => {
    spec.given(ended).when(cmd('PlanTrials', { trials: [{ trial: 1, impulse, round: null }] })).thenThrows(ConflictError, /has ended/);
    spec.given(ended).when(cmd('StartTrial', { trial: 0, jobId: 41 })).thenThrows(ConflictError, /has ended/);
    spec.given(ended).when(cmd('EndTunerRun', { status: 'cancelled', error: null })).then([]);
    spec.given(ended).when(cmd('RenameTunerRun', { name: 'Kept' })).thenMatches((events) => expect(events).toHaveLength(1));
  });
});

describe("a trial's impulse added to the project", () => {
  const finished = (trial: number, status: 'completed' | 'failed'): TunerRunEvent => ({
    type: 'TunerTrialFinished',
    data: { ...run, trial, status, accuracy: status === 'completed' ? 0.9 : null, loss: null, estimates: status === 'completed' ? estimates : null, overBudget: false, error: null, finished: at },
  });
  const done: TunerRunEvent[] = [started, planned(0), planned(1), planned(2), trialStarted(0, 41), trialStarted(1, 42), finished(0, 'completed'), finished(1, 'failed'), { type: 'TunerRunEnded', data: { ...run, status: 'completed', error: null, ended: at } }];
  const added = (impulseId: number, jobId: number): TunerRunEvent => ({ type: 'TunerTrialImpulseAdded', data: { ...run, trial: 0, impulseId, jobId, added: at } });

  it('is recorded for a completed trial after the run ended; the same impulse again (a retried job) appends nothing', () => {
    spec.given(done).when(cmd('RecordTrialImpulse', { trial: 0, impulseId: 7, jobId: 90 })).then([added(7, 90)]);
    spec.given([...done, added(7, 90)]).when(cmd('RecordTrialImpulse', { trial: 0, impulseId: 7, jobId: 90 })).then([]);
    spec.given([...done, added(7, 90)]).when(cmd('RecordTrialImpulse', { trial: 0, impulseId: 8, jobId: 91 })).then([added(8, 91)]);
  });

  it('is refused for a trial that failed, never ran or was not planned', () => {
    spec.given(done).when(cmd('RecordTrialImpulse', { trial: 1, impulseId: 7, jobId: 90 })).thenThrows(ConflictError, /Trial 1 has not completed/);
    spec.given(done).when(cmd('RecordTrialImpulse', { trial: 2, impulseId: 7, jobId: 90 })).thenThrows(ConflictError, /Trial 2 has not completed/);
    spec.given(done).when(cmd('RecordTrialImpulse', { trial: 3, impulseId: 7, jobId: 90 })).thenThrows(ConflictError, /Trial 3 was not planned/);
    spec.given([]).when(cmd('RecordTrialImpulse', { trial: 0, impulseId: 7, jobId: 90 })).thenThrows(ConflictError, /has not started/);
  });
});

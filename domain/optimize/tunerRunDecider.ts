// A tuner run: the coordinator job's record of what it planned, started and learned. Every command a
// coordinator sends again after a restart appends nothing (trials are numbered by the coordinator,
// a trial's start names its job); a trial gets a second attempt only when its first job was lost, and
// the run's end finishes every trial still open, so no trial is left pending or running.
import { ConflictError, ValidationError } from '../shared/errors';
import type { Decider } from '../shared/decider';
import { checkId, checkNumber } from '../shared/numberRules';
import { checkText, cleanText, NAME_RULE } from '../shared/textRules';
import type { OptimizeSettings } from './optimizeConfig';
import type { TrialImpulse } from './searchSpace';
import type { TunerSpaceImpulse } from './tunerSpace';
import type { TrialEpoch, TrialEstimates, TrialRound, TunerRunEvent, TunerTrialEpoch, TunerTrialFinished } from './tunerRunEvents';

/** A trial's job is retried once when its worker is lost, as any job is. */
export const MAX_TRIAL_ATTEMPTS = 2;
const ERROR_RULE = { max: 4096, multiline: true };

type Run = { projectId: number; coordinatorJobId: number };
export type TunerRunCommand =
  | { type: 'StartTunerRun'; data: Run & { index: number; name: string; config: OptimizeSettings; space: TunerSpaceImpulse[]; seed: number; extendedFromJobId: number | null; now: Date } }
  | { type: 'PlanTrials'; data: Run & { trials: { trial: number; impulse: TrialImpulse; round: TrialRound | null }[]; now: Date } }
  /** `firstAttempt`: only a trial no job was started for (a coordinator's start; a second coordinator racing it appends nothing). */
  | { type: 'StartTrial'; data: Run & { trial: number; jobId: number; firstAttempt?: boolean; now: Date } }
  | { type: 'RecordTrialEpoch'; data: Run & { trial: number; jobId: number; epochs: TrialEpoch[]; now: Date } }
  | { type: 'FinishTrial'; data: Run & { trial: number; status: 'completed' | 'failed'; accuracy: number | null; loss: number | null; estimates: TrialEstimates | null; error: string | null; modelSha256?: string | null; jobId?: number; now: Date } }
  | { type: 'RecordTrialImpulse'; data: Run & { trial: number; impulseId: number; jobId: number; now: Date } }
  | { type: 'RenameTunerRun'; data: Run & { name: string; now: Date } }
  | { type: 'EndTunerRun'; data: Run & { status: 'completed' | 'failed' | 'cancelled'; error: string | null; now: Date } };

interface TrialState {
  jobId: number | null;
  attempt: number;
  finished: boolean;
  /** Finished with a trained model (the only trials whose impulse can be added to the project). */
  completed?: boolean;
  /** The impulse last made from it. */
  impulseId?: number;
  /** The last epoch recorded for the current attempt (0: none). */
  epochs: number;
}

export interface TunerRunState {
  config: OptimizeSettings | null;
  name: string;
  trials: ReadonlyMap<number, TrialState>;
  ended: boolean;
}

function openRun(state: TunerRunState): OptimizeSettings {
  if (state.config === null) throw new ConflictError('The tuner run has not started', 'RUN_NOT_STARTED');
  if (state.ended) throw new ConflictError('The tuner run has ended', 'RUN_ENDED');
  return state.config;
}

function trialOf(state: TunerRunState, trial: number): TrialState {
  const t = state.trials.get(trial);
  if (!t) throw new ConflictError(`Trial ${trial} was not planned`, 'TRIAL_NOT_PLANNED');
  return t;
}

/** Over the device's RAM or ROM, or slower than the target latency. */
export const overBudget = (config: OptimizeSettings, e: TrialEstimates): boolean => e.ramBytes > config.targetDevice.ram || e.romBytes > config.targetDevice.rom || e.latencyMs > config.targetLatency;

const unitOrNull = (v: number | null, field: string) => (v === null ? null : checkNumber(v, field, { min: 0, max: 1 }));
const lossOrNull = (v: number | null, field: string) => (v === null ? null : checkNumber(v, field, { min: 0, max: 3.4e38 }));
const SHA256 = /^[0-9a-f]{64}$/;
/** Epochs one command may carry: a trial's job sends them in batches, never one event per append for long. */
export const MAX_EPOCHS_PER_RECORD = 100;

/**
 * Epochs of the trial's current job, in order: an epoch at or before the last recorded is skipped
 * (a command sent again appends nothing), so is any from a job that is not the trial's current one.
 */
function recordEpochs(state: TunerRunState, run: Run, d: Extract<TunerRunCommand, { type: 'RecordTrialEpoch' }>['data']): TunerTrialEpoch[] {
  const config = openRun(state);
  checkId(d.jobId, 'jobId');
  const t = trialOf(state, d.trial);
  if (t.finished) throw new ConflictError(`Trial ${d.trial} has finished`, 'TRIAL_FINISHED');
  if (t.jobId !== d.jobId) throw new ConflictError(`Trial ${d.trial} is ${t.jobId === null ? 'not started' : `run by job ${t.jobId}`}, not by job ${d.jobId}`, 'TRIAL_NOT_STARTED');
  if (!Array.isArray(d.epochs) || d.epochs.length > MAX_EPOCHS_PER_RECORD) throw new ValidationError(`epochs: a list of at most ${MAX_EPOCHS_PER_RECORD} epochs`);
  let last = t.epochs;
  const events: TunerTrialEpoch[] = [];
  for (const e of d.epochs) {
    const epoch = checkNumber(e.epoch, 'epoch', { min: 1, max: config.trainingCycles, integer: true });
    const fields = { loss: lossOrNull(e.loss, 'loss'), accuracy: unitOrNull(e.accuracy, 'accuracy'), valLoss: lossOrNull(e.valLoss, 'valLoss'), valAccuracy: unitOrNull(e.valAccuracy, 'valAccuracy') };
    if (epoch <= last) continue;
    last = epoch;
    events.push({ type: 'TunerTrialEpoch', data: { ...run, trial: d.trial, epoch, ...fields } });
  }
  return events;
}

export const tunerRunDecider: Decider<TunerRunCommand, TunerRunEvent, TunerRunState> = {
  initialState: () => ({ config: null, name: '', trials: new Map(), ended: false }),
  decide(command, state) {
    const { projectId, coordinatorJobId, now } = command.data;
    checkId(projectId, 'projectId');
    checkId(coordinatorJobId, 'coordinatorJobId');
    const run = { projectId, coordinatorJobId };
    const at = now.toISOString();
    switch (command.type) {
      case 'StartTunerRun': {
        if (state.config !== null) return [];
        const d = command.data;
        checkNumber(d.index, 'index', { min: 1, max: 1e9, integer: true });
        checkNumber(d.seed, 'seed', { min: 0, max: 2 ** 32 - 1, integer: true });
        if (d.extendedFromJobId !== null) checkId(d.extendedFromJobId, 'extendedFromJobId');
        return [{ type: 'TunerRunStarted', data: { ...run, index: d.index, name: checkText(d.name, 'name', NAME_RULE), config: d.config, space: d.space, seed: d.seed, extendedFromJobId: d.extendedFromJobId, started: at } }];
      }
      case 'PlanTrials': {
        const config = openRun(state);
        const fresh = command.data.trials.filter((t) => !state.trials.has(t.trial));
        const total = state.trials.size + new Set(fresh.map((t) => t.trial)).size;
        if (total > config.tuningMaxTrials) throw new ValidationError(`The run may plan at most ${config.tuningMaxTrials} trials, got ${total}`, 'TOO_MANY_TRIALS');
        const seen = new Set<number>();
        return fresh
          .filter((t) => !seen.has(t.trial) && seen.add(t.trial))
          .map((t) => {
            checkNumber(t.trial, 'trial', { min: 0, max: config.tuningMaxTrials - 1, integer: true });
            if (t.round) checkNumber(t.round.cycles, 'round.cycles', { min: 1, max: config.trainingCycles, integer: true });
            return { type: 'TunerTrialPlanned' as const, data: { ...run, trial: t.trial, impulse: t.impulse, round: t.round, planned: at } };
          });
      }
      case 'StartTrial': {
        openRun(state);
        const { trial, jobId } = command.data;
        checkId(jobId, 'jobId');
        const t = trialOf(state, trial);
        if (t.jobId === jobId || (command.data.firstAttempt && t.jobId !== null)) return [];
        if (t.finished) throw new ConflictError(`Trial ${trial} has finished`, 'TRIAL_FINISHED');
        if (t.attempt >= MAX_TRIAL_ATTEMPTS) throw new ConflictError(`Trial ${trial} was tried ${t.attempt} times already`, 'TRIAL_RETRIED');
        return [{ type: 'TunerTrialStarted', data: { ...run, trial, jobId, attempt: t.attempt + 1, started: at } }];
      }
      case 'RecordTrialEpoch':
        return recordEpochs(state, run, command.data);
      case 'FinishTrial': {
        const config = openRun(state);
        const d = command.data;
        const modelSha256 = d.modelSha256 ?? null;
        if (modelSha256 !== null && !SHA256.test(modelSha256)) throw new ValidationError('modelSha256: the model blob\'s SHA-256, 64 lowercase hex digits');
        const t = trialOf(state, d.trial);
        if (t.finished) return [];
        if (t.jobId === null) throw new ConflictError(`Trial ${d.trial} has not started`, 'TRIAL_NOT_STARTED');
        // A trial's job names itself: a first attempt still running after its trial was given to another job finishes nothing.
        if (d.jobId !== undefined && d.jobId !== t.jobId) throw new ConflictError(`Trial ${d.trial} is run by job ${t.jobId}, not by job ${d.jobId}`, 'TRIAL_NOT_STARTED');
        const estimates = d.estimates && {
          latencyMs: checkNumber(d.estimates.latencyMs, 'estimates.latencyMs', { min: 0, max: 1e12 }),
          ramBytes: checkNumber(d.estimates.ramBytes, 'estimates.ramBytes', { min: 0, max: 2 ** 53 - 1, integer: true }),
          romBytes: checkNumber(d.estimates.romBytes, 'estimates.romBytes', { min: 0, max: 2 ** 53 - 1, integer: true }),
        };
        if (d.status === 'completed' && (estimates === null || (d.accuracy === null && d.loss === null))) throw new ValidationError('A completed trial has its estimates and a measure (accuracy or loss)');
        return [
          {
            type: 'TunerTrialFinished',
            data: {
              ...run, trial: d.trial, status: d.status, accuracy: unitOrNull(d.accuracy, 'accuracy'), loss: lossOrNull(d.loss, 'loss'),
              estimates, overBudget: estimates !== null && overBudget(config, estimates), error: d.error === null || d.error.trim() === '' ? null : cleanText(d.error, ERROR_RULE), modelSha256, finished: at,
            },
          },
        ];
      }
      case 'RecordTrialImpulse': {
        // After the run's end too: trials are added to the project once the run is done.
        if (state.config === null) throw new ConflictError('The tuner run has not started', 'RUN_NOT_STARTED');
        const { trial, impulseId, jobId } = command.data;
        checkId(impulseId, 'impulseId');
        checkId(jobId, 'jobId');
        const t = trialOf(state, trial);
        if (!t.completed) throw new ConflictError(`Trial ${trial} has not completed: only a trained trial's impulse can be added to the project`, 'TRIAL_NOT_COMPLETED');
        return t.impulseId === impulseId ? [] : [{ type: 'TunerTrialImpulseAdded', data: { ...run, trial, impulseId, jobId, added: at } }];
      }
      case 'RenameTunerRun': {
        if (state.config === null) throw new ConflictError('The tuner run has not started', 'RUN_NOT_STARTED');
        const name = checkText(command.data.name, 'name', NAME_RULE);
        return name === state.name ? [] : [{ type: 'TunerRunRenamed', data: { ...run, name, renamed: at } }];
      }
      case 'EndTunerRun': {
        if (state.config === null) throw new ConflictError('The tuner run has not started', 'RUN_NOT_STARTED');
        if (state.ended) return [];
        const { status, error } = command.data;
        const reason = status === 'cancelled' ? 'Cancelled' : cleanText(error ?? 'The run ended before this trial', ERROR_RULE);
        const open: TunerTrialFinished[] = [...state.trials]
          .filter(([, t]) => !t.finished)
          .map(([trial]) => ({ type: 'TunerTrialFinished', data: { ...run, trial, status: 'failed', accuracy: null, loss: null, estimates: null, overBudget: false, error: reason, modelSha256: null, finished: at } }));
        return [...open, { type: 'TunerRunEnded', data: { ...run, status, error: error === null || error.trim() === '' ? null : cleanText(error, ERROR_RULE), ended: at } }];
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'TunerRunStarted':
        return { ...state, config: event.data.config, name: event.data.name };
      case 'TunerTrialPlanned':
        return { ...state, trials: new Map([...state.trials, [event.data.trial, { jobId: null, attempt: 0, finished: false, epochs: 0 }]]) };
      case 'TunerTrialStarted':
        // A new attempt trains from its first epoch again.
        return { ...state, trials: new Map([...state.trials, [event.data.trial, { jobId: event.data.jobId, attempt: event.data.attempt, finished: false, epochs: 0 }]]) };
      case 'TunerTrialEpoch': {
        const t = state.trials.get(event.data.trial) ?? { jobId: null, attempt: 0, finished: false, epochs: 0 };
        return { ...state, trials: new Map([...state.trials, [event.data.trial, { ...t, epochs: Math.max(t.epochs, event.data.epoch) }]]) };
      }
      case 'TunerTrialFinished': {
        const t = state.trials.get(event.data.trial) ?? { jobId: null, attempt: 0, finished: false, epochs: 0 };
        return { ...state, trials: new Map([...state.trials, [event.data.trial, { ...t, finished: true, completed: event.data.status === 'completed' }]]) };
      }
      case 'TunerTrialImpulseAdded': {
        const t = state.trials.get(event.data.trial) ?? { jobId: null, attempt: 0, finished: true, epochs: 0 };
        return { ...state, trials: new Map([...state.trials, [event.data.trial, { ...t, impulseId: event.data.impulseId }]]) };
      }
      case 'TunerRunRenamed':
        return { ...state, name: event.data.name };
      case 'TunerRunEnded':
        return { ...state, ended: true };
    }
  },
};

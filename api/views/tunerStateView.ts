// The SDK's OptimizeStateResponse (OptimizationApi.getState / getTunerRunState) from the tunerRuns read
// model. A trial is a child job on any job worker: this service has no dedicated tuner workers, so
// `workers` lists the jobs of the running trials as busy workers, and none is ever "ready" or "pending".
import { DEFAULT_OPTIMIZE_SETTINGS, type OptimizeSettings } from '../../domain/optimize/optimizeConfig';
import { spaceSize, type TrialImpulse } from '../../domain/optimize/searchSpace';
import type { TunerSpaceImpulse } from '../../domain/optimize/tunerSpace';
import type { TrialEpoch } from '../../domain/optimize/tunerRunEvents';
import { trialImpulseOf, type TunerRunDocument, type TunerTrialDocument } from '../../projections/tunerRuns/tunerRunDocument';
import { optimizeConfigView } from './optimizeConfigView';

/** A trial's id in the SDK (TunerTrial.id, setTunerPrimaryJob's trialId): unique within the project. */
export const tunerTrialKey = (coordinatorJobId: number, trial: number): string => `${coordinatorJobId}-${trial}`;

/** The run and trial a trial id names; undefined when it is not one this service hands out. */
export function parseTunerTrialKey(id: string): { coordinatorJobId: number; trial: number } | undefined {
  const m = /^(\d{1,15})-(\d{1,6})$/.exec(id);
  if (!m) return undefined;
  const coordinatorJobId = Number(m[1]);
  const trial = Number(m[2]);
  return Number.isSafeInteger(coordinatorJobId) && coordinatorJobId > 0 ? { coordinatorJobId, trial } : undefined;
}

/** A trial's name, also the default name of the impulse made from it. */
export function tunerTrialName(trial: number, impulse: TrialImpulse | null): string {
  if (!impulse) return `Trial ${trial + 1}`;
  const dense = impulse.learn.denseLayers.length === 0 ? 'no dense layers' : `dense ${impulse.learn.denseLayers.join('-')}`;
  return `Trial ${trial + 1}: ${impulse.dsp.type}, ${impulse.window.windowSizeMs} ms window, ${dense}`;
}

/** The epochs the trial runner recorded (none before the first one, or from a runner that records none). */
export function trialEpochs(doc: TunerTrialDocument): TrialEpoch[] {
  const epochs = doc.epochs;
  if (!Array.isArray(epochs)) return [];
  return epochs.filter((e): e is TrialEpoch => typeof e === 'object' && e !== null && Number.isFinite((e as TrialEpoch).epoch));
}

type BlockStatus = 'pending' | 'running' | 'completed' | 'failed';

/** Where a trial is: features first (input, DSP), then training (learn), which has begun once an epoch is recorded. */
function blockStatuses(status: TunerTrialDocument['status'], trained: boolean): [BlockStatus, BlockStatus, BlockStatus] {
  switch (status) {
    case 'pending':
      return ['pending', 'pending', 'pending'];
    case 'running':
      return trained ? ['completed', 'completed', 'running'] : ['completed', 'running', 'pending'];
    case 'completed':
      return ['completed', 'completed', 'completed'];
    case 'failed':
      return trained ? ['completed', 'completed', 'failed'] : ['completed', 'failed', 'pending'];
  }
}

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** Why a trial is over the device's budget, one reason per limit it passes. */
export function overBudgetReasons(config: OptimizeSettings, e: NonNullable<TunerTrialDocument['estimates']>): string[] {
  return [
    ...(e.ramBytes > config.targetDevice.ram ? [`RAM ${e.ramBytes} bytes > ${config.targetDevice.ram}`] : []),
    ...(e.romBytes > config.targetDevice.rom ? [`ROM ${e.romBytes} bytes > ${config.targetDevice.rom}`] : []),
    ...(e.latencyMs > config.targetLatency ? [`latency ${e.latencyMs} ms > ${config.targetLatency} ms`] : []),
  ];
}

/** The SDK's TunerTrial. */
export function tunerTrialView(doc: TunerTrialDocument, run: TunerRunDocument, publicUrl: string) {
  const impulse = doc.impulse ? trialImpulseOf(doc.impulse) : null;
  const epochs = trialEpochs(doc);
  const last = epochs[epochs.length - 1];
  const retries = Math.max(0, doc.attempt - 1);
  const statuses = blockStatuses(doc.status, epochs.length > 0);
  const validation = doc.status === 'completed' && (finite(doc.loss) || finite(doc.accuracy)) ? [{ type: 'float32', ...(finite(doc.loss) ? { loss: doc.loss } : {}), ...(finite(doc.accuracy) ? { accuracy: doc.accuracy } : {}) }] : null;
  const added = doc.impulseAddedToProject;
  const trainingCycles = impulse ? (doc.round?.cycles ?? impulse.learn.trainingCycles) : undefined;
  return {
    id: tunerTrialKey(doc.coordinatorJobId, doc.trial),
    name: tunerTrialName(doc.trial, impulse),
    status: doc.status,
    retries,
    blocks: (['input', 'dsp', 'learn'] as const).map((type, i) => ({ id: i + 1, retries, status: statuses[i]!, type })),
    impulse: impulse
      ? {
          inputBlocks: [{ type: 'time-series', windowSizeMs: impulse.window.windowSizeMs, windowIncreaseMs: impulse.window.windowIncreaseMs }],
          // The block's type last: no parameter name can stand for it.
          dspBlocks: [{ ...impulse.dsp.config, type: impulse.dsp.type }],
          learnBlocks: [
            {
              type: impulse.learn.type,
              dimension: [...impulse.learn.denseLayers],
              learningRate: impulse.learn.learningRate,
              trainingCycles,
              batchSize: impulse.learn.batchSize,
              ...(validation ? { metadata: { modelValidationMetrics: validation } } : {}),
            },
          ],
        }
      : {},
    ...(doc.jobId === null ? {} : { learnJobId: doc.jobId }),
    ...(doc.round === null ? {} : { optimizationRound: doc.round.round }),
    ...(last ? { currentEpoch: last.epoch } : {}),
    // The SDK requires every value of `progress`; an epoch without validation figures (no held-out windows) has none.
    ...(last && finite(last.loss) && finite(last.accuracy) && finite(last.valLoss) && finite(last.valAccuracy)
      ? { progress: { epoch: last.epoch, loss: last.loss, val_loss: last.valLoss, accuracy: last.accuracy, val_accuracy: last.valAccuracy } }
      : {}),
    ...(doc.estimates
      ? {
          devicePerformance: {
            [run.config.targetDevice.name]: {
              latencyMs: doc.estimates.latencyMs,
              ramBytes: doc.estimates.ramBytes,
              romBytes: doc.estimates.romBytes,
              overBudget: doc.overBudget,
              overBudgetReasons: overBudgetReasons(run.config, doc.estimates),
            },
          },
        }
      : {}),
    ...(added ? { impulseAddedToProject: { impulseId: added.impulseId, link: `${publicUrl}/studio/${doc.projectId}/create-impulse/${added.impulseId}` } } : {}),
  };
}

const AUDIO_DSP = new Set(['mfcc', 'mfe']);
const MOTION_DSP = new Set(['spectral-analysis']);

/** The SDK's projectDataType, from the DSP blocks a run tries (the tuner searches time-series impulses only). */
export function projectDataType(dspTypes: readonly string[]): 'audio' | 'image' | 'motion' | 'other' {
  if (dspTypes.some((t) => AUDIO_DSP.has(t))) return 'audio';
  if (dspTypes.some((t) => MOTION_DSP.has(t))) return 'motion';
  if (dspTypes.includes('image')) return 'image';
  return 'other';
}

const spaceDspTypes = (space: readonly TunerSpaceImpulse[]): string[] => space.flatMap((i) => i.dspBlocks.map((b) => b.type));

const JOB_RUNNING = (run: TunerRunDocument): boolean => run.jobStatus === 'running';

export interface TunerStateInput {
  /** The run answered; null when the project has none. */
  run: { doc: TunerRunDocument; trials: TunerTrialDocument[] } | null;
  /** The project's runs (for the next run's index). */
  runs: readonly TunerRunDocument[];
  /** The project's saved tuner config (answered when there is no run). */
  savedConfig: OptimizeSettings | null;
  /** DSP block types of the project's selected impulse (the data type when no run or space names one). */
  impulseDspTypes: readonly string[];
  isWhitelabel: boolean;
  publicUrl: string;
}

/** The SDK's OptimizeStateResponse fields (the envelope adds `success`). */
export function tunerStateView(input: TunerStateInput) {
  const nextRunIndex = input.runs.reduce((max, r) => Math.max(max, r.index), 0) + 1;
  if (!input.run) {
    const config = input.savedConfig ?? DEFAULT_OPTIMIZE_SETTINGS;
    const dspTypes = spaceDspTypes(config.space);
    return {
      config: optimizeConfigView(config),
      status: { numPendingTrials: 0, numRunningTrials: 0, numCompletedTrials: 0, numFailedTrials: 0, numReadyWorkers: 0, numBusyWorkers: 0, numPendingWorkers: 0, status: 'ready' as const },
      tuningAlgorithm: config.tuningAlgorithm,
      tunerJobIsRunning: false,
      trials: [],
      projectDataType: projectDataType(dspTypes.length > 0 ? dspTypes : input.impulseDspTypes),
      workers: [],
      nextRunIndex,
      canExtendSearch: false,
      isWhitelabel: input.isWhitelabel,
      totalTrainingTimeExceeded: false,
    };
  }
  const { doc: run, trials } = input.run;
  const count = (status: TunerTrialDocument['status']) => trials.filter((t) => t.status === status).length;
  const running = trials.filter((t) => t.status === 'running');
  const isRunning = JOB_RUNNING(run);
  const dspTypes = [...spaceDspTypes(run.space), ...trials.flatMap((t) => (t.impulse ? [t.impulse.dsp.type] : []))];
  return {
    config: optimizeConfigView({ ...run.config, name: run.name, space: run.space }),
    status: {
      numPendingTrials: count('pending'),
      numRunningTrials: running.length,
      numCompletedTrials: count('completed'),
      numFailedTrials: count('failed'),
      numReadyWorkers: 0,
      numBusyWorkers: running.length,
      numPendingWorkers: 0,
      status: isRunning ? (trials.length === 0 ? ('creating' as const) : ('running' as const)) : ('completed' as const),
    },
    tunerJobId: run.coordinatorJobId,
    tunerCoordinatorJobId: run.coordinatorJobId,
    ...(run.extendedFromJobId === null ? {} : { continuationJobId: run.extendedFromJobId }),
    tuningAlgorithm: run.config.tuningAlgorithm,
    tunerJobIsRunning: isRunning,
    trials: trials.map((t) => tunerTrialView(t, run, input.publicUrl)),
    projectDataType: projectDataType(dspTypes.length > 0 ? dspTypes : input.impulseDspTypes),
    // A cancelled run has no error of its own; the state has no jobStatus, so this is how a client tells it from a completed one.
    ...(run.error !== null ? { jobError: run.error } : run.jobStatus === 'cancelled' ? { jobError: 'Cancelled' } : {}),
    workers: running.map((t) => ({ workerId: `job-${t.jobId}`, status: 'busy' as const })),
    nextRunIndex,
    // An ended run can be extended while its space holds combinations it did not try (a derived, empty space: unknown, so yes).
    canExtendSearch: !isRunning && (run.space.length === 0 || spaceSize(run.space) > trials.length),
    isWhitelabel: input.isWhitelabel,
    totalTrainingTimeExceeded: false,
  };
}

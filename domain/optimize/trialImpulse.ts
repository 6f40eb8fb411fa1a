// What a tuner trial trains, made concrete against the project's impulse: the trial names a window,
// a DSP block with the parameters it varies and a dense model; the project's impulse gives the rest
// (the input block's axes, frequency and labelling; the DSP block's axes). The result is an impulse
// specification for feature generation (never stored) and the keras settings to train with.
import { dspBlockDefinition } from '../impulse/blockCatalog';
import type { DspBlock, InputBlock } from '../impulse/impulseEvents';
import { kerasModeOf, type KerasMode } from '../learn/kerasRegression';
import { applyKerasChange, DEFAULT_KERAS_SETTINGS, type KerasSettings } from '../learn/kerasSettings';
import { ValidationError } from '../shared/errors';
import type { TrialImpulse } from './searchSpace';
import type { TrialRound } from './tunerRunEvents';

/** The impulse a trial's features are generated for: one input block, one DSP block (its id `TRIAL_DSP_ID`). */
export interface TrialImpulseSpec {
  inputBlocks: InputBlock[];
  dspBlocks: DspBlock[];
  dspConfigs: Record<string, Record<string, string>>;
}

export const TRIAL_DSP_ID = 2;

/** The project's impulse as far as a trial reads it. */
export interface ProjectImpulse {
  inputBlocks: readonly InputBlock[];
  dspBlocks: readonly DspBlock[];
}

/** The trial's impulse on the project's first time-series input; a ValidationError naming what is missing. */
export function trialImpulseSpec(trial: TrialImpulse, project: ProjectImpulse): TrialImpulseSpec {
  const input = project.inputBlocks.find((b) => b.type === 'time-series');
  if (!input) throw new ValidationError('The project\'s impulse has no time-series input block: a trial windows time series', 'NO_TIME_SERIES_INPUT');
  const def = dspBlockDefinition(trial.dsp.type);
  if (!def) throw new ValidationError(`"${trial.dsp.type}" is not a DSP block of this service`, 'UNKNOWN_DSP_BLOCK');
  const projectDsp = project.dspBlocks.find((b) => b.input === input.id);
  const axes = projectDsp?.axes ?? input.axes ?? [];
  if (axes.length === 0) throw new ValidationError('The project\'s impulse names no axes for its time-series input', 'NO_AXES');
  const inputBlock: InputBlock = { ...input, windowSizeMs: trial.window.windowSizeMs, windowIncreaseMs: trial.window.windowIncreaseMs };
  const dspBlock: DspBlock = {
    id: TRIAL_DSP_ID,
    type: trial.dsp.type,
    name: def.info.title,
    title: def.info.title,
    axes: [...axes],
    input: input.id,
    implementationVersion: def.info.latestImplementationVersion,
    createdAt: input.createdAt,
  };
  return { inputBlocks: [inputBlock], dspBlocks: [dspBlock], dspConfigs: { [String(TRIAL_DSP_ID)]: { ...trial.dsp.config } } };
}

/** The keras settings of a trial: its dense stack, rate and batch size, its cycles (its hyperband round's when it has one), the defaults otherwise. */
export function trialKerasSettings(trial: TrialImpulse, round: TrialRound | null): { settings: KerasSettings; mode: KerasMode } {
  const mode = kerasModeOf(trial.learn.type);
  if (!mode) throw new ValidationError(`"${trial.learn.type}" is not a keras learn block`, 'UNKNOWN_LEARN_BLOCK');
  const settings = applyKerasChange(DEFAULT_KERAS_SETTINGS, {
    visualLayers: trial.learn.denseLayers.map((neurons) => ({ type: 'dense' as const, neurons })),
    learningRate: trial.learn.learningRate,
    trainingCycles: round?.cycles ?? trial.learn.trainingCycles,
    batchSize: trial.learn.batchSize,
  });
  return { settings, mode };
}

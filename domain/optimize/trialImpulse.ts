// A tuner trial made concrete against the project's impulse (the template). A trial names only what
// the tuner varied: the window, the DSP block and the parameters it varied (the others keep their
// defaults), and the dense model with its learning rate, cycles and batch size. The rest comes from the
// template: its time-series input block (axes, frequency, labeling) and the axes its DSP block reads.
// Two uses, one reading of the trial: the impulse a trial job generates features for (never stored),
// and the impulse added to the project from a completed trial (JobsApi.setTunerPrimaryJob).
import { dspBlockDefinition } from '../impulse/blockCatalog';
import type { DspBlock, ImpulseBlocks, InputBlock } from '../impulse/impulseEvents';
import type { ImpulseBlocksRequest } from '../impulse/impulseValidation';
import { kerasModeOf, type KerasMode } from '../learn/kerasRegression';
import { applyKerasChange, DEFAULT_KERAS_SETTINGS, type KerasSettings, type KerasSettingsChange } from '../learn/kerasSettings';
import { ConflictError, ValidationError } from '../shared/errors';
import type { TrialImpulse } from './searchSpace';
import type { TrialRound } from './tunerRunEvents';

/** The project's impulse as far as a trial reads it. */
export interface ProjectImpulse {
  inputBlocks: readonly InputBlock[];
  dspBlocks: readonly DspBlock[];
}

export interface TrialBlockIds {
  input: number;
  dsp: number;
  learn: number;
}

/** The template's time-series input block: the tuner searches time-series impulses only. */
export function templateInput(template: Pick<ProjectImpulse, 'inputBlocks'>): InputBlock {
  const input = template.inputBlocks.find((b) => b.type === 'time-series');
  if (!input) throw new ConflictError("The project's impulse has no time-series input block to take the trial's axes and frequency from", 'NO_TIME_SERIES_INPUT');
  return input;
}

/**
 * The axes the trial's DSP block reads: those the template's processing reads (the input's all when it
 * has no DSP block on this input); a single-signal block (audio) takes the first of them.
 */
export function trialAxes(template: ProjectImpulse, trial: TrialImpulse): string[] {
  const input = templateInput(template);
  const templateDsp = template.dspBlocks.find((b) => b.input === input.id);
  const axes = templateDsp && !dspBlockDefinition(templateDsp.type)?.singleAxis ? templateDsp.axes : (input.axes ?? templateDsp?.axes ?? []);
  return dspBlockDefinition(trial.dsp.type)?.singleAxis === true ? axes.slice(0, 1) : [...axes];
}

/** The new impulse's blocks, as a client would send them to createImpulse. */
export function trialImpulseBlocks(template: ImpulseBlocks, trial: TrialImpulse, ids: TrialBlockIds): ImpulseBlocksRequest {
  const { id: _id, createdAt: _createdAt, classificationWindowIncreaseMs, ...input } = templateInput(template);
  const axes = trialAxes(template, trial);
  return {
    inputBlocks: [
      {
        ...input,
        id: ids.input,
        windowSizeMs: trial.window.windowSizeMs,
        windowIncreaseMs: trial.window.windowIncreaseMs,
        // The continuous-classification step only while it still fits the trial's window.
        ...(classificationWindowIncreaseMs !== undefined && classificationWindowIncreaseMs <= trial.window.windowSizeMs ? { classificationWindowIncreaseMs } : {}),
      },
    ],
    dspBlocks: [{ id: ids.dsp, type: trial.dsp.type, axes, input: ids.input }],
    learnBlocks: [{ id: ids.learn, type: trial.learn.type, dsp: [ids.dsp] }],
    postProcessingBlocks: [],
  };
}

/** The learn block's settings: the trial's dense stack, rate and batch size, and the cycles it trained for (its hyperband round's, when in one). */
export function trialKerasSettings(trial: TrialImpulse, round: TrialRound | null): KerasSettingsChange {
  return {
    visualLayers: trial.learn.denseLayers.map((neurons) => ({ type: 'dense' as const, neurons })),
    learningRate: trial.learn.learningRate,
    trainingCycles: round?.cycles ?? trial.learn.trainingCycles,
    batchSize: trial.learn.batchSize,
  };
}

/** The impulse a trial's features are generated for: one input block, one DSP block (its id `TRIAL_DSP_ID`). */
export interface TrialImpulseSpec {
  inputBlocks: InputBlock[];
  dspBlocks: DspBlock[];
  dspConfigs: Record<string, Record<string, string>>;
}

export const TRIAL_DSP_ID = 2;

/** The trial's impulse on the project's first time-series input; a ValidationError naming what is missing. */
export function trialImpulseSpec(trial: TrialImpulse, project: ProjectImpulse): TrialImpulseSpec {
  const input = templateInput(project);
  const def = dspBlockDefinition(trial.dsp.type);
  if (!def) throw new ValidationError(`"${trial.dsp.type}" is not a DSP block of this service`, 'UNKNOWN_DSP_BLOCK');
  const axes = trialAxes(project, trial);
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

/** What a trial job trains with: the trial's keras settings on the defaults, and the learn block's mode. */
export function trialTraining(trial: TrialImpulse, round: TrialRound | null): { settings: KerasSettings; mode: KerasMode } {
  const mode = kerasModeOf(trial.learn.type);
  if (!mode) throw new ValidationError(`"${trial.learn.type}" is not a keras learn block`, 'UNKNOWN_LEARN_BLOCK');
  return { settings: applyKerasChange(DEFAULT_KERAS_SETTINGS, trialKerasSettings(trial, round)), mode };
}

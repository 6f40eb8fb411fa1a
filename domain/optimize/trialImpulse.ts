// A completed trial as an impulse of the project (JobsApi.setTunerPrimaryJob). A trial names only what
// the tuner varied: the window, the DSP block and the parameters it varied (the others keep their
// defaults), and the dense model with its learning rate, cycles and batch size. The rest comes from
// the project's impulse the trial is added from (the template): its time-series input block (axes,
// frequency, labeling) and the axes its DSP block reads.
import { dspBlockDefinition } from '../impulse/blockCatalog';
import type { ImpulseBlocks } from '../impulse/impulseEvents';
import type { ImpulseBlocksRequest } from '../impulse/impulseValidation';
import type { KerasSettingsChange } from '../learn/kerasSettings';
import { ConflictError } from '../shared/errors';
import type { TrialImpulse } from './searchSpace';
import type { TrialRound } from './tunerRunEvents';

export interface TrialBlockIds {
  input: number;
  dsp: number;
  learn: number;
}

/** The template's time-series input block: the tuner searches time-series impulses only. */
export function templateInput(template: ImpulseBlocks): ImpulseBlocks['inputBlocks'][number] {
  const input = template.inputBlocks.find((b) => b.type === 'time-series');
  if (!input) throw new ConflictError("The project's impulse has no time-series input block to take the trial's axes and frequency from", 'NO_TIME_SERIES_INPUT');
  return input;
}

/** The new impulse's blocks, as a client would send them to createImpulse. */
export function trialImpulseBlocks(template: ImpulseBlocks, trial: TrialImpulse, ids: TrialBlockIds): ImpulseBlocksRequest {
  const { id: _id, createdAt: _createdAt, classificationWindowIncreaseMs, ...input } = templateInput(template);
  // The axes the template's processing reads (the input's all when it has no DSP block on this input);
  // a single-signal block (audio) takes the first of them.
  const templateDsp = template.dspBlocks.find((b) => b.input === _id);
  const axes = templateDsp && !dspBlockDefinition(templateDsp.type)?.singleAxis ? templateDsp.axes : (input.axes ?? templateDsp?.axes ?? []);
  const single = dspBlockDefinition(trial.dsp.type)?.singleAxis === true;
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
    dspBlocks: [{ id: ids.dsp, type: trial.dsp.type, axes: single ? axes.slice(0, 1) : [...axes], input: ids.input }],
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

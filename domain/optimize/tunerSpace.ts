// The tuner's search space: which impulses a run may try. Stored without nested arrays (FerretDB,
// which CI runs on, refuses them): the SDK's TunerSpaceImpulse ({inputBlocks, dspBlocks with one list
// of values per parameter, learnBlocks: lists of learn blocks that go together}) is converted at the
// API edge (api/views/tunerSpaceView.ts). Every choice is checked against the project's impulse when
// the config is set (optimizeConfig.ts), so a trial can only fail on a combination of choices.

/** A window an input block may take. */
export interface TunerWindow {
  windowSizeMs: number;
  windowIncreaseMs: number;
}

export interface TunerInputChoice {
  type: 'time-series';
  windows: TunerWindow[];
}

/** One DSP block type and, per parameter it varies, the values (as DSP configs hold them: strings); the other parameters keep their defaults. */
export interface TunerDspChoice {
  type: string;
  parameters: { name: string; values: string[] }[];
}

/** A keras learn block and what it varies: dense layer stacks (neurons per layer), learning rates, training cycles, batch sizes. */
export interface TunerKerasChoice {
  type: 'keras' | 'keras-regression';
  denseStacks: { neurons: number[] }[];
  learningRates: number[];
  trainingCycles: number[];
  batchSizes: number[];
}

/** One impulse shape of the space: a trial takes one window, one DSP choice (each parameter one value) and one model. */
export interface TunerSpaceImpulse {
  inputBlocks: TunerInputChoice[];
  dspBlocks: TunerDspChoice[];
  /** Alternatives: each a set of learn blocks that go together in one impulse (this service tunes one keras block). */
  learnBlocks: { blocks: TunerKerasChoice[] }[];
}

export const SPACE_LIMITS = {
  impulses: 16,
  choices: 32,
  values: 32,
  layers: 8,
  /** Windows of one space impulse, over all its input blocks. */
  windows: 32,
  /** DSP checks on saving a space (each value and each block's defaults, for each window of its space impulse): bounds a save's work on the event loop. */
  checks: 2_000,
} as const;

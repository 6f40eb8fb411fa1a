// What every processing block is to the rest of the service (dsp-reference 0.2): a pure function from
// one window of raw values and the block's parameters to a feature row, plus what the job and the
// DSP endpoints need to know about it. One file per block under domain/dsp/, each exporting one
// ProcessingBlock; `domain/dsp/blocks.ts` lists them by type.

/** The block's output shape (`output_config` of the reference). */
export type OutputConfig =
  | { type: 'flat'; shape: { width: number } }
  | { type: 'spectrogram'; shape: { width: number; height: number } }
  | { type: 'image'; shape: { width: number; height: number; channels: number; frames: number } };

/** A graph for the DSP page, as the reference draws it (`graphs` entries); only when asked. */
export interface DspGraph {
  name: string;
  type: 'logarithmic' | 'linear' | 'image';
  /** Series by name (linear/logarithmic), each one number per x value. */
  X?: Record<string, number[]>;
  y?: number[];
  suggestedYMin?: number;
  suggestedYMax?: number;
  suggestedXMin?: number;
  suggestedXMax?: number;
  suggestedYType?: string;
  /** Base64 PNG (type image). */
  image?: string;
  imageMimeType?: string;
}

/** One window of raw data, interleaved sample-major: [ax0[t0], ax1[t0], …, ax0[t1], …]. */
export interface DspInput {
  values: ArrayLike<number>;
  /** Axis names, in the order they are interleaved (for images: the single axis "image"). */
  axes: readonly string[];
  /** Hz (for images: 0). */
  frequency: number;
  /** Image windows: width and height in pixels and channels (1 grey, 3 RGB); absent for time series. */
  image?: { width: number; height: number; channels: number };
}

export interface DspResult {
  features: Float32Array | Float64Array | number[];
  /** Feature names per axis-less feature (the job prefixes axis names where the block does not). */
  labels: string[];
  outputConfig: OutputConfig;
  /** FFT bins used, when the block reports them. */
  fftUsed: number[];
  graphs: DspGraph[];
}

/** Parameter values keyed by their parameters.json `param` name (dashes, as the catalog has them). */
export type DspParams = Readonly<Record<string, string | number | boolean>>;

/**
 * A block refuses a configuration or an input it cannot process with this error, whose message names
 * the parameter (the reference's ConfigurationError).
 */
export class DspConfigurationError extends Error {
  readonly code = 'DSP_CONFIGURATION';
  readonly status = 400;
  constructor(message: string) {
    super(message);
    this.name = 'DspConfigurationError';
  }
}

export interface ProcessingBlock {
  /** The catalog type: raw, flatten, image, spectral-analysis, mfe, mfcc, spectrogram. */
  type: string;
  /** The implementation versions this code reproduces; the newest is what new blocks get. */
  implementationVersions: readonly number[];
  /** Info flags the job reads (dsp-reference 0.2). */
  dimensionalityReduction: boolean;
  hasFeatureImportance: boolean;
  canNormalizeData: boolean;
  /**
   * Runs the block on one window, like the reference's generate_features. Parameters arrive already
   * defaulted and typed from the catalog; values out of their rules throw DspConfigurationError.
   */
  run(input: DspInput, params: DspParams, options: { implementationVersion: number; drawGraphs: boolean }): DspResult;
}

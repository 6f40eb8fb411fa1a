// The one code path from an impulse's DSP block to a feature row: the DSP run endpoints and the
// generate-features job both resolve the block here (its catalog entry, its saved config plus any
// overrides, checked by validateDspConfig) and build the DspInput for a window the same way, so a
// window run through `POST dsp/{dspId}/run` gives the features the job writes for it.
import { dspBlockDefinition } from '../impulse/blockCatalog';
import { dspRunCheckOf, resolveDspConfig, validateDspConfig, type DspConfigValues, type DspRunCheck } from '../impulse/dspConfig';
import type { DspBlock, InputBlock } from '../impulse/impulseEvents';
import { processingBlocks } from './blocks';
import { DspConfigurationError, type DspInput, type DspResult, type ProcessingBlock } from './processingBlock';

/** Raw values one window may carry (16 kHz audio for 60 s, or a 2048×2048 image): bounds the work a request asks for. */
export const DSP_WINDOW_MAX_VALUES = 4_194_304;

/** Everything needed to run an impulse's DSP block on windows, resolved once per request or job. */
export interface ImpulseDsp {
  dspBlock: DspBlock;
  inputBlock: InputBlock;
  block: ProcessingBlock;
  /** The saved config with defaults and overrides applied, validated. */
  config: DspConfigValues;
  /** Hz for time series (the input block's frequency, else the caller's default); 0 for images. */
  frequencyHz: number;
}

/**
 * Resolves and checks the block: throws DspConfigurationError naming the parameter (or the block type)
 * when the config, with `overrides`, is not one the block can run.
 */
export function resolveImpulseDsp(
  impulse: { inputBlocks: readonly InputBlock[]; dspBlocks: readonly DspBlock[]; dspConfigs: Readonly<Record<string, DspConfigValues>> },
  dspId: number,
  overrides: DspConfigValues = {},
  defaultFrequencyHz?: number,
): ImpulseDsp {
  const dspBlock = impulse.dspBlocks.find((b) => b.id === dspId);
  if (!dspBlock) throw new DspConfigurationError(`DSP block ${dspId} is not part of this impulse`);
  const inputBlock = impulse.inputBlocks.find((b) => b.id === dspBlock.input);
  if (!inputBlock) throw new DspConfigurationError(`DSP block ${dspId} has no input block`);
  const def = dspBlockDefinition(dspBlock.type);
  const block = processingBlocks.get(dspBlock.type);
  if (!def || !block) throw new DspConfigurationError(`DSP block type "${dspBlock.type}" cannot be run by this service`);
  if (!block.implementationVersions.includes(dspBlock.implementationVersion)) {
    throw new DspConfigurationError(`"implementationVersion": ${dspBlock.implementationVersion} is not one of ${block.implementationVersions.join(', ')} for ${dspBlock.type}`);
  }
  const frequencyHz = inputBlock.type === 'image' ? 0 : (inputBlock.frequencyHz ?? defaultFrequencyHz ?? 0);
  const config = resolveDspConfig(def, impulse.dspConfigs[String(dspId)] ?? null, overrides);
  const errors = validateDspConfig(def, config, {
    implementationVersion: dspBlock.implementationVersion,
    ...(frequencyHz > 0 ? { frequencyHz } : {}),
    ...(inputBlock.windowSizeMs === undefined ? {} : { windowSizeMs: inputBlock.windowSizeMs }),
  });
  if (errors.length > 0) throw new DspConfigurationError(errors.join('; '));
  return { dspBlock, inputBlock, block, config, frequencyHz };
}

/** The check by running a resolved block's config needs (dspConfig.ts dspRunCheckOf), if any. */
export function impulseDspRunCheck(dsp: ImpulseDsp): DspRunCheck | undefined {
  return dspRunCheckOf(dspBlockDefinition(dsp.dspBlock.type)!, dsp.config, {
    implementationVersion: dsp.dspBlock.implementationVersion,
    ...(dsp.frequencyHz > 0 ? { frequencyHz: dsp.frequencyHz } : {}),
    ...(dsp.inputBlock.windowSizeMs === undefined ? {} : { windowSizeMs: dsp.inputBlock.windowSizeMs }),
  });
}

/**
 * The DspInput of one window: time series interleaved sample-major over the DSP block's axes; an
 * image window as packed 0xRRGGBB pixels of the input block's size. Refuses values the block cannot
 * take (non-finite, a length that is not whole rows or the image size), naming the problem.
 */
export function dspInputFor(dsp: ImpulseDsp, values: ArrayLike<number>): DspInput {
  if (values.length === 0) throw new DspConfigurationError('"features": the window is empty');
  if (values.length > DSP_WINDOW_MAX_VALUES) throw new DspConfigurationError(`"features": at most ${DSP_WINDOW_MAX_VALUES} values per window, got ${values.length}`);
  for (let i = 0; i < values.length; i++) {
    if (!Number.isFinite(values[i])) throw new DspConfigurationError(`"features": value ${i} is not a finite number`);
  }
  const { inputBlock, dspBlock } = dsp;
  if (inputBlock.type === 'image') {
    const width = inputBlock.imageWidth ?? 0;
    const height = inputBlock.imageHeight ?? 0;
    if (values.length !== width * height) throw new DspConfigurationError(`"features": expected ${width}×${height} = ${width * height} pixels, got ${values.length}`);
    return { values, axes: ['image'], frequency: 0, image: { width, height, channels: 3 } };
  }
  const axes = dspBlock.axes;
  if (axes.length === 0) throw new DspConfigurationError(`"axes": DSP block ${dspBlock.id} selects no axes`);
  if (values.length % axes.length !== 0) {
    throw new DspConfigurationError(`"features": ${values.length} values are not whole rows of ${axes.length} axes (${axes.join(', ')})`);
  }
  return { values, axes, frequency: dsp.frequencyHz };
}

const FLOAT32_MAX = 3.4028234663852886e38;

/**
 * Runs the block on one window: the single place the service calls a block's run. Features are
 * stored as float32 (X.npy) and answered as JSON, so a value float32 cannot hold (huge inputs, or
 * NaN/Infinity from them) refuses the window here, for the run endpoint and the job alike.
 */
export function runImpulseDsp(dsp: ImpulseDsp, values: ArrayLike<number>, options: { drawGraphs: boolean }): DspResult {
  const result = dsp.block.run(dspInputFor(dsp, values), dsp.config, { implementationVersion: dsp.dspBlock.implementationVersion, drawGraphs: options.drawGraphs });
  for (let i = 0; i < result.features.length; i++) {
    const value = result.features[i]!;
    if (!(Math.abs(value) <= FLOAT32_MAX)) {
      throw new DspConfigurationError(`"features": the ${dsp.dspBlock.type} block gave a value outside the float32 range (${value}) at feature ${i}; the window's values are too large for it`);
    }
  }
  return result;
}

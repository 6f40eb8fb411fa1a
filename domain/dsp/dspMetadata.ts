// The DSPMetadata document the generate-features job stores next to X and y (dsp-reference 11),
// built while windows stream through the block: the block's labels and output shape come from the
// first window (as the reference's /batch takes them), includedSamples grows in row order.
import type { DspConfigValues } from '../impulse/dspConfig';
import type { DspResult, OutputConfig } from './processingBlock';
import { resamplingAlgorithmVersion } from './resample';
import type { TimeSeriesWindowing } from './windows';

export interface DspMetadata {
  created: string;
  /** The block's parameter values the features were made with. */
  dspConfig: DspConfigValues;
  /** Class list; y holds the 1-based index of a window's class in it (domain/dsp/npy.ts). */
  labels: string[];
  /** One full name per feature column, e.g. "accX RMS". */
  featureLabels: string[];
  featureCount: number;
  windowCount: number;
  /** One entry per sample that gave windows, in the order of the npy rows. */
  includedSamples: { id: number; windowCount: number }[];
  windowSizeMs: number;
  windowIncreaseMs: number;
  padZeros: boolean;
  frequency: number;
  outputConfig: OutputConfig;
  fftUsed: number[];
  resamplingAlgorithmVersion: number;
}

/**
 * The classes of a data set, sorted by code unit (one order for every run, whatever the sample
 * order): each sample's label and those of its structured labels. Known before the first window, so
 * y can be written as windows come.
 */
export function classList(samples: readonly { label: string | null; structuredLabels: readonly { label: string }[] }[]): string[] {
  const set = new Set<string>();
  for (const s of samples) {
    if (s.structuredLabels.length > 0) for (const l of s.structuredLabels) set.add(l.label);
    else if (s.label !== null) set.add(s.label);
  }
  return [...set].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Full feature names, as the Studio shows them. Blocks give their labels per axis (flatten, spectral
 * analysis: "RMS", …) for the layout [axis0 features…, axis1 features…]: each gets its axis name in
 * front ("accX RMS"). Labels that already name every feature are kept. Without labels, a block whose
 * features are the interleaved window itself (raw) names them "accX 0", "accY 0", "accX 1", … by axis
 * and row; any other block "Feature 0", "Feature 1", ….
 */
export function featureLabels(axes: readonly string[], blockLabels: readonly string[], featureCount: number, interleaved: boolean): string[] {
  if (blockLabels.length > 0 && blockLabels.length * axes.length === featureCount) return axes.flatMap((axis) => blockLabels.map((l) => `${axis} ${l}`));
  if (blockLabels.length === featureCount) return [...blockLabels];
  if (interleaved && axes.length > 0 && featureCount % axes.length === 0) return Array.from({ length: featureCount }, (_, i) => `${axes[i % axes.length]} ${Math.floor(i / axes.length)}`);
  return Array.from({ length: featureCount }, (_, i) => `Feature ${i}`);
}

export class DspMetadataBuilder {
  private first: { labels: string[]; outputConfig: OutputConfig; fftUsed: number[]; featureCount: number } | undefined;
  private readonly samples: { id: number; windowCount: number }[] = [];
  private readonly seen = new Set<number>();
  private windows = 0;
  private readonly classIndex: Map<string, number>;

  constructor(
    private readonly settings: {
      dspConfig: DspConfigValues;
      classes: readonly string[];
      axes: readonly string[];
      /** Image impulses: zeros and false (an image window has no time). */
      windowing: Pick<TimeSeriesWindowing, 'windowSizeMs' | 'windowIncreaseMs' | 'padZeros' | 'frequencyHz'>;
      /** The block's features are the interleaved window (raw): names by axis and row. */
      interleaved: boolean;
    },
  ) {
    this.classIndex = new Map(settings.classes.map((c, i) => [c, i + 1]));
  }

  /** The y value of a window's label: its 1-based index in the class list. */
  yOf(label: string): number {
    const ix = this.classIndex.get(label);
    if (ix === undefined) throw new RangeError(`label "${label}" is not in the class list`);
    return ix;
  }

  /**
   * Records one processed window of sample `sampleId`; windows of one sample must come together, in
   * row order. Every window must give the feature count of the first.
   */
  addWindow(sampleId: number, result: Pick<DspResult, 'features' | 'labels' | 'outputConfig' | 'fftUsed'>): void {
    if (!this.first) this.first = { labels: [...result.labels], outputConfig: result.outputConfig, fftUsed: [...result.fftUsed], featureCount: result.features.length };
    else if (result.features.length !== this.first.featureCount) throw new RangeError(`sample ${sampleId} gave ${result.features.length} features, earlier windows ${this.first.featureCount}`);
    const last = this.samples[this.samples.length - 1];
    if (last && last.id === sampleId) last.windowCount++;
    else {
      if (this.seen.has(sampleId)) throw new RangeError(`the windows of sample ${sampleId} did not come together`);
      this.seen.add(sampleId);
      this.samples.push({ id: sampleId, windowCount: 1 });
    }
    this.windows++;
  }

  get windowCount(): number {
    return this.windows;
  }

  build(created: Date): DspMetadata {
    if (!this.first) throw new RangeError('no window was processed: there are no features to describe');
    const { windowing, axes } = this.settings;
    return {
      created: created.toISOString(),
      dspConfig: { ...this.settings.dspConfig },
      labels: [...this.settings.classes],
      featureLabels: featureLabels(axes, this.first.labels, this.first.featureCount, this.settings.interleaved),
      featureCount: this.first.featureCount,
      windowCount: this.windows,
      includedSamples: this.samples.map((s) => ({ ...s })),
      windowSizeMs: windowing.windowSizeMs,
      windowIncreaseMs: windowing.windowIncreaseMs,
      padZeros: windowing.padZeros,
      frequency: windowing.frequencyHz,
      outputConfig: this.first.outputConfig,
      fftUsed: this.first.fftUsed,
      resamplingAlgorithmVersion,
    };
  }
}

// The DSP work the thread pool runs (commands/jobs/threadPool.ts loads this module in its worker
// threads): one window for the DSP run endpoints; a config's check by running, for its save and the
// generate-features request; for the generate-features job, all windows of one
// sample at a time, then the feature explorer and the feature importance.
// Both go through domain/dsp/impulseDsp.ts, so they compute the same features for the same window.
import { closeSync, fstatSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import { processingBlocks } from '../../domain/dsp/blocks';
import { buildFeatureExplorer, type ExplorerWindow, type FeatureExplorer } from '../../domain/dsp/featureExplorer';
import { featureImportance, type FeatureImportanceResponse } from '../../domain/dsp/featureImportance';
import { runImpulseDsp, type ImpulseDsp } from '../../domain/dsp/impulseDsp';
import { DspConfigurationError, type DspGraph, type DspResult, type OutputConfig } from '../../domain/dsp/processingBlock';
import { AxesSelection } from '../../domain/dsp/axesSelection';
import { imageWindow, imageWindowing, sampleWindows, sliceRowsToKeep, sliceWindow, WindowingError, type ImageWindowing, type SliceRange, type TimeSeriesWindowing, type WindowSample } from '../../domain/dsp/windows';
import { dspRunRefusals, type DspRunCheck } from '../../domain/impulse/dspConfig';
import { decodeValuesInto } from '../../domain/sample/formats/decodeValues';
import type { SampleSource } from '../../domain/sample/formats/sampleFormat';
import { readWavInto } from '../../domain/sample/formats/wavFormat';

/** ImpulseDsp without its block object, which cannot cross to a thread; the thread looks it up by type. */
export type DspTaskBlock = Omit<ImpulseDsp, 'block'>;

export const dspTaskBlock = (dsp: ImpulseDsp): DspTaskBlock => ({ dspBlock: dsp.dspBlock, inputBlock: dsp.inputBlock, config: dsp.config, frequencyHz: dsp.frequencyHz });

function rehydrate(dsp: DspTaskBlock): ImpulseDsp {
  const block = processingBlocks.get(dsp.dspBlock.type);
  if (!block) throw new DspConfigurationError(`DSP block type "${dsp.dspBlock.type}" cannot be run by this service`);
  return { ...dsp, block };
}

/**
 * A refusal of the block comes back as a value, not a throw: the pool turns a throw into a plain
 * TaskFailedError, and the caller needs to tell "bad parameter" (400) from a fault.
 */
export type DspTaskOutcome<T> = { ok: true; value: T } | { ok: false; refusal: string };

function refusalOf<T>(f: () => T): DspTaskOutcome<T> {
  try {
    return { ok: true, value: f() };
  } catch (error) {
    if (error instanceof DspConfigurationError) return { ok: false, refusal: error.message };
    throw error;
  }
}

export interface DspWindowResult {
  features: number[];
  labels: string[];
  outputConfig: OutputConfig;
  fftUsed: number[];
  graphs: DspGraph[];
}

/** One window (the run endpoints). */
export function runDspWindow(input: { dsp: DspTaskBlock; values: number[]; drawGraphs: boolean }): DspTaskOutcome<DspWindowResult> {
  return refusalOf(() => {
    const r = runImpulseDsp(rehydrate(input.dsp), input.values, { drawGraphs: input.drawGraphs });
    return { features: Array.from(r.features), labels: r.labels, outputConfig: r.outputConfig, fftUsed: r.fftUsed, graphs: r.graphs };
  });
}

export interface SampleFeaturesInput {
  dsp: DspTaskBlock;
  /** How the impulse's input block cuts a sample: time-series windows, or one image window. */
  windowing: { type: 'time-series'; windowing: TimeSeriesWindowing } | { type: 'image'; windowing: ImageWindowing };
  sample: WindowSample;
  contentType: string;
  /** The stored file; decoded here, in the thread, like the windows and the block. */
  bytes: Uint8Array;
  /**
   * A file the raw windows are appended to, float32 little-endian, one window after another (the body
   * of `dsp-data/.../x?raw=true`): written from here so the job's process never holds them.
   */
  rawPath?: string;
}

export type SampleFeatures =
  | { skipped: true; reason: string }
  | {
      skipped: false;
      /** Row-major float32, `labels.length × featureCount`. */
      features: Float32Array;
      featureCount: number;
      /** The class label of each window, in row order. */
      labels: string[];
      /** Each window's place in the sample, in row order (for the feature explorer). */
      windows: { startMs: number; endMs: number }[];
      blockLabels: string[];
      outputConfig: OutputConfig;
      fftUsed: number[];
      /** Values per raw window (what each window appended to rawPath). */
      rawColumns: number;
    };

/**
 * Appends float32 windows to a file in 1 MiB writes. A sample is all or nothing: closing without
 * keeping cuts the file back to where this sample began, so a sample skipped halfway leaves no window.
 */
class RawWindowFile {
  private readonly fd: number;
  private readonly start: number;
  private readonly buffer = Buffer.alloc(1 << 20);
  private used = 0;
  constructor(file: string) {
    this.fd = openSync(file, 'a');
    this.start = fstatSync(this.fd).size;
  }
  append(values: ArrayLike<number>): void {
    const floats = Float32Array.from(values);
    const bytes = Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength);
    if (this.used + bytes.length > this.buffer.length) this.flush();
    if (bytes.length > this.buffer.length) writeSync(this.fd, bytes);
    else this.used += bytes.copy(this.buffer, this.used);
  }
  private flush(): void {
    if (this.used > 0) writeSync(this.fd, this.buffer, 0, this.used);
    this.used = 0;
  }
  close(keep: boolean): void {
    try {
      if (keep) this.flush();
      else ftruncateSync(this.fd, this.start);
    } finally {
      closeSync(this.fd);
    }
  }
}

/** One window to run: its values and what the job records about it. */
interface SampleWindow {
  values: ArrayLike<number>;
  label: string;
  startMs: number;
  endMs: number;
}

/** The windows of a sample per the input block, or why it has none. */
async function windowsOf(input: SampleFeaturesInput): Promise<{ skipped: true; reason: string } | { skipped: false; count: number; windows: Iterable<SampleWindow> }> {
  const { sample } = input;
  const name = `sample ${sample.id} ("${sample.name}")`;
  if (input.windowing.type === 'image') {
    if (sample.label === null) return { skipped: true, reason: `${name} has no label` };
    try {
      const window = await imageWindow(input.bytes, input.windowing.windowing);
      return { skipped: false, count: 1, windows: [{ values: window.pixels, label: sample.label, startMs: 0, endMs: 0 }] };
    } catch (error) {
      if (error instanceof WindowingError) return { skipped: true, reason: `${name}: ${error.message}` };
      throw error;
    }
  }
  const axes = input.dsp.dspBlock.axes;
  const windows = sampleWindows(sample, await decodeAxes(input, new AxesSelection(sample, axes)), axes, input.windowing.windowing);
  return windows.skipped ? windows : { skipped: false, count: windows.count, windows: windows.windows() };
}

/** A source over bytes already in memory, for the WAV reader. */
function memorySource(bytes: Uint8Array): SampleSource {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { size: buffer.length, read: async (offset, length) => buffer.subarray(offset, offset + length), readAll: async () => buffer };
}

/** Decodes a stored time-series sample into the selection (which keeps the axes and rows it wants), unless it cannot be used anyway. */
async function decodeAxes(input: { bytes: Uint8Array; contentType: string; sample: WindowSample }, selection: AxesSelection): Promise<AxesSelection> {
  if (selection.problem !== undefined) return selection;
  if (input.contentType === 'audio/wav') await readWavInto(memorySource(input.bytes), input.sample.valuesCount, selection);
  else decodeValuesInto(Buffer.from(input.bytes.buffer, input.bytes.byteOffset, input.bytes.byteLength), input.contentType, selection);
  return selection;
}

/**
 * All windows of one sample (the generate-features job's batch): decode its values, resample and
 * window them (domain/dsp/windows.ts), run the block on each. A sample the block cannot use comes back
 * skipped with the reason; a block refusal (DspConfigurationError) too, naming the sample.
 */
export async function sampleFeatures(input: SampleFeaturesInput): Promise<SampleFeatures> {
  const { sample } = input;
  const windows = await windowsOf(input);
  if (windows.skipped) return windows;
  const dsp = rehydrate(input.dsp);
  const labels: string[] = [];
  const places: { startMs: number; endMs: number }[] = [];
  let out: Float32Array | undefined;
  let first: DspResult | undefined;
  let rawColumns = 0;
  const raw = input.rawPath === undefined ? undefined : new RawWindowFile(input.rawPath);
  let kept = false;
  try {
    for (const w of windows.windows) {
      const r = runImpulseDsp(dsp, w.values, { drawGraphs: false });
      if (!first) {
        first = r;
        out = new Float32Array(r.features.length * windows.count);
        rawColumns = w.values.length;
      } else if (r.features.length !== first.features.length) {
        throw new Error(`The ${dsp.dspBlock.type} block gave ${r.features.length} features for a window after ${first.features.length} for the first`);
      }
      out!.set(r.features, labels.length * first.features.length);
      raw?.append(w.values);
      labels.push(w.label);
      places.push({ startMs: w.startMs, endMs: w.endMs });
    }
    kept = first !== undefined;
  } catch (error) {
    if (error instanceof DspConfigurationError) return { skipped: true, reason: `sample ${sample.id} ("${sample.name}"): ${error.message}` };
    throw error;
  } finally {
    raw?.close(kept);
  }
  if (!first || !out) return { skipped: true, reason: `sample ${sample.id} ("${sample.name}") gave no window` };
  return { skipped: false, features: out, featureCount: first.features.length, labels, windows: places, blockLabels: first.labels, outputConfig: first.outputConfig, fftUsed: first.fftUsed, rawColumns };
}

export interface SliceFeaturesInput {
  dsp: DspTaskBlock;
  /** Time-series impulses: the windowing and the checked slice (windows.ts sliceRange); absent for image impulses. */
  timeSeries?: { windowing: TimeSeriesWindowing; slice: SliceRange };
  sample: WindowSample;
  contentType: string;
  bytes: Uint8Array;
}

export interface SliceFeatures extends DspWindowResult {
  /** The slice's stored rows, the block's axes only, as the response's payload shows them (empty for images). */
  rows: number[][];
  label: string | null;
  labelAtEnd: string | null;
}

/**
 * One window of a stored sample (the slice run endpoints): cut as the job cuts it (windows.ts
 * sliceWindow, or imageWindow for image impulses) and run through the same block path, graphs drawn.
 * What the sample or block cannot give comes back as a refusal naming it.
 */
export async function sliceFeatures(input: SliceFeaturesInput): Promise<DspTaskOutcome<SliceFeatures>> {
  const dsp = rehydrate(input.dsp);
  const run = (values: ArrayLike<number>) => {
    const r = runImpulseDsp(dsp, values, { drawGraphs: true });
    return { features: Array.from(r.features), labels: r.labels, outputConfig: r.outputConfig, fftUsed: r.fftUsed, graphs: r.graphs };
  };
  try {
    if (!input.timeSeries) {
      const window = await imageWindow(input.bytes, imageWindowing(dsp.inputBlock));
      return { ok: true, value: { ...run(window.pixels), rows: [], label: input.sample.label, labelAtEnd: null } };
    }
    const { windowing, slice } = input.timeSeries;
    const axes = dsp.dspBlock.axes;
    // Only the rows the window is made from and those the answer shows are kept.
    const selection = await decodeAxes(input, new AxesSelection(input.sample, axes, sliceRowsToKeep(input.sample, windowing, slice)));
    const window = sliceWindow(input.sample, selection, axes, windowing, slice);
    if ('skipped' in window) return { ok: false, refusal: window.reason };
    const sliced: number[][] = [];
    for (let i = slice.start; i < Math.min(slice.end, selection.rows); i++) sliced.push(selection.row(i));
    return { ok: true, value: { ...run(window.values), rows: sliced, label: window.label, labelAtEnd: window.labelAtEnd } };
  } catch (error) {
    if (error instanceof DspConfigurationError || error instanceof WindowingError) return { ok: false, refusal: error.message };
    throw error;
  }
}

/** The feature explorer of one category (UMAP for reducing blocks): CPU work for the pool. */
export function explorerTask(input: { windows: ExplorerWindow[]; total: number; reduce: boolean; seed: number }): FeatureExplorer {
  return buildFeatureExplorer(input.windows, input.total, { reduce: input.reduce, seed: input.seed });
}

/** One-vs-rest random forest importances over the sampled training windows: CPU work for the pool. */
export function importanceTask(input: { rows: number[][]; ys: number[]; classes: string[]; featureLabels: string[]; seed: number }): FeatureImportanceResponse {
  return featureImportance(input.rows, input.ys, input.classes, input.featureLabels, input.seed);
}

/** A DSP config's check by running (dspRunCheck.ts): the refusals naming its parameters. */
export function dspRunCheck(check: DspRunCheck): string[] {
  return dspRunRefusals(check);
}

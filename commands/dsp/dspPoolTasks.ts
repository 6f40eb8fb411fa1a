// The DSP work the thread pool runs (commands/jobs/threadPool.ts loads this module in its worker
// threads): one window for the DSP run endpoints, batches of windows for the generate-features job.
// Both go through domain/dsp/impulseDsp.ts, so they compute the same features for the same window.
import { processingBlocks } from '../../domain/dsp/blocks';
import { runImpulseDsp, type ImpulseDsp } from '../../domain/dsp/impulseDsp';
import { DspConfigurationError, type DspGraph, type OutputConfig } from '../../domain/dsp/processingBlock';

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

export interface DspBatchResult {
  /** Row-major float32 features, `windows × featureCount`. */
  features: Float32Array;
  featureCount: number;
  labels: string[];
  outputConfig: OutputConfig;
}

/**
 * A batch of windows (the job): one float32 row each. Every window must give the same feature count,
 * as X needs; a block that did not would be a fault, reported as such.
 */
export function runDspWindows(input: { dsp: DspTaskBlock; windows: Float64Array[] }): DspTaskOutcome<DspBatchResult> {
  return refusalOf(() => {
    const dsp = rehydrate(input.dsp);
    let out: Float32Array | undefined;
    let featureCount = 0;
    let labels: string[] = [];
    let outputConfig: OutputConfig | undefined;
    input.windows.forEach((values, i) => {
      const r = runImpulseDsp(dsp, values, { drawGraphs: false });
      if (!out) {
        featureCount = r.features.length;
        labels = r.labels;
        outputConfig = r.outputConfig;
        out = new Float32Array(featureCount * input.windows.length);
      } else if (r.features.length !== featureCount) {
        throw new Error(`The ${dsp.dspBlock.type} block gave ${r.features.length} features for a window after ${featureCount} for the first`);
      }
      out.set(r.features, i * featureCount);
    });
    return { features: out ?? new Float32Array(0), featureCount, labels, outputConfig: outputConfig ?? { type: 'flat', shape: { width: 0 } } };
  });
}

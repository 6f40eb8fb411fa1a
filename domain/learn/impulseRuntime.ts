// A project's impulse as one runnable thing: raw window in, DSP features per block, then each learn
// block's answer. The one inference path shared by the service (classify a stored sample, model
// testing) and the deployments (.eim script, wasm module), so a window gets the same scores wherever
// it runs. Pure: no node: imports, no stores; TensorFlow.js is passed in, since a deployment bundles
// this file with esbuild and picks its own backend.
//
// The raw window (what a device sends, the runner's input_features_count values):
// * time series: `windowRows` rows of `axes` interleaved sample-major, at the impulse frequency; each
//   DSP block takes its own axes from it by name, in its own order;
// * image: width × height pixels packed as 0xRRGGBB, as the DSP blocks take them.
// A DSP block's features are scaled with the scaler of its generated features when the features were
// normalised (generate-features' normalize-channel-standard-scaler), as X was when the model trained.
// A learn block's input is its DSP blocks' features side by side, in the order it lists them.
import type * as TF from '@tensorflow/tfjs';
import { processingBlocks } from '../dsp/blocks';
import { runImpulseDsp, type ImpulseDsp } from '../dsp/impulseDsp';
import { standardize } from '../dsp/standardScaler';
import type { DspConfigValues } from '../impulse/dspConfig';
import type { DspBlock, InputBlock } from '../impulse/impulseEvents';
import { DomainError } from '../shared/errors';
import { anomalyScore, type AnomalyModel } from './anomalyKmeans';
import type { KerasModelFiles } from './kerasModelBlob';

/** A resolved DSP block (commands/dsp/dspPoolTasks DspTaskBlock) and the scaler its features were stored with. */
export interface RuntimeDspBlock {
  dspBlock: DspBlock;
  inputBlock: InputBlock;
  /** The saved config with defaults applied, validated (resolveImpulseDsp). */
  config: DspConfigValues;
  /** Hz for time series; 0 for images. */
  frequencyHz: number;
  /** generate-features' standard scaler (per feature column), or null when features were not normalised. */
  scaler: { mean: number[]; scale: number[] } | null;
}

export interface RuntimeKerasBlock {
  type: 'keras';
  id: number;
  name: string;
  /** DSP block ids whose features, side by side in this order, are the model's input. */
  dsp: number[];
  /** The model's outputs, in order; a regression model's are its training labels (the values it was fit to), for reference. */
  classes: string[];
  /** A keras-regression block's model: one linear output, answered as `{ value }` (the real service's regression result). */
  mode?: 'regression';
  minimumConfidenceRating: number;
  /** The TensorFlow.js layers model: model.json as parsed and model.weights.bin in base64. */
  model: { modelJson: KerasModelFiles['modelJson']; weightsBase64: string };
}

export interface RuntimeAnomalyBlock {
  type: 'anomaly';
  id: number;
  name: string;
  dsp: number[];
  /** A score above it flags the window as an anomaly. */
  minimumConfidenceRating: number;
  model: AnomalyModel;
}

export type RuntimeLearnBlock = RuntimeKerasBlock | RuntimeAnomalyBlock;

/** All a deployment needs to run an impulse: JSON-serialisable. */
export interface ImpulseRuntimeSpec {
  projectId: number;
  projectName: string;
  impulseId: number;
  deployVersion?: number;
  inputBlock: InputBlock;
  /** Time series: the raw window's axes, in interleaving order; images: []. */
  axes: string[];
  /** Time series: rows in one raw window; images: 1. */
  windowRows: number;
  /** Time series: the impulse frequency in Hz; images: 0. */
  frequencyHz: number;
  dspBlocks: RuntimeDspBlock[];
  learnBlocks: RuntimeLearnBlock[];
}

/** A regression model's one output, as the real service and its Linux runner name it. */
export const REGRESSION_LABEL = 'value';

/** The labels a keras block answers: its classes, or `value` for a regression model. */
export const kerasLabels = (block: Pick<RuntimeKerasBlock, 'classes' | 'mode'>): string[] => (block.mode === 'regression' ? [REGRESSION_LABEL] : [...block.classes]);

/** What one learn block says about a window (a regression block: `classification` is `{ value }`). */
export type LearnBlockResult =
  | { learnId: number; type: 'keras'; classification: Record<string, number> }
  | { learnId: number; type: 'anomaly'; anomaly: number };

export interface ImpulseClassification {
  /** The first keras block's scores by class ({} without one). */
  classification: Record<string, number>;
  /** The first anomaly block's score, when there is one. */
  anomaly?: number;
  /** Every learn block's result, in the impulse's order. */
  results: LearnBlockResult[];
  /** Milliseconds spent in the DSP blocks, the classifiers and the anomaly blocks. */
  timing: { dsp: number; classification: number; anomaly: number };
}

export interface ImpulseRunner {
  /** Raw values of one window (the runner's input_features_count). */
  readonly rawValueCount: number;
  /** The first keras block's classes (['value'] for a regression model; [] without one). */
  readonly labels: string[];
  /** Each DSP block's features of a raw window (scaled as the models saw them), by DSP block id. */
  features(raw: ArrayLike<number>): Map<number, Float32Array>;
  classify(raw: ArrayLike<number>): Promise<ImpulseClassification>;
  /**
   * Several windows at once, each answered as `classify` would: one model call per keras block for
   * the whole batch (a call costs far more than a window). Timings are the batch's, shared evenly.
   */
  classifyBatch(raws: readonly ArrayLike<number>[]): Promise<ImpulseClassification[]>;
  dispose(): void;
}

/** A spec the runtime cannot run, or a window it cannot take; the message names the problem. */
export class ImpulseRuntimeError extends DomainError {
  constructor(message: string) {
    super('IMPULSE_RUNTIME', message, 400);
  }
}

const now = (): number => (typeof performance === 'undefined' ? Date.now() : performance.now());

/** Base64 to bytes without Buffer (a deployment may run in a browser). */
export function base64Bytes(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Bytes to base64 without Buffer, in chunks (String.fromCharCode takes a bounded argument list). */
export function bytesBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** The raw value count of a spec's window. */
export function rawValueCountOf(spec: ImpulseRuntimeSpec): number {
  if (spec.inputBlock.type === 'image') return (spec.inputBlock.imageWidth ?? 0) * (spec.inputBlock.imageHeight ?? 0);
  return spec.windowRows * spec.axes.length;
}

interface PreparedDsp {
  id: number;
  dsp: ImpulseDsp;
  scaler: RuntimeDspBlock['scaler'];
  /** For each of the block's axes, its column in the raw window (time series only). */
  columns: number[] | null;
}

function prepareDsp(spec: ImpulseRuntimeSpec, b: RuntimeDspBlock): PreparedDsp {
  const block = processingBlocks.get(b.dspBlock.type);
  if (!block) throw new ImpulseRuntimeError(`DSP block type "${b.dspBlock.type}" cannot be run by this runtime`);
  let columns: number[] | null = null;
  if (spec.inputBlock.type !== 'image') {
    columns = b.dspBlock.axes.map((axis) => {
      const at = spec.axes.indexOf(axis);
      if (at < 0) throw new ImpulseRuntimeError(`DSP block ${b.dspBlock.id} reads axis "${axis}", which the raw window (${spec.axes.join(', ')}) does not hold`);
      return at;
    });
  }
  return { id: b.dspBlock.id, dsp: { dspBlock: b.dspBlock, inputBlock: b.inputBlock, config: b.config, frequencyHz: b.frequencyHz, block }, scaler: b.scaler, columns };
}

/** The DSP block's own values of a raw window: its axes picked out of the interleaved rows. */
function blockValues(p: PreparedDsp, raw: ArrayLike<number>, axes: number): ArrayLike<number> {
  const columns = p.columns;
  if (columns === null) return raw;
  if (columns.length === axes && columns.every((c, i) => c === i)) return raw;
  const rows = raw.length / axes;
  const out = new Float64Array(rows * columns.length);
  for (let r = 0; r < rows; r++) for (let j = 0; j < columns.length; j++) out[r * columns.length + j] = raw[r * axes + columns[j]!]!;
  return out;
}

function concatFeatures(features: Map<number, Float32Array>, dsp: readonly number[]): Float32Array {
  const parts = dsp.map((id) => features.get(id)!);
  const out = new Float32Array(parts.reduce((a, p) => a + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

async function loadKeras(tf: typeof TF, block: RuntimeKerasBlock): Promise<TF.LayersModel> {
  const { modelJson, weightsBase64 } = block.model;
  const weights = base64Bytes(weightsBase64);
  const weightData = weights.buffer.slice(weights.byteOffset, weights.byteOffset + weights.byteLength) as ArrayBuffer;
  return tf.loadLayersModel(
    tf.io.fromMemory({
      modelTopology: modelJson.modelTopology as TF.io.ModelArtifacts['modelTopology'],
      weightSpecs: modelJson.weightsManifest.flatMap((m) => m.weights) as TF.io.WeightsManifestEntry[],
      weightData,
    }),
  );
}

/**
 * The runner of a spec: checks it (every learn block's DSP blocks present, the raw window's axes
 * holding every DSP block's), loads the keras models into `tf` (whose backend the caller chose).
 */
export async function createImpulseRunner(spec: ImpulseRuntimeSpec, tf: typeof TF): Promise<ImpulseRunner> {
  const rawValueCount = rawValueCountOf(spec);
  if (!(rawValueCount > 0)) throw new ImpulseRuntimeError(`the impulse's input block ${spec.inputBlock.id} gives windows of no value`);
  if (spec.learnBlocks.length === 0) throw new ImpulseRuntimeError('the impulse has no learn block');
  const dsps = spec.dspBlocks.map((b) => prepareDsp(spec, b));
  for (const l of spec.learnBlocks) {
    if (l.dsp.length === 0) throw new ImpulseRuntimeError(`learn block ${l.id} ("${l.name}") reads no DSP block`);
    const missing = l.dsp.find((id) => !dsps.some((d) => d.id === id));
    if (missing !== undefined) throw new ImpulseRuntimeError(`learn block ${l.id} ("${l.name}") reads DSP block ${missing}, which is not part of the impulse`);
  }
  const models = new Map<number, TF.LayersModel>();
  try {
    for (const l of spec.learnBlocks) if (l.type === 'keras') models.set(l.id, await loadKeras(tf, l));
  } catch (error) {
    for (const m of models.values()) m.dispose();
    throw error;
  }
  const firstKeras = spec.learnBlocks.find((l): l is RuntimeKerasBlock => l.type === 'keras');
  const axes = spec.axes.length;

  const features = (raw: ArrayLike<number>): Map<number, Float32Array> => {
    if (raw.length !== rawValueCount) throw new ImpulseRuntimeError(`a window of this impulse holds ${rawValueCount} values, got ${raw.length}`);
    const out = new Map<number, Float32Array>();
    for (const d of dsps) {
      // Stored features are float32 (X.npy); the models were trained on those.
      const f = Float32Array.from(runImpulseDsp(d.dsp, blockValues(d, raw, axes), { drawGraphs: false }).features);
      out.set(d.id, d.scaler ? (standardize({ ...d.scaler, count: 0 }, f) as Float32Array) : f);
    }
    return out;
  };

  const classifyBatch = async (raws: readonly ArrayLike<number>[]): Promise<ImpulseClassification[]> => {
    const n = raws.length;
    if (n === 0) return [];
    const t0 = now();
    const byDsp = raws.map((raw) => features(raw));
    const timing = { dsp: now() - t0, classification: 0, anomaly: 0 };
    const perBlock: LearnBlockResult[][] = [];
    for (const l of spec.learnBlocks) {
      const start = now();
      const inputs = byDsp.map((f) => concatFeatures(f, l.dsp));
      const width = inputs[0]!.length;
      if (l.type === 'keras') {
        const expected = models.get(l.id)!.inputs[0]!.shape.slice(1).reduce<number>((a, b) => a * (b ?? 1), 1);
        if (expected !== width) throw new ImpulseRuntimeError(`learn block ${l.id} ("${l.name}") was trained on ${expected} features; its DSP blocks give ${width} now: train it again`);
        const x = new Float32Array(n * width);
        inputs.forEach((row, i) => x.set(row, i * width));
        const model = models.get(l.id)!;
        const scores = tf.tidy(() => (model.predict(tf.tensor2d(x, [n, width])) as TF.Tensor).dataSync());
        const labels = kerasLabels(l);
        const k = labels.length;
        if (scores.length !== n * k) throw new ImpulseRuntimeError(`learn block ${l.id}'s model gives ${scores.length / n} outputs for ${l.mode === 'regression' ? 'one regression value' : `${k} classes`}`);
        perBlock.push(inputs.map((_, i) => ({ learnId: l.id, type: 'keras', classification: Object.fromEntries(labels.map((c, j) => [c, scores[i * k + j]!])) })));
        timing.classification += now() - start;
      } else {
        const beyond = l.model.axes.find((a) => !(a < width));
        if (beyond !== undefined) throw new ImpulseRuntimeError(`learn block ${l.id} ("${l.name}") reads feature ${beyond}; its DSP blocks give ${width} now: train it again`);
        perBlock.push(inputs.map((row) => ({ learnId: l.id, type: 'anomaly', anomaly: anomalyScore(l.model, row) })));
        timing.anomaly += now() - start;
      }
    }
    const share = { dsp: timing.dsp / n, classification: timing.classification / n, anomaly: timing.anomaly / n };
    return raws.map((_, i) => {
      const results = perBlock.map((b) => b[i]!);
      const keras = results.find((r) => r.type === 'keras');
      const anomaly = results.find((r) => r.type === 'anomaly');
      return { classification: keras?.type === 'keras' ? keras.classification : {}, ...(anomaly?.type === 'anomaly' ? { anomaly: anomaly.anomaly } : {}), results, timing: { ...share } };
    });
  };

  return {
    rawValueCount,
    labels: firstKeras ? kerasLabels(firstKeras) : [],
    features,
    async classify(raw) {
      return (await classifyBatch([raw]))[0]!;
    },
    classifyBatch,
    dispose() {
      for (const m of models.values()) m.dispose();
      models.clear();
    },
  };
}

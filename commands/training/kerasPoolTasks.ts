// The keras training the thread pool runs (commands/jobs/threadPool.ts loads this module in a worker
// thread): the network of a plan (domain/learn/kerasNetwork.ts) built with TensorFlow.js's layers
// API on its wasm backend (the cpu one where wasm cannot start), trained epoch by epoch, then
// measured on the validation windows and saved. Every random draw comes from the seed: the
// initialisers, the validation split, each epoch's order and each batch's dropout masks, so the same
// seed on the same features gives the same weights. Each epoch's line is appended to `progressPath`,
// which the job's runner follows (a pool task answers once, at its end).
import { appendFileSync } from 'node:fs';
import type * as TF from '@tensorflow/tfjs';
import type { KerasValidationMetrics } from '../../domain/learn/kerasEvents';
import { packKerasModel, WEIGHTS_FILE } from '../../domain/learn/kerasModelBlob';
import type { NetworkPlan, PlannedLayer } from '../../domain/learn/kerasNetwork';
import { regressionMetrics } from '../../domain/learn/kerasRegression';
import type { KerasSettings } from '../../domain/learn/kerasSettings';
import { seededRandom } from '../../domain/shared/seededRandom';

export interface KerasTrainingInput {
  plan: NetworkPlan;
  /** Row-major float32, rows × plan.inputShape. */
  x: Float32Array;
  /** Each row's class, 0-based. */
  y: Int32Array;
  classes: string[];
  /** A regression: each class's number (the target of its rows), and one linear output trained on mean squared error. */
  regressionTargets?: number[];
  settings: KerasSettings;
  seed: number;
  /** A file each epoch's line is appended to; none: no lines. */
  progressPath?: string;
  /** A file each epoch's figures are appended to as a JSON line (EpochFigures); none: not written. */
  epochsPath?: string;
}

/** One epoch's figures; null where the model has no such measure (accuracy in a regression) or it is not a finite number. */
export interface EpochFigures {
  epoch: number;
  loss: number | null;
  accuracy: number | null;
  valLoss: number | null;
  valAccuracy: number | null;
}

export interface KerasTrainingResult {
  /** The packed TensorFlow.js layers model (kerasModelBlob.ts). */
  model: Uint8Array;
  validation: KerasValidationMetrics;
  trainingWindowCount: number;
  backend: string;
}

let tfLoaded: Promise<{ tf: typeof TF; wasm: boolean }> | undefined;

/** TensorFlow.js once per thread, with its wasm backend registered when it starts. */
function loadTensorflow(): Promise<{ tf: typeof TF; wasm: boolean }> {
  tfLoaded ??= (async () => {
    const tf = await import('@tensorflow/tfjs');
    // Production mode: no per-operation debug checks, and no console banner on the service's output.
    tf.enableProdMode();
    try {
      await import('@tensorflow/tfjs-backend-wasm');
      return { tf, wasm: await tf.setBackend('wasm') };
    } catch {
      return { tf, wasm: false };
    }
  })();
  return tfLoaded;
}

/**
 * TensorFlow.js on the backend for this plan: wasm (faster than cpu here) for dense stacks; cpu for
 * stacks with convolutions, whose gradients (Conv2DBackpropFilter) the wasm backend does not have.
 * A backend gives the same weights for the same seed; the event's model hash names the result.
 */
async function tensorflow(plan?: NetworkPlan): Promise<typeof TF> {
  const { tf, wasm } = await loadTensorflow();
  const convolutions = plan?.layers.some((l) => l.layer.kind.startsWith('conv') || l.layer.kind.startsWith('maxPooling')) ?? false;
  const backend = wasm && !convolutions ? 'wasm' : 'cpu';
  if (tf.getBackend() !== backend) await tf.setBackend(backend);
  await tf.ready();
  return tf;
}


function shuffle(indexes: number[], random: () => number): number[] {
  for (let i = indexes.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [indexes[i], indexes[j]] = [indexes[j]!, indexes[i]!];
  }
  return indexes;
}

function buildLayer(tf: typeof TF, layer: PlannedLayer, name: string, seed: number, inputShape: number[] | undefined): TF.layers.Layer {
  // Named by place: TensorFlow.js otherwise numbers layers per thread, and the saved model would differ run to run.
  const first = { name, ...(inputShape ? { inputShape } : {}) };
  const kernelInitializer = tf.initializers.glorotUniform({ seed });
  switch (layer.kind) {
    case 'dense':
      return tf.layers.dense({ ...first, units: layer.units, activation: layer.activation, kernelInitializer });
    case 'dropout':
      return tf.layers.dropout({ ...first, rate: layer.rate, seed });
    case 'flatten':
      return tf.layers.flatten({ ...first });
    case 'reshape':
      return tf.layers.reshape({ ...first, targetShape: layer.targetShape });
    case 'conv1d':
      return tf.layers.conv1d({ ...first, filters: layer.filters, kernelSize: layer.kernelSize, padding: 'same', activation: 'relu', kernelInitializer });
    case 'conv2d':
      return tf.layers.conv2d({ ...first, filters: layer.filters, kernelSize: layer.kernelSize, padding: 'same', activation: 'relu', kernelInitializer });
    case 'maxPooling1d':
      return tf.layers.maxPooling1d({ ...first, poolSize: 2, strides: 2, padding: 'same' });
    case 'maxPooling2d':
      return tf.layers.maxPooling2d({ ...first, poolSize: 2, strides: 2, padding: 'same' });
  }
}

/** The model of a plan, its weights drawn from the seed (one seed per layer). */
export async function buildKerasModel(plan: NetworkPlan, seed: number): Promise<TF.Sequential> {
  const tf = await tensorflow(plan);
  const model = tf.sequential({ name: 'sequential' });
  plan.layers.forEach((l, i) => model.add(buildLayer(tf, l.layer, `${l.layer.kind}_${i + 1}`, (seed + 7919 * (i + 1)) >>> 0, i === 0 ? plan.inputShape : undefined)));
  return model;
}

const fixed = (v: number | undefined) => (v === undefined ? 'n/a' : Number.isFinite(v) ? v.toFixed(4) : String(v));

export async function trainKeras(input: KerasTrainingInput): Promise<KerasTrainingResult> {
  const tf = await tensorflow(input.plan);
  const { plan, settings, classes } = input;
  const random = seededRandom(input.seed);
  const rows = input.y.length;
  const columns = input.x.length / rows;
  const order = shuffle(Array.from({ length: rows }, (_, i) => i), random);
  const validationCount = rows < 2 ? 0 : Math.min(rows - 1, Math.round(rows * settings.trainTestSplit));
  const validationRows = order.slice(0, validationCount).sort((a, b) => a - b);
  const trainingRows = order.slice(validationCount).sort((a, b) => a - b);

  const targets = input.regressionTargets;
  const model = await buildKerasModel(plan, input.seed);
  if (targets) model.compile({ optimizer: tf.train.adam(settings.learningRate), loss: 'meanSquaredError' });
  else model.compile({ optimizer: tf.train.adam(settings.learningRate), loss: 'categoricalCrossentropy', metrics: ['accuracy'] });
  const dropouts = model.layers.filter((l) => l.getClassName() === 'Dropout');

  const all = tf.tensor2d(input.x, [rows, columns]);
  const labels = targets ? tf.tensor2d(Float32Array.from(input.y, (c) => targets[c]!), [rows, 1]) : tf.oneHot(tf.tensor1d(input.y, 'int32'), classes.length).toFloat();
  const xValidation = tf.gather(all, validationRows);
  const yValidation = tf.gather(labels, validationRows);
  const counts = new Array<number>(classes.length).fill(0);
  for (const r of trainingRows) counts[input.y[r]!]! += 1;
  const present = counts.filter((n) => n > 0).length;
  const classWeight = settings.autoClassWeights && !targets ? Object.fromEntries(counts.map((n, c) => [c, n > 0 ? trainingRows.length / (present * n) : 1])) : undefined;

  try {
    for (let epoch = 1; epoch <= settings.trainingCycles; epoch++) {
      const epochOrder = tf.tensor1d(shuffle([...trainingRows], random), 'int32');
      const xs = tf.gather(all, epochOrder);
      const ys = tf.gather(labels, epochOrder);
      try {
        const history = await model.fit(xs, ys, {
          epochs: 1,
          batchSize: settings.batchSize,
          shuffle: false,
          verbose: 0,
          classWeight,
          validationData: validationCount > 0 ? [xValidation, yValidation] : undefined,
          // Keras's Dropout draws its mask from its seed at each call: a fresh seed per batch, from ours.
          callbacks: dropouts.length > 0 ? { onBatchBegin: async () => dropouts.forEach((d) => Reflect.set(d, 'seed', Math.floor(random() * 2 ** 31))) } : undefined,
        });
        const h = history.history as Record<string, number[]>;
        const part = (name: string, key: string) => (h[key] ? ` - ${name}: ${fixed(h[key][0])}` : '');
        const line = `Epoch ${epoch}/${settings.trainingCycles}${part('loss', 'loss')}${part('accuracy', 'acc')}${part('val_loss', 'val_loss')}${part('val_accuracy', 'val_acc')}\n`;
        if (input.progressPath) appendFileSync(input.progressPath, line);
        if (input.epochsPath) {
          const figure = (key: string) => (h[key] && Number.isFinite(h[key][0]) ? h[key][0]! : null);
          const figures: EpochFigures = { epoch, loss: figure('loss'), accuracy: figure('acc'), valLoss: figure('val_loss'), valAccuracy: figure('val_acc') };
          appendFileSync(input.epochsPath, `${JSON.stringify(figures)}\n`);
        }
      } finally {
        tf.dispose([epochOrder, xs, ys]);
      }
    }
    // Measured on the validation windows, or on the training windows when none were held out.
    const [xm, ym, measuredRows] = validationCount > 0 ? [xValidation, yValidation, validationRows] : [all, labels, Array.from({ length: rows }, (_, i) => i)];
    const outputs = tf.tidy(() => model.predict(xm) as TF.Tensor2D);
    let validation: KerasValidationMetrics;
    if (targets) {
      const predicted = Array.from(await outputs.data());
      const measures = regressionMetrics(predicted, measuredRows.map((r) => targets[input.y[r]!]!));
      validation = { loss: measures.meanSquaredError, accuracy: null, confusionMatrix: [], report: {}, windowCount: measuredRows.length, regression: measures };
    } else {
      const loss = tf.tidy(() => tf.metrics.categoricalCrossentropy(ym, outputs).mean().dataSync()[0]!);
      validation = validationMetrics((await outputs.array()) as number[][], measuredRows.map((r) => input.y[r]!), classes, settings.minimumConfidenceRating, loss);
    }
    outputs.dispose();
    const model1 = await saveModel(tf, model);
    return { model: model1, validation, trainingWindowCount: trainingRows.length, backend: tf.getBackend() };
  } finally {
    tf.dispose([all, labels, xValidation, yValidation]);
    model.dispose();
  }
}

/** Confusion matrix (an "uncertain" column for a top score below the minimum confidence), accuracy, and a per-class report. */
export function validationMetrics(probabilities: number[][], actual: number[], classes: string[], minimumConfidence: number, loss: number): KerasValidationMetrics {
  const k = classes.length;
  const matrix = Array.from({ length: k }, () => new Array<number>(k + 1).fill(0));
  let correct = 0;
  probabilities.forEach((row, i) => {
    let best = 0;
    for (let c = 1; c < k; c++) if (row[c]! > row[best]!) best = c;
    const predicted = Number.isFinite(row[best]) && row[best]! >= minimumConfidence ? best : k;
    matrix[actual[i]!]![predicted]! += 1;
    if (predicted === actual[i]) correct += 1;
  });
  const report: KerasValidationMetrics['report'] = {};
  classes.forEach((name, c) => {
    const tp = matrix[c]![c]!;
    const support = matrix[c]!.reduce((a, b) => a + b, 0);
    const predicted = matrix.reduce((a, row) => a + row[c]!, 0);
    const precision = predicted > 0 ? tp / predicted : 0;
    const recall = support > 0 ? tp / support : 0;
    report[name] = { precision, recall, 'f1-score': precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0, support };
  });
  const total = actual.length;
  return { loss: Number.isFinite(loss) ? loss : null, accuracy: total > 0 ? correct / total : null, confusionMatrix: matrix, report, windowCount: total };
}

async function saveModel(tf: typeof TF, model: TF.LayersModel): Promise<Uint8Array> {
  let packed: Uint8Array | undefined;
  await model.save(
    tf.io.withSaveHandler(async (artifacts) => {
      const data = artifacts.weightData;
      const weights = data === undefined ? new Uint8Array() : new Uint8Array(tf.io.concatenateArrayBuffers(Array.isArray(data) ? data : [data]));
      packed = packKerasModel({
        modelJson: { modelTopology: artifacts.modelTopology, format: 'layers-model', generatedBy: artifacts.generatedBy, convertedBy: artifacts.convertedBy ?? null, weightsManifest: [{ paths: [WEIGHTS_FILE], weights: artifacts.weightSpecs ?? [] }] },
        weights,
      });
      return { modelArtifactsInfo: { dateSaved: new Date(), modelTopologyType: 'JSON' } };
    }),
  );
  return packed!;
}

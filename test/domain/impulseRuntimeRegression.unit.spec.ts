import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trainKeras } from '../../commands/training/kerasPoolTasks';
import { resolveImpulseDsp, runImpulseDsp } from '../../domain/dsp/impulseDsp';
import type { DspBlock, InputBlock } from '../../domain/impulse/impulseEvents';
import { bytesBase64, createImpulseRunner, type ImpulseRuntimeSpec } from '../../domain/learn/impulseRuntime';
import { unpackKerasModel, type KerasModelFiles } from '../../domain/learn/kerasModelBlob';
import { planNetwork } from '../../domain/learn/kerasNetwork';
import { DEFAULT_KERAS_SETTINGS } from '../../domain/learn/kerasSettings';

// A keras-regression block's model in the shared runtime: one linear output, answered as the real
// service's regression result `{ value }`, whatever its training labels were.
const inputBlock: InputBlock = { id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY'], windowSizeMs: 500, windowIncreaseMs: 250, frequencyHz: 100, createdAt: '2026-01-01T00:00:00.000Z' };
const dspBlock: DspBlock = { id: 2, type: 'spectral-analysis', name: 'Spectral features', title: 'Spectral Analysis', axes: ['accX', 'accY'], input: 1, implementationVersion: 4, createdAt: '2026-01-01T00:00:00.000Z' };
const dsp = resolveImpulseDsp({ inputBlocks: [inputBlock], dspBlocks: [dspBlock], dspConfigs: {} }, 2);

/** One window of a sine of `f` Hz, interleaved accX, accY. */
const window = (f: number, phase: number): Float64Array => {
  const out = new Float64Array(100);
  for (let i = 0; i < 50; i++) {
    out[2 * i] = Math.sin((2 * Math.PI * f * i) / 100 + phase);
    out[2 * i + 1] = Math.cos((2 * Math.PI * f * i) / 100 + phase) / 2;
  }
  return out;
};
const featuresOf = (w: Float64Array) => Float32Array.from(runImpulseDsp(dsp, w, { drawGraphs: false }).features);

describe('the impulse runtime with a regression model', () => {
  let spec: ImpulseRuntimeSpec;
  let files: KerasModelFiles;
  // The labels are the frequencies: three of them, so a classifier would have had three outputs.
  const classes = ['10', '2', '6'];
  const targets = [10, 2, 6];

  beforeAll(async () => {
    const windows = Array.from({ length: 36 }, (_, i) => ({ c: i % 3, values: window(targets[i % 3]!, i * 0.41) }));
    const rows = windows.map((w) => featuresOf(w.values));
    const columns = rows[0]!.length;
    const x = new Float32Array(rows.length * columns);
    rows.forEach((r, i) => x.set(r, i * columns));
    const y = Int32Array.from(windows, (w) => w.c);
    const settings = { ...DEFAULT_KERAS_SETTINGS, trainingCycles: 60, learningRate: 0.01 };
    const trained = await trainKeras({ plan: planNetwork(settings.visualLayers, columns, 3, 'regression'), x, y, classes, settings, seed: 5, regressionTargets: targets });
    files = unpackKerasModel(trained.model);
    spec = {
      projectId: 1,
      projectName: 'Frequency',
      impulseId: 1,
      inputBlock,
      axes: ['accX', 'accY'],
      windowRows: 50,
      frequencyHz: 100,
      dspBlocks: [{ dspBlock, inputBlock, config: dsp.config, frequencyHz: 100, scaler: null }],
      learnBlocks: [{ type: 'keras', mode: 'regression', id: 3, name: 'Regression', dsp: [2], classes, minimumConfidenceRating: 0.6, model: { modelJson: files.modelJson, weightsBase64: bytesBase64(files.weights) } }],
    };
  }, 60_000);
  afterAll(async () => {
    await tf.setBackend('cpu');
  });

  it("answers { value } per window, equal to the model's predict on the window's features; its labels are ['value']", async () => {
    await tf.setBackend('cpu');
    const runner = await createImpulseRunner(spec, tf);
    const reference = await tf.loadLayersModel(
      tf.io.fromMemory({ modelTopology: files.modelJson.modelTopology as tf.io.ModelArtifacts['modelTopology'], weightSpecs: files.modelJson.weightsManifest.flatMap((m) => m.weights) as tf.io.WeightsManifestEntry[], weightData: files.weights.slice().buffer }),
    );
    try {
      expect(runner.labels).toEqual(['value']);
      const raws = [window(2, 0.3), window(6, 1.7), window(10, 2.9)];
      const batch = await runner.classifyBatch(raws);
      for (const [i, raw] of raws.entries()) {
        const want = tf.tidy(() => (reference.predict(tf.tensor2d(featuresOf(raw), [1, featuresOf(raw).length])) as tf.Tensor).dataSync()[0]!);
        const one = await runner.classify(raw);
        expect(Object.keys(one.classification)).toEqual(['value']);
        expect(one.classification.value).toBeCloseTo(want, 5);
        expect(batch[i]!.classification.value).toBeCloseTo(want, 5);
        expect(one.results).toEqual([{ learnId: 3, type: 'keras', classification: { value: one.classification.value } }]);
      }
      // A model that learnt something tells 2 Hz from 10 Hz.
      expect(batch[2]!.classification.value!).toBeGreaterThan(batch[0]!.classification.value!);
    } finally {
      runner.dispose();
      reference.dispose();
    }
  }, 60_000);
});

import path from 'node:path';
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trainKeras } from '../../commands/training/kerasPoolTasks';
import { resolveImpulseDsp, runImpulseDsp } from '../../domain/dsp/impulseDsp';
import type { DspBlock, InputBlock } from '../../domain/impulse/impulseEvents';
import { anomalyScore, fitAnomalyModel, type AnomalyModel } from '../../domain/learn/anomalyKmeans';
import { bytesBase64, createImpulseRunner, ImpulseRuntimeError, type ImpulseRuntimeSpec } from '../../domain/learn/impulseRuntime';
import { unpackKerasModel, type KerasModelFiles } from '../../domain/learn/kerasModelBlob';
import { planNetwork } from '../../domain/learn/kerasNetwork';
import { DEFAULT_KERAS_SETTINGS } from '../../domain/learn/kerasSettings';

// 100 Hz, windows of 500 ms: 50 rows of accX, accY.
const inputBlock: InputBlock = { id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY'], windowSizeMs: 500, windowIncreaseMs: 250, frequencyHz: 100, createdAt: '2026-01-01T00:00:00.000Z' };
const dspBlock: DspBlock = { id: 2, type: 'spectral-analysis', name: 'Spectral features', title: 'Spectral Analysis', axes: ['accX', 'accY'], input: 1, implementationVersion: 4, createdAt: '2026-01-01T00:00:00.000Z' };
const dsp = resolveImpulseDsp({ inputBlocks: [inputBlock], dspBlocks: [dspBlock], dspConfigs: {} }, 2);

/** One window, interleaved accX, accY: `idle` a slow sine, `wave` a fast one. */
const window = (label: string, phase: number): Float64Array => {
  const f = label === 'idle' ? 1 : 9;
  const out = new Float64Array(100);
  for (let i = 0; i < 50; i++) {
    out[2 * i] = 10 * Math.sin((2 * Math.PI * f * i) / 100 + phase);
    out[2 * i + 1] = 5 * Math.cos((2 * Math.PI * f * i) / 100 + phase);
  }
  return out;
};
const featuresOf = (w: Float64Array) => Float32Array.from(runImpulseDsp(dsp, w, { drawGraphs: false }).features);

describe('the impulse runtime', () => {
  let spec: ImpulseRuntimeSpec;
  let modelFiles: KerasModelFiles;
  let anomaly: AnomalyModel;
  const classes = ['idle', 'wave'];

  beforeAll(async () => {
    const windows = Array.from({ length: 40 }, (_, i) => ({ label: classes[i % 2]!, values: window(classes[i % 2]!, i * 0.37) }));
    const rows = windows.map((w) => featuresOf(w.values));
    const columns = rows[0]!.length;
    const x = new Float32Array(rows.length * columns);
    rows.forEach((r, i) => x.set(r, i * columns));
    const y = Int32Array.from(windows, (w) => classes.indexOf(w.label));
    const settings = { ...DEFAULT_KERAS_SETTINGS, trainingCycles: 10, learningRate: 0.01 };
    const trained = await trainKeras({ plan: planNetwork(settings.visualLayers, columns, 2), x, y, classes, settings, seed: 3 });
    modelFiles = unpackKerasModel(trained.model);
    anomaly = fitAnomalyModel(rows, { axes: [0, 1, 2], clusterCount: 3, seed: 1 }).model;
    spec = {
      projectId: 1,
      projectName: 'Motion',
      impulseId: 1,
      inputBlock,
      // The raw window's axes in another order than the DSP block's: it picks its own.
      axes: ['accY', 'accX'],
      windowRows: 50,
      frequencyHz: 100,
      dspBlocks: [{ dspBlock, inputBlock, config: dsp.config, frequencyHz: 100, scaler: null }],
      learnBlocks: [
        { type: 'keras', id: 3, name: 'Classifier', dsp: [2], classes, minimumConfidenceRating: 0.6, model: { modelJson: modelFiles.modelJson, weightsBase64: bytesBase64(modelFiles.weights) } },
        { type: 'anomaly', id: 4, name: 'Anomaly', dsp: [2], minimumConfidenceRating: 0.3, model: anomaly },
      ],
    };
  }, 60_000);
  afterAll(async () => {
    await tf.setBackend('cpu');
  });

  /** The window with its two axes swapped, as the spec's raw window lays them out. */
  const swapped = (w: Float64Array) => {
    const out = new Float64Array(w.length);
    for (let i = 0; i < w.length; i += 2) [out[i], out[i + 1]] = [w[i + 1]!, w[i]!];
    return out;
  };

  it('classifies a window with the scores tf model.predict gives on its DSP features, and the anomaly score of the K-means model', async () => {
    await tf.setBackend('cpu');
    const runner = await createImpulseRunner(spec, tf);
    expect(runner.rawValueCount).toBe(100);
    expect(runner.labels).toEqual(classes);
    const w = window('wave', 5.1);
    const result = await runner.classify(swapped(w));
    const features = featuresOf(w);
    const reference = await tf.loadLayersModel(tf.io.fromMemory({ modelTopology: modelFiles.modelJson.modelTopology as object, weightSpecs: modelFiles.modelJson.weightsManifest[0]!.weights as tf.io.WeightsManifestEntry[], weightData: modelFiles.weights.slice().buffer }));
    const expected = Array.from((reference.predict(tf.tensor2d(features, [1, features.length])) as tf.Tensor).dataSync());
    reference.dispose();
    expect(Object.keys(result.classification)).toEqual(classes);
    expect(Object.values(result.classification)).toEqual(expected);
    expect(result.classification.wave).toBeGreaterThan(0.5);
    expect(result.anomaly).toBe(anomalyScore(anomaly, features));
    expect(result.results.map((r) => r.learnId)).toEqual([3, 4]);
    expect(Array.from(runner.features(swapped(w)).get(2)!)).toEqual(Array.from(features));
    runner.dispose();
  });

  it('gives the same scores within 1e-5 on the wasm backend as on the cpu one', async () => {
    const w = window('idle', 0.9);
    await tf.setBackend('cpu');
    const onCpu = await createImpulseRunner(spec, tf);
    const a = await onCpu.classify(swapped(w));
    onCpu.dispose();
    expect(await tf.setBackend('wasm')).toBe(true);
    const onWasm = await createImpulseRunner(spec, tf);
    const b = await onWasm.classify(swapped(w));
    onWasm.dispose();
    for (const c of classes) expect(Math.abs(a.classification[c]! - b.classification[c]!)).toBeLessThan(1e-5);
    expect(b.anomaly).toBe(a.anomaly);
  });

  it('answers a batch of windows as it answers each one alone, on either backend', async () => {
    const windows = Array.from({ length: 9 }, (_, i) => swapped(window(i % 2 ? 'wave' : 'idle', i * 0.7)));
    for (const backend of ['cpu', 'wasm']) {
      await tf.setBackend(backend);
      const runner = await createImpulseRunner(spec, tf);
      const batch = await runner.classifyBatch(windows);
      expect(batch).toHaveLength(9);
      for (const [i, w] of windows.entries()) {
        const one = await runner.classify(w);
        for (const c of classes) expect(Math.abs(batch[i]!.classification[c]! - one.classification[c]!)).toBeLessThan(1e-6);
        expect(batch[i]!.anomaly).toBe(one.anomaly);
        expect(batch[i]!.results.map((r) => r.learnId)).toEqual([3, 4]);
      }
      expect(await runner.classifyBatch([])).toEqual([]);
      runner.dispose();
    }
  });

  it('scales each DSP block\'s features with the scaler of its stored features before the models see them', async () => {
    await tf.setBackend('cpu');
    const w = window('wave', 2);
    const features = featuresOf(w);
    const scaler = { mean: Array.from(features, (_, i) => i * 0.5), scale: Array.from(features, (_, i) => 1 + i) };
    const runner = await createImpulseRunner({ ...spec, dspBlocks: [{ ...spec.dspBlocks[0]!, scaler }] }, tf);
    const scaled = runner.features(swapped(w)).get(2)!;
    expect(Array.from(scaled)).toEqual(Array.from(Float32Array.from(features, (v, i) => (v - scaler.mean[i]!) / scaler.scale[i]!)));
    runner.dispose();
  });

  it('refuses, naming the learn block, a model trained on other features than the DSP blocks give now', async () => {
    await tf.setBackend('cpu');
    // The raw block's features (100 values) instead of the spectral ones the models were trained on.
    const raw = resolveImpulseDsp({ inputBlocks: [inputBlock], dspBlocks: [{ ...dspBlock, type: 'raw', implementationVersion: 1 }], dspConfigs: {} }, 2);
    const other = { ...spec, dspBlocks: [{ ...spec.dspBlocks[0]!, dspBlock: raw.dspBlock, config: raw.config }] };
    const runner = await createImpulseRunner(other, tf);
    const w = swapped(window('idle', 1));
    const columns = featuresOf(w).length;
    await expect(runner.classify(w)).rejects.toThrow(new ImpulseRuntimeError(`learn block 3 ("Classifier") was trained on ${columns} features; its DSP blocks give 100 now: train it again`));
    runner.dispose();
    const anomalyOnly = await createImpulseRunner({ ...other, learnBlocks: [{ type: 'anomaly', id: 4, name: 'Anomaly', dsp: [2], minimumConfidenceRating: 0.3, model: { ...anomaly, axes: [0, 120] } }] }, tf);
    await expect(anomalyOnly.classify(w)).rejects.toThrow(new ImpulseRuntimeError('learn block 4 ("Anomaly") reads feature 120; its DSP blocks give 100 now: train it again'));
    anomalyOnly.dispose();
  });

  it('refuses a window of the wrong size, a learn block reading a DSP block the impulse lacks, an axis the raw window lacks', async () => {
    await tf.setBackend('cpu');
    const runner = await createImpulseRunner(spec, tf);
    await expect(runner.classify(new Float64Array(99))).rejects.toThrow(new ImpulseRuntimeError('a window of this impulse holds 100 values, got 99'));
    runner.dispose();
    await expect(createImpulseRunner({ ...spec, learnBlocks: [{ ...spec.learnBlocks[1]!, dsp: [7] }] }, tf)).rejects.toThrow(/reads DSP block 7, which is not part of the impulse/);
    await expect(createImpulseRunner({ ...spec, axes: ['accX', 'accZ'] }, tf)).rejects.toThrow(/reads axis "accY", which the raw window \(accX, accZ\) does not hold/);
  });

  it('classifies an image window: packed 0xRRGGBB pixels through the image block, as the model saw its features', async () => {
    await tf.setBackend('cpu');
    const imageInput: InputBlock = { id: 1, type: 'image', name: 'Image', title: 'Image data', imageWidth: 4, imageHeight: 4, createdAt: '2026-01-01T00:00:00.000Z' };
    const imageBlock: DspBlock = { id: 2, type: 'image', name: 'Image', title: 'Image', axes: ['image'], input: 1, implementationVersion: 1, createdAt: '2026-01-01T00:00:00.000Z' };
    const imageDsp = resolveImpulseDsp({ inputBlocks: [imageInput], dspBlocks: [imageBlock], dspConfigs: {} }, 2);
    const image = (seed: number) => Array.from({ length: 16 }, (_, i) => ((seed * 7919 + i * 104729) % 0xffffff) >>> 0);
    const featuresOfImage = (pixels: number[]) => Float32Array.from(runImpulseDsp(imageDsp, pixels, { drawGraphs: false }).features);
    const rows = Array.from({ length: 20 }, (_, i) => featuresOfImage(image(i)));
    const x = new Float32Array(20 * rows[0]!.length);
    rows.forEach((r, i) => x.set(r, i * r.length));
    const settings = { ...DEFAULT_KERAS_SETTINGS, trainingCycles: 2 };
    const trained = await trainKeras({ plan: planNetwork(settings.visualLayers, rows[0]!.length, 2), x, y: Int32Array.from({ length: 20 }, (_, i) => i % 2), classes, settings, seed: 5 });
    const files = unpackKerasModel(trained.model);
    const runner = await createImpulseRunner(
      {
        projectId: 1,
        projectName: 'Images',
        impulseId: 1,
        inputBlock: imageInput,
        axes: [],
        windowRows: 1,
        frequencyHz: 0,
        dspBlocks: [{ dspBlock: imageBlock, inputBlock: imageInput, config: imageDsp.config, frequencyHz: 0, scaler: null }],
        learnBlocks: [{ type: 'keras', id: 3, name: 'Classifier', dsp: [2], classes, minimumConfidenceRating: 0.6, model: { modelJson: files.modelJson, weightsBase64: bytesBase64(files.weights) } }],
      },
      tf,
    );
    expect(runner.rawValueCount).toBe(16);
    const pixels = image(99);
    const result = await runner.classify(pixels);
    const features = featuresOfImage(pixels);
    const reference = await tf.loadLayersModel(tf.io.fromMemory({ modelTopology: files.modelJson.modelTopology as object, weightSpecs: files.modelJson.weightsManifest[0]!.weights as tf.io.WeightsManifestEntry[], weightData: files.weights.slice().buffer }));
    const expected = Array.from((reference.predict(tf.tensor2d(features, [1, features.length])) as tf.Tensor).dataSync());
    reference.dispose();
    expect(Object.values(result.classification)).toEqual(expected);
    expect(result.anomaly).toBeUndefined();
    runner.dispose();
  });

  // pngjs (domain/dsp/graphs/heatmapPng.ts) draws the DSP page's graphs, which the runtime never asks
  // for (drawGraphs: false); a browser bundle stubs it. Everything else must bundle for a browser.
  it('stays bundleable for a browser: no node: import, TensorFlow.js passed in', async () => {
    const out = await build({
      entryPoints: [path.join(__dirname, '../../domain/learn/impulseRuntime.ts')],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      external: ['@tensorflow/tfjs', 'pngjs'],
      logLevel: 'silent',
    });
    expect(out.errors).toEqual([]);
    expect(out.outputFiles[0]!.text).not.toMatch(/require\("node:|from "node:/);
  });
});

// The .tflite export checked by a TensorFlow Lite interpreter from PyPI (ai-edge-litert): each
// visual stack's model, trained one epoch, answers the same scores in TFLite as in TensorFlow.js.
// Skips, saying why, without a Python that has numpy and ai_edge_litert (NUMPY_PYTHON; .ci/run installs it).
import * as tf from '@tensorflow/tfjs';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trainKeras } from '../../commands/training/kerasPoolTasks';
import { unpackKerasModel } from '../../domain/learn/kerasModelBlob';
import { planNetwork } from '../../domain/learn/kerasNetwork';
import { DEFAULT_KERAS_SETTINGS, type KerasLayer } from '../../domain/learn/kerasSettings';
import { kerasModelToTflite, TfliteExportError } from '../../domain/learn/tfliteExport';
import { oracleSkipReason, runOracle } from './dsp/numpyOracle';

const skip = oracleSkipReason('numpy, ai_edge_litert.interpreter');

const TFLITE_SCRIPT = `
import sys, json, numpy as np
from ai_edge_litert.interpreter import Interpreter
q = json.load(sys.stdin)
it = Interpreter(model_path=q['model']); it.allocate_tensors()
i = it.get_input_details()[0]; o = it.get_output_details()[0]
out = []
for row in q['rows']:
    it.set_tensor(i['index'], np.array([row], dtype=np.float32)); it.invoke()
    out.append(it.get_tensor(o['index'])[0].tolist())
print(json.dumps({'inputShape': i['shape'].tolist(), 'outputs': out}))
`;

const FEATURES = 24;
const CLASSES = 3;
const STACKS: Record<string, KerasLayer[]> = {
  'dense (the defaults)': DEFAULT_KERAS_SETTINGS.visualLayers,
  'reshape, 1-D convolutions, dropout, flatten, dense': [
    { type: 'reshape', columns: 3 },
    { type: 'conv1d', neurons: 4, kernelSize: 3, stack: 2 },
    { type: 'dropout', dropoutRate: 0.25 },
    { type: 'flatten' },
    { type: 'dense', neurons: 6 },
  ],
  'reshape, 2-D convolution, dense on rows': [{ type: 'reshape', columns: 4 }, { type: 'conv2d', neurons: 3, kernelSize: 3, stack: 1 }, { type: 'flatten' }, { type: 'dense', neurons: 5 }],
  'dense on the rows of a reshape': [{ type: 'reshape', columns: 6 }, { type: 'dense', neurons: 4 }],
};

function seededRows(count: number, seed: number): number[][] {
  let s = seed;
  const random = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
  return Array.from({ length: count }, () => Array.from({ length: FEATURES }, random));
}

async function tfjsScores(files: ReturnType<typeof unpackKerasModel>, rows: number[][]): Promise<number[][]> {
  const model = await tf.loadLayersModel(
    tf.io.fromMemory({ modelTopology: files.modelJson.modelTopology as tf.io.ModelArtifacts['modelTopology'], weightSpecs: files.modelJson.weightsManifest.flatMap((m) => m.weights) as tf.io.WeightsManifestEntry[], weightData: files.weights.slice().buffer }),
  );
  try {
    return (await (model.predict(tf.tensor2d(rows)) as tf.Tensor2D).array()) as number[][];
  } finally {
    model.dispose();
  }
}

describe.skipIf(skip !== undefined)(`kerasModelToTflite against ai-edge-litert ${skip ?? ''}`, () => {
  let dir: string;
  beforeAll(async () => {
    await tf.setBackend('cpu');
    dir = mkdtempSync(path.join(tmpdir(), 'tflite-export-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  for (const [name, layers] of Object.entries(STACKS)) {
    it(`gives TensorFlow.js's scores within 1e-5: ${name}`, async () => {
      const plan = planNetwork(layers, FEATURES, CLASSES);
      const train = seededRows(60, 7);
      const x = Float32Array.from(train.flat());
      const y = Int32Array.from(train, (_, i) => i % CLASSES);
      const trained = await trainKeras({ plan, x, y, classes: ['a', 'b', 'c'], settings: { ...DEFAULT_KERAS_SETTINGS, visualLayers: layers, trainingCycles: 2 }, seed: 3 });
      const files = unpackKerasModel(trained.model);
      const file = path.join(dir, `${name.replace(/\W+/g, '-')}.tflite`);
      writeFileSync(file, kerasModelToTflite(files));
      const rows = seededRows(8, 99);
      const expected = await tfjsScores(files, rows);
      const got = runOracle<{ inputShape: number[]; outputs: number[][] }>(TFLITE_SCRIPT, { model: file, rows });
      expect(got.inputShape).toEqual([1, FEATURES]);
      expect(got.outputs).toHaveLength(rows.length);
      got.outputs.forEach((row, r) => {
        expect(row).toHaveLength(CLASSES);
        row.forEach((v, c) => expect(Math.abs(v - expected[r]![c]!)).toBeLessThan(1e-5));
      });
    });
  }
});

describe('kerasModelToTflite refusals', () => {
  it('refuses a model that is not Sequential, or whose weights are cut short, naming the problem', () => {
    expect(() => kerasModelToTflite({ modelJson: { modelTopology: { class_name: 'Model', config: {} }, weightsManifest: [] }, weights: new Uint8Array() })).toThrow(TfliteExportError);
    const modelJson = {
      modelTopology: { class_name: 'Sequential', config: { layers: [{ class_name: 'Dense', config: { name: 'dense_1', units: 2, activation: 'softmax', batch_input_shape: [null, 3] } }] } },
      weightsManifest: [{ paths: ['model.weights.bin'], weights: [{ name: 'dense_1/kernel', shape: [3, 2], dtype: 'float32' }, { name: 'dense_1/bias', shape: [2], dtype: 'float32' }] }],
    };
    expect(() => kerasModelToTflite({ modelJson, weights: new Uint8Array(8) })).toThrow(/shorter than its manifest/);
    expect(kerasModelToTflite({ modelJson, weights: new Uint8Array(32) }).subarray(4, 8)).toEqual(new TextEncoder().encode('TFL3'));
  });
});

import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { buildImpulseRuntimeSpec, NoTrainedModelError, type ImpulseRuntimeSpecDeps } from '../../commands/classify/impulseRuntimeSpec';
import type { AnomalyModel } from '../../domain/learn/anomalyKmeans';
import { base64Bytes } from '../../domain/learn/impulseRuntime';
import { packKerasModel } from '../../domain/learn/kerasModelBlob';
import { DEFAULT_KERAS_SETTINGS } from '../../domain/learn/kerasSettings';
import { ValidationError } from '../../domain/shared/errors';
import type { AnomalyModelDocument } from '../../projections/anomalyModels/anomalyModelDocument';
import type { DspFeaturesDocument } from '../../projections/dspFeatures/dspFeaturesDocument';
import type { ImpulseDocument } from '../../projections/impulses/impulseDocument';
import type { KerasModelDocument } from '../../projections/kerasModels/kerasModelDocument';
import type { SampleDocument } from '../../projections/samples/sampleDocument';
import type { BlobStore } from '../../stores/blobstore/blobStore';

const at = '2026-01-01T00:00:00.000Z';
const impulseDoc = (overrides: Partial<ImpulseDocument> = {}): ImpulseDocument => ({
  _id: 5,
  id: 5,
  projectId: 1,
  name: 'Motion',
  type: 'default',
  tags: [],
  inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series', axes: ['accX', 'accY', 'accZ'], windowSizeMs: 500, windowIncreaseMs: 250, createdAt: at }],
  dspBlocks: [
    { id: 2, type: 'spectral-analysis', name: 'Spectral', title: 'Spectral', axes: ['accY', 'accX'], input: 1, implementationVersion: 4, createdAt: at },
    { id: 6, type: 'raw', name: 'Raw', title: 'Raw', axes: ['accZ', 'accX'], input: 1, implementationVersion: 1, createdAt: at },
  ],
  learnBlocks: [
    { id: 3, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [2, 6], createdAt: at },
    { id: 4, type: 'anomaly', name: 'Anomaly', title: 'Anomaly', dsp: [2], createdAt: at },
  ],
  postProcessingBlocks: [],
  dspConfigs: {},
  created: at,
  lastModified: at,
  deleted: false,
  _position: '00000000000000000007',
  ...overrides,
});
const anomalyModel: AnomalyModel = { axes: [0], scaler: { mean: [0], scale: [1] }, clusters: [{ center: [0], radius: 1, windowCount: 3 }] };
const weights = new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]);
const blobs: Record<string, Uint8Array> = {
  ['k'.repeat(64)]: packKerasModel({ modelJson: { modelTopology: { layers: [] }, format: 'layers-model', weightsManifest: [{ paths: ['model.weights.bin'], weights: [] }] }, weights }),
  ['a'.repeat(64)]: Buffer.from(JSON.stringify(anomalyModel)),
};

function deps(impulse: ImpulseDocument | null, trained = true): ImpulseRuntimeSpecDeps {
  return {
    blobs: { open: async (sha: string) => Readable.from([Buffer.from(blobs[sha]!)]) } as unknown as BlobStore,
    projects: { byId: async () => ({ name: 'Motion project' }) },
    impulses: { byId: async () => impulse },
    // Three samples at 62.5 Hz, one at 100: the impulse frequency is the most common one.
    samples: { ids: async (_p, category) => (category === 'training' ? [62.5, 62.5, 100] : [62.5]).map((frequency) => ({ frequency }) as SampleDocument) },
    dspFeatures: { current: async (_p, dspId) => (dspId === 2 ? ({ scaler: { mean: [1, 2], scale: [3, 4] }, _position: 'p2' } as unknown as DspFeaturesDocument) : null) },
    kerasModels: {
      byLearnBlock: async () =>
        trained ? ({ settings: { ...DEFAULT_KERAS_SETTINGS, minimumConfidenceRating: 0.7 }, model: { model: 'k'.repeat(64), classes: ['idle', 'wave'], settings: DEFAULT_KERAS_SETTINGS } } as unknown as KerasModelDocument) : null,
    },
    anomalyModels: { byLearnBlock: async () => ({ minimumConfidenceRating: null, model: { model: 'a'.repeat(64), settings: { minimumConfidenceRating: 0.25 } } }) as unknown as AnomalyModelDocument },
  };
}

describe('building the runtime spec of a project\'s impulse', () => {
  it('resolves the DSP blocks at the samples\' common frequency, with their features\' scalers, and loads each learn block\'s model', async () => {
    const { spec, fingerprint } = await buildImpulseRuntimeSpec(deps(impulseDoc()), 1);
    expect(spec).toMatchObject({ projectId: 1, projectName: 'Motion project', impulseId: 5, frequencyHz: 62.5, windowRows: 31 });
    // Every axis a DSP block reads, in the order first named.
    expect(spec.axes).toEqual(['accY', 'accX', 'accZ']);
    expect(spec.dspBlocks.map((b) => [b.dspBlock.id, b.frequencyHz, b.scaler])).toEqual([
      [2, 62.5, { mean: [1, 2], scale: [3, 4] }],
      [6, 62.5, null],
    ]);
    expect(spec.dspBlocks[0]!.config).toMatchObject({ 'scale-axes': expect.any(String) });
    const [keras, anomaly] = spec.learnBlocks;
    expect(keras).toMatchObject({ type: 'keras', id: 3, dsp: [2, 6], classes: ['idle', 'wave'], minimumConfidenceRating: 0.7 });
    expect(keras!.type === 'keras' && base64Bytes(keras!.model.weightsBase64)).toEqual(weights);
    expect(anomaly).toEqual({ type: 'anomaly', id: 4, name: 'Anomaly', dsp: [2], minimumConfidenceRating: 0.25, model: anomalyModel });
    expect(JSON.parse(JSON.stringify(spec))).toEqual(spec);
    expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect((await buildImpulseRuntimeSpec(deps(impulseDoc({ _position: '00000000000000000008' })), 1)).fingerprint).not.toBe(fingerprint);
  });

  it('refuses, naming the problem, what the runtime cannot run', async () => {
    await expect(buildImpulseRuntimeSpec(deps(impulseDoc(), false), 1)).rejects.toThrow(new NoTrainedModelError({ id: 3, name: 'Classifier' }));
    await expect(buildImpulseRuntimeSpec(deps(null), 1)).rejects.toThrow(/The project has no impulse/);
    await expect(buildImpulseRuntimeSpec(deps(impulseDoc({ learnBlocks: [] })), 1)).rejects.toThrow(/no learn block/);
    await expect(buildImpulseRuntimeSpec(deps(impulseDoc({ learnBlocks: [{ id: 3, type: 'keras-object-detection', name: 'Detector', title: 'D', dsp: [2], createdAt: at }] })), 1)).rejects.toThrow(/Learn block 3 \("Detector"\) is of type "keras-object-detection", which this service cannot run/);
    // A keras-regression block runs, but only a regression model: a classifier's left from before is no model of it.
    await expect(buildImpulseRuntimeSpec(deps(impulseDoc({ learnBlocks: [{ id: 3, type: 'keras-regression', name: 'Regression', title: 'R', dsp: [2], createdAt: at }] })), 1)).rejects.toThrow(new NoTrainedModelError({ id: 3, name: 'Regression' }));
    const twoInputs = impulseDoc();
    twoInputs.inputBlocks.push({ ...twoInputs.inputBlocks[0]!, id: 7 });
    twoInputs.dspBlocks[1] = { ...twoInputs.dspBlocks[1]!, input: 7 };
    await expect(buildImpulseRuntimeSpec(deps(twoInputs), 1)).rejects.toThrow(/different input blocks/);
    // A DSP config the block refuses is a 400 (not the DSP module's own error class).
    const bad = buildImpulseRuntimeSpec(deps(impulseDoc({ dspConfigs: { '2': { 'scale-axes': 'lots' } } })), 1);
    await expect(bad).rejects.toBeInstanceOf(ValidationError);
    await expect(bad).rejects.toThrow(/scale-axes/);
  });
});

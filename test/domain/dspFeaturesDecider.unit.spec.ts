import { describe, it } from 'vitest';
import { dspFeaturesDecider, type DspFeaturesCommand } from '../../domain/dsp/dspFeaturesDecider';
import type { DspFeaturesGenerated } from '../../domain/dsp/dspFeaturesEvents';
import { ValidationError } from '../../domain/shared/errors';
import { deciderSpecification } from '../support/deciderSpecification';

const spec = deciderSpecification(dspFeaturesDecider);
const h = (c: string) => c.repeat(64);
const data = (overrides: Partial<DspFeaturesGenerated['data']> = {}): DspFeaturesGenerated['data'] => ({
  projectId: 3,
  impulseId: 1,
  dspId: 2,
  jobId: 7,
  parameters: { dspId: 2, calculateFeatureImportance: false, skipFeatureExplorer: true, normalizeData: 'normalize-channel-standard-scaler' },
  dspConfig: { 'scale-axes': '1' },
  implementationVersion: 4,
  categories: { training: { x: h('a'), y: h('b'), windowCount: 10 }, testing: { x: h('c'), y: h('d'), windowCount: 4 } },
  metadata: h('e'),
  explorer: h('f'),
  importance: null,
  featureCount: 2,
  windowCount: 14,
  classes: ['idle', 'wave'],
  skippedSampleIds: [5],
  sourcePosition: '00000000000000000042',
  scaler: { mean: [0.5, -0], scale: [1, 2] },
  generated: '2026-11-26T05:00:00.000Z',
  ...overrides,
});
const record = (d = data()): DspFeaturesCommand => ({ type: 'RecordDspFeatures', data: d });

describe('recording generated features', () => {
  it('records a result, -0 in the scaler stored as 0, and a later run supersedes by a new event', () => {
    spec.given([]).when(record()).then([{ type: 'DspFeaturesGenerated', data: data({ scaler: { mean: [0.5, 0], scale: [1, 2] } }) }]);
    spec.given([{ type: 'DspFeaturesGenerated', data: data() }]).when(record(data({ jobId: 8 }))).then([{ type: 'DspFeaturesGenerated', data: data({ jobId: 8, scaler: { mean: [0.5, 0], scale: [1, 2] } }) }]);
  });

  it('records a retried job once', () => {
    spec.given([{ type: 'DspFeaturesGenerated', data: data() }]).when(record()).then([]);
  });

  it('refuses what would not be a well-formed record, naming the field', () => {
    spec.given([]).when(record(data({ metadata: 'nope' }))).thenThrows(ValidationError, /metadata must be a SHA-256/);
    spec.given([]).when(record(data({ windowCount: 13 }))).thenThrows(ValidationError, /windowCount must be the windows of both categories/);
    spec.given([]).when(record(data({ scaler: { mean: [1], scale: [1, 1] } }))).thenThrows(ValidationError, /scaler.mean must have one value per feature/);
    spec.given([]).when(record(data({ scaler: { mean: [1, Number.NaN], scale: [1, 1] } }))).thenThrows(ValidationError, /scaler.mean\[1\]/);
    spec.given([]).when(record(data({ classes: ['a\u202eb'] }))).thenThrows(ValidationError, /classes\[0\]/);
    spec.given([]).when(record(data({ featureCount: -1, scaler: null }))).thenThrows(ValidationError, /featureCount/);
    spec.given([]).when(record(data({ parameters: { ...data().parameters, dspId: 9 } }))).thenThrows(ValidationError, /parameters.dspId/);
    spec.given([]).when(record(data({ generated: 'yesterday' }))).thenThrows(ValidationError, /generated/);
  });
});

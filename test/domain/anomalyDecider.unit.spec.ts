import { describe, it } from 'vitest';
import { anomalyDecider } from '../../domain/learn/anomalyDecider';
import type { AnomalyModelTrained } from '../../domain/learn/anomalyEvents';
import { ValidationError } from '../../domain/shared/errors';
import { deciderSpecification } from '../support/deciderSpecification';

const spec = deciderSpecification(anomalyDecider);
const changed = '2026-01-31T12:00:00.000Z';
const sha = 'ab'.repeat(32);
const model = (jobId = 7): AnomalyModelTrained['data'] => ({
  projectId: 1,
  learnId: 3,
  impulseId: 2,
  jobId,
  model: sha,
  features: [{ dspId: 2, x: sha, windowCount: 21, featureCount: 33, sourcePosition: '000000000042' }],
  settings: { axes: [0, 4], clusterCount: 3, minimumConfidenceRating: 0.3 },
  seed: 1,
  clusterCount: 3,
  iterations: 5,
  trained: changed,
});

describe('an anomaly block', () => {
  it('changes only the settings given', () => {
    spec.given([]).when({ type: 'ChangeAnomalySettings', data: { projectId: 1, learnId: 3, minimumConfidenceRating: 0.5, changed } })
      .then([{ type: 'AnomalySettingsChanged', data: { projectId: 1, learnId: 3, minimumConfidenceRating: 0.5, changed } }]);
  });

  it('refuses settings naming the bad field: no change, a cluster count out of range, an axis twice, a negative axis, a non-finite rating', () => {
    const when = (d: Record<string, unknown>) => spec.given([]).when({ type: 'ChangeAnomalySettings', data: { projectId: 1, learnId: 3, changed, ...d } });
    when({}).thenThrows(ValidationError, /Nothing to change/);
    when({ clusterCount: 0 }).thenThrows(ValidationError, /clusterCount must be from 1 to 1000/);
    when({ clusterCount: 2.5 }).thenThrows(ValidationError, /clusterCount must be a whole number/);
    when({ axes: [1, 1] }).thenThrows(ValidationError, /axes: an axis is listed twice/);
    when({ axes: [-1] }).thenThrows(ValidationError, /axes\[0\] must be from 0/);
    when({ axes: [] }).thenThrows(ValidationError, /axes: choose at least one axis/);
    when({ minimumConfidenceRating: Infinity }).thenThrows(ValidationError, /minimumConfidenceRating must be a finite number/);
  });

  it('records a trained model once per job', () => {
    spec.given([]).when({ type: 'RecordAnomalyModel', data: model() }).then([{ type: 'AnomalyModelTrained', data: model() }]);
    spec.given([{ type: 'AnomalyModelTrained', data: model() }]).when({ type: 'RecordAnomalyModel', data: model() }).then([]);
    spec.given([{ type: 'AnomalyModelTrained', data: model() }]).when({ type: 'RecordAnomalyModel', data: model(8) }).then([{ type: 'AnomalyModelTrained', data: model(8) }]);
  });

  it('refuses a model record that is not well-formed: a bad hash, more clusters than asked, no features', () => {
    spec.given([]).when({ type: 'RecordAnomalyModel', data: { ...model(), model: 'nope' } }).thenThrows(ValidationError, /model must be a SHA-256/);
    spec.given([]).when({ type: 'RecordAnomalyModel', data: { ...model(), clusterCount: 4 } }).thenThrows(ValidationError, /clusterCount must be from 1 to 3/);
    spec.given([]).when({ type: 'RecordAnomalyModel', data: { ...model(), features: [] } }).thenThrows(ValidationError, /features: from 1 to 100/);
  });
});

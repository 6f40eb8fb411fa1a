import { describe, it } from 'vitest';
import { modelTestingDecider, type ModelTestingCommand } from '../../domain/learn/modelTestingDecider';
import type { ModelTested } from '../../domain/learn/modelTestingEvents';
import { ValidationError } from '../../domain/shared/errors';
import { deciderSpecification } from '../support/deciderSpecification';

const spec = deciderSpecification(modelTestingDecider);
const run = (overrides: Partial<ModelTested['data']> = {}, summary: Partial<ModelTested['data']['summary']> = {}): ModelTested['data'] => ({
  projectId: 3,
  impulseId: 7,
  jobId: 11,
  results: 'a'.repeat(64),
  summary: { sampleCount: 4, skippedSampleCount: 1, windowCount: 28, accuracy: 0.75, balancedAccuracy: 0.7, ...summary },
  tested: '2026-11-27T10:00:00.000Z',
  ...overrides,
});
const record = (data: ModelTested['data']): ModelTestingCommand => ({ type: 'RecordModelTest', data });
const tested = (data: ModelTested['data']): ModelTested => ({ type: 'ModelTested', data });

describe('a project without model testing runs', () => {
  it('records a run naming its results blob and summary', () => {
    spec.given([]).when(record(run())).then([tested(run())]);
  });

  it('records a run without labelled windows, its scores null', () => {
    spec.given([]).when(record(run({}, { windowCount: 0, accuracy: null, balancedAccuracy: null }))).then([tested(run({}, { windowCount: 0, accuracy: null, balancedAccuracy: null }))]);
  });

  it('refuses a record a projection could not apply or that contradicts itself', () => {
    spec.given([]).when(record(run({ results: 'not a hash' }))).thenThrows(ValidationError, /results must be a SHA-256/);
    spec.given([]).when(record(run({}, { accuracy: 1.5 }))).thenThrows(ValidationError, /summary\.accuracy/);
    spec.given([]).when(record(run({}, { accuracy: Number.NaN }))).thenThrows(ValidationError, /summary\.accuracy/);
    spec.given([]).when(record(run({}, { windowCount: -1 }))).thenThrows(ValidationError, /summary\.windowCount/);
    spec.given([]).when(record(run({}, { windowCount: 0 }))).thenThrows(ValidationError, /null exactly when no labelled window/);
    spec.given([]).when(record(run({ jobId: 0 }))).thenThrows(ValidationError, /jobId/);
    spec.given([]).when(record(run({ tested: 'yesterday' }))).thenThrows(ValidationError, /tested/);
  });
});

describe('a project with a recorded run', () => {
  it('records a retried job once', () => {
    spec.given([tested(run())]).when(record(run())).then([]);
  });

  it('records the next job\'s run', () => {
    spec.given([tested(run())]).when(record(run({ jobId: 12 }, { accuracy: 1, balancedAccuracy: 1 }))).then([tested(run({ jobId: 12 }, { accuracy: 1, balancedAccuracy: 1 }))]);
  });
});

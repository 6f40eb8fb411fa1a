// Model testing runs of a project. A record is checked to be well-formed (ids, the blob's hash,
// bounded counts, scores in [0, 1]) so no value can break a projection; a retried job records once.
import type { Decider } from '../shared/decider';
import { ValidationError } from '../shared/errors';
import { checkId, checkIsoTimestamp, checkNumber } from '../shared/numberRules';
import type { ModelTested, ModelTestingEvent } from './modelTestingEvents';

export type ModelTestingCommand = { type: 'RecordModelTest'; data: ModelTested['data'] };

export interface ModelTestingState {
  jobIds: ReadonlySet<number>;
}

const SHA256 = /^[0-9a-f]{64}$/;
const COUNT = { min: 0, max: 1e9, integer: true };
const unitOrNull = (v: number | null, field: string) => (v === null ? null : checkNumber(v, field, { min: 0, max: 1 }));

function checkRecord(d: ModelTested['data']): ModelTested['data'] {
  for (const [v, f] of [[d.projectId, 'projectId'], [d.impulseId, 'impulseId'], [d.jobId, 'jobId']] as const) checkId(v, f);
  if (typeof d.results !== 'string' || !SHA256.test(d.results)) throw new ValidationError('results must be a SHA-256 in hex');
  const s = d.summary;
  checkNumber(s.sampleCount, 'summary.sampleCount', COUNT);
  checkNumber(s.skippedSampleCount, 'summary.skippedSampleCount', COUNT);
  checkNumber(s.windowCount, 'summary.windowCount', COUNT);
  const accuracy = unitOrNull(s.accuracy, 'summary.accuracy');
  const balancedAccuracy = unitOrNull(s.balancedAccuracy, 'summary.balancedAccuracy');
  if ((accuracy === null) !== (s.windowCount === 0)) throw new ValidationError('summary.accuracy is null exactly when no labelled window was measured');
  checkIsoTimestamp(d.tested, 'tested');
  return { ...d, summary: { ...s, accuracy, balancedAccuracy } };
}

export const modelTestingDecider: Decider<ModelTestingCommand, ModelTestingEvent, ModelTestingState> = {
  initialState: () => ({ jobIds: new Set() }),
  decide(command, state) {
    switch (command.type) {
      case 'RecordModelTest': {
        const data = checkRecord(command.data);
        if (state.jobIds.has(data.jobId)) return [];
        return [{ type: 'ModelTested', data }];
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'ModelTested':
        return { jobIds: new Set([...state.jobIds, event.data.jobId]) };
    }
  },
};

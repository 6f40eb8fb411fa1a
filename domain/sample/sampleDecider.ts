import type { Decider } from '../shared/decider';
import { ConflictError, NotFoundError, assertNever } from '../shared/errors';
import { checkDate, checkId, checkIsoTimestamp } from '../shared/numberRules';
import { checkSample } from './checkSample';
import type { SampleEvent, SampleIngested } from './sampleEvents';

export type SampleCommand =
  | { type: 'IngestSample'; data: SampleIngested['data'] }
  | { type: 'DeleteSample'; data: { now: Date } };

export type SampleState =
  | { status: 'none' }
  | { status: 'stored'; sampleId: number; projectId: number; sha256: string }
  | { status: 'deleted'; sampleId: number; projectId: number; sha256: string };

export const sampleDecider: Decider<SampleCommand, SampleEvent, SampleState> = {
  initialState: () => ({ status: 'none' }),
  decide(command, state) {
    switch (command.type) {
      case 'IngestSample': {
        const { sampleId, ingested, ...sample } = command.data;
        if (state.status !== 'none') throw new ConflictError(`Sample ${sampleId} already exists`);
        // Checked here, not only by the parsers: whatever a caller sends, the log gets only values
        // every projection can apply.
        return [{ type: 'SampleIngested', data: { sampleId: checkId(sampleId, 'sampleId'), ...checkSample(sample), ingested: checkIsoTimestamp(ingested, 'ingested') } }];
      }
      case 'DeleteSample':
        if (state.status === 'none') throw new NotFoundError('Sample not found', 'SAMPLE_NOT_FOUND');
        // Deleting twice is harmless: the second request changes nothing.
        if (state.status === 'deleted') return [];
        return [{ type: 'SampleDeleted', data: { sampleId: state.sampleId, projectId: state.projectId, deleted: checkDate(command.data.now, 'now') } }];
      default:
        return assertNever(command);
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'SampleIngested':
        return { status: 'stored', sampleId: event.data.sampleId, projectId: event.data.projectId, sha256: event.data.sha256 };
      case 'SampleDeleted':
        return state.status === 'none' ? state : { ...state, status: 'deleted' };
      default:
        return assertNever(event);
    }
  },
};

import type { Decider } from '../shared/decider';
import { ConflictError, NotFoundError, assertNever } from '../shared/errors';
import { checkDate, checkId, checkIsoTimestamp } from '../shared/numberRules';
import type { CheckedSample } from './checkSample';
import type { SampleEvent, SampleIngested } from './sampleEvents';

export type SampleCommand =
  /** The sample as checkSample returned it, with the id and time the service gives it. */
  | { type: 'IngestSample'; data: CheckedSample & Pick<SampleIngested['data'], 'sampleId' | 'ingested'> }
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
        // The description comes checked (a CheckedSample only checkSample makes), so whatever path
        // leads here, the log gets only values every projection can apply; the id and time are checked here.
        return [{ type: 'SampleIngested', data: { sampleId: checkId(sampleId, 'sampleId'), ...sample, ingested: checkIsoTimestamp(ingested, 'ingested') } }];
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

import type { Decider } from '../shared/decider';
import { ConflictError, NotFoundError, assertNever } from '../shared/errors';
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
      case 'IngestSample':
        if (state.status !== 'none') throw new ConflictError(`Sample ${command.data.sampleId} already exists`);
        return [{ type: 'SampleIngested', data: command.data }];
      case 'DeleteSample':
        if (state.status === 'none') throw new NotFoundError('Sample not found', 'SAMPLE_NOT_FOUND');
        // Deleting twice is harmless: the second request changes nothing.
        if (state.status === 'deleted') return [];
        return [{ type: 'SampleDeleted', data: { sampleId: state.sampleId, projectId: state.projectId, deleted: command.data.now.toISOString() } }];
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

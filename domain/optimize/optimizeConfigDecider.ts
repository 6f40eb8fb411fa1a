// A project's tuner config. Each save replaces the whole config, checked against the project's
// impulse as the command brings it (the decider stays pure); a save that changes nothing appends nothing.
import { isDeepStrictEqual } from 'node:util';
import type { Decider } from '../shared/decider';
import { checkId } from '../shared/numberRules';
import { checkOptimizeConfig, type OptimizeConfigInput, type OptimizeSettings } from './optimizeConfig';
import type { OptimizeConfigEvent } from './optimizeEvents';
import type { TunerProjectContext } from './tunerSpaceInput';

export type OptimizeConfigCommand = { type: 'SetOptimizeConfig'; data: { projectId: number; config: OptimizeConfigInput; context: TunerProjectContext; now: Date } };

export interface OptimizeConfigState {
  /** Null until first set: the defaults apply. */
  config: OptimizeSettings | null;
}

export const optimizeConfigDecider: Decider<OptimizeConfigCommand, OptimizeConfigEvent, OptimizeConfigState> = {
  initialState: () => ({ config: null }),
  decide(command, state) {
    switch (command.type) {
      case 'SetOptimizeConfig': {
        const { projectId, config, context, now } = command.data;
        checkId(projectId, 'projectId');
        const checked = checkOptimizeConfig(config, context);
        if (state.config !== null && isDeepStrictEqual(state.config, checked)) return [];
        return [{ type: 'OptimizeConfigSet', data: { projectId, config: checked, set: now.toISOString() } }];
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'OptimizeConfigSet':
        return { ...state, config: event.data.config };
    }
  },
};

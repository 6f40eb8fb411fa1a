import type { OptimizeSettings } from '../../domain/optimize/optimizeConfig';
import { tunerSpaceView } from './tunerSpaceView';

/** The SDK's OptimizeConfig fields for a stored config. */
export function optimizeConfigView(config: OptimizeSettings) {
  return {
    ...(config.name === null ? {} : { name: config.name }),
    targetLatency: config.targetLatency,
    targetDevice: { ...config.targetDevice },
    trainingCycles: config.trainingCycles,
    tuningMaxTrials: config.tuningMaxTrials,
    tuningWorkers: config.tuningWorkers,
    tuningAlgorithm: config.tuningAlgorithm,
    space: tunerSpaceView(config.space),
  };
}

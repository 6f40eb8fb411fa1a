import type { OptimizeSettings } from '../../domain/optimize/optimizeConfig';

/** A project's tuner config as last set (no document: the defaults apply). */
export interface OptimizeConfigDocument {
  _id: number;
  projectId: number;
  config: OptimizeSettings;
  set: string;
  _position: string;
  [key: string]: unknown;
}

export const OPTIMIZE_CONFIGS = 'optimizeConfigs';

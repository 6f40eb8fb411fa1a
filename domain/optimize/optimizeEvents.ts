import type { DomainEvent } from '../shared/decider';
import type { OptimizeSettings } from './optimizeConfig';

// One stream per project for its tuner config; each event holds the whole config after the change
// (the SDK sends the whole config with each save), checked against the project's impulse then.

export const optimizeConfigStream = (projectId: number): string => `optimize-config-${projectId}`;

export type OptimizeConfigSet = DomainEvent<'OptimizeConfigSet', { projectId: number; config: OptimizeSettings; set: string }>;

export type OptimizeConfigEvent = OptimizeConfigSet;

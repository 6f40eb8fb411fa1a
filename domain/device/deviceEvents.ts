import type { DomainEvent } from '../shared/decider';

/**
 * One stream per device of a project. The device id is a free string chosen by the client, so it
 * is URI-encoded: the stream name holds no `$`, no spaces and no control characters, and the
 * project id (an integer) ends at the first `-`.
 */
export const deviceStream = (projectId: number, deviceId: string): string => `device-${projectId}-${encodeURIComponent(deviceId)}`;

export type DeviceCreated = DomainEvent<
  'DeviceCreated',
  { projectId: number; deviceId: string; id: number; deviceType: string; name: string; created: string }
>;

export type DeviceRenamed = DomainEvent<'DeviceRenamed', { projectId: number; deviceId: string; name: string }>;

export type DeviceDeleted = DomainEvent<'DeviceDeleted', { projectId: number; deviceId: string; deleted: string }>;

export type DeviceEvent = DeviceCreated | DeviceRenamed | DeviceDeleted;

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

/** A sensor as a device announces it in its remote-management hello. */
export interface RemoteSensor {
  name: string;
  /** 0 when the device did not say (hello version 1). */
  maxSampleLengthS: number;
  frequencies: number[];
}

export type RemoteMode = 'ingestion' | 'inference';

/** In the API's spelling (the device says `deploymentVersion` and snake-case model types). */
export interface RemoteInferenceInfo {
  projectId: number;
  projectOwner: string;
  projectName: string;
  deployedVersion: number;
  modelType?: 'classification' | 'objectDetection' | 'constrainedObjectDetection' | 'freeform';
}

/**
 * A device said hello on the remote-management socket. `connectionId` names that one socket: a
 * later connection of the same device replaces it, and only its own disconnect ends it. `id` is
 * the listing id should the device be new to the read model. The sensors travel in the hello, so
 * this event is also where they are reported.
 */
export type DeviceConnected = DomainEvent<
  'DeviceConnected',
  {
    projectId: number;
    deviceId: string;
    id: number;
    deviceType: string;
    connectionId: string;
    host: string;
    mode: RemoteMode;
    sensors: RemoteSensor[];
    supportsSnapshotStreaming: boolean;
    inferenceInfo?: RemoteInferenceInfo;
    connected: string;
  }
>;

/** `access-ended`: the server cut the socket because its key was revoked or expired, or its project or device deleted. */
export type DeviceDisconnectReason = 'closed' | 'timeout' | 'replaced' | 'server-stopped' | 'protocol-error' | 'access-ended';

export type DeviceDisconnected = DomainEvent<
  'DeviceDisconnected',
  { projectId: number; deviceId: string; connectionId: string; reason: DeviceDisconnectReason; disconnected: string }
>;

/** Categories the device library can upload to: it picks training iff the path says so, else testing. */
export type SamplingCategory = 'training' | 'testing';

/**
 * Someone asked the device to sample. The process holding `connectionId` sends the request (with
 * the project's HMAC key, read at send time: no secret in the log); `requestId` is what the caller
 * follows.
 */
export type DeviceSamplingRequested = DomainEvent<
  'DeviceSamplingRequested',
  {
    projectId: number;
    deviceId: string;
    requestId: number;
    connectionId: string;
    label: string;
    lengthMs: number;
    category: SamplingCategory;
    intervalMs: number;
    sensor?: string;
    requested: string;
  }
>;

/**
 * Where a sampling request stands, from the device's messages (`accepted` = `{sample: true}`,
 * `reading` = `{sampleReading, progressPercentage}`, `failed` = `{sample: false, error}`). `failed`
 * also ends a request whose socket ended, was replaced, whose device was deleted, or that went
 * unanswered. `finished` and `failed` end the request.
 */
export const SAMPLING_STAGES = ['accepted', 'started', 'reading', 'uploading', 'processing', 'finished', 'failed'] as const;
export type SamplingStage = (typeof SAMPLING_STAGES)[number];

/**
 * A step of a sampling request. Readings are kept at 10 % steps (the device sends one per frame it
 * reads); `error` only with `failed`.
 */
export type DeviceSamplingProgressed = DomainEvent<
  'DeviceSamplingProgressed',
  {
    projectId: number;
    deviceId: string;
    requestId: number;
    connectionId: string;
    stage: SamplingStage;
    progressPercentage?: number;
    error?: string;
    at: string;
  }
>;

export type DeviceEvent = DeviceCreated | DeviceRenamed | DeviceDeleted | DeviceConnected | DeviceDisconnected | DeviceSamplingRequested | DeviceSamplingProgressed;

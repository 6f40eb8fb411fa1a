import type { RemoteInferenceInfo, RemoteMode, RemoteSensor } from '../../domain/device/deviceEvents';
import type { IndexDeclaration } from '../../stores/readstore/indexDeclarations';

/** The `devices` read model: devices seen in a project's data and devices registered through the API. */
export interface DeviceDocument {
  _id: string;
  /**
   * The id of the first sample that named the device, or the id drawn when it was registered: an
   * integer, and the same in every rebuild.
   */
  id: number;
  projectId: number;
  deviceId: string;
  name: string;
  deviceType: string;
  created: string;
  lastSeen: string;
  _position: string;
  /** Remote management: absent until the device first says hello. */
  remoteConnectionId?: string | null;
  remoteMgmtConnected?: boolean;
  remoteMgmtMode?: 'disconnected' | RemoteMode;
  remoteMgmtHost?: string | null;
  /** The sensors of the last hello (kept while disconnected: what the device had). */
  sensors?: RemoteSensor[];
  supportsSnapshotStreaming?: boolean;
  inferenceInfo?: RemoteInferenceInfo | null;
  [key: string]: unknown;
}

export const DEVICES = 'devices';

/** A project's devices in creation order (the device list, and their deletion with the project). */
export const DEVICE_INDEXES: readonly IndexDeclaration[] = [{ keys: { projectId: 1, created: 1, _id: 1 } }];


export const deviceDocumentId = (projectId: number, deviceId: string): string => `${projectId}:${deviceId}`;

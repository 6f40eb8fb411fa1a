import { describe, expect, it } from 'vitest';
import type { DeviceDocument } from '../../projections/devices/deviceDocument';
import { deviceView } from '../../api/views/projectView';

const base: DeviceDocument = { _id: '10:dev-1', id: 5, projectId: 10, deviceId: 'dev-1', name: 'Bench rig', deviceType: 'LINUX', created: '2026-11-28T10:00:00.000Z', lastSeen: '2026-11-28T10:01:00.000Z', _position: '1' };
const camera = { name: 'Camera (640x480)', maxSampleLengthS: 60000, frequencies: [] };
const inferenceInfo = { projectId: 9, projectOwner: 'Ada', projectName: 'Kws', deployedVersion: 3, modelType: 'classification' as const };

describe('a device as the API shows it (sdk-reference 2.9)', () => {
  it('never connected: no sensors, disconnected, no host', () => {
    expect(deviceView(base)).toEqual({
      id: 5, deviceId: 'dev-1', created: base.created, lastSeen: base.lastSeen, name: 'Bench rig', deviceType: 'LINUX',
      sensors: [], remote_mgmt_connected: false, supportsSnapshotStreaming: false, remoteMgmtMode: 'disconnected',
    });
  });

  it('connected in inference mode: sensors, host and inference info', () => {
    const d = { ...base, remoteMgmtConnected: true, remoteMgmtMode: 'inference' as const, remoteMgmtHost: '10.0.0.7', sensors: [camera], supportsSnapshotStreaming: true, inferenceInfo };
    expect(deviceView(d)).toMatchObject({ sensors: [camera], remote_mgmt_connected: true, remote_mgmt_host: '10.0.0.7', supportsSnapshotStreaming: true, remoteMgmtMode: 'inference', inferenceInfo });
  });

  it('connected for ingestion: no inference info; disconnected: no host, sensors kept', () => {
    const connected = { ...base, remoteMgmtConnected: true, remoteMgmtMode: 'ingestion' as const, remoteMgmtHost: '10.0.0.7', sensors: [camera], inferenceInfo: null };
    expect(deviceView(connected)).not.toHaveProperty('inferenceInfo');
    const gone = { ...connected, remoteMgmtConnected: false, remoteMgmtMode: 'disconnected' as const, remoteMgmtHost: null };
    const v = deviceView(gone);
    expect(v).toMatchObject({ remote_mgmt_connected: false, remoteMgmtMode: 'disconnected', sensors: [camera] });
    expect(v).not.toHaveProperty('remote_mgmt_host');
  });
});

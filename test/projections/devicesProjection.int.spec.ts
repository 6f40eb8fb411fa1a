import { projectTwice } from '../support/projectTwice';
import { describe, expect, it } from 'vitest';
import type { DeviceEvent } from '../../domain/device/deviceEvents';
import type { SampleIngested } from '../../domain/sample/sampleEvents';
import { DEVICES, type DeviceDocument } from '../../projections/devices/deviceDocument';

const at = (minute: number) => `2026-11-25T12:${String(minute).padStart(2, '0')}:00.000Z`;

const ingested = (sampleId: number, minute: number, deviceType = 'TEST'): SampleIngested => ({
  type: 'SampleIngested',
  data: {
    sampleId, projectId: 10, category: 'training', fileName: `s${sampleId}.json`, label: 'idle', sha256: 'ab'.repeat(32), size: 10,
    contentType: 'application/json', kind: 'time-series', intervalMs: 10, frequency: 100, sensors: [{ name: 'accX', units: 'm/s2' }], valuesCount: 5, totalLengthMs: 50,
    deviceName: 'dev-1', deviceType, width: null, height: null, signatureMethod: 'HS256', signatureValidate: true, signatureKeyId: null,
    metadata: {}, boundingBoxes: [], structuredLabels: [], uploadSource: null, ingested: at(minute),
  },
});
const created = (id: number, minute: number): DeviceEvent => ({ type: 'DeviceCreated', data: { projectId: 10, deviceId: 'dev-1', id, deviceType: 'LINUX', name: 'dev-1', created: at(minute) } });
const renamed = (name: string): DeviceEvent => ({ type: 'DeviceRenamed', data: { projectId: 10, deviceId: 'dev-1', name } });
const deleted = (minute: number): DeviceEvent => ({ type: 'DeviceDeleted', data: { projectId: 10, deviceId: 'dev-1', deleted: at(minute) } });

const camera = { name: 'Camera (640x480)', maxSampleLengthS: 60000, frequencies: [] };
const connected = (connectionId: string, minute: number, over: Partial<Extract<DeviceEvent, { type: 'DeviceConnected' }>['data']> = {}): DeviceEvent => ({
  type: 'DeviceConnected',
  data: { projectId: 10, deviceId: 'dev-1', id: 70, deviceType: 'EDGE_IMPULSE_LINUX', connectionId, host: '10.0.0.7', mode: 'ingestion', sensors: [camera], supportsSnapshotStreaming: true, connected: at(minute), ...over },
});
const disconnected = (connectionId: string, minute: number): DeviceEvent => ({
  type: 'DeviceDisconnected',
  data: { projectId: 10, deviceId: 'dev-1', connectionId, reason: 'closed', disconnected: at(minute) },
});

/** Applies the events in order, each one twice, through every projection (test/support/projectTwice.ts). */
async function project(events: (SampleIngested | DeviceEvent)[]): Promise<DeviceDocument[]> {
  const store = await projectTwice(events.map((e) => ({ ...e, streamId: 'test' })));
  return store.collection<DeviceDocument>(DEVICES).find({});
}

describe('the devices read model', () => {
  it('keeps the name of a renamed device when it is seen again in data', async () => {
    const [d] = await project([ingested(5, 1), renamed('Greenhouse'), ingested(6, 2, 'NEW_TYPE')]);
    expect(d).toMatchObject({ id: 5, name: 'Greenhouse', deviceType: 'NEW_TYPE', created: at(1), lastSeen: at(2) });
  });

  it('drops a deleted device, which comes back with its next data, with that sample\'s id and its own name', async () => {
    expect(await project([ingested(5, 1), renamed('Greenhouse'), deleted(2)])).toEqual([]);
    const [d] = await project([ingested(5, 1), renamed('Greenhouse'), deleted(2), ingested(7, 3)]);
    expect(d).toMatchObject({ id: 7, name: 'dev-1', created: at(3), lastSeen: at(3) });
  });

  it('gives a registered device its allocated id, and keeps it when data names the device later', async () => {
    const [d] = await project([created(40, 1), ingested(8, 2)]);
    expect(d).toMatchObject({ id: 40, name: 'dev-1', deviceType: 'TEST', created: at(1), lastSeen: at(2) });
  });

  it('keeps the id and times of a device seen in data before its registration was applied', async () => {
    const [d] = await project([ingested(5, 1), created(40, 2)]);
    expect(d).toMatchObject({ id: 5, deviceType: 'LINUX', created: at(1), lastSeen: at(1) });
  });

  it('creates a deleted device again with its new id', async () => {
    const [d] = await project([created(40, 1), renamed('Old'), deleted(2), created(41, 3)]);
    expect(d).toMatchObject({ id: 41, name: 'dev-1', created: at(3) });
  });

  it('lists a device from its hello, connected with its sensors, and keeps the sensors when it disconnects', async () => {
    const [d] = await project([connected('c1', 1)]);
    expect(d).toMatchObject({ id: 70, name: 'dev-1', deviceType: 'EDGE_IMPULSE_LINUX', created: at(1), lastSeen: at(1), remoteMgmtConnected: true, remoteMgmtMode: 'ingestion', remoteMgmtHost: '10.0.0.7', sensors: [camera], supportsSnapshotStreaming: true, inferenceInfo: null });
    const [after] = await project([connected('c1', 1), disconnected('c1', 2)]);
    expect(after).toMatchObject({ id: 70, remoteMgmtConnected: false, remoteMgmtMode: 'disconnected', remoteMgmtHost: null, sensors: [camera] });
  });

  it('keeps the name and id of a known device that connects', async () => {
    const [d] = await project([created(40, 1), renamed('Greenhouse'), connected('c1', 2)]);
    expect(d).toMatchObject({ id: 40, name: 'Greenhouse', created: at(1), lastSeen: at(2), remoteMgmtConnected: true });
  });

  it('keeps a device connected when a replaced socket ends after the new one said hello', async () => {
    const [d] = await project([connected('c1', 1), connected('c2', 2, { mode: 'inference', inferenceInfo: { projectId: 9, projectOwner: 'Ada', projectName: 'Kws', deployedVersion: 3 } }), disconnected('c1', 3)]);
    expect(d).toMatchObject({ remoteMgmtConnected: true, remoteMgmtMode: 'inference', remoteConnectionId: 'c2', inferenceInfo: { projectId: 9, deployedVersion: 3 } });
  });

  it('lists a deleted device again when it connects', async () => {
    const [d] = await project([created(40, 1), deleted(2), connected('c1', 3)]);
    expect(d).toMatchObject({ id: 70, name: 'dev-1', created: at(3), remoteMgmtConnected: true });
  });
});

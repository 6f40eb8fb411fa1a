import type { DeviceEvent, DeviceSamplingProgressed, DeviceSamplingRequested } from '../../domain/device/deviceEvents';
import type { ProjectFullyDeleted } from '../../domain/project/projectEvents';
import type { SampleIngested } from '../../domain/sample/sampleEvents';
import type { ReadStore } from '../../stores/readstore/readStore';
import { defineProjection, insertOnce, positionKey, updateOnce } from '../projection';
import { DEVICES, deviceDocumentId, type DeviceDocument } from './deviceDocument';

const devices = (store: ReadStore) => store.collection<DeviceDocument>(DEVICES);

/**
 * Devices registered, renamed and deleted through the API, devices that show up in data (a
 * sample naming its device), and their remote-management connection (connected, mode, sensors). Every write is guarded by the event's position, so a replayed event
 * changes nothing.
 */
export const devicesProjection = defineProjection<Exclude<DeviceEvent, DeviceSamplingRequested | DeviceSamplingProgressed> | SampleIngested | ProjectFullyDeleted>('devices', [DEVICES], {
  async SampleIngested(event, store) {
    const d = event.data;
    if (!d.deviceName) return;
    const _id = deviceDocumentId(d.projectId, d.deviceName);
    await insertOnce(
      devices(store),
      { _id, id: d.sampleId, projectId: d.projectId, deviceId: d.deviceName, name: d.deviceName, deviceType: d.deviceType ?? 'unknown', created: d.ingested, lastSeen: d.ingested, _position: '' },
      event,
    );
    await updateOnce(devices(store), _id, { $set: { lastSeen: d.ingested, ...(d.deviceType ? { deviceType: d.deviceType } : {}) } }, event);
  },
  async DeviceCreated(event, store) {
    const d = event.data;
    const _id = deviceDocumentId(d.projectId, d.deviceId);
    // A device seen in data in the meantime keeps its id, creation time and last seen; the
    // registration still sets its type and name.
    await insertOnce(
      devices(store),
      { _id, id: d.id, projectId: d.projectId, deviceId: d.deviceId, name: d.name, deviceType: d.deviceType, created: d.created, lastSeen: d.created, _position: '' },
      event,
    );
    await updateOnce(devices(store), _id, { $set: { name: d.name, deviceType: d.deviceType } }, event);
  },
  async DeviceRenamed(event, store) {
    const d = event.data;
    await updateOnce(devices(store), deviceDocumentId(d.projectId, d.deviceId), { $set: { name: d.name } }, event);
  },
  async DeviceConnected(event, store) {
    const d = event.data;
    const _id = deviceDocumentId(d.projectId, d.deviceId);
    const remote = {
      deviceType: d.deviceType,
      lastSeen: d.connected,
      remoteConnectionId: d.connectionId,
      remoteMgmtConnected: true,
      remoteMgmtMode: d.mode,
      remoteMgmtHost: d.host,
      sensors: d.sensors,
      supportsSnapshotStreaming: d.supportsSnapshotStreaming,
      inferenceInfo: d.inferenceInfo ?? null,
    };
    // A device new to the read model (or deleted) is listed from its hello, as from its first data.
    await insertOnce(devices(store), { _id, id: d.id, projectId: d.projectId, deviceId: d.deviceId, name: d.deviceId, created: d.connected, _position: '', ...remote }, event);
    await updateOnce(devices(store), _id, { $set: remote }, event);
  },
  async DeviceDisconnected(event, store) {
    const d = event.data;
    // Only the socket the document shows: a replaced one ending late leaves the new one connected.
    await devices(store).updateOne(
      { _id: deviceDocumentId(d.projectId, d.deviceId), remoteConnectionId: d.connectionId, _position: { $lt: positionKey(event.position) } },
      { $set: { remoteConnectionId: null, remoteMgmtConnected: false, remoteMgmtMode: 'disconnected', remoteMgmtHost: null, inferenceInfo: null, _position: positionKey(event.position) } },
    );
  },
  async DeviceDeleted(event, store) {
    const d = event.data;
    // Only a document older than the delete: one made again by later data (a replay) stays.
    await devices(store).deleteOne({ _id: deviceDocumentId(d.projectId, d.deviceId), _position: { $lt: positionKey(event.position) } });
  },
  // A fully deleted project's devices leave the read models (the events stay in the log).
  async ProjectFullyDeleted(event, store) {
    await devices(store).deleteMany({ projectId: event.data.projectId });
  },
});

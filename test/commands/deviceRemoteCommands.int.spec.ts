import { describe, expect, it } from 'vitest';
import type { CommandContext } from '../../commands/commandContext';
import { connectDevice, disconnectDevice, requestSampling, type DeviceCommandDeps } from '../../commands/devices/deviceCommands';
import { IdAllocator } from '../../commands/idAllocator';
import { deviceStream } from '../../domain/device/deviceEvents';
import { ConflictError } from '../../domain/shared/errors';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';

const ctx: CommandContext = { actor: 'system:remote', correlationId: 'ws-1', now: new Date('2026-11-28T10:00:00.000Z') };
const camera = { name: 'Camera (640x480)', maxSampleLengthS: 60000, frequencies: [] };
const hello = (connectionId: string) => ({ projectId: 3, deviceId: 'ac:87:a3', deviceType: 'EDGE_IMPULSE_LINUX', connectionId, host: '10.0.0.7', mode: 'ingestion' as const, sensors: [camera], supportsSnapshotStreaming: true });

function deps(): DeviceCommandDeps & { events: SqliteEventStore } {
  const events = SqliteEventStore.open(':memory:');
  return { events, ids: new IdAllocator(events), devices: { byId: async () => null } };
}

describe('remote-management device commands', () => {
  it('connect, ask for a sample on the current socket, disconnect: the device stream tells it all', async () => {
    const d = deps();
    await connectDevice(d, hello('c1'), ctx);
    await connectDevice(d, hello('c2'), ctx);
    const { requestId } = await requestSampling(d, { projectId: 3, deviceId: 'ac:87:a3', label: 'cat', lengthMs: 1000, category: 'training', intervalMs: 1, sensor: camera.name }, ctx);
    expect(await disconnectDevice(d, { projectId: 3, deviceId: 'ac:87:a3', connectionId: 'c1', reason: 'replaced' }, ctx)).toBeUndefined();
    await disconnectDevice(d, { projectId: 3, deviceId: 'ac:87:a3', connectionId: 'c2', reason: 'timeout' }, ctx);
    const stream = await d.events.readStream(deviceStream(3, 'ac:87:a3'));
    // The socket's end also ends the request in flight on it.
    expect(stream.map((e) => e.type)).toEqual(['DeviceConnected', 'DeviceConnected', 'DeviceSamplingRequested', 'DeviceSamplingProgressed', 'DeviceDisconnected']);
    expect(stream[2]!.data).toMatchObject({ requestId, connectionId: 'c2', label: 'cat' });
    expect(stream[3]!.data).toMatchObject({ requestId, connectionId: 'c2', stage: 'failed' });
    expect(stream[4]!.data).toMatchObject({ connectionId: 'c2', reason: 'timeout' });
    expect(stream[4]!.metadata).toMatchObject({ actor: 'system:remote' });
  });

  it('refuses a sample from a disconnected device and stores nothing', async () => {
    const d = deps();
    await connectDevice(d, hello('c1'), ctx);
    await disconnectDevice(d, { projectId: 3, deviceId: 'ac:87:a3', connectionId: 'c1', reason: 'closed' }, ctx);
    await expect(requestSampling(d, { projectId: 3, deviceId: 'ac:87:a3', label: 'cat', lengthMs: 1000, category: 'training', intervalMs: 1 }, ctx)).rejects.toThrow(ConflictError);
    expect(await d.events.readStream(deviceStream(3, 'ac:87:a3'))).toHaveLength(2);
  });
});

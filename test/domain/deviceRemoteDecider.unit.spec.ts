import { describe, expect, it } from 'vitest';
import { deviceDecider, type DeviceCommand } from '../../domain/device/deviceDecider';
import type { DeviceConnected, DeviceEvent } from '../../domain/device/deviceEvents';
import { ConflictError, NotFoundError, ValidationError } from '../../domain/shared/errors';
import { deciderSpecification } from '../support/deciderSpecification';

// Connection, disconnection and sampling requests of a device on the remote-management socket.
const spec = deciderSpecification(deviceDecider);
const now = new Date('2026-11-28T10:00:00.000Z');
const later = new Date('2026-11-28T10:05:00.000Z');
const camera = { name: 'Camera (640x480)', maxSampleLengthS: 60000, frequencies: [] };
const microphone = { name: 'Microphone', maxSampleLengthS: 3600, frequencies: [16000] };

type Data<T extends DeviceCommand['type']> = Extract<DeviceCommand, { type: T }>['data'];
const connect = (over: Partial<Data<'ConnectDevice'>> = {}): DeviceCommand => ({
  type: 'ConnectDevice',
  data: {
    projectId: 3,
    deviceId: 'ac:87:a3',
    deviceType: 'EDGE_IMPULSE_LINUX',
    id: 41,
    connectionId: 'p1-c1',
    host: '10.0.0.7',
    mode: 'ingestion',
    sensors: [camera, microphone],
    supportsSnapshotStreaming: true,
    now,
    ...over,
  },
});
const disconnect = (connectionId = 'p1-c1'): DeviceCommand => ({ type: 'DisconnectDevice', data: { projectId: 3, deviceId: 'ac:87:a3', connectionId, reason: 'closed', now: later } });
const sample = (over: Partial<Data<'RequestSampling'>> = {}): DeviceCommand => ({
  type: 'RequestSampling',
  data: { projectId: 3, deviceId: 'ac:87:a3', requestId: 900, label: 'cat', lengthMs: 1000, category: 'training', intervalMs: 1, sensor: 'Camera (640x480)', now: later, ...over },
});

const connected = (connectionId = 'p1-c1', sensors = [camera, microphone]): DeviceConnected => ({
  type: 'DeviceConnected',
  data: {
    projectId: 3,
    deviceId: 'ac:87:a3',
    id: 41,
    deviceType: 'EDGE_IMPULSE_LINUX',
    connectionId,
    host: '10.0.0.7',
    mode: 'ingestion',
    sensors,
    supportsSnapshotStreaming: true,
    connected: now.toISOString(),
  },
});
const disconnected: DeviceEvent = { type: 'DeviceDisconnected', data: { projectId: 3, deviceId: 'ac:87:a3', connectionId: 'p1-c1', reason: 'closed', disconnected: later.toISOString() } };
const created: DeviceEvent = { type: 'DeviceCreated', data: { projectId: 3, deviceId: 'ac:87:a3', id: 41, deviceType: 'LINUX', name: 'ac:87:a3', created: now.toISOString() } };
const deleted: DeviceEvent = { type: 'DeviceDeleted', data: { projectId: 3, deviceId: 'ac:87:a3', deleted: later.toISOString() } };

describe('a device connecting', () => {
  it('is connected with its sensors, whether new, created or deleted before', () => {
    spec.given([]).when(connect()).then([connected()]);
    spec.given([created]).when(connect()).then([connected()]);
    spec.given([created, deleted]).when(connect()).then([connected()]);
  });

  it('in inference mode carries its inference info; in ingestion mode none', () => {
    const inferenceInfo = { projectId: 9, projectOwner: 'Ada', projectName: 'Kws', deployedVersion: 4, modelType: 'classification' as const };
    spec
      .given([])
      .when(connect({ mode: 'inference', inferenceInfo }))
      .then([{ ...connected(), data: { ...connected().data, mode: 'inference', inferenceInfo } }]);
    spec.given([]).when(connect({ inferenceInfo })).then([connected()]);
  });

  it('saying hello twice on the same socket changes nothing; a new socket replaces the old', () => {
    spec.given([connected()]).when(connect()).then([]);
    spec.given([connected()]).when(connect({ connectionId: 'p2-c9' })).then([connected('p2-c9')]);
  });

  it('is refused a bad device id, type or connection id', () => {
    spec.given([]).when(connect({ deviceId: '' })).thenThrows(ValidationError, /Device id \("deviceId"\) is empty/);
    spec.given([]).when(connect({ deviceType: 'x\u202e' })).thenThrows(ValidationError, /"deviceType"\) contains an invisible formatting character/);
    spec.given([]).when(connect({ connectionId: 'c'.repeat(129) })).thenThrows(ValidationError, /connectionId is 129 characters long/);
    spec.given([]).when(connect({ id: Number.NaN })).thenThrows(ValidationError, /id must be a number/);
  });

  it('makes the device known: it can be renamed and deleted without having been created', () => {
    spec.given([connected()]).when({ type: 'RenameDevice', data: { projectId: 3, deviceId: 'ac:87:a3', name: 'Kitchen', seenInData: null } }).then([
      { type: 'DeviceRenamed', data: { projectId: 3, deviceId: 'ac:87:a3', name: 'Kitchen' } },
    ]);
  });
});

describe('a device disconnecting', () => {
  it('is disconnected when its current socket ends', () => {
    spec.given([connected()]).when(disconnect()).then([disconnected]);
  });

  it('a replaced socket ending late, or a second end, changes nothing', () => {
    spec.given([connected(), connected('p2-c9')]).when(disconnect('p1-c1')).then([]);
    spec.given([connected(), disconnected]).when(disconnect()).then([]);
    spec.given([]).when(disconnect()).then([]);
  });

  it('stays known after it disconnects', () => {
    spec.given([connected(), disconnected]).when({ type: 'CreateDevice', data: { projectId: 3, deviceId: 'ac:87:a3', deviceType: 'X', ifNotExists: true, id: 50, seenInData: null, now } }).then([]);
  });
});

describe('a sampling request', () => {
  it('goes to the current socket, with what was asked', () => {
    spec
      .given([connected(), connected('p2-c9')])
      .when(sample({ label: '  cat  ' }))
      .then([
        {
          type: 'DeviceSamplingRequested',
          data: { projectId: 3, deviceId: 'ac:87:a3', requestId: 900, connectionId: 'p2-c9', label: 'cat', lengthMs: 1000, category: 'training', intervalMs: 1, sensor: 'Camera (640x480)', requested: later.toISOString() },
        },
      ]);
  });

  it('may leave the sensor to the device', () => {
    spec
      .given([connected()])
      .when(sample({ sensor: undefined, category: 'testing' }))
      .thenMatches((events) => expect(events).toEqual([{ type: 'DeviceSamplingRequested', data: expect.not.objectContaining({ sensor: expect.anything() }) }]));
  });

  it('is refused for a device that is not connected: never, no longer, or deleted', () => {
    spec.given([]).when(sample()).thenThrows(ConflictError, /not connected/);
    spec.given([created]).when(sample()).thenThrows(ConflictError, /not connected/);
    spec.given([connected(), disconnected]).when(sample()).thenThrows(ConflictError, /not connected/);
    spec.given([connected(), deleted]).when(sample()).thenThrows(ConflictError, /not connected/);
  });

  it('is refused an unknown sensor, naming the ones the device has', () => {
    spec.given([connected()]).when(sample({ sensor: 'Accelerometer' })).thenThrows(ValidationError, /no sensor "Accelerometer"; it has "Camera \(640x480\)", "Microphone"/);
    spec.given([connected('p1-c1', [])]).when(sample({ sensor: 'Camera' })).thenThrows(ValidationError, /it has none/);
  });

  it('is refused a length beyond what the sensor allows, or none', () => {
    spec.given([connected()]).when(sample({ sensor: 'Microphone', lengthMs: 3_600_001 })).thenThrows(ValidationError, /Length \("lengthMs"\) must be from 1 to 3600000/);
    spec.given([connected()]).when(sample({ sensor: 'Microphone', lengthMs: 3_600_000 })).thenMatches((events) => expect(events).toHaveLength(1));
    spec.given([connected()]).when(sample({ lengthMs: 0 })).thenThrows(ValidationError, /lengthMs/);
    spec.given([connected()]).when(sample({ lengthMs: Number.NaN })).thenThrows(ValidationError, /lengthMs/);
  });

  it('is refused a bad label, category or interval', () => {
    spec.given([connected()]).when(sample({ label: ' ' })).thenThrows(ValidationError, /Label \("label"\) is empty/);
    spec.given([connected()]).when(sample({ label: 'l'.repeat(257) })).thenThrows(ValidationError, /is 257 characters long/);
    spec.given([connected()]).when(sample({ label: 'a\u0000' })).thenThrows(ValidationError, /control character/);
    spec.given([connected()]).when(sample({ category: 'validation' })).thenThrows(ValidationError, /must be one of training, testing/);
    spec.given([connected()]).when(sample({ intervalMs: 0 })).thenThrows(ValidationError, /Interval \("intervalMs"\)/);
    spec.given([connected()]).when(sample({ intervalMs: Number.POSITIVE_INFINITY })).thenThrows(ValidationError, /finite/);
  });
});

describe('a deleted device', () => {
  it('is not found for a rename while its old socket is remembered no more', () => {
    spec.given([connected(), deleted]).when({ type: 'RenameDevice', data: { projectId: 3, deviceId: 'ac:87:a3', name: 'K', seenInData: null } }).thenThrows(NotFoundError);
  });
});

describe('sampling progress', () => {
  const requested = (requestId = 900, connectionId = 'p1-c1', over: Partial<Extract<DeviceEvent, { type: 'DeviceSamplingRequested' }>['data']> = {}): DeviceEvent => ({
    type: 'DeviceSamplingRequested',
    data: { projectId: 3, deviceId: 'ac:87:a3', requestId, connectionId, label: 'cat', lengthMs: 1000, category: 'training', intervalMs: 1, requested: later.toISOString(), ...over },
  });
  const at = new Date('2026-11-28T10:05:01.000Z');
  const report = (stage: Data<'ReportSamplingProgress'>['stage'], over: Partial<Data<'ReportSamplingProgress'>> = {}): DeviceCommand => ({
    type: 'ReportSamplingProgress',
    data: { projectId: 3, deviceId: 'ac:87:a3', connectionId: 'p1-c1', stage, now: at, ...over },
  });
  const progressed = (stage: Data<'ReportSamplingProgress'>['stage'], over: Record<string, unknown> = {}, requestId = 900, connectionId = 'p1-c1'): DeviceEvent =>
    ({ type: 'DeviceSamplingProgressed', data: { projectId: 3, deviceId: 'ac:87:a3', requestId, connectionId, stage, at: at.toISOString(), ...over } }) as DeviceEvent;

  it('reports each stage of the request in flight, naming it', () => {
    for (const stage of ['accepted', 'started', 'uploading', 'processing', 'finished'] as const) {
      spec.given([connected(), requested()]).when(report(stage)).then([progressed(stage)]);
    }
    spec.given([connected(), requested()]).when(report('failed', { error: '  No camera  ' })).then([progressed('failed', { error: 'No camera' })]);
    spec.given([connected(), requested()]).when(report('failed', { error: '' })).then([progressed('failed', { error: 'No error message' })]);
  });

  it('keeps readings at 10 % steps, so a device cannot write an event per frame', () => {
    const r = (p: number) => report('reading', { progressPercentage: p });
    spec.given([connected(), requested()]).when(r(3)).then([progressed('reading', { progressPercentage: 3 })]);
    spec.given([connected(), requested(), progressed('reading', { progressPercentage: 3 })]).when(r(9.9)).then([]);
    spec.given([connected(), requested(), progressed('reading', { progressPercentage: 3 })]).when(r(10)).then([progressed('reading', { progressPercentage: 10 })]);
    spec.given([connected(), requested(), progressed('reading', { progressPercentage: 55 })]).when(r(20)).then([]);
    spec.given([connected(), requested(), progressed('reading', { progressPercentage: 95 })]).when(r(100)).then([progressed('reading', { progressPercentage: 100 })]);
    spec.given([connected(), requested()]).when(r(101)).thenThrows(ValidationError, /progressPercentage/);
    spec.given([connected(), requested()]).when(report('reading')).thenThrows(ValidationError, /progressPercentage/);
  });

  it('reports a stage once per request; a stage said again is dropped', () => {
    spec.given([connected(), requested(), progressed('started')]).when(report('started')).then([]);
    spec.given([connected(), requested(), progressed('started'), progressed('finished'), requested(901)]).when(report('started')).then([progressed('started', {}, 901)]);
  });

  it('drops messages with no request in flight, after its end, or from another socket', () => {
    spec.given([connected()]).when(report('started')).then([]);
    spec.given([connected(), requested(), progressed('finished')]).when(report('uploading')).then([]);
    spec.given([connected(), requested(), progressed('failed', { error: 'x' })]).when(report('finished')).then([]);
    spec.given([connected(), requested()]).when(report('started', { connectionId: 'p9-c9' })).then([]);
    spec.given([]).when(report('finished')).then([]);
  });

  it('bounds the error text', () => {
    spec.given([connected(), requested()]).when(report('failed', { error: 'e'.repeat(1025) })).thenThrows(ValidationError, /error is 1025 characters long/);
  });

  it('refuses a second request while one is in flight; allows it once that one ended', () => {
    spec.given([connected(), requested()]).when(sample({ requestId: 901 })).thenThrows(ConflictError, /still sampling \(request 900\)/);
    spec.given([connected(), requested(), progressed('reading', { progressPercentage: 50 })]).when(sample({ requestId: 901 })).thenThrows(ConflictError, /still sampling/);
    // A bad request is told what is wrong with it, busy or not.
    spec.given([connected(), requested()]).when(sample({ requestId: 901, sensor: 'Thermometer' })).thenThrows(ValidationError, /has no sensor "Thermometer"/);
    spec.given([connected(), requested(), progressed('finished')]).when(sample({ requestId: 901 })).thenMatches((events) => expect(events.map((e) => e.type)).toEqual(['DeviceSamplingRequested']));
    spec.given([connected(), requested(), progressed('failed', { error: 'x' })]).when(sample({ requestId: 901 })).thenMatches((events) => expect(events).toHaveLength(1));
  });

  it('ends a request the device left unanswered when a new one comes long after', () => {
    const muchLater = new Date(later.getTime() + 1000 + 5 * 60_000);
    spec
      .given([connected(), requested()])
      .when(sample({ requestId: 901, now: muchLater }))
      .thenMatches((events) => {
        expect(events[0]).toEqual({ type: 'DeviceSamplingProgressed', data: { projectId: 3, deviceId: 'ac:87:a3', requestId: 900, connectionId: 'p1-c1', stage: 'failed', error: 'The device did not answer', at: muchLater.toISOString() } });
        expect(events[1]).toMatchObject({ type: 'DeviceSamplingRequested', data: { requestId: 901 } });
      });
    spec.given([connected(), requested()]).when(sample({ requestId: 901, now: new Date(muchLater.getTime() - 1) })).thenThrows(ConflictError, /still sampling/);
  });

  it('ends the request in flight with an error when its socket ends, is replaced, or the device is deleted', () => {
    const failed = (error: string, now: Date) => ({ type: 'DeviceSamplingProgressed', data: { projectId: 3, deviceId: 'ac:87:a3', requestId: 900, connectionId: 'p1-c1', stage: 'failed', error, at: now.toISOString() } });
    spec.given([connected(), requested()]).when(disconnect()).then([failed('The device disconnected while sampling (closed)', later) as DeviceEvent, disconnected]);
    spec
      .given([connected(), requested()])
      .when(connect({ connectionId: 'p2-c9' }))
      .then([failed('The device connected again while sampling', now) as DeviceEvent, connected('p2-c9')]);
    spec
      .given([connected(), requested()])
      .when({ type: 'DeleteDevice', data: { projectId: 3, deviceId: 'ac:87:a3', seenInData: null, now: later } })
      .then([failed('The device was deleted while sampling', later) as DeviceEvent, deleted]);
    // Nothing in flight: nothing to end.
    spec.given([connected(), requested(), progressed('finished')]).when(disconnect()).then([disconnected]);
    // A new socket serves no request of the old one.
    spec.given([connected(), requested(), connected('p2-c9')]).when(sample({ requestId: 901 })).thenMatches((events) => expect(events).toHaveLength(1));
  });
});

import { describe, expect, it } from 'vitest';
import { deviceDecider, type DeviceCommand, type SeenInData } from '../../domain/device/deviceDecider';
import { deviceStream, type DeviceEvent } from '../../domain/device/deviceEvents';
import { ConflictError, NotFoundError, ValidationError } from '../../domain/shared/errors';
import { deciderSpecification } from '../support/deciderSpecification';

const spec = deciderSpecification(deviceDecider);
const now = new Date('2026-11-25T10:00:00.000Z');
const later = new Date('2026-11-25T11:00:00.000Z');

const create = (overrides: Partial<Extract<DeviceCommand, { type: 'CreateDevice' }>['data']> = {}): DeviceCommand => ({
  type: 'CreateDevice',
  data: { projectId: 3, deviceId: 'ac:87:a3', deviceType: 'LINUX', ifNotExists: false, id: 41, seenInData: null, now, ...overrides },
});
const rename = (name: string, seenInData: SeenInData | null = null, deviceId = 'ac:87:a3'): DeviceCommand => ({
  type: 'RenameDevice',
  data: { projectId: 3, deviceId, name, seenInData },
});
const remove = (seenInData: SeenInData | null = null, at = later): DeviceCommand => ({ type: 'DeleteDevice', data: { projectId: 3, deviceId: 'ac:87:a3', seenInData, now: at } });

const created: DeviceEvent = {
  type: 'DeviceCreated',
  data: { projectId: 3, deviceId: 'ac:87:a3', id: 41, deviceType: 'LINUX', name: 'ac:87:a3', created: now.toISOString() },
};
const deleted: DeviceEvent = { type: 'DeviceDeleted', data: { projectId: 3, deviceId: 'ac:87:a3', deleted: later.toISOString() } };

describe('a device the project has never known', () => {
  it('is created with the allocated id, its type, and its id as its name', () => {
    spec.given([]).when(create()).then([created]);
  });

  it('is created with ifNotExists too', () => {
    spec.given([]).when(create({ ifNotExists: true })).then([created]);
  });

  it('cannot be renamed or deleted', () => {
    spec.given([]).when(rename('Kitchen')).thenThrows(NotFoundError, /not found/);
    spec.given([]).when(remove()).thenThrows(NotFoundError, /not found/);
  });

  it('is refused an empty, over-long or control-character id, and an empty or over-long type', () => {
    spec.given([]).when(create({ deviceId: '' })).thenThrows(ValidationError, /Device id \("deviceId"\) is empty/);
    spec.given([]).when(create({ deviceId: 'x'.repeat(257) })).thenThrows(ValidationError, /"deviceId"\) is 257 characters long; at most 256/);
    spec.given([]).when(create({ deviceId: 'a\nb' })).thenThrows(ValidationError, /"deviceId"\) contains a control character/);
    spec.given([]).when(create({ deviceType: ' ' })).thenThrows(ValidationError, /Device type \("deviceType"\) is empty/);
    spec.given([]).when(create({ deviceType: 'T'.repeat(257) })).thenThrows(ValidationError, /"deviceType"\) is 257 characters long; at most 256/);
  });

  it('is refused a 3 MB id, and ids or types with bidirectional overrides, isolates or lone surrogates', () => {
    spec.given([]).when(create({ deviceId: 'd'.repeat(3_000_000) })).thenThrows(ValidationError, /"deviceId"\) is 3000000 characters long/);
    spec.given([]).when(create({ deviceId: 'dev\u202Eice' })).thenThrows(ValidationError, /"deviceId"\) contains an invisible formatting character \(U\+202E\)/);
    spec.given([]).when(create({ deviceType: 'LINUX\u2069' })).thenThrows(ValidationError, /"deviceType"\) contains an invisible formatting character/);
    spec.given([]).when(create({ deviceId: 'a\udc00' })).thenThrows(ValidationError, /"deviceId"\) is not valid Unicode/);
  });

  it('is refused an id or a time that is not one', () => {
    spec.given([]).when(create({ id: Number.NaN })).thenThrows(ValidationError, /id must be a number/);
    spec.given([]).when(create({ now: new Date(Number.NaN) })).thenThrows(ValidationError, /now is not a valid date/);
  });

  it('accepts an id and a type as long as a device name carried in data (256 characters)', () => {
    spec
      .given([])
      .when(create({ deviceId: 'x'.repeat(256), deviceType: 'T'.repeat(256) }))
      .thenMatches((events) => expect(events).toHaveLength(1));
  });

  it('accepts an id of 128 characters with colons, slashes and spaces', () => {
    spec
      .given([])
      .when(create({ deviceId: 'a:/ '.repeat(32) }))
      .thenMatches((events) => expect(events).toHaveLength(1));
  });
});

describe('a device seen only in ingested data', () => {
  const seen = { lastSeen: now.toISOString() };

  it('is not created again: a no-op with ifNotExists, a conflict without', () => {
    spec.given([]).when(create({ ifNotExists: true, seenInData: seen })).then([]);
    spec.given([]).when(create({ seenInData: seen })).thenThrows(ConflictError, /already exists/);
  });

  it('can be renamed (name trimmed) and deleted', () => {
    spec.given([]).when(rename('  Kitchen  ', seen)).then([{ type: 'DeviceRenamed', data: { projectId: 3, deviceId: 'ac:87:a3', name: 'Kitchen' } }]);
    spec.given([]).when(remove(seen)).then([deleted]);
  });

  it('is refused an empty or over-long name', () => {
    spec.given([]).when(rename(' ', seen)).thenThrows(ValidationError, /Device name \("name"\) is empty/);
    spec.given([]).when(rename('n'.repeat(257), seen)).thenThrows(ValidationError, /"name"\) is 257 characters long; at most 256/);
    spec.given([]).when(rename('n'.repeat(3_000_000), seen)).thenThrows(ValidationError, /"name"\) is 3000000 characters long/);
    spec.given([]).when(rename('Kitchen\u0000', seen)).thenThrows(ValidationError, /"name"\) contains a control character/);
    spec.given([]).when(rename('Kitchen\u2067', seen)).thenThrows(ValidationError, /"name"\) contains an invisible formatting character/);
  });
});

describe('a created device', () => {
  it('is not created again: a no-op with ifNotExists, a conflict without', () => {
    spec.given([created]).when(create({ ifNotExists: true, id: 42 })).then([]);
    spec.given([created]).when(create({ id: 42 })).thenThrows(ConflictError, /already exists/);
  });

  it('is renamed and deleted even before the read model shows it', () => {
    spec.given([created]).when(rename('Kitchen')).then([{ type: 'DeviceRenamed', data: { projectId: 3, deviceId: 'ac:87:a3', name: 'Kitchen' } }]);
    spec.given([created]).when(remove()).then([deleted]);
  });
});

describe('a deleted device', () => {
  it('is unknown: renaming or deleting it again is refused', () => {
    spec.given([created, deleted]).when(rename('Kitchen')).thenThrows(NotFoundError);
    spec.given([created, deleted]).when(remove(null, new Date('2026-11-25T12:00:00.000Z'))).thenThrows(NotFoundError);
  });

  it('ignores a read model that has not applied the delete yet (data older than the delete)', () => {
    spec.given([created, deleted]).when(rename('Kitchen', { lastSeen: now.toISOString() })).thenThrows(NotFoundError);
  });

  it('exists again once new data shows it', () => {
    const back = { lastSeen: '2026-11-25T12:00:00.000Z' };
    spec.given([created, deleted]).when(rename('Kitchen', back)).then([{ type: 'DeviceRenamed', data: { projectId: 3, deviceId: 'ac:87:a3', name: 'Kitchen' } }]);
    spec.given([created, deleted]).when(create({ seenInData: back })).thenThrows(ConflictError);
  });

  it('is created again with a new id', () => {
    spec
      .given([created, deleted])
      .when(create({ id: 77, now: new Date('2026-11-26T00:00:00.000Z') }))
      .then([{ type: 'DeviceCreated', data: { ...created.data, id: 77, created: '2026-11-26T00:00:00.000Z' } } as DeviceEvent]);
  });
});

describe('the device stream name', () => {
  it('encodes the free-form device id', () => {
    expect(deviceStream(3, 'ac:87:a3')).toBe('device-3-ac%3A87%3Aa3');
    expect(deviceStream(3, 'a b/$c')).toBe('device-3-a%20b%2F%24c');
  });
});

import type { Decider } from '../shared/decider';
import { ConflictError, NotFoundError, ValidationError, assertNever } from '../shared/errors';
import type { DeviceEvent } from './deviceEvents';

export const DEVICE_ID_MAX = 128;
export const DEVICE_NAME_MAX = 128;
export const DEVICE_TYPE_MAX = 64;

const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * What the devices read model knows of a device seen in ingested data (the command handler looks
 * it up; the decider stays pure). Null when the read model has no such device.
 */
export interface SeenInData {
  lastSeen: string;
}

export type DeviceCommand =
  | {
      type: 'CreateDevice';
      data: { projectId: number; deviceId: string; deviceType: string; ifNotExists: boolean; id: number; seenInData: SeenInData | null; now: Date };
    }
  | { type: 'RenameDevice'; data: { projectId: number; deviceId: string; name: string; seenInData: SeenInData | null } }
  | { type: 'DeleteDevice'; data: { projectId: number; deviceId: string; seenInData: SeenInData | null; now: Date } };

/**
 * `known`: created or renamed through the API (a device seen only in data gets its stream on its
 * first rename or delete). `deleted`: deleted, until it is created again or shows up in new data.
 */
export type DeviceState = { status: 'none' } | { status: 'known' } | { status: 'deleted'; deleted: string };

export function validateDeviceId(deviceId: string): void {
  if (deviceId.length === 0) throw new ValidationError('Device id must not be empty');
  if (deviceId.length > DEVICE_ID_MAX) throw new ValidationError(`Device id must be at most ${DEVICE_ID_MAX} characters`);
  if (CONTROL_CHARACTERS.test(deviceId)) throw new ValidationError('Device id must not contain control characters');
}

function validDeviceType(deviceType: string): string {
  const type = deviceType.trim();
  if (type === '') throw new ValidationError('Device type must not be empty');
  if (type.length > DEVICE_TYPE_MAX) throw new ValidationError(`Device type must be at most ${DEVICE_TYPE_MAX} characters`);
  return type;
}

function validName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '') throw new ValidationError('Device name must not be empty');
  if (trimmed.length > DEVICE_NAME_MAX) throw new ValidationError(`Device name must be at most ${DEVICE_NAME_MAX} characters`);
  return trimmed;
}

/**
 * Whether the device exists: created (or renamed) through the API and not deleted since, or seen
 * in data. After a delete, only data newer than the delete counts: an older `lastSeen` is the read
 * model not having applied the delete yet.
 */
function exists(state: DeviceState, seen: SeenInData | null): boolean {
  switch (state.status) {
    case 'known':
      return true;
    case 'none':
      return seen !== null;
    case 'deleted':
      return seen !== null && seen.lastSeen > state.deleted;
    default:
      return assertNever(state);
  }
}

export const deviceDecider: Decider<DeviceCommand, DeviceEvent, DeviceState> = {
  initialState: () => ({ status: 'none' }),

  decide(command, state) {
    switch (command.type) {
      case 'CreateDevice': {
        const c = command.data;
        validateDeviceId(c.deviceId);
        const deviceType = validDeviceType(c.deviceType);
        if (exists(state, c.seenInData)) {
          if (c.ifNotExists) return [];
          throw new ConflictError(`Device "${c.deviceId}" already exists in project ${c.projectId}`, 'DEVICE_EXISTS');
        }
        return [
          {
            type: 'DeviceCreated',
            data: { projectId: c.projectId, deviceId: c.deviceId, id: c.id, deviceType, name: c.deviceId, created: c.now.toISOString() },
          },
        ];
      }
      case 'RenameDevice': {
        const c = command.data;
        validateDeviceId(c.deviceId);
        const name = validName(c.name);
        if (!exists(state, c.seenInData)) throw new NotFoundError(`Device "${c.deviceId}" not found in project ${c.projectId}`, 'DEVICE_NOT_FOUND');
        return [{ type: 'DeviceRenamed', data: { projectId: c.projectId, deviceId: c.deviceId, name } }];
      }
      case 'DeleteDevice': {
        const c = command.data;
        validateDeviceId(c.deviceId);
        if (!exists(state, c.seenInData)) throw new NotFoundError(`Device "${c.deviceId}" not found in project ${c.projectId}`, 'DEVICE_NOT_FOUND');
        return [{ type: 'DeviceDeleted', data: { projectId: c.projectId, deviceId: c.deviceId, deleted: c.now.toISOString() } }];
      }
      default:
        return assertNever(command);
    }
  },

  evolve(_state, event) {
    switch (event.type) {
      case 'DeviceCreated':
      case 'DeviceRenamed':
        return { status: 'known' };
      case 'DeviceDeleted':
        return { status: 'deleted', deleted: event.data.deleted };
      default:
        return assertNever(event);
    }
  },
};

import type { Decider } from '../shared/decider';
import { MAX_DEVICE_TEXT_LENGTH } from '../sample/sampleLimits';
import { ConflictError, NotFoundError, assertNever } from '../shared/errors';
import { checkDate, checkId } from '../shared/numberRules';
import { checkText } from '../shared/textRules';
import type { DeviceEvent } from './deviceEvents';

// As long as a device name or type carried in data may be: a device first seen in a sample can be
// looked up, renamed and deleted through the API under the same id.
export const DEVICE_ID_MAX = MAX_DEVICE_TEXT_LENGTH;
export const DEVICE_NAME_MAX = MAX_DEVICE_TEXT_LENGTH;
export const DEVICE_TYPE_MAX = MAX_DEVICE_TEXT_LENGTH;

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
  checkText(deviceId, 'Device id ("deviceId")', { max: DEVICE_ID_MAX });
}

function validDeviceType(deviceType: string): string {
  return checkText(deviceType.trim(), 'Device type ("deviceType")', { max: DEVICE_TYPE_MAX });
}

function validName(name: string): string {
  return checkText(name.trim(), 'Device name ("name")', { max: DEVICE_NAME_MAX });
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
            data: { projectId: checkId(c.projectId, 'projectId'), deviceId: c.deviceId, id: checkId(c.id, 'id'), deviceType, name: c.deviceId, created: checkDate(c.now, 'now') },
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
        return [{ type: 'DeviceDeleted', data: { projectId: c.projectId, deviceId: c.deviceId, deleted: checkDate(c.now, 'now') } }];
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

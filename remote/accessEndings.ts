// The events that end a held device socket's access, read from the log in order: a device whose key
// is revoked or whose project is deleted is cut off before any later sampling request (which would
// carry the project's HMAC key) could reach it; a deleted device is cut off so that it says hello again
// and is listed anew, as the SDK documents (deleteDevice: the device reappears on its next connect).
import type { StoredEvent } from '../stores/eventstore/eventStore';
import type { HeldDevice } from './remoteSocket';

export const KEY_ENDED = 'The API key this device connected with was revoked or has expired';

const num = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

/** Why `event` ends the access of `held`, or undefined when it does not. */
export function accessEndingOf(event: Pick<StoredEvent, 'type' | 'data'>, held: Pick<HeldDevice, 'projectId' | 'deviceId' | 'apiKeyId'>): string | undefined {
  const d = event.data;
  switch (event.type) {
    case 'ApiKeyRevoked':
      return held.apiKeyId !== undefined && num(d.apiKeyId) === held.apiKeyId ? KEY_ENDED : undefined;
    case 'ProjectDeleted':
      return num(d.projectId) === held.projectId ? `Project ${held.projectId} was deleted` : undefined;
    case 'DeviceDeleted':
      return num(d.projectId) === held.projectId && d.deviceId === held.deviceId ? 'The device was deleted from the project; it is listed again when it connects again' : undefined;
    default:
      return undefined;
  }
}

export const DEVICE_ACCESS_ENDING_EVENTS: ReadonlySet<string> = new Set(['ApiKeyRevoked', 'ProjectDeleted', 'DeviceDeleted']);

// Connection ids of remote-management sockets, `<instanceId>-<16 hex digits>`, and the recovery at
// start that they make possible: a process finds the devices its previous run left recorded connected.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { systemContext } from '../commands/commandContext';
import { disconnectDevice, type DeviceCommandDeps } from '../commands/devices/deviceCommands';
import type { DeviceDocument } from '../projections/devices/deviceDocument';

/** The random part of a connection id: fixed length, so an instance id that prefixes another's cannot match its ids. */
const CONNECTION_SUFFIX = /^[0-9a-f]{16}$/;

export function newConnectionId(instanceId: string): string {
  return `${instanceId}-${randomBytes(8).toString('hex')}`;
}

/** Whether `connectionId` was made by the process running as `instanceId`. */
export function isConnectionOf(instanceId: string, connectionId: string): boolean {
  return connectionId.startsWith(`${instanceId}-`) && CONNECTION_SUFFIX.test(connectionId.slice(instanceId.length + 1));
}

export interface OrphanDeps {
  commands: DeviceCommandDeps;
  /** The devices read model's connected devices. */
  connectedDevices(): Promise<Pick<DeviceDocument, 'projectId' | 'deviceId' | 'remoteConnectionId'>[]>;
  instanceId: string;
  log: Logger;
  now?: () => Date;
}

/**
 * Records devices this instance shows connected but does not hold (the previous run of this
 * process ended without recording their end) disconnected with reason `server-stopped`.
 */
export async function disconnectOrphans(
  deps: OrphanDeps,
  isHeld: (connectionId: string) => boolean = () => false,
): Promise<number> {
  const now = deps.now ?? (() => new Date());
  let count = 0;
  for (const device of await deps.connectedDevices()) {
    const connectionId = device.remoteConnectionId;
    if (typeof connectionId !== 'string' || !isConnectionOf(deps.instanceId, connectionId) || isHeld(connectionId)) continue;
    try {
      await disconnectDevice(deps.commands, { projectId: device.projectId, deviceId: device.deviceId, connectionId, reason: 'server-stopped' }, systemContext('remote', now()));
      count++;
    } catch (error) {
      deps.log.error({ err: error, projectId: device.projectId, deviceId: device.deviceId }, 'could not record a device of the previous run disconnected');
    }
  }
  return count;
}


import { z } from 'zod';
import { createDevice, deleteDevice, renameDevice } from '../../commands/devices/deviceCommands';
import { DEVICE_ID_MAX, DEVICE_NAME_MAX, DEVICE_TYPE_MAX, validateDeviceId } from '../../domain/device/deviceDecider';
import { NotFoundError } from '../../domain/shared/errors';
import type { Position } from '../../stores/eventstore/eventStore';
import type { ApiDeps } from '../apiDeps';
import { actorOf, requireProject, type Principal } from '../auth/principal';
import { intParam, operation, type Operation } from '../http/operation';
import { deviceView } from '../views/projectView';

const noControlCharacters = (s: string) => !/[\u0000-\u001f\u007f-\u009f]/.test(s);

const CreateDeviceRequest = z.object({
  deviceId: z.string().min(1).max(DEVICE_ID_MAX).refine(noControlCharacters, 'must not contain control characters'),
  deviceType: z.string().min(1).max(DEVICE_TYPE_MAX),
  ifNotExists: z.boolean(),
});

const RenameDeviceRequest = z.object({
  name: z.string().min(1).max(DEVICE_NAME_MAX),
});

/** The `deviceId` path parameter (decoded by the router): a free string, validated like a new one. */
function deviceIdParam(params: Record<string, string>): string {
  const deviceId = params.deviceId ?? '';
  validateDeviceId(deviceId);
  return deviceId;
}

/** DevicesApi: devices seen in data or registered (sdk-reference 2.9). Remote management comes later. */
export function deviceOperations(deps: ApiDeps): Operation[] {
  // Checked before the body is validated: a caller without access learns nothing from validation.
  const access = (level: 'read' | 'write' | 'devices') => async (principal: Principal, params: Record<string, string>) => {
    await requireProject(deps.projects, principal, intParam(params, 'projectId'), level);
  };
  const context = (principal: Principal, requestId: string) => ({ actor: actorOf(principal), correlationId: requestId, now: new Date() });
  const answer = async (position: Position | undefined, settle: (p: Position) => Promise<void>) => {
    if (position !== undefined) await settle(position);
    return {};
  };

  return [
    operation({
      operationId: 'listDevices',
      method: 'get',
      path: '/api/:projectId/devices',
      summary: 'The devices of the project: seen in its data or registered',
      auth: 'any',
      authorize: access('read'),
      async handler({ params }) {
        const devices = await deps.devices.forProject(intParam(params, 'projectId'));
        return { devices: devices.map(deviceView) };
      },
    }),
    operation({
      operationId: 'getDevice',
      method: 'get',
      path: '/api/:projectId/device/:deviceId',
      summary: 'One device of the project',
      auth: 'any',
      authorize: access('read'),
      async handler({ params }) {
        const projectId = intParam(params, 'projectId');
        const deviceId = deviceIdParam(params);
        const device = await deps.devices.byId(projectId, deviceId);
        if (!device) throw new NotFoundError(`Device "${deviceId}" not found in project ${projectId}`, 'DEVICE_NOT_FOUND');
        return { device: deviceView(device) };
      },
    }),
    operation({
      operationId: 'createDevice',
      method: 'post',
      path: '/api/:projectId/devices/create',
      summary: 'Register a device; with ifNotExists an existing device is a success',
      auth: 'any',
      projectAccess: 'devices',
      authorize: access('devices'),
      body: CreateDeviceRequest,
      async handler({ principal, params, body, requestId, settle }) {
        const position = await createDevice(deps, { projectId: intParam(params, 'projectId'), ...body }, context(principal, requestId));
        return answer(position, settle);
      },
    }),
    operation({
      operationId: 'renameDevice',
      method: 'post',
      path: '/api/:projectId/devices/:deviceId/rename',
      summary: 'Rename a device',
      auth: 'any',
      projectAccess: 'devices',
      authorize: access('devices'),
      body: RenameDeviceRequest,
      async handler({ principal, params, body, requestId, settle }) {
        const input = { projectId: intParam(params, 'projectId'), deviceId: deviceIdParam(params), name: body.name };
        return answer(await renameDevice(deps, input, context(principal, requestId)), settle);
      },
    }),
    operation({
      operationId: 'deleteDevice',
      method: 'delete',
      path: '/api/:projectId/device/:deviceId',
      summary: 'Delete a device; it reappears with its next data',
      auth: 'any',
      authorize: access('write'),
      async handler({ principal, params, requestId, settle }) {
        const input = { projectId: intParam(params, 'projectId'), deviceId: deviceIdParam(params) };
        return answer(await deleteDevice(deps, input, context(principal, requestId)), settle);
      },
    }),
  ];
}

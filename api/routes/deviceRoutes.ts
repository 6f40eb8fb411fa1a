import { z } from 'zod';
import { createDevice, deleteDevice, renameDevice } from '../../commands/devices/deviceCommands';
import { DEVICE_ID_MAX, DEVICE_NAME_MAX, DEVICE_TYPE_MAX, validateDeviceId } from '../../domain/device/deviceDecider';
import { NotFoundError } from '../../domain/shared/errors';
import type { ApiDeps } from '../apiDeps';
import { requestContext } from '../auth/principal';
import { intParam, operation, type Operation } from '../http/operation';
import { withTextRule } from '../http/withTextRule';
import { deviceView } from '../views/projectView';

const CreateDeviceRequest = z.object({
  deviceId: z.string().min(1).max(DEVICE_ID_MAX).superRefine(withTextRule({ max: DEVICE_ID_MAX })),
  deviceType: z.string().min(1).max(DEVICE_TYPE_MAX).superRefine(withTextRule({ max: DEVICE_TYPE_MAX })),
  ifNotExists: z.boolean(),
});

const RenameDeviceRequest = z.object({
  name: z.string().min(1).max(DEVICE_NAME_MAX).superRefine(withTextRule({ max: DEVICE_NAME_MAX })),
});

/** The `deviceId` path parameter (decoded by the router): a free string, validated like a new one. */
function deviceIdParam(params: Record<string, string>): string {
  const deviceId = params.deviceId ?? '';
  validateDeviceId(deviceId);
  return deviceId;
}

/** DevicesApi: devices seen in data or registered (sdk-reference 2.9). Remote management comes later. */
export function deviceOperations(deps: ApiDeps): Operation[] {

  return [
    operation({
      operationId: 'listDevices',
      method: 'get',
      path: '/api/:projectId/devices',
      summary: 'The devices of the project: seen in its data or registered',
      auth: 'any',
      keepAnswer: () => true,
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
      body: CreateDeviceRequest,
      async handler({ principal, params, body, requestId, settle }) {
        const position = await createDevice(deps, { projectId: intParam(params, 'projectId'), ...body }, requestContext(principal, requestId));
        await settle(position);
        return {};
      },
    }),
    operation({
      operationId: 'renameDevice',
      method: 'post',
      path: '/api/:projectId/devices/:deviceId/rename',
      summary: 'Rename a device',
      auth: 'any',
      projectAccess: 'devices',
      body: RenameDeviceRequest,
      async handler({ principal, params, body, requestId, settle }) {
        const input = { projectId: intParam(params, 'projectId'), deviceId: deviceIdParam(params), name: body.name };
        await settle(await renameDevice(deps, input, requestContext(principal, requestId)));
        return {};
      },
    }),
    operation({
      operationId: 'deleteDevice',
      method: 'delete',
      path: '/api/:projectId/device/:deviceId',
      summary: 'Delete a device; it reappears with its next data',
      auth: 'any',
      async handler({ principal, params, requestId, settle }) {
        const input = { projectId: intParam(params, 'projectId'), deviceId: deviceIdParam(params) };
        await settle(await deleteDevice(deps, input, requestContext(principal, requestId)));
        return {};
      },
    }),
  ];
}

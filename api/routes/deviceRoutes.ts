import { z } from 'zod';
import { createDevice, deleteDevice, renameDevice, requestSampling } from '../../commands/devices/deviceCommands';
import { DEVICE_ID_MAX, DEVICE_NAME_MAX, DEVICE_TYPE_MAX, validateDeviceId } from '../../domain/device/deviceDecider';
import { REMOTE_SENSOR_NAME_MAX } from '../../domain/device/remoteMessages';
import { MAX_INTERVAL_MS, MAX_SAMPLE_LABEL_LENGTH, MIN_INTERVAL_MS } from '../../domain/sample/sampleLimits';
import { ConflictError, NotFoundError, ValidationError } from '../../domain/shared/errors';
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

/** Categories the SDK's `startSampling` names; the device library can upload to the first two only. */
const SAMPLING_CATEGORIES = ['training', 'testing', 'validation', 'post-processing'] as const;

/**
 * sdk-reference 2.9 `startSampling`. The length is bounded again by the sensor's `maxSampleLengthS`
 * (the decider knows the sensors). `labelColor` and the sample counts are what the Studio shows
 * beside a recording: accepted and checked, not sent to the device (the device library ignores them).
 */
const StartSamplingRequest = z.object({
  label: z.string().min(1).max(MAX_SAMPLE_LABEL_LENGTH).superRefine(withTextRule({ max: MAX_SAMPLE_LABEL_LENGTH })),
  lengthMs: z.number().finite().positive(),
  category: z
    .enum(SAMPLING_CATEGORIES)
    .refine((c) => c === 'training' || c === 'testing', 'the device library uploads to training or testing only; sample into one of those and move the samples afterwards'),
  intervalMs: z.number().finite().min(MIN_INTERVAL_MS).max(MAX_INTERVAL_MS),
  sensor: z.string().min(1).max(REMOTE_SENSOR_NAME_MAX).superRefine(withTextRule({ max: REMOTE_SENSOR_NAME_MAX })).optional(),
  labelColor: z.string().max(64).superRefine(withTextRule({ max: 64 })).optional(),
  collectedSampleCount: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  targetSampleCount: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
});

/** The `deviceId` path parameter (decoded by the router): a free string, validated like a new one. */
function deviceIdParam(params: Record<string, string>): string {
  const deviceId = params.deviceId ?? '';
  validateDeviceId(deviceId);
  return deviceId;
}

/** DevicesApi: devices seen in data, registered, or connected to remote management (sdk-reference 2.9). */
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
      operationId: 'startSampling',
      method: 'post',
      path: '/api/:projectId/device/:deviceId/start-sampling',
      summary: 'Ask a connected device for a sample; answers the id its progress is followed by (socket event sampling-progress)',
      auth: 'any',
      projectAccess: 'devices',
      body: StartSamplingRequest,
      async handler({ principal, params, body, requestId, settle }) {
        const projectId = intParam(params, 'projectId');
        const deviceId = deviceIdParam(params);
        const input = { projectId, deviceId, label: body.label, lengthMs: body.lengthMs, category: body.category, intervalMs: body.intervalMs, ...(body.sensor === undefined ? {} : { sensor: body.sensor }) };
        let requested: Awaited<ReturnType<typeof requestSampling>>;
        try {
          requested = await requestSampling(deps, input, requestContext(principal, requestId));
        } catch (error) {
          // The log knows connections; the read model knows devices seen only in data.
          if (error instanceof ConflictError && error.code === 'DEVICE_NOT_CONNECTED' && !(await deps.devices.byId(projectId, deviceId))) {
            throw new NotFoundError(`Device "${deviceId}" not found in project ${projectId}`, 'DEVICE_NOT_FOUND');
          }
          throw error;
        }
        await settle(requested.position);
        return { id: requested.requestId };
      },
    }),
    ...debugStreamOperations(deps),
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

const StartSnapshotStreamRequest = z.object({ resolution: z.enum(['high', 'low']) });
const DebugStreamRequest = z.object({ streamId: z.number().int().positive().max(Number.MAX_SAFE_INTEGER) });

/**
 * The SDK's debug streams (a device's camera view or live inference, relayed to the project's
 * sockets). Not built: frames would have to pass from the process holding the device to the one
 * holding the follower's socket, and the log is no place for 5-10 images a second. Each answers,
 * after the usual access checks and for a device of the project, a 400 saying so
 * (docs/remote-management.md); nothing is sent to the device and nothing is recorded.
 */
function debugStreamOperations(deps: ApiDeps): Operation[] {
  const notSupported = async (params: Record<string, string>, what: string): Promise<never> => {
    const projectId = intParam(params, 'projectId');
    const deviceId = deviceIdParam(params);
    if (!(await deps.devices.byId(projectId, deviceId))) throw new NotFoundError(`Device "${deviceId}" not found in project ${projectId}`, 'DEVICE_NOT_FOUND');
    throw new ValidationError(`${what} is not supported by this service: devices can be sampled (start-sampling), not streamed`, 'DEBUG_STREAM_NOT_SUPPORTED');
  };
  const route = (operationId: string, path: string, body: z.ZodType, what: string): Operation =>
    operation({
      operationId,
      method: 'post',
      path: `/api/:projectId/device/:deviceId/debug-stream/${path}`,
      summary: `${what}: not supported (answers 400 DEBUG_STREAM_NOT_SUPPORTED)`,
      auth: 'any',
      projectAccess: 'devices',
      body,
      handler: ({ params }) => notSupported(params, what),
    });
  return [
    route('startDeviceSnapshotDebugStream', 'snapshot/start', StartSnapshotStreamRequest, 'Snapshot streaming'),
    route('startDeviceInferenceDebugStream', 'inference/start', z.object({}), 'Inference streaming'),
    route('keepDeviceDebugStreamAlive', 'keep-alive', DebugStreamRequest, 'A debug stream'),
    route('stopDeviceDebugStream', 'stop', DebugStreamRequest, 'A debug stream'),
  ];
}

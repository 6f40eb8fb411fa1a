import { deviceDecider, type DeviceCommand, type SeenInData } from '../../domain/device/deviceDecider';
import { deviceStream } from '../../domain/device/deviceEvents';
import type { EventStore, Position } from '../../stores/eventstore/eventStore';
import type { CommandContext } from '../commandContext';
import { aggregateStream } from '../aggregateStream';
import { handleCommand } from '../handleCommand';
import type { IdAllocator } from '../idAllocator';

/**
 * The devices read model as the commands need it: whether a device was seen in ingested data.
 * (The API passes its DeviceQueries; commands never import the read side.)
 */
export interface SeenDevices {
  byId(projectId: number, deviceId: string): Promise<SeenInData | null>;
}

export interface DeviceCommandDeps {
  events: EventStore;
  ids: IdAllocator;
  devices: SeenDevices;
}

/**
 * Device ids come from the samples' sequence: a device first seen in data takes the id of that
 * sample, so drawing from the same sequence keeps every device id of a project distinct.
 */
export const DEVICE_ID_SEQUENCE = 'sample';

async function seenInData(deps: Pick<DeviceCommandDeps, 'devices'>, projectId: number, deviceId: string): Promise<SeenInData | null> {
  const seen = await deps.devices.byId(projectId, deviceId);
  return seen ? { lastSeen: seen.lastSeen } : null;
}

async function run(deps: DeviceCommandDeps, projectId: number, deviceId: string, command: DeviceCommand, ctx: CommandContext): Promise<Position | undefined> {
  const { appended } = await handleCommand(deps.events, deviceStream(projectId, deviceId), deviceDecider, command, ctx);
  return appended?.position;
}

/** Registers a device. Undefined when it existed already and `ifNotExists` made that a success. */
export async function createDevice(
  deps: DeviceCommandDeps,
  input: { projectId: number; deviceId: string; deviceType: string; ifNotExists: boolean },
  ctx: CommandContext,
): Promise<Position | undefined> {
  const seen = await seenInData(deps, input.projectId, input.deviceId);
  // Drawn before deciding (the decider is pure): unused when the device exists, which leaves a gap.
  const id = await deps.ids.next(DEVICE_ID_SEQUENCE);
  return run(deps, input.projectId, input.deviceId, { type: 'CreateDevice', data: { ...input, id, seenInData: seen, now: ctx.now } }, ctx);
}

export async function renameDevice(deps: DeviceCommandDeps, input: { projectId: number; deviceId: string; name: string }, ctx: CommandContext): Promise<Position | undefined> {
  const seen = await seenInData(deps, input.projectId, input.deviceId);
  return run(deps, input.projectId, input.deviceId, { type: 'RenameDevice', data: { ...input, seenInData: seen } }, ctx);
}

export async function deleteDevice(deps: DeviceCommandDeps, input: { projectId: number; deviceId: string }, ctx: CommandContext): Promise<Position | undefined> {
  const seen = await seenInData(deps, input.projectId, input.deviceId);
  return run(deps, input.projectId, input.deviceId, { type: 'DeleteDevice', data: { ...input, seenInData: seen, now: ctx.now } }, ctx);
}

/** Ids of sampling requests: what a `startSampling` caller follows. */
export const SAMPLING_REQUEST_SEQUENCE = 'device-sampling';

type ConnectInput = Omit<Extract<DeviceCommand, { type: 'ConnectDevice' }>['data'], 'id' | 'now'>;

/** A device said hello on the remote-management socket `connectionId` (the `remote` role calls this). */
export async function connectDevice(deps: DeviceCommandDeps, input: ConnectInput, ctx: CommandContext): Promise<Position | undefined> {
  // Drawn every time (the decider is pure); used only when the read model has no such device yet.
  const id = await deps.ids.next(DEVICE_ID_SEQUENCE);
  return run(deps, input.projectId, input.deviceId, { type: 'ConnectDevice', data: { ...input, id, now: ctx.now } }, ctx);
}

export async function disconnectDevice(
  deps: DeviceCommandDeps,
  input: Omit<Extract<DeviceCommand, { type: 'DisconnectDevice' }>['data'], 'now'>,
  ctx: CommandContext,
): Promise<Position | undefined> {
  return run(deps, input.projectId, input.deviceId, { type: 'DisconnectDevice', data: { ...input, now: ctx.now } }, ctx);
}

/**
 * Asks a connected device for a sample: the event names the socket, and the `remote` process
 * holding it sends the request. Answers the request id.
 */
export async function requestSampling(
  deps: DeviceCommandDeps,
  input: Omit<Extract<DeviceCommand, { type: 'RequestSampling' }>['data'], 'requestId' | 'now'>,
  ctx: CommandContext,
): Promise<{ requestId: number; position: Position | undefined }> {
  // Decided once before the id is drawn: a refused request appends nothing, not even an id block.
  const { state } = await aggregateStream(deps.events, deviceStream(input.projectId, input.deviceId), deviceDecider);
  deviceDecider.decide({ type: 'RequestSampling', data: { ...input, requestId: 1, now: ctx.now } }, state);
  const requestId = await deps.ids.next(SAMPLING_REQUEST_SEQUENCE);
  const position = await run(deps, input.projectId, input.deviceId, { type: 'RequestSampling', data: { ...input, requestId, now: ctx.now } }, ctx);
  return { requestId, position };
}

/**
 * A device's `sample*` message on socket `connectionId` (the `remote` process holding it calls
 * this): the request in flight there progressed. Appends nothing for a stale message or a reading
 * within the 10 % step already reported.
 */
export async function reportSamplingProgress(
  deps: Pick<DeviceCommandDeps, 'events'>,
  input: Omit<Extract<DeviceCommand, { type: 'ReportSamplingProgress' }>['data'], 'now'>,
  ctx: CommandContext,
): Promise<Position | undefined> {
  const { appended } = await handleCommand(deps.events, deviceStream(input.projectId, input.deviceId), deviceDecider, { type: 'ReportSamplingProgress', data: { ...input, now: ctx.now } }, ctx);
  return appended?.position;
}

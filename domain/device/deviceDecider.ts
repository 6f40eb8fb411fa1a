import type { Decider } from '../shared/decider';
import { MAX_DEVICE_TEXT_LENGTH, MAX_INTERVAL_MS, MAX_SAMPLE_LABEL_LENGTH, MIN_INTERVAL_MS } from '../sample/sampleLimits';
import { ConflictError, NotFoundError, ValidationError, assertNever } from '../shared/errors';
import { checkDate, checkId, checkNumber } from '../shared/numberRules';
import { checkText } from '../shared/textRules';
import { REMOTE_ERROR_MAX } from './remoteMessages';
import type { DeviceConnected, DeviceDisconnectReason, DeviceEvent, DeviceSamplingProgressed, RemoteSensor, SamplingCategory, SamplingStage } from './deviceEvents';

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
  | { type: 'DeleteDevice'; data: { projectId: number; deviceId: string; seenInData: SeenInData | null; now: Date } }
  | {
      type: 'ConnectDevice';
      /** From a hello already checked by `parseDeviceMessage`; `id` is drawn as for CreateDevice. */
      data: Omit<DeviceConnected['data'], 'connected'> & { now: Date };
    }
  | { type: 'DisconnectDevice'; data: { projectId: number; deviceId: string; connectionId: string; reason: DeviceDisconnectReason; now: Date } }
  | {
      type: 'RequestSampling';
      data: {
        projectId: number;
        deviceId: string;
        requestId: number;
        label: string;
        lengthMs: number;
        category: string;
        intervalMs: number;
        sensor?: string;
        now: Date;
      };
    }
  | {
      type: 'ReportSamplingProgress';
      /** A device's `sample*` message on socket `connectionId`; it names no request: the one in flight there is meant. */
      data: {
        projectId: number;
        deviceId: string;
        connectionId: string;
        stage: SamplingStage;
        progressPercentage?: number;
        error?: string;
        now: Date;
      };
    };

/** The sampling request a connection is serving, as far as the log knows. */
export interface SamplingInFlight {
  requestId: number;
  lengthMs: number;
  /** When it was requested or last progressed: a request silent for too long may be replaced. */
  lastAt: string;
  /** Stages reported so far (each at most once, but readings). */
  stages: SamplingStage[];
  /** The last 10 % step of progress reported (-1: none yet). */
  readingStep: number;
}

/** The live remote-management connection, as far as the log knows. */
export interface DeviceConnection {
  connectionId: string;
  sensors: RemoteSensor[];
  sampling?: SamplingInFlight;
}

/**
 * `known`: created or renamed through the API (a device seen only in data gets its stream on its
 * first rename or delete). `deleted`: deleted, until it is created again or shows up in new data.
 */
export type DeviceState = ({ status: 'none' } | { status: 'known' } | { status: 'deleted'; deleted: string }) & { connection?: DeviceConnection };

const CONNECTION_ID_MAX = 128;
/** As long as the device's own error text may be (remoteMessages.ts). */
export const SAMPLING_ERROR_MAX = REMOTE_ERROR_MAX;
/**
 * How long a request may go without a word from the device, beyond its sampling length, before a
 * new request replaces it (the device library answers every stage; one that never answers would
 * otherwise keep its device busy for good).
 */
export const SAMPLING_SILENCE_MS = 5 * 60_000;
/** Readings are kept at this step of progress, so a device cannot write an event per frame. */
export const SAMPLING_READING_STEP = 10;

export const readingStep = (progressPercentage: number): number => Math.floor(progressPercentage / SAMPLING_READING_STEP);
const TERMINAL_STAGES: readonly SamplingStage[] = ['finished', 'failed'];
const SAMPLING_CATEGORIES: readonly SamplingCategory[] = ['training', 'testing'];

export function validateDeviceId(deviceId: string): void {
  checkText(deviceId, 'Device id ("deviceId")', { max: DEVICE_ID_MAX });
}

function validDeviceType(deviceType: string): string {
  return checkText(deviceType.trim(), 'Device type ("deviceType")', { max: DEVICE_TYPE_MAX });
}

function validCategory(category: string): SamplingCategory {
  const found = SAMPLING_CATEGORIES.find((c) => c === category);
  if (!found) throw new ValidationError(`Category ("category") must be one of ${SAMPLING_CATEGORIES.join(', ')}: a device uploads to no other`);
  return found;
}

/** The request in flight on the device's current socket, if any. */
function inFlight(state: DeviceState): { connectionId: string; sampling: SamplingInFlight } | undefined {
  const c = state.connection;
  return c?.sampling ? { connectionId: c.connectionId, sampling: c.sampling } : undefined;
}

/** Ends the request in flight (if any) with an error: its socket ended, was replaced, or the device was deleted. */
function failInFlight(state: DeviceState, projectId: number, deviceId: string, error: string, now: Date): DeviceSamplingProgressed[] {
  const current = inFlight(state);
  if (!current) return [];
  return [
    {
      type: 'DeviceSamplingProgressed',
      data: { projectId, deviceId, requestId: current.sampling.requestId, connectionId: current.connectionId, stage: 'failed', error, at: checkDate(now, 'now') },
    },
  ];
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
        return [
          ...failInFlight(state, c.projectId, c.deviceId, 'The device was deleted while sampling', c.now),
          { type: 'DeviceDeleted', data: { projectId: c.projectId, deviceId: c.deviceId, deleted: checkDate(c.now, 'now') } },
        ];
      }
      case 'ConnectDevice': {
        const c = command.data;
        validateDeviceId(c.deviceId);
        const connectionId = checkText(c.connectionId, 'connectionId', { max: CONNECTION_ID_MAX });
        // The same socket saying hello twice changes nothing.
        if (state.connection?.connectionId === connectionId) return [];
        return [
          ...failInFlight(state, c.projectId, c.deviceId, 'The device connected again while sampling', c.now),
          {
            type: 'DeviceConnected',
            data: {
              projectId: checkId(c.projectId, 'projectId'),
              deviceId: c.deviceId,
              id: checkId(c.id, 'id'),
              deviceType: validDeviceType(c.deviceType),
              connectionId,
              host: checkText(c.host, 'host', { max: 256 }),
              mode: c.mode,
              sensors: c.sensors.map((x) => ({ name: x.name, maxSampleLengthS: x.maxSampleLengthS, frequencies: [...x.frequencies] })),
              supportsSnapshotStreaming: c.supportsSnapshotStreaming,
              ...(c.mode === 'inference' && c.inferenceInfo ? { inferenceInfo: { ...c.inferenceInfo } } : {}),
              connected: checkDate(c.now, 'now'),
            },
          },
        ];
      }
      case 'DisconnectDevice': {
        const c = command.data;
        // Only the current socket's end counts: a replaced socket closing late changes nothing.
        if (state.connection?.connectionId !== c.connectionId) return [];
        return [
          ...failInFlight(state, c.projectId, c.deviceId, `The device disconnected while sampling (${c.reason})`, c.now),
          { type: 'DeviceDisconnected', data: { projectId: c.projectId, deviceId: c.deviceId, connectionId: c.connectionId, reason: c.reason, disconnected: checkDate(c.now, 'now') } },
        ];
      }
      case 'RequestSampling': {
        const c = command.data;
        validateDeviceId(c.deviceId);
        if (state.status === 'deleted' || !state.connection) {
          throw new ConflictError(`Device "${c.deviceId}" is not connected to project ${c.projectId}`, 'DEVICE_NOT_CONNECTED');
        }
        const label = checkText(c.label.trim(), 'Label ("label")', { max: MAX_SAMPLE_LABEL_LENGTH });
        const category = validCategory(c.category);
        const intervalMs = checkNumber(c.intervalMs, 'Interval ("intervalMs")', { min: MIN_INTERVAL_MS, max: MAX_INTERVAL_MS });
        const { sensors } = state.connection;
        const sensor = c.sensor === undefined ? undefined : sensors.find((s) => s.name === c.sensor);
        if (c.sensor !== undefined && !sensor) {
          throw new ValidationError(`Device "${c.deviceId}" has no sensor "${c.sensor.slice(0, 128)}"; it has ${sensors.map((s) => `"${s.name}"`).join(', ') || 'none'}`, 'UNKNOWN_SENSOR');
        }
        const maxMs = sensor && sensor.maxSampleLengthS > 0 ? sensor.maxSampleLengthS * 1000 : MAX_INTERVAL_MS;
        const lengthMs = checkNumber(c.lengthMs, 'Length ("lengthMs")', { min: 1, max: maxMs });
        // After the request's own checks: a bad request is told what is wrong with it, busy or not.
        const current = inFlight(state);
        const silentSince = current ? Date.parse(current.sampling.lastAt) + current.sampling.lengthMs : 0;
        if (current && c.now.getTime() < silentSince + SAMPLING_SILENCE_MS) {
          throw new ConflictError(
            `Device "${c.deviceId}" is still sampling (request ${current.sampling.requestId}); wait for it to finish or fail`,
            'DEVICE_BUSY',
          );
        }
        return [
          ...failInFlight(state, c.projectId, c.deviceId, 'The device did not answer', c.now),
          {
            type: 'DeviceSamplingRequested',
            data: {
              projectId: c.projectId,
              deviceId: c.deviceId,
              requestId: checkId(c.requestId, 'requestId'),
              connectionId: state.connection.connectionId,
              label,
              lengthMs,
              category,
              intervalMs,
              ...(sensor ? { sensor: sensor.name } : {}),
              requested: checkDate(c.now, 'now'),
            },
          },
        ];
      }
      case 'ReportSamplingProgress': {
        const c = command.data;
        const current = inFlight(state);
        // Stale or unsolicited: the request already ended, or the socket is not the current one.
        if (!current || current.connectionId !== c.connectionId) return [];
        const { sampling } = current;
        const terminal = TERMINAL_STAGES.includes(c.stage);
        let progressPercentage: number | undefined;
        if (c.stage === 'reading') {
          progressPercentage = checkNumber(c.progressPercentage ?? Number.NaN, 'progressPercentage', { min: 0, max: 100 });
          if (readingStep(progressPercentage) <= sampling.readingStep) return [];
        } else if (!terminal && sampling.stages.includes(c.stage)) return [];
        const error = c.stage === 'failed' ? checkText(c.error?.trim() || 'No error message', 'error', { max: SAMPLING_ERROR_MAX }) : undefined;
        return [
          {
            type: 'DeviceSamplingProgressed',
            data: {
              projectId: c.projectId,
              deviceId: c.deviceId,
              requestId: sampling.requestId,
              connectionId: c.connectionId,
              stage: c.stage,
              ...(progressPercentage !== undefined ? { progressPercentage } : {}),
              ...(error !== undefined ? { error } : {}),
              at: checkDate(c.now, 'now'),
            },
          },
        ];
      }
      default:
        return assertNever(command);
    }
  },

  evolve(state, event) {
    const connection = state.connection ? { connection: state.connection } : {};
    switch (event.type) {
      case 'DeviceCreated':
      case 'DeviceRenamed':
        return { status: 'known', ...connection };
      // A deleted device's socket may live on, but the device is gone until it says hello again.
      case 'DeviceDeleted':
        return { status: 'deleted', deleted: event.data.deleted };
      // A device that connects is known, as one seen in data is (it is listed again after a delete).
      case 'DeviceConnected':
        return { status: 'known', connection: { connectionId: event.data.connectionId, sensors: event.data.sensors } };
      case 'DeviceDisconnected':
        return state.status === 'deleted' ? { status: 'deleted', deleted: state.deleted } : { status: state.status };
      case 'DeviceSamplingRequested': {
        const d = event.data;
        if (!state.connection || state.connection.connectionId !== d.connectionId) return state;
        const sampling: SamplingInFlight = { requestId: d.requestId, lengthMs: d.lengthMs, lastAt: d.requested, stages: [], readingStep: -1 };
        return { ...state, connection: { ...state.connection, sampling } };
      }
      case 'DeviceSamplingProgressed': {
        const d = event.data;
        const sampling = state.connection?.sampling;
        if (!state.connection || !sampling || sampling.requestId !== d.requestId) return state;
        const connection: DeviceConnection = { connectionId: state.connection.connectionId, sensors: state.connection.sensors };
        if (TERMINAL_STAGES.includes(d.stage)) return { ...state, connection };
        const next: SamplingInFlight = {
          ...sampling,
          lastAt: d.at,
          stages: sampling.stages.includes(d.stage) ? sampling.stages : [...sampling.stages, d.stage],
          readingStep: d.progressPercentage !== undefined ? Math.max(sampling.readingStep, readingStep(d.progressPercentage)) : sampling.readingStep,
        };
        return { ...state, connection: { ...connection, sampling: next } };
      }
      default:
        return assertNever(event);
    }
  },
};

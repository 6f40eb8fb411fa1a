// What a device may say on the remote-management websocket, checked before anything else sees it.
// The shapes are those of the official device library (docs/remote-management.md); everything a
// device sends is untrusted, so the parser never throws: it answers `{ok: false, reason}` and the
// server replies `{hello: false, err: reason}` to a bad hello or drops a bad frame.
import { z } from 'zod';
import { cleanText, textProblem } from '../shared/textRules';
import { MAX_DEVICE_TEXT_LENGTH } from '../sample/sampleLimits';
import type { RemoteInferenceInfo, RemoteMode, RemoteSensor } from './deviceEvents';

export type { RemoteInferenceInfo, RemoteMode, RemoteSensor };

/** Largest frame accepted (the `ws` server's `maxPayload`): a camera snapshot is ~50-100 KB of base64. */
export const REMOTE_FRAME_MAX_BYTES = 256 * 1024;
/** Largest hello: a handful of sensors and an inference summary fit in far less. */
export const REMOTE_HELLO_MAX_BYTES = 16 * 1024;
export const REMOTE_SENSORS_MAX = 64;
export const REMOTE_SENSOR_NAME_MAX = 128;
export const REMOTE_FREQUENCIES_MAX = 16;
/** 1 MHz: above any sensor a Linux device or MCU samples (audio is 16-48 kHz). */
export const REMOTE_FREQUENCY_MAX_HZ = 1_000_000;
/** The library announces 60000 s for cameras; ten million seconds leaves room and stays sane. */
export const REMOTE_SAMPLE_LENGTH_MAX_S = 10_000_000;
const API_KEY_MAX = 256;
const INFERENCE_TEXT_MAX = 256;

/** A hello of any version, in one shape. */
export interface RemoteHello {
  version: 1 | 2 | 3 | 4;
  apiKey: string;
  deviceId: string;
  deviceType: string;
  connection: string;
  sensors: RemoteSensor[];
  supportsSnapshotStreaming: boolean;
  mode: RemoteMode;
  inferenceInfo?: RemoteInferenceInfo;
}

export type DeviceMessage =
  | { kind: 'hello'; hello: RemoteHello }
  | { kind: 'sampleAccepted' }
  | { kind: 'sampleFailed'; error: string }
  | { kind: 'sampleStarted' }
  | { kind: 'sampleReading'; progressPercentage: number }
  | { kind: 'sampleUploading' }
  | { kind: 'sampleProcessing' }
  | { kind: 'sampleFinished' }
  | { kind: 'snapshotStarted' }
  | { kind: 'snapshotStopped' }
  | { kind: 'snapshotFailed'; error: string }
  | { kind: 'snapshotFrame'; snapshotFrame: string; fileName: string }
  /** Inference-mode chatter (summaries, records, model updates): valid JSON we do not act on yet. */
  | { kind: 'ignored'; key: string };

export type ParseResult<T> = { ok: true; value: T } | { ok: false; reason: string };

const text = (field: string, max: number, allowEmpty = false) =>
  z.string().superRefine((value, ctx) => {
    const problem = textProblem(value, field, { max, allowEmpty });
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

const sensorName = text('Sensor name', REMOTE_SENSOR_NAME_MAX);

const sensor = z.strictObject({
  name: sensorName,
  maxSampleLengthS: z.number().finite().min(0).max(REMOTE_SAMPLE_LENGTH_MAX_S),
  frequencies: z
    .array(z.number().finite().gt(0, 'Sensor frequencies must be above 0 Hz').max(REMOTE_FREQUENCY_MAX_HZ, `Sensor frequencies must be at most ${REMOTE_FREQUENCY_MAX_HZ} Hz`))
    .max(REMOTE_FREQUENCIES_MAX),
});

// The device's spelling (snake case, "deploymentVersion") mapped to the API's (sdk-reference 6.14).
const MODEL_TYPES = {
  classification: 'classification',
  object_detection: 'objectDetection',
  constrained_object_detection: 'constrainedObjectDetection',
  freeform: 'freeform',
} as const;

const inferenceInfo = z.object({
  projectId: z.number().int().positive(),
  projectOwner: text('inferenceInfo.projectOwner', INFERENCE_TEXT_MAX, true),
  projectName: text('inferenceInfo.projectName', INFERENCE_TEXT_MAX, true),
  deploymentVersion: z.number().int().min(0),
  modelType: z.enum(Object.keys(MODEL_TYPES) as [keyof typeof MODEL_TYPES]).optional(),
});

const helloBase = {
  apiKey: z.string().min(1, 'The API key ("apiKey") is missing').max(API_KEY_MAX),
  deviceId: text('Device id ("deviceId")', MAX_DEVICE_TEXT_LENGTH),
  deviceType: text('Device type ("deviceType")', MAX_DEVICE_TEXT_LENGTH),
  connection: z.enum(['ip', 'daemon']).optional(),
  supportsSnapshotStreaming: z.boolean().optional(),
};
const uniqueSensorNames = (sensors: { name: string }[]) => new Set(sensors.map((s) => s.name)).size === sensors.length;

const helloV1 = z.object({
  ...helloBase,
  version: z.literal(1),
  sensors: z.array(sensorName).max(REMOTE_SENSORS_MAX).optional(),
});
const helloV2to4 = z.object({
  ...helloBase,
  version: z.union([z.literal(2), z.literal(3), z.literal(4)]),
  sensors: z.array(sensor).max(REMOTE_SENSORS_MAX).optional(),
  mode: z.enum(['ingestion', 'inference']).optional(),
  inferenceInfo: inferenceInfo.optional(),
});
const hello = z.discriminatedUnion('version', [helloV1, helloV2to4]);

/**
 * The device's own error text, kept whatever it holds (refusing it would leave its request without
 * an end): the library passes on an upload's answer body, which may be a proxy's HTML page. One
 * line, refused characters replaced, at most REMOTE_ERROR_MAX characters.
 */
export const REMOTE_ERROR_MAX = 1024;
const error = z
  .string()
  .transform((e) => cleanText(e.replace(/\s+/gu, ' ').trim(), { max: REMOTE_ERROR_MAX }))
  .optional();

function firstIssue(e: z.ZodError): string {
  const issue = e.issues[0];
  if (!issue) return 'invalid message';
  const path = issue.path.join('.');
  // Our own rules name their field; zod's say where.
  return issue.code === 'custom' || path === '' ? issue.message : `${path}: ${issue.message}`;
}

function normalizeHello(h: z.infer<typeof hello>): ParseResult<RemoteHello> {
  const sensors: RemoteSensor[] =
    h.version === 1 ? (h.sensors ?? []).map((name) => ({ name, maxSampleLengthS: 0, frequencies: [] })) : (h.sensors ?? []).map((s) => ({ ...s, frequencies: [...s.frequencies] }));
  if (!uniqueSensorNames(sensors)) return { ok: false, reason: 'Two sensors have the same name' };
  const mode: RemoteMode = h.version === 4 && h.mode ? h.mode : 'ingestion';
  const base = { version: h.version, apiKey: h.apiKey, deviceId: h.deviceId, deviceType: h.deviceType.trim(), connection: h.connection ?? 'ip', sensors, supportsSnapshotStreaming: h.supportsSnapshotStreaming ?? false, mode };
  if (mode === 'ingestion') return { ok: true, value: base };
  const info = h.version === 1 ? undefined : h.inferenceInfo;
  if (!info) return { ok: false, reason: 'A hello in inference mode must carry "inferenceInfo"' };
  return {
    ok: true,
    value: {
      ...base,
      inferenceInfo: {
        projectId: info.projectId,
        projectOwner: info.projectOwner,
        projectName: info.projectName,
        deployedVersion: info.deploymentVersion,
        ...(info.modelType ? { modelType: MODEL_TYPES[info.modelType] } : {}),
      },
    },
  };
}

// Keys the library sends that we recognise but do not act on (inference monitoring).
const IGNORED_KEYS = ['inferenceSummary', 'impulseRecord', 'impulseRecordsResponse', 'modelUpdateSuccess', 'inferenceStreamStarted', 'inferenceStreamStopped'];

function parseObject(d: Record<string, unknown>): ParseResult<DeviceMessage> {
  if ('hello' in d) {
    const r = hello.safeParse(d.hello);
    if (!r.success) return { ok: false, reason: `Invalid hello: ${firstIssue(r.error)}` };
    const n = normalizeHello(r.data);
    return n.ok ? { ok: true, value: { kind: 'hello', hello: n.value } } : n;
  }
  if ('sample' in d) {
    if (d.sample === true) return { ok: true, value: { kind: 'sampleAccepted' } };
    const r = z.object({ sample: z.literal(false), error }).safeParse(d);
    if (!r.success) return { ok: false, reason: `Invalid sample answer: ${firstIssue(r.error)}` };
    return { ok: true, value: { kind: 'sampleFailed', error: r.data.error || 'No error message' } };
  }
  if (d.sampleStarted === true) return { ok: true, value: { kind: 'sampleStarted' } };
  if (d.sampleReading === true) {
    const r = z.number().finite().min(0).max(100).safeParse(d.progressPercentage);
    if (!r.success) return { ok: false, reason: 'Invalid sampleReading: progressPercentage must be a number from 0 to 100' };
    return { ok: true, value: { kind: 'sampleReading', progressPercentage: r.data } };
  }
  if (d.sampleUploading === true) return { ok: true, value: { kind: 'sampleUploading' } };
  if (d.sampleProcessing === true) return { ok: true, value: { kind: 'sampleProcessing' } };
  if (d.sampleFinished === true) return { ok: true, value: { kind: 'sampleFinished' } };
  if (d.snapshotStarted === true) return { ok: true, value: { kind: 'snapshotStarted' } };
  if (d.snapshotStopped === true) return { ok: true, value: { kind: 'snapshotStopped' } };
  if (d.snapshotFailed === true) {
    const r = error.safeParse(d.error);
    return { ok: true, value: { kind: 'snapshotFailed', error: (r.success && r.data) || 'No error message' } };
  }
  if ('snapshotFrame' in d) {
    const r = z
      .object({ snapshotFrame: z.string().min(1).regex(/^[A-Za-z0-9+/]+={0,2}$/, 'must be base64'), fileName: text('fileName', 256) })
      .safeParse(d);
    if (!r.success) return { ok: false, reason: `Invalid snapshotFrame: ${firstIssue(r.error)}` };
    return { ok: true, value: { kind: 'snapshotFrame', ...r.data } };
  }
  const key = IGNORED_KEYS.find((k) => k in d);
  if (key) return { ok: true, value: { kind: 'ignored', key } };
  return { ok: false, reason: 'Unknown message' };
}

/** One text frame from a device (the server also caps frames with `ws`'s `maxPayload`). */
export function parseDeviceMessage(frame: string): ParseResult<DeviceMessage> {
  const bytes = Buffer.byteLength(frame, 'utf8');
  if (bytes > REMOTE_FRAME_MAX_BYTES) return { ok: false, reason: `Message is ${bytes} bytes; at most ${REMOTE_FRAME_MAX_BYTES} are allowed` };
  let d: unknown;
  try {
    d = JSON.parse(frame);
  } catch {
    return { ok: false, reason: 'Message is not JSON' };
  }
  if (typeof d !== 'object' || d === null || Array.isArray(d)) return { ok: false, reason: 'Message is not a JSON object' };
  if ('hello' in d && bytes > REMOTE_HELLO_MAX_BYTES) return { ok: false, reason: `Hello is ${bytes} bytes; at most ${REMOTE_HELLO_MAX_BYTES} are allowed` };
  return parseObject(d as Record<string, unknown>);
}

// The .eim's side of the official Linux runner's protocol (edge-impulse-linux
// linux-impulse-runner.js): one JSON object a line each way, every answer carrying the request's
// `id`. Pure: the socket, the model and the clock are the caller's. Anything a client sends gets
// an answer: a line that is not JSON, an unknown message or a window of the wrong length is
// answered `{ success: false, error }`, and the runner goes on serving.
import type { InputBlock } from '../impulse/impulseEvents';

/** What the .eim reads of the impulse's runtime spec (domain/learn/impulseRuntime.ts ImpulseRuntimeSpec). */
export interface EimSpecView {
  inputBlock: Pick<InputBlock, 'type' | 'axes' | 'windowSizeMs' | 'frequencyHz' | 'imageWidth' | 'imageHeight' | 'resizeMode'>;
  /** The image block's `channels` config says how many channels the model takes from each pixel. */
  dspBlocks?: readonly { dspBlock: { type: string }; config: Record<string, unknown> }[];
  learnBlocks: readonly { type: string; id: number; minimumConfidenceRating: number }[];
}

export interface EimProject {
  id: number;
  name: string;
  owner: string;
  deployVersion: number;
}

/** The impulse as the .eim runs it (domain/learn/impulseRuntime.ts ImpulseRunner). */
export interface EimRunner {
  rawValueCount: number;
  labels: string[];
  classify(raw: ArrayLike<number>): Promise<{ classification: Record<string, number>; anomaly?: number; timing: { dsp: number; classification: number; anomaly: number } }>;
}

/** RunnerHelloResponseModelParameters.sensor. */
const SENSOR = { unknown: -1, microphone: 1, accelerometer: 2, camera: 3 } as const;
/** RunnerHelloInferencingEngine.None: TensorFlow.js is none of the engines the runner names. */
const ENGINE_NONE = 255;
/** Audio rates: a one-axis series this fast is a microphone. */
const MICROPHONE_HZ = 8000;

/** The model's part of the hello answer: what the runner and the tools built on it read. */
export function eimModelParameters(spec: EimSpecView, runner: Pick<EimRunner, 'rawValueCount' | 'labels'>): Record<string, unknown> {
  const input = spec.inputBlock;
  const isImage = input.type === 'image';
  const axes = isImage ? 1 : (input.axes?.length ?? 1);
  const frequency = isImage ? 0 : (input.frequencyHz ?? 0);
  const sensor = isImage ? SENSOR.camera : axes === 1 && frequency >= MICROPHONE_HZ ? SENSOR.microphone : frequency > 0 ? SENSOR.accelerometer : SENSOR.unknown;
  const anomaly = spec.learnBlocks.find((b) => b.type === 'anomaly');
  const grayscale = spec.dspBlocks?.some((b) => b.dspBlock.type === 'image' && b.config.channels === 'Grayscale') ?? false;
  return {
    axis_count: axes,
    frequency,
    has_anomaly: anomaly ? 1 : 0,
    input_features_count: runner.rawValueCount,
    image_input_height: isImage ? (input.imageHeight ?? 0) : 0,
    image_input_width: isImage ? (input.imageWidth ?? 0) : 0,
    image_input_frames: isImage ? 1 : 0,
    image_channel_count: isImage ? (grayscale ? 1 : 3) : 0,
    ...(isImage ? { image_resize_mode: input.resizeMode === 'fit-short' ? 'fit-shortest' : input.resizeMode === 'fit-long' ? 'fit-longest' : input.resizeMode === 'squash' ? 'squash' : 'none' } : {}),
    interval_ms: frequency > 0 ? 1000 / frequency : 0,
    label_count: runner.labels.length,
    sensor,
    labels: [...runner.labels],
    model_type: 'classification',
    slice_size: undefined,
    use_continuous_mode: false,
    has_performance_calibration: false,
    inferencing_engine: ENGINE_NONE,
    thresholds: spec.learnBlocks.map((b) => (b.type === 'anomaly' ? { id: b.id, type: 'anomaly_gmm', min_anomaly_score: b.minimumConfidenceRating } : { id: b.id, type: 'classification', min_score: b.minimumConfidenceRating })),
  };
}

export function eimHello(spec: EimSpecView, runner: Pick<EimRunner, 'rawValueCount' | 'labels'>, project: EimProject): Record<string, unknown> {
  return {
    success: true,
    model_parameters: eimModelParameters(spec, runner),
    project: { deploy_version: project.deployVersion, id: project.id, name: project.name, owner: project.owner },
    inferencing_engine: { inferencing_engine: ENGINE_NONE, properties: ['tensorflowjs', 'cpu'] },
  };
}

/**
 * One answer line. Braces inside strings (a label "open{", an echoed message) are written as
 * \u007b and \u007d: the official runner splits its input into answers by counting braces, quoted
 * or not, and would cut an answer there.
 */
export function eimLine(answer: Record<string, unknown>): string {
  return `${JSON.stringify(answer).replace(/"(?:[^"\\]|\\.)*"/g, (quoted) => quoted.replace(/\{/g, '\\u007b').replace(/\}/g, '\\u007d'))}\n`;
}

const failure = (id: unknown, error: string) => ({ ...(typeof id === 'number' || typeof id === 'string' ? { id } : {}), success: false, error });

/** The answer to one line a client sent. */
export async function answerEimLine(line: string, spec: EimSpecView, runner: EimRunner, project: EimProject): Promise<Record<string, unknown>> {
  let message: unknown;
  try {
    message = JSON.parse(line);
  } catch {
    return failure(undefined, `Not JSON: send one JSON object a line (${line.length > 40 ? `${line.slice(0, 40)}...` : line})`);
  }
  if (message === null || typeof message !== 'object' || Array.isArray(message)) return failure(undefined, 'Send a JSON object, such as {"hello":1,"id":1}');
  const m = message as Record<string, unknown>;
  try {
    return await answerMessage(m, spec, runner, project);
  } catch (error) {
    // Whatever goes wrong is this message's answer: the runner must go on serving the next one.
    return failure(m.id, error instanceof Error ? error.message : String(error));
  }
}

async function answerMessage(m: Record<string, unknown>, spec: EimSpecView, runner: EimRunner, project: EimProject): Promise<Record<string, unknown>> {
  const id = m.id;
  if ('hello' in m) return { id, ...eimHello(spec, runner, project) };
  if ('classify' in m) {
    const values = m.classify;
    if (!Array.isArray(values)) return failure(id, 'classify: expected an array of numbers');
    if (values.length !== runner.rawValueCount) return failure(id, `classify: expected ${runner.rawValueCount} values (input_features_count), got ${values.length}`);
    const bad = values.findIndex((v) => typeof v !== 'number' || !Number.isFinite(v));
    if (bad >= 0) return failure(id, `classify: value ${bad} is not a finite number`);
    try {
      const result = await runner.classify(values as number[]);
      return {
        id,
        success: true,
        result: { classification: result.classification, ...(result.anomaly !== undefined ? { anomaly: result.anomaly } : {}) },
        timing: { dsp: result.timing.dsp, classification: result.timing.classification, anomaly: result.timing.anomaly },
      };
    } catch (error) {
      return failure(id, `classify failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if ('classify_shm' in m || 'classify_continuous' in m || 'classify_continuous_shm' in m) {
    return failure(id, 'Only classify is supported by this runner: no shared memory, no continuous mode');
  }
  const keys = Object.keys(m).filter((k) => k !== 'id');
  return failure(id, `Unknown message${keys.length ? ` "${keys[0]!.slice(0, 40)}"` : ''}: this runner answers hello and classify`);
}

// The classification work the thread pool runs (commands/jobs/threadPool.ts loads this module in its
// worker threads): a stored sample decoded, cut into windows exactly as generate-features cuts them
// (domain/dsp/windows.ts over the impulse's raw axes), and every window run through the impulse
// (domain/learn/impulseRuntime.ts). TensorFlow.js runs on its wasm backend here (cpu where wasm cannot
// start); the runtime's test holds the two within 1e-5. A thread keeps the runner of the last spec it
// saw, by fingerprint, so a model-testing job loads its models once per thread, not once per sample.
import type * as TF from '@tensorflow/tfjs';
import { AxesSelection } from '../../domain/dsp/axesSelection';
import { DspConfigurationError } from '../../domain/dsp/processingBlock';
import { imageWindow, sampleWindows, WindowingError, type ImageWindowing, type TimeSeriesWindowing, type WindowSample } from '../../domain/dsp/windows';
import { createImpulseRunner, ImpulseRuntimeError, type ImpulseRunner, type ImpulseRuntimeSpec, type LearnBlockResult } from '../../domain/learn/impulseRuntime';
import { decodeValuesInto } from '../../domain/sample/formats/decodeValues';
import type { SampleSource } from '../../domain/sample/formats/sampleFormat';
import { readWavInto } from '../../domain/sample/formats/wavFormat';

export interface ClassifySampleTaskInput {
  spec: ImpulseRuntimeSpec;
  /** buildImpulseRuntimeSpec's fingerprint: the same one means the same runner. */
  fingerprint: string;
  windowing: { type: 'time-series'; windowing: TimeSeriesWindowing } | { type: 'image'; windowing: ImageWindowing };
  sample: WindowSample;
  contentType: string;
  bytes: Uint8Array;
  /** More windows than this are refused, not classified. */
  maxWindows: number;
}

export interface ClassifiedWindow {
  startMs: number;
  endMs: number;
  /** The window's expected label (by the input block's labelling method); null for an unlabelled sample. */
  label: string | null;
  results: LearnBlockResult[];
}

/** A refusal (a sample or window the impulse cannot take) comes back as a value: the pool turns a throw into a plain failure. */
export type ClassifySampleOutcome = { ok: true; windows: ClassifiedWindow[] } | { ok: false; refusal: string };

/** Windows per model call: one call costs about as much as a thousand windows' worth of a small dense model. */
const BATCH_WINDOWS = 256;

let tfLoaded: Promise<{ tf: typeof TF; backend: 'wasm' | 'cpu' }> | undefined;

/** TensorFlow.js once per thread, and the backend it classifies on. */
function tensorflow(): Promise<{ tf: typeof TF; backend: 'wasm' | 'cpu' }> {
  tfLoaded ??= (async () => {
    const tf = await import('@tensorflow/tfjs');
    tf.enableProdMode();
    try {
      await import('@tensorflow/tfjs-backend-wasm');
      if (await tf.setBackend('wasm')) return { tf, backend: 'wasm' as const };
    } catch {
      // no wasm here: cpu
    }
    return { tf, backend: 'cpu' as const };
  })();
  return tfLoaded;
}

let cached: { fingerprint: string; backend: string; runner: ImpulseRunner } | undefined;

async function runnerFor(spec: ImpulseRuntimeSpec, fingerprint: string): Promise<ImpulseRunner> {
  const { tf, backend } = await tensorflow();
  // Another task of this thread (keras training) may have switched the backend.
  if (tf.getBackend() !== backend) await tf.setBackend(backend);
  await tf.ready();
  if (cached?.fingerprint === fingerprint && cached.backend === backend) return cached.runner;
  cached?.runner.dispose();
  cached = undefined;
  const runner = await createImpulseRunner(spec, tf);
  cached = { fingerprint, backend, runner };
  return runner;
}

function memorySource(bytes: Uint8Array): SampleSource {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { size: buffer.length, read: async (offset, length) => buffer.subarray(offset, offset + length), readAll: async () => buffer };
}

interface RawWindow {
  values: ArrayLike<number>;
  startMs: number;
  endMs: number;
  label: string | null;
}

/** The sample's raw windows as the runtime takes them, or why it has none. */
async function windowsOf(input: ClassifySampleTaskInput): Promise<{ ok: true; count: number; windows: Iterable<RawWindow> } | { ok: false; refusal: string }> {
  const { sample } = input;
  const name = `sample ${sample.id} ("${sample.name}")`;
  if (input.windowing.type === 'image') {
    const window = await imageWindow(input.bytes, input.windowing.windowing);
    return { ok: true, count: 1, windows: [{ values: window.pixels, startMs: 0, endMs: 0, label: sample.label }] };
  }
  const axes = input.spec.axes;
  const selection = new AxesSelection(sample, axes);
  if (selection.problem === undefined) {
    if (input.contentType === 'audio/wav') await readWavInto(memorySource(input.bytes), sample.valuesCount, selection);
    else decodeValuesInto(Buffer.from(input.bytes.buffer, input.bytes.byteOffset, input.bytes.byteLength), input.contentType, selection);
  }
  // The windowing names a window's label; an unlabelled sample is classified all the same.
  const unlabelled = sample.label === null && sample.structuredLabels.length === 0;
  const windows = sampleWindows(unlabelled ? { ...sample, label: '' } : sample, selection, axes, input.windowing.windowing);
  if (windows.skipped) return { ok: false, refusal: windows.reason };
  if (windows.count > input.maxWindows) return { ok: false, refusal: `${name} gives ${windows.count} windows; at most ${input.maxWindows} are classified at once` };
  return {
    ok: true,
    count: windows.count,
    windows: (function* () {
      for (const w of windows.windows()) yield { values: w.values, startMs: w.startMs, endMs: w.endMs, label: unlabelled ? null : w.label };
    })(),
  };
}

/** Every window of one stored sample through the whole impulse. */
export async function classifySampleTask(input: ClassifySampleTaskInput): Promise<ClassifySampleOutcome> {
  try {
    const windows = await windowsOf(input);
    if (!windows.ok) return windows;
    const runner = await runnerFor(input.spec, input.fingerprint);
    const out: ClassifiedWindow[] = [];
    let batch: RawWindow[] = [];
    const flush = async () => {
      const answers = await runner.classifyBatch(batch.map((w) => w.values));
      batch.forEach((w, i) => out.push({ startMs: w.startMs, endMs: w.endMs, label: w.label, results: answers[i]!.results }));
      batch = [];
    };
    for (const w of windows.windows) {
      batch.push(w);
      if (batch.length === BATCH_WINDOWS) await flush();
    }
    await flush();
    return { ok: true, windows: out };
  } catch (error) {
    if (error instanceof DspConfigurationError || error instanceof WindowingError || error instanceof ImpulseRuntimeError) return { ok: false, refusal: `sample ${input.sample.id} ("${input.sample.name}"): ${error.message}` };
    throw error;
  }
}

// Classifying one stored sample with a built impulse spec: what can be checked from the sample's
// record (its kind, how many windows it gives) is checked here, before its bytes are read; the
// decoding, windowing and inference run in the thread pool (classifyPoolTasks.ts). Used by the
// classify endpoints and the model-testing job alike.
import { expectedWindowCount, imageWindowing, timeSeriesWindowing, WindowingError } from '../../domain/dsp/windows';
import { ValidationError } from '../../domain/shared/errors';
import type { SampleDocument } from '../../projections/samples/sampleDocument';
import type { BlobStore } from '../../stores/blobstore/blobStore';
import { readAllBytes, windowSampleOf } from '../dsp/generateFeatures';
import { serviceModule, type ThreadPool } from '../jobs/threadPool';
import type { ClassifiedWindow, ClassifySampleOutcome, ClassifySampleTaskInput } from './classifyPoolTasks';
import type { BuiltImpulseRuntimeSpec } from './impulseRuntimeSpec';

export const CLASSIFY_POOL_TASKS = serviceModule('commands/classify/classifyPoolTasks');

/** Windows one sample may give to be classified: bounds a request's CPU time and answer (a 10-minute 100 Hz sample at 250 ms steps is 2,400). */
export const MAX_CLASSIFY_WINDOWS = 5000;

/** The sample cannot be classified by this impulse (kind, length, values): a 400 naming it. */
export class SampleNotClassifiableError extends ValidationError {
  constructor(message: string) {
    super(message, 'SAMPLE_NOT_CLASSIFIABLE');
  }
}

export async function classifyStoredSample(
  deps: { blobs: BlobStore; pool: ThreadPool },
  built: BuiltImpulseRuntimeSpec,
  sample: SampleDocument,
  options: { signal?: AbortSignal; maxWindows?: number } = {},
): Promise<ClassifiedWindow[]> {
  const { spec } = built;
  const maxWindows = options.maxWindows ?? MAX_CLASSIFY_WINDOWS;
  const name = `Sample ${sample.id} ("${sample.fileName ?? sample.id}")`;
  const images = spec.inputBlock.type === 'image';
  let windowing: ClassifySampleTaskInput['windowing'];
  try {
    if (images) {
      if (sample.kind !== 'image') throw new SampleNotClassifiableError(`${name} is ${sample.kind === 'video' ? 'a video' : 'a time series'}; the impulse reads images`);
      windowing = { type: 'image', windowing: imageWindowing(spec.inputBlock) };
    } else {
      if (sample.kind === 'image' || sample.kind === 'video') throw new SampleNotClassifiableError(`${name} is a${sample.kind === 'image' ? 'n image' : ' video'}; the impulse reads time series`);
      const w = timeSeriesWindowing(spec.inputBlock, spec.frequencyHz);
      const expected = expectedWindowCount([sample], w);
      if (expected > maxWindows) throw new SampleNotClassifiableError(`${name} gives ${expected} windows; at most ${maxWindows} are classified at once`);
      windowing = { type: 'time-series', windowing: w };
    }
  } catch (error) {
    if (error instanceof WindowingError) throw new SampleNotClassifiableError(error.message);
    throw error;
  }
  const bytes = await readAllBytes(await deps.blobs.open(sample.sha256));
  const input: ClassifySampleTaskInput = { spec, fingerprint: built.fingerprint, windowing, sample: windowSampleOf(sample), contentType: sample.contentType, bytes, maxWindows };
  // Moved to the thread, not copied.
  const outcome = await deps.pool.run<ClassifySampleOutcome>(
    { module: CLASSIFY_POOL_TASKS, name: 'classifySampleTask', input, transfer: [bytes.buffer as ArrayBuffer] },
    options.signal ? { signal: options.signal } : {},
  );
  if (!outcome.ok) throw new SampleNotClassifiableError(outcome.refusal);
  return outcome.windows;
}

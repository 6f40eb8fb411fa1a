// The window -> DSP -> rows core of feature generation, on an impulse specification rather than a
// stored impulse: the generate-features job gives it the project's impulse and writes X and y, a tuner
// trial gives it the impulse it tries and keeps the rows in memory (the project's features untouched).
// One sample at a time, in the thread pool (decode, resample, window, block), as the job always did.
import { resolveImpulseDsp, type ImpulseDsp } from '../../domain/dsp/impulseDsp';
import { timeSeriesWindowing, type WindowSample } from '../../domain/dsp/windows';
import type { DspConfigValues } from '../../domain/impulse/dspConfig';
import type { DspBlock, InputBlock } from '../../domain/impulse/impulseEvents';
import type { SampleDocument } from '../../projections/samples/sampleDocument';
import type { BlobStore } from '../../stores/blobstore/blobStore';
import { serviceModule } from '../jobs/threadPool';
import type { JobRunContext } from '../jobs/jobRunners';
import { checkFeatureInput } from './checkFeatureInput';
import { dspTaskBlock, type DspTaskBlock, type SampleFeatures, type SampleFeaturesInput } from './dspPoolTasks';

/** The module of the DSP pool tasks (source or compiled), for the feature jobs and the DSP routes. */
export const DSP_POOL_TASKS = serviceModule('commands/dsp/dspPoolTasks');

/** What feature generation needs of an impulse: a stored impulse is one, and so is a trial's. */
export interface ImpulseSpec {
  inputBlocks: readonly InputBlock[];
  dspBlocks: readonly DspBlock[];
  dspConfigs: Readonly<Record<string, DspConfigValues>>;
}

/** An impulse's DSP block resolved for a set of samples: how a sample is cut into windows, and the block the pool runs. */
export interface FeatureSource {
  dsp: ImpulseDsp;
  images: boolean;
  windowing: SampleFeaturesInput['windowing'];
  task: DspTaskBlock;
}

/** The impulse frequency when the input block names none: the most common frequency of the samples. */
export function commonFrequency(samples: readonly { frequency: number }[]): number | undefined {
  const counts = new Map<number, number>();
  for (const s of samples) if (s.frequency > 0) counts.set(s.frequency, (counts.get(s.frequency) ?? 0) + 1);
  let best: number | undefined;
  for (const [f, n] of counts) if (best === undefined || n > counts.get(best)! || (n === counts.get(best)! && f > best)) best = f;
  return best;
}

/** Resolves DSP block `dspId` of `impulse` for `samples`; throws naming the problem (a config the block refuses, an input it cannot window). */
export function featureSource(impulse: ImpulseSpec, dspId: number, samples: readonly { frequency: number }[]): FeatureSource {
  const dsp = resolveImpulseDsp(impulse, dspId, {}, commonFrequency(samples));
  const image = checkFeatureInput(dsp);
  return {
    dsp,
    images: image !== null,
    windowing: image ? { type: 'image', windowing: image } : { type: 'time-series', windowing: timeSeriesWindowing(dsp.inputBlock, dsp.frequencyHz) },
    task: dspTaskBlock(dsp),
  };
}

export const windowSampleOf = (s: SampleDocument): WindowSample => ({
  id: s.id,
  name: s.fileName ?? String(s.id),
  label: s.label,
  frequency: s.frequency,
  sensors: s.sensors.map((x) => x.name),
  valuesCount: s.valuesCount,
  structuredLabels: s.structuredLabels ?? [],
});

/** A stored blob whole, for the pool (a sample is decoded in the thread): in an ArrayBuffer of its own, never Node's shared pool, so it can be moved to the thread. */
export async function readAllBytes(stream: AsyncIterable<Buffer | Uint8Array | string>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of stream) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    chunks.push(bytes);
    total += bytes.length;
  }
  const all = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.length;
  }
  return all;
}

export type SampleRows = Extract<SampleFeatures, { skipped: false }>;

/**
 * Reads samples' feature rows one at a time. A sample that gives no window (the wrong kind for the
 * impulse, no label, too short, values the block refuses, ...) is skipped with a warning naming it
 * and why; every sample must give the feature count of the first.
 */
export class SampleFeatureReader {
  readonly skipped: number[] = [];
  featureCount: number | undefined;

  constructor(
    private readonly deps: { blobs: Pick<BlobStore, 'open'> },
    private readonly job: Pick<JobRunContext, 'pool' | 'signal' | 'log'>,
    private readonly source: FeatureSource,
  ) {}

  /** The sample's windows' rows, or null when it was skipped. `rawPath`: a file its raw windows are appended to. */
  async read(sample: SampleDocument, rawPath?: string): Promise<SampleRows | null> {
    this.job.signal.throwIfAborted();
    const images = this.source.images;
    if ((sample.kind === 'image') !== images || sample.kind === 'video') {
      this.skipped.push(sample.id);
      const kind = sample.kind === 'image' ? 'an image' : sample.kind === 'video' ? 'a video' : 'a time-series';
      this.job.log(`Skipped sample ${sample.id} ("${sample.fileName}"): ${kind} sample in ${images ? 'an image' : 'a time-series'} impulse`, 'warn');
      return null;
    }
    const bytes = await readAllBytes(await this.deps.blobs.open(sample.sha256));
    const input: SampleFeaturesInput = { dsp: this.source.task, windowing: this.source.windowing, sample: windowSampleOf(sample), contentType: sample.contentType, bytes, ...(rawPath ? { rawPath } : {}) };
    // Moved, not copied: the job's process never holds a second copy of a large sample.
    const result = await this.job.pool.run<SampleFeatures>({ module: DSP_POOL_TASKS, name: 'sampleFeatures', input, transfer: [bytes.buffer as ArrayBuffer] }, { signal: this.job.signal });
    if (result.skipped) {
      this.skipped.push(sample.id);
      this.job.log(`Skipped ${result.reason}`, 'warn');
      return null;
    }
    if (this.featureCount === undefined) this.featureCount = result.featureCount;
    else if (result.featureCount !== this.featureCount) throw new Error(`sample ${sample.id} gave ${result.featureCount} features per window, earlier samples ${this.featureCount}`);
    return result;
  }
}

// The train-keras job: the current training features of the learn block's DSP blocks (their X and y
// .npy blobs, columns side by side when there are several), trained in the thread pool
// (kerasPoolTasks.ts) with the settings recorded when the job was requested, and recorded by a
// KerasModelTrained event naming the model blob, the features' hashes and positions, the settings and
// the seed. The seed is the learn block's id: a rerun on the same features gives the same model.
// Progress: the pool task appends an "Epoch i/n - loss ..." line per epoch to a file in the job's
// scratch folder, which this runner follows into the job's output. Cancel terminates the thread.
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { DspFeaturesDocument } from '../../projections/dspFeatures/dspFeaturesDocument';
import type { ImpulseDocument } from '../../projections/impulses/impulseDocument';
import { decodeNpy } from '../../domain/dsp/npy';
import { kerasDecider } from '../../domain/learn/kerasDecider';
import { kerasStream } from '../../domain/learn/kerasEvents';
import { planNetwork } from '../../domain/learn/kerasNetwork';
import { kerasModeOf, learningTargets } from '../../domain/learn/kerasRegression';
import { applyKerasChange, DEFAULT_KERAS_SETTINGS, type KerasSettings } from '../../domain/learn/kerasSettings';
import type { BlobStore } from '../../stores/blobstore/blobStore';
import type { EventStore } from '../../stores/eventstore/eventStore';
import { systemContext } from '../commandContext';
import { featureScratchPrefix } from '../dsp/featureScratchFolders';
import { readAllBytes } from '../dsp/generateFeatures';
import { handleCommand } from '../handleCommand';
import type { JobRunContext, JobRunner } from '../jobs/jobRunners';
import { serviceModule } from '../jobs/threadPool';
import type { KerasTrainingInput, KerasTrainingResult } from './kerasPoolTasks';

export const KERAS_POOL_TASKS = serviceModule('commands/training/kerasPoolTasks');
const FOLLOW_MS = 200;

export interface KerasTrainingDeps {
  events: EventStore;
  blobs: BlobStore;
  impulses: { forProject(projectId: number): Promise<ImpulseDocument[]> };
  dspFeatures: { current(projectId: number, dspId: number): Promise<DspFeaturesDocument | null> };
}

/** Follows a file appended to by another thread, handing each complete line to `line`. */
export function followLines(file: string, line: (text: string) => void): { stop(): Promise<void> } {
  let offset = 0;
  let pending = '';
  let reading: Promise<void> = Promise.resolve();
  const read = async () => {
    const handle = await open(file, 'r');
    try {
      for (;;) {
        const buffer = Buffer.alloc(64 * 1024);
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
        if (bytesRead === 0) break;
        offset += bytesRead;
        pending += buffer.subarray(0, bytesRead).toString('utf8');
      }
    } finally {
      await handle.close();
    }
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const l of lines) line(l);
  };
  const timer = setInterval(() => {
    reading = reading.then(read).catch(() => undefined);
  }, FOLLOW_MS);
  return {
    async stop() {
      clearInterval(timer);
      reading = reading.then(read).catch(() => undefined);
      await reading;
    },
  };
}

async function trainingRows(deps: KerasTrainingDeps, features: DspFeaturesDocument[]): Promise<{ x: Float32Array; y: Int32Array; columns: number }> {
  const parts = await Promise.all(features.map(async (f) => ({ x: decodeNpy(await readAllBytes(await deps.blobs.open(f.categories.training.x))), y: decodeNpy(await readAllBytes(await deps.blobs.open(f.categories.training.y))) })));
  const rows = parts[0]!.y.shape[0]!;
  const widths = parts.map((p) => (p.x.shape[0] === rows ? (p.x.shape[1] ?? 0) : -1));
  if (widths.includes(-1)) throw new Error('The DSP blocks\' features have different window counts: generate features for all of them again');
  const columns = widths.reduce((a, b) => a + b, 0);
  const x = new Float32Array(rows * columns);
  for (let r = 0; r < rows; r++) {
    let at = r * columns;
    parts.forEach((p, i) => {
      x.set(p.x.data.subarray(r * widths[i]!, (r + 1) * widths[i]!), at);
      at += widths[i]!;
    });
  }
  // y holds 1-based indexes into the class list.
  const y = Int32Array.from(parts[0]!.y.data, (v) => v - 1);
  return { x, y, columns };
}

export function kerasTrainingRunner(deps: KerasTrainingDeps): JobRunner {
  return async (job: JobRunContext) => {
    const projectId = job.projectId;
    if (projectId === null) throw new Error('A train-keras job belongs to a project');
    const learnId = Number(job.parameters.learnId);
    // Checked when requested; checked again as any stored input is.
    const settings: KerasSettings = applyKerasChange(DEFAULT_KERAS_SETTINGS, (job.parameters.settings ?? {}) as Partial<KerasSettings>);
    const block = (await deps.impulses.forProject(projectId)).flatMap((i) => i.learnBlocks).find((b) => b.id === learnId && kerasModeOf(b.type) !== undefined);
    if (!block) throw new Error(`Keras learn block ${learnId} is no longer part of an impulse of this project`);
    const mode = kerasModeOf(block.type)!;
    const features: DspFeaturesDocument[] = [];
    for (const dspId of block.dsp) {
      const f = await deps.dspFeatures.current(projectId, dspId);
      if (!f) throw new Error(`No features for DSP block ${dspId}: run generate-features for it first`);
      features.push(f);
    }
    if (features.length === 0) throw new Error(`Learn block ${learnId} reads no DSP block`);
    const classes = features[0]!.classes;
    const { x, y, columns } = await trainingRows(deps, features);
    const { regressionTargets } = learningTargets(y, classes, mode);
    const plan = planNetwork(settings.visualLayers, columns, classes.length, mode);
    const seed = learnId;
    const what = mode === 'regression' ? `${classes.length} label values, one linear output` : `${classes.length} classes`;
    job.log(`Training a network of ${plan.parameterCount} parameters on ${y.length} windows of ${columns} features (${what}), ${settings.trainingCycles} training cycles, seed ${seed}`);

    const dir = await mkdtemp(featureScratchPrefix(job.jobId));
    try {
      const progressPath = path.join(dir, 'progress.log');
      await writeFile(progressPath, '');
      const follower = followLines(progressPath, (l) => job.log(l));
      const input: KerasTrainingInput = { plan, x, y, classes, settings, seed, progressPath, ...(regressionTargets ? { regressionTargets } : {}) };
      // A deleted project's training is stopped by the job worker (job.signal), as any job of it.
      let result: KerasTrainingResult;
      try {
        result = await job.pool.run<KerasTrainingResult>(
          { module: KERAS_POOL_TASKS, name: 'trainKeras', input, transfer: [x.buffer as ArrayBuffer, y.buffer as ArrayBuffer] },
          { signal: job.signal },
        );
      } finally {
        await follower.stop();
      }
      job.signal.throwIfAborted();
      const model = await deps.blobs.put(Buffer.from(result.model.buffer, result.model.byteOffset, result.model.byteLength));
      const now = new Date();
      await handleCommand(
        deps.events,
        kerasStream(projectId, learnId),
        kerasDecider,
        {
          type: 'RecordKerasModel',
          data: {
            projectId,
            learnId,
            jobId: job.jobId,
            ...(mode === 'regression' ? { mode } : {}),
            model: model.sha256,
            seed,
            settings,
            features: features.map((f) => ({ dspId: f.dspId, x: f.categories.training.x, y: f.categories.training.y, position: f._position, sourcePosition: f.sourcePosition })),
            classes,
            inputShape: plan.inputShape,
            parameterCount: plan.parameterCount,
            operations: plan.operations,
            trainingWindowCount: result.trainingWindowCount,
            validation: result.validation,
            trained: now.toISOString(),
          },
        },
        systemContext('train-keras', now),
      );
      const v = result.validation;
      const measured = v.regression ? `mean absolute error ${v.regression.meanAbsoluteError === null ? 'n/a' : v.regression.meanAbsoluteError.toFixed(4)}` : `accuracy ${v.accuracy === null ? 'n/a' : (100 * v.accuracy).toFixed(1) + '%'}`;
      job.log(`Model trained (${result.backend} backend): validation ${measured}, loss ${v.loss === null ? 'n/a' : v.loss.toFixed(4)} on ${v.windowCount} windows; model ${model.sha256}`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };
}

// The tuner-trial job: one trial of a tuner run (a child job of the run's coordinator,
// parameters {coordinatorJobId, trial}). It reads the trial's impulse and the run's config from the
// run's stream, generates the impulse's features from the project's training samples in memory (the
// project's own features and impulse are never written), trains the trial's keras model in the thread
// pool, reporting each epoch, estimates latency, RAM and ROM for the run's target device, keeps the
// model blob and finishes the trial in the run's stream.
//
// Choices:
// * The trial claims itself (StartTrial with its own job id) before any work: the coordinator's own
//   StartTrial for the same job appends nothing, and a trial the run no longer wants (the run ended,
//   the trial finished or handed to another job) is refused at once instead of after its training.
// * Accuracy (classification) or loss (regression, mean squared error) is measured on the windows the
//   training holds out for validation (the keras settings' split), as the project's own training does.
// * An error finishes the trial failed with the error's message, and fails the job; a cancel (the
//   job's signal, or the run refusing an epoch because it ended) stops the training thread and
//   finishes nothing: the coordinator finishes a cancelled child's trial (the contract).
// * Memory: the training windows' features are held once, as the training task needs them whole.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { classList } from '../../domain/dsp/dspMetadata';
import type { OptimizeSettings } from '../../domain/optimize/optimizeConfig';
import type { TrialImpulse } from '../../domain/optimize/searchSpace';
import { trialEstimates } from '../../domain/optimize/trialEstimates';
import { TRIAL_DSP_ID, trialImpulseSpec, trialTraining, type ProjectImpulse } from '../../domain/optimize/trialImpulse';
import { tunerRunDecider, type TunerRunCommand } from '../../domain/optimize/tunerRunDecider';
import { tunerRunStream, type TrialRound, type TunerRunEvent } from '../../domain/optimize/tunerRunEvents';
import { planNetwork } from '../../domain/learn/kerasNetwork';
import { learningTargets } from '../../domain/learn/kerasRegression';
import type { SampleDocument } from '../../projections/samples/sampleDocument';
import type { BlobStore } from '../../stores/blobstore/blobStore';
import type { EventStore } from '../../stores/eventstore/eventStore';
import { systemContext } from '../commandContext';
import { featureSource, SampleFeatureReader } from '../dsp/sampleFeatureRows';
import { featureScratchPrefix } from '../dsp/featureScratchFolders';
import { handleCommand } from '../handleCommand';
import type { JobRunContext, JobRunner } from '../jobs/jobRunners';
import { followLines, KERAS_POOL_TASKS } from '../training/kerasTraining';
import type { EpochFigures, KerasTrainingInput, KerasTrainingResult } from '../training/kerasPoolTasks';
import { TrialEpochReporter } from './trialEpochReporter';

export const TUNER_TRIAL = 'tuner-trial';

export interface TunerTrialDeps {
  events: EventStore;
  blobs: Pick<BlobStore, 'open' | 'put'>;
  /** The project's impulse a tuner run searches around (its chosen default, else its first). */
  impulses: { selected(projectId: number): Promise<ProjectImpulse | null> };
  samples: { ids(projectId: number, category: 'training'): Promise<SampleDocument[]> };
}

/** The trial as its run's stream has it. */
interface PlannedTrial {
  config: OptimizeSettings;
  /** The run's seed and the trial's number: the training's seed, so a trial run again trains the same model. */
  seed: number;
  impulse: TrialImpulse;
  round: TrialRound | null;
}

/** The job's parameters: the run's coordinator job and the trial's number. */
export function tunerTrialParameters(p: Record<string, unknown>): { coordinatorJobId: number; trial: number } {
  const coordinatorJobId = p.coordinatorJobId;
  const trial = p.trial;
  if (typeof coordinatorJobId !== 'number' || !Number.isSafeInteger(coordinatorJobId) || coordinatorJobId < 1) throw new Error('A tuner-trial job names its run: coordinatorJobId, a positive integer');
  if (typeof trial !== 'number' || !Number.isSafeInteger(trial) || trial < 0) throw new Error('A tuner-trial job names its trial: trial, an integer from 0');
  return { coordinatorJobId, trial };
}

async function plannedTrial(events: EventStore, projectId: number, coordinatorJobId: number, trial: number): Promise<PlannedTrial> {
  let config: OptimizeSettings | undefined;
  let seed = 0;
  let planned: { impulse: TrialImpulse; round: TrialRound | null } | undefined;
  for (const stored of await events.readStream(tunerRunStream(projectId, coordinatorJobId))) {
    const event = stored as unknown as TunerRunEvent;
    if (event.type === 'TunerRunStarted') ({ config, seed } = event.data);
    else if (event.type === 'TunerTrialPlanned' && event.data.trial === trial) planned = { impulse: event.data.impulse, round: event.data.round };
  }
  if (!config) throw new Error(`Tuner run ${coordinatorJobId} of this project has not started`);
  if (!planned) throw new Error(`Trial ${trial} was not planned in tuner run ${coordinatorJobId}`);
  return { config, seed: (seed + trial) >>> 0, ...planned };
}

/** The training windows of `samples` through the trial's impulse, row-major, with each window's label. */
async function trialFeatures(deps: TunerTrialDeps, job: JobRunContext, spec: ReturnType<typeof trialImpulseSpec>, samples: SampleDocument[]) {
  const source = featureSource(spec, TRIAL_DSP_ID, samples);
  const reader = new SampleFeatureReader(deps, job, source);
  const parts: Float32Array[] = [];
  const labels: string[] = [];
  let rawColumns = 0;
  for (const sample of samples) {
    const result = await reader.read(sample);
    if (!result) continue;
    parts.push(result.features);
    labels.push(...result.labels);
    rawColumns = result.rawColumns;
  }
  const featureCount = reader.featureCount;
  if (featureCount === undefined || labels.length === 0) throw new Error('No training sample gave a window for this trial\'s impulse (see the skipped samples above)');
  const x = new Float32Array(labels.length * featureCount);
  let at = 0;
  for (const part of parts) {
    x.set(part, at);
    at += part.length;
  }
  return { x, labels, featureCount, rawColumns, skipped: reader.skipped.length };
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export function tunerTrialRunner(deps: TunerTrialDeps): JobRunner {
  return async (job: JobRunContext) => {
    const projectId = job.projectId;
    if (projectId === null) throw new Error('A tuner-trial job belongs to a project');
    const { coordinatorJobId, trial } = tunerTrialParameters(job.parameters);
    const run = { projectId, coordinatorJobId, trial };
    const send = (command: TunerRunCommand) => handleCommand(deps.events, tunerRunStream(projectId, coordinatorJobId), tunerRunDecider, command, systemContext(TUNER_TRIAL, command.data.now));
    const planned = await plannedTrial(deps.events, projectId, coordinatorJobId, trial);
    await send({ type: 'StartTrial', data: { projectId, coordinatorJobId, trial, jobId: job.jobId, now: new Date() } });

    // Stopped by the job's cancel, or by the run refusing an epoch (it ended meanwhile).
    const stop = new AbortController();
    const signal = AbortSignal.any([job.signal, stop.signal]);
    const reporter = new TrialEpochReporter(deps.events, { ...run, jobId: job.jobId }, (error) => {
      job.log(`The run refused this trial's progress: ${error.message}`, 'warn');
      stop.abort(error);
    });
    const context: JobRunContext = { ...job, signal };
    try {
      const outcome = await trainTrial(deps, context, planned, reporter);
      await reporter.flush();
      signal.throwIfAborted();
      const finished = await send({ type: 'FinishTrial', data: { projectId, coordinatorJobId, trial, jobId: job.jobId, status: 'completed', error: null, now: new Date(), ...outcome } });
      const over = finished.events.some((e) => e.type === 'TunerTrialFinished' && e.data.overBudget);
      job.log(`Trial ${trial} completed${over ? ', over the target device\'s budget' : ''}`);
    } catch (error) {
      await reporter.flush().catch(() => undefined);
      if (signal.aborted) throw reporter.failure ?? error;
      const reason = messageOf(error);
      await send({ type: 'FinishTrial', data: { projectId, coordinatorJobId, trial, jobId: job.jobId, status: 'failed', accuracy: null, loss: null, estimates: null, error: reason, modelSha256: null, now: new Date() } }).catch((refused: unknown) =>
        job.log(`The trial's failure could not be recorded: ${messageOf(refused)}`, 'warn'),
      );
      throw error;
    }
  };
}

async function trainTrial(deps: TunerTrialDeps, job: JobRunContext, planned: PlannedTrial, reporter: TrialEpochReporter) {
  const projectId = job.projectId!;
  const projectImpulse = await deps.impulses.selected(projectId);
  if (!projectImpulse) throw new Error('The project has no impulse: a trial takes its input axes and frequency from it');
  const spec = trialImpulseSpec(planned.impulse, projectImpulse);
  const { settings, mode } = trialTraining(planned.impulse, planned.round);
  const samples = [...(await deps.samples.ids(projectId, 'training'))].sort((a, b) => a.id - b.id);
  if (samples.length === 0) throw new Error('The project has no training samples');
  const { window, dsp } = planned.impulse;
  job.log(`Trial: ${window.windowSizeMs} ms windows every ${window.windowIncreaseMs} ms, ${dsp.type} block, dense layers [${planned.impulse.learn.denseLayers.join(', ')}], ${settings.trainingCycles} training cycles, on ${samples.length} training samples`);

  const featuresStarted = performance.now();
  const features = await trialFeatures(deps, job, spec, samples);
  const featuresMs = Math.round(performance.now() - featuresStarted);
  const classes = classList(samples.map((s) => ({ label: s.label, structuredLabels: s.structuredLabels ?? [] })));
  const classIndex = new Map(classes.map((c, i) => [c, i]));
  const y = Int32Array.from(features.labels, (l) => classIndex.get(l) ?? -1);
  if (y.includes(-1)) throw new Error('A window\'s label is not one of the training samples\' labels');
  const { regressionTargets } = learningTargets(y, classes, mode);
  const plan = planNetwork(settings.visualLayers, features.featureCount, classes.length, mode);
  const seed = planned.seed;
  job.log(`Training a network of ${plan.parameterCount} parameters on ${y.length} windows of ${features.featureCount} features, seed ${seed}${features.skipped > 0 ? ` (${features.skipped} sample(s) skipped)` : ''}; features took ${featuresMs} ms`);

  const dir = await mkdtemp(featureScratchPrefix(job.jobId));
  try {
    const epochsPath = path.join(dir, 'epochs.jsonl');
    await writeFile(epochsPath, '');
    const follower = followLines(epochsPath, (line) => {
      const e = JSON.parse(line) as EpochFigures;
      job.log(`Epoch ${e.epoch}/${settings.trainingCycles}: loss ${e.loss ?? 'n/a'}, validation ${mode === 'regression' ? `loss ${e.valLoss ?? 'n/a'}` : `accuracy ${e.valAccuracy ?? 'n/a'}`}`);
      reporter.add(e);
    });
    const input: KerasTrainingInput = { plan, x: features.x, y, classes, settings, seed, epochsPath, ...(regressionTargets ? { regressionTargets } : {}) };
    let result: KerasTrainingResult;
    const trainingStarted = performance.now();
    try {
      result = await job.pool.run<KerasTrainingResult>({ module: KERAS_POOL_TASKS, name: 'trainKeras', input, transfer: [features.x.buffer as ArrayBuffer, y.buffer as ArrayBuffer] }, { signal: job.signal });
    } finally {
      await follower.stop();
    }
    job.signal.throwIfAborted();
    job.log(`Training took ${Math.round(performance.now() - trainingStarted)} ms (${result.backend} backend)`);
    const v = result.validation;
    const accuracy = mode === 'regression' ? null : v.accuracy;
    const loss = v.loss;
    if (accuracy === null && loss === null) throw new Error('The trained model gave no measure on the held-out windows (it diverged, or no window was held out)');
    const model = await deps.blobs.put(Buffer.from(result.model.buffer, result.model.byteOffset, result.model.byteLength));
    const estimates = trialEstimates({ settings, featureCount: features.featureCount, classes, mode }, features.rawColumns, planned.config.targetDevice.name);
    job.log(`Held-out ${mode === 'regression' ? `loss ${loss}` : `accuracy ${accuracy}`} on ${v.windowCount} windows; on ${planned.config.targetDevice.name}: ${estimates.latencyMs} ms, ${estimates.ramBytes} bytes of RAM, ${estimates.romBytes} of ROM; model ${model.sha256}`);
    return { accuracy, loss, estimates, modelSha256: model.sha256 };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

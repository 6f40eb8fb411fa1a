// The anomaly (K-means) training job (`train-anomaly`, POST /api/{projectId}/jobs/train/anomaly/{learnId}).
// It reads the current training features of the learn block's DSP blocks (blobs named by their
// DspFeaturesGenerated records), fits the model in the job thread pool (cancelling the job
// terminates the thread), stores the model as a JSON blob and records AnomalyModelTrained naming
// it, the features' blobs and positions, the settings and the seed.
//
// Only training windows are used, of every class: the block learns what normal data looks like.
import { dspFeaturesStream } from '../../domain/dsp/dspFeaturesEvents';
import { findAnomalyBlock } from '../../domain/learn/anomalyBlocks';
import { anomalyDecider } from '../../domain/learn/anomalyDecider';
import { anomalyStream, DEFAULT_ANOMALY_SEED, DEFAULT_CLUSTER_COUNT, DEFAULT_MINIMUM_CONFIDENCE_RATING, type AnomalySettings, type AnomalyTrainingFeatures } from '../../domain/learn/anomalyEvents';
import type { DspFeaturesDocument } from '../../projections/dspFeatures/dspFeaturesDocument';
import type { ImpulseDocument } from '../../projections/impulses/impulseDocument';
import type { BlobStore } from '../../stores/blobstore/blobStore';
import type { EventStore } from '../../stores/eventstore/eventStore';
import { systemContext } from '../commandContext';
import { readAllBytes } from '../dsp/generateFeatures';
import { handleCommand } from '../handleCommand';
import type { JobRunContext, JobRunner } from '../jobs/jobRunners';
import { serviceModule } from '../jobs/threadPool';
import type { AnomalyFitOutcome } from './anomalyPoolTasks';

export const ANOMALY_POOL_TASKS = serviceModule('commands/training/anomalyPoolTasks');
export const TRAIN_ANOMALY = 'train-anomaly';

export interface AnomalyTrainingDeps {
  events: EventStore;
  blobs: BlobStore;
  impulses: { forProject(projectId: number): Promise<ImpulseDocument[]> };
  dspFeatures: { current(projectId: number, dspId: number): Promise<DspFeaturesDocument | null> };
}

export interface AnomalyTrainingParameters extends AnomalySettings {
  learnId: number;
  seed: number;
}

/** The job's parameters as requested (validated by the endpoint; read defensively here). */
export function anomalyTrainingParameters(p: Record<string, unknown>): AnomalyTrainingParameters {
  return {
    learnId: Number(p.learnId),
    axes: Array.isArray(p.axes) ? p.axes.map(Number) : [],
    clusterCount: typeof p.clusterCount === 'number' ? p.clusterCount : DEFAULT_CLUSTER_COUNT,
    minimumConfidenceRating: typeof p.minimumConfidenceRating === 'number' ? p.minimumConfidenceRating : DEFAULT_MINIMUM_CONFIDENCE_RATING,
    seed: typeof p.seed === 'number' ? p.seed : DEFAULT_ANOMALY_SEED,
  };
}

export function anomalyTrainingRunner(deps: AnomalyTrainingDeps): JobRunner {
  return async (job: JobRunContext) => {
    const projectId = job.projectId;
    if (projectId === null) throw new Error('An anomaly training job belongs to a project');
    const p = anomalyTrainingParameters(job.parameters);
    const found = findAnomalyBlock(await deps.impulses.forProject(projectId), p.learnId);
    if (!found) throw new Error(`Learn block ${p.learnId} is no longer an anomaly block of this project's impulses`);
    const features: DspFeaturesDocument[] = [];
    for (const dspId of found.block.dsp) {
      const f = await deps.dspFeatures.current(projectId, dspId);
      if (!f) throw new Error(`DSP block ${dspId} has no features: run generate-features for it first`);
      features.push(f);
      job.log(`DSP block ${dspId}: ${f.categories.training.windowCount} training windows of ${f.featureCount} features (from ${dspFeaturesStream(projectId, dspId)}, job ${f.jobId})`);
    }
    job.log(`Training K-means: ${p.clusterCount} clusters on axes ${p.axes.join(', ')}, seed ${p.seed}`);
    const xs = await Promise.all(features.map(async (f) => readAllBytes(await deps.blobs.open(f.categories.training.x))));
    job.signal.throwIfAborted();
    const outcome = await job.pool.run<AnomalyFitOutcome>(
      { module: ANOMALY_POOL_TASKS, name: 'fitAnomalyTask', input: { xs, axes: p.axes, clusterCount: p.clusterCount, seed: p.seed }, transfer: xs.map((x) => x.buffer as ArrayBuffer) },
      { signal: job.signal },
    );
    if (!outcome.ok) throw new Error(`Training failed: ${outcome.reason}`);
    const { model } = outcome;
    job.log(`K-means ${outcome.converged ? 'converged' : 'stopped'} after ${outcome.iterations} iterations on ${outcome.windowCount} windows`);
    const dropped = p.clusterCount - model.clusters.length;
    if (dropped > 0) job.log(`${dropped} cluster(s) had no window nearest to them and were dropped`, 'warn');
    const radii = model.clusters.map((c) => c.radius);
    job.log(`${model.clusters.length} clusters, radius from ${Math.min(...radii).toFixed(4)} to ${Math.max(...radii).toFixed(4)}`);
    const blob = await deps.blobs.put(Buffer.from(JSON.stringify(model)));
    job.signal.throwIfAborted();
    const now = new Date();
    const trainedOn: AnomalyTrainingFeatures[] = features.map((f) => ({ dspId: f.dspId, x: f.categories.training.x, windowCount: f.categories.training.windowCount, featureCount: f.featureCount, sourcePosition: f.sourcePosition, position: f._position }));
    await handleCommand(
      deps.events,
      anomalyStream(projectId, p.learnId),
      anomalyDecider,
      {
        type: 'RecordAnomalyModel',
        data: {
          projectId,
          learnId: p.learnId,
          impulseId: found.impulse.id,
          jobId: job.jobId,
          model: blob.sha256,
          features: trainedOn,
          settings: { axes: p.axes, clusterCount: p.clusterCount, minimumConfidenceRating: p.minimumConfidenceRating },
          seed: p.seed,
          clusterCount: model.clusters.length,
          iterations: outcome.iterations,
          trained: now.toISOString(),
        },
      },
      systemContext(TRAIN_ANOMALY, now),
    );
    job.log(`Model stored (${blob.sha256})`);
  };
}

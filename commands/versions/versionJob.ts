// The version job: the log position it stands at (its request's: everything the caller had done when
// asking) and the content hashes of what the project held there, recorded as VersionCreated. The
// contents come from the project's events up to that position, replayed through the projections into
// a scratch store (projections/history/pointInTime.ts), not from the live read models: a write that
// lands while the job waits or runs is not in the version, so the contents are a function of the log
// up to the position. Nothing is copied: the blobs are content-addressed and the hashes the version
// names keep them stored (commands/projects/projectBlobs.ts). A retried job records its version once
// (the version id is allocated with the request). With runModelTestingWhileVersioning, model testing
// runs first in the same job and the version stands at its record instead (modelTestedAt).
import { setTimeout as sleep } from 'node:timers/promises';
import { jobStream } from '../../domain/job/jobEvents';
import { modelTestingStream } from '../../domain/learn/modelTestingEvents';
import { versionDecider } from '../../domain/version/versionDecider';
import { versionsStream, type VersionContents } from '../../domain/version/versionEvents';
import { AnomalyModelQueries } from '../../projections/anomalyModels/anomalyModelQueries';
import { DspFeaturesQueries } from '../../projections/dspFeatures/dspFeaturesQueries';
import { readModelsAsOf } from '../../projections/history/pointInTime';
import { ImpulseQueries } from '../../projections/impulses/impulseQueries';
import { KerasModelQueries } from '../../projections/kerasModels/kerasModelQueries';
import { ModelTestingQueries } from '../../projections/modelTesting/modelTestingQueries';
import type { Projection } from '../../projections/projection';
import { SampleQueries } from '../../projections/samples/sampleQueries';
import type { EventStore, Position, StoredEvent } from '../../stores/eventstore/eventStore';
import type { ReadStore } from '../../stores/readstore/readStore';
import { systemContext } from '../commandContext';
import { handleCommand } from '../handleCommand';
import type { JobRunContext, JobRunner } from '../jobs/jobRunners';
import { versionContents, type VersionContentsDeps } from './versionContents';

export const VERSION_JOB = 'version';

export interface VersionJobParameters {
  versionId: number;
  description: string;
  createdByUserId: number | null;
  /** runModelTestingWhileVersioning: model testing runs first (of `impulseId`), and the version stands at its record. */
  runModelTesting?: boolean;
  impulseId?: number;
}

export interface VersionJobDeps {
  events: EventStore & { isForgotten(event: StoredEvent): Promise<boolean> };
  /** The read store holding the history index, which says which events are the project's. */
  readStore: ReadStore;
  /** The history projection, whose checkpoint must reach the version's position before the replay. */
  history: Projection;
  /** The projections the contents are read from (every one but the history). */
  projections: readonly Projection[];
  /** How often the history index's checkpoint is looked at while it has not reached the position. */
  pollMs?: number;
  /** How long the job waits for it (a stalled history projection, or no projections role running): then it fails. */
  historyTimeoutMs?: number;
  /** The model testing runner, run inside a version job that asks for it (same job id, so its record is made once). */
  modelTesting?: JobRunner;
}

/** The history index keeps up with the log within seconds; far longer means it is stalled or not running. */
const HISTORY_TIMEOUT_MS = 5 * 60_000;

const queriesOver = (store: ReadStore): VersionContentsDeps => ({
  samples: new SampleQueries(store),
  impulses: new ImpulseQueries(store),
  dspFeatures: new DspFeaturesQueries(store),
  kerasModels: new KerasModelQueries(store),
  anomalyModels: new AnomalyModelQueries(store),
  modelTesting: new ModelTestingQueries(store),
});

async function historyReaches(deps: VersionJobDeps, position: Position, signal: AbortSignal): Promise<void> {
  const timeoutMs = deps.historyTimeoutMs ?? HISTORY_TIMEOUT_MS;
  const end = Date.now() + timeoutMs;
  for (;;) {
    const checkpoint = await deps.readStore.readCheckpoint(deps.history.checkpoint);
    if (checkpoint && checkpoint.position >= position) return;
    if (Date.now() >= end) throw new Error(`The history index has not reached log position ${position} in ${timeoutMs / 1000} s: is the projections role running and healthy (GET /health)?`);
    await sleep(deps.pollMs ?? 100, undefined, { signal });
  }
}

/**
 * The project's read models as its events up to `position` make them (a scratch store), and what a
 * version standing there covers: the version job records these contents, a restore rebuilds from
 * the store after checking them against the recorded ones (versionCheck.ts).
 */
export async function projectAt(deps: VersionJobDeps, projectId: number, position: Position, signal: AbortSignal): Promise<{ store: ReadStore; contents: VersionContents }> {
  await historyReaches(deps, position, signal);
  const store = await readModelsAsOf(deps.events, deps.readStore, deps.projections, projectId, { position });
  if (!store) throw new Error(`Project ${projectId} has no event up to log position ${position}`);
  return { store, contents: await versionContents(queriesOver(store), projectId) };
}

/**
 * Runs model testing as part of the job, unless an earlier attempt recorded it, and answers the
 * position of its record: a version made with model testing stands there, so it covers the test.
 */
async function modelTestedAt(deps: VersionJobDeps, job: JobRunContext, projectId: number): Promise<Position> {
  const recorded = async () => (await deps.events.readStream(modelTestingStream(projectId))).find((e) => e.type === 'ModelTested' && e.data.jobId === job.jobId);
  let tested = await recorded();
  if (!tested) {
    if (!deps.modelTesting) throw new Error('This job worker cannot run model testing');
    await deps.modelTesting(job);
    tested = await recorded();
  }
  if (!tested) throw new Error(`Model testing of job ${job.jobId} recorded no result`);
  return tested.position;
}

export function versionJobRunner(deps: VersionJobDeps): JobRunner {
  return async (job: JobRunContext) => {
    const projectId = job.projectId;
    if (projectId === null) throw new Error('A version job belongs to a project');
    const params = job.parameters as unknown as VersionJobParameters;
    const [requested] = await deps.events.readStream(jobStream(job.jobId), { maxCount: 1 });
    if (!requested) throw new Error(`Job ${job.jobId} has no request`);
    const position = params.runModelTesting ? await modelTestedAt(deps, job, projectId) : requested.position;
    const { contents } = await projectAt(deps, projectId, position, job.signal);
    job.signal.throwIfAborted();
    const now = new Date();
    await handleCommand(
      deps.events,
      versionsStream(projectId),
      versionDecider,
      { type: 'RecordVersion', data: { projectId, versionId: params.versionId, description: params.description, position: position.toString(), jobId: job.jobId, contents, createdByUserId: params.createdByUserId, created: now.toISOString() } },
      systemContext(VERSION_JOB, now),
    );
    job.log(`Version ${params.versionId} stands at log position ${position}: ${contents.samples.count} samples (${contents.samples.blobs.length} files), ${contents.features.length} feature files, ${contents.models.length} trained models`);
  };
}

// What a restore reads before it writes: the version (live, of a live project), the source as it
// stood at the version's position (rebuilt and checked against what the version recorded), and the
// plan: the ids the target gives the restored samples, impulses and blocks. The plan is recorded
// once in the target's versions stream (VersionRestoreStarted), so a retried job writes the same
// streams again, which the event store keeps once, instead of new ones.
import type { ImpulseDocument } from '../../projections/impulses/impulseDocument';
import { impulseDecider } from '../../domain/impulse/impulseDecider';
import { impulsesStream } from '../../domain/impulse/impulseEvents';
import { jobStream } from '../../domain/job/jobEvents';
import { ConflictError, NotFoundError } from '../../domain/shared/errors';
import { MAX_RESTORE_SAMPLES, versionDecider } from '../../domain/version/versionDecider';
import { versionsStream, type VersionCreated, type VersionRestoreStarted } from '../../domain/version/versionEvents';
import { ImpulseQueries } from '../../projections/impulses/impulseQueries';
import { SampleQueries } from '../../projections/samples/sampleQueries';
import type { StoredEvent } from '../../stores/eventstore/eventStore';
import type { ReadStore } from '../../stores/readstore/readStore';
import { aggregateStream } from '../aggregateStream';
import type { CommandContext } from '../commandContext';
import { handleCommand } from '../handleCommand';
import type { IdAllocator } from '../idAllocator';
import { rebuildVersion } from './versionCheck';
import type { VersionJobDeps } from './versionJob';

export type RestorePlan = VersionRestoreStarted['data'];

export interface RestoreSource {
  /** The VersionCreated event: its id is the cause every restored event names. */
  version: StoredEvent<'VersionCreated', VersionCreated['data']>;
  /** The source's read models at the version's position. */
  store: ReadStore;
  impulses: ImpulseDocument[];
}

/** The version as recorded, refused when it (or its project) no longer exists: a deleted project's versions are read by no one. */
export async function readVersion(deps: VersionJobDeps & { projects: { byId(id: number): Promise<unknown> } }, sourceProjectId: number, versionId: number): Promise<RestoreSource['version']> {
  const gone = new NotFoundError(`Version ${versionId} of project ${sourceProjectId} no longer exists`, 'VERSION_NOT_FOUND');
  if (!(await deps.projects.byId(sourceProjectId))) throw gone;
  const events = await deps.events.readStream(versionsStream(sourceProjectId));
  const created = events.find((e) => e.type === 'VersionCreated' && (e.data as VersionCreated['data']).versionId === versionId);
  if (!created || events.some((e) => e.type === 'VersionDeleted' && e.data.versionId === versionId)) throw gone;
  return created as RestoreSource['version'];
}

export async function readSource(deps: VersionJobDeps, version: RestoreSource['version'], signal: AbortSignal): Promise<RestoreSource> {
  const store = await rebuildVersion(deps, version.data, signal);
  const impulses = (await new ImpulseQueries(store).forProject(version.data.projectId)).sort((a, b) => a.id - b.id);
  return { version, store, impulses };
}

const blockIdsOf = (impulse: ImpulseDocument): number[] =>
  [...impulse.inputBlocks, ...impulse.dspBlocks, ...impulse.learnBlocks, ...impulse.postProcessingBlocks].map((b) => b.id);

/** Whether a job has ended (its stream holds its JobFinished). */
async function jobEnded(deps: Pick<VersionJobDeps, 'events'>, jobId: number): Promise<boolean> {
  return (await deps.events.readStream(jobStream(jobId))).some((e) => e.type === 'JobFinished');
}

function recordedPlan(events: readonly StoredEvent[], jobId: number): RestorePlan | undefined {
  const started = events.find((e) => e.type === 'VersionRestoreStarted' && e.data.jobId === jobId);
  return started?.data as RestorePlan | undefined;
}

/**
 * The plan this job recorded, or a new one recorded now. A target that holds samples is refused (a
 * restore fills an empty project, as the SDK documents), and so is one another restore is writing into.
 */
export async function planRestore(
  deps: VersionJobDeps & { ids: IdAllocator; liveSamples: Pick<SampleQueries, 'count'> },
  source: RestoreSource,
  target: { projectId: number; jobId: number },
  ctx: CommandContext,
): Promise<RestorePlan> {
  const stream = versionsStream(target.projectId);
  const before = await deps.events.readStream(stream);
  const recorded = recordedPlan(before, target.jobId);
  if (recorded) return recorded;

  if ((await deps.liveSamples.count(target.projectId, { category: 'all' })) > 0) throw new ConflictError(`Project ${target.projectId} holds samples: a version is restored into a project without data`, 'RESTORE_TARGET_HAS_DATA');
  const samples = (await new SampleQueries(source.store).ids(source.version.data.projectId, 'all')).sort((a, b) => a.id - b.id);
  if (samples.length > MAX_RESTORE_SAMPLES) throw new ConflictError(`The version has ${samples.length} samples; a restore takes at most ${MAX_RESTORE_SAMPLES}`, 'RESTORE_TOO_LARGE');
  const sampleIds: [number, number][] = [];
  for (const s of samples) sampleIds.push([s.id, await deps.ids.next('sample')]);
  const impulseIds: [number, number][] = [];
  for (const i of source.impulses) impulseIds.push([i.id, await deps.ids.next('impulse')]);
  // New block ids above the target's highest, in the source's order; checked again when the impulses are written.
  const { state } = await aggregateStream(deps.events, impulsesStream(target.projectId), impulseDecider);
  const blockIds = [...new Set(source.impulses.flatMap(blockIdsOf))].sort((a, b) => a - b).map((id, n): [number, number] => [id, state.highestBlockId + 1 + n]);

  const startedJobs = before.filter((e) => e.type === 'VersionRestoreStarted').map((e) => e.data.jobId as number);
  const endedJobIds: number[] = [];
  for (const jobId of startedJobs) if (await jobEnded(deps, jobId)) endedJobIds.push(jobId);
  const plan: RestorePlan = {
    projectId: target.projectId,
    jobId: target.jobId,
    sourceProjectId: source.version.data.projectId,
    versionId: source.version.data.versionId,
    position: source.version.data.position,
    sampleIds,
    impulseIds,
    blockIds,
    started: ctx.now.toISOString(),
  };
  await handleCommand(deps.events, stream, versionDecider, { type: 'BeginRestore', data: { ...plan, endedJobIds } }, ctx);
  // A retry raced with the first attempt: the plan recorded is the one that counts.
  return recordedPlan(await deps.events.readStream(stream), target.jobId)!;
}

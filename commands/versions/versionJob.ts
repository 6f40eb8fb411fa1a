// The version job: the log position it stands at and the content hashes of what the project holds
// (versionContents.ts), recorded as VersionCreated. Nothing is copied: the blobs are content-addressed
// and the hashes the version names keep them stored (commands/projects/projectBlobs.ts). A retried job
// records its version once (the version id is allocated with the request).
import { versionDecider } from '../../domain/version/versionDecider';
import { versionsStream } from '../../domain/version/versionEvents';
import type { EventStore } from '../../stores/eventstore/eventStore';
import { systemContext } from '../commandContext';
import { handleCommand } from '../handleCommand';
import type { JobRunContext, JobRunner } from '../jobs/jobRunners';
import { versionContents, type VersionContentsDeps } from './versionContents';

export const VERSION_JOB = 'version';

export interface VersionJobParameters {
  versionId: number;
  description: string;
  createdByUserId: number | null;
}

export interface VersionJobDeps extends VersionContentsDeps {
  events: EventStore;
}

export function versionJobRunner(deps: VersionJobDeps): JobRunner {
  return async (job: JobRunContext) => {
    const projectId = job.projectId;
    if (projectId === null) throw new Error('A version job belongs to a project');
    const params = job.parameters as unknown as VersionJobParameters;
    // The request was answered once the read models held it: they cover at least this position.
    const position = (await deps.events.headPosition()) ?? 0n;
    const contents = await versionContents(deps, projectId);
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

// Restoring a version (JobsApi.startRestoreJob): the path's project is the target (write access,
// checked before the body is read), the body's the source, which the caller must be able to read
// (restoreSource.ts: one 404 for every refusal). Everything a request can be refused for is checked
// here, before a job exists; the job checks again what may change in between (restoreJob.ts).
import { z } from 'zod';
import { RESTORE_JOB, type RestoreJobParameters } from '../../commands/versions/restoreJob';
import { ConflictError, ValidationError } from '../../domain/shared/errors';
import { MAX_RESTORE_SAMPLES } from '../../domain/version/versionDecider';
import type { ApiDeps } from '../apiDeps';
import { requestContext } from '../auth/principal';
import { operation, type Operation } from '../http/operation';
import { MAX_IMPULSES_FREE_TIER } from './impulseRoutes';
import { requestProjectJob } from './projectJobRequest';
import { restoreSource } from './restoreSource';

const id = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
/** The SDK's RestoreProjectRequest. */
const RestoreProjectRequest = z.object({ projectId: id, versionId: id, projectApiKey: z.string().min(1).max(1024).optional() }).strict();

/**
 * Runs `work` after the work queued before it under `key` has ended, so a check and the request it
 * guards are never split by another request's. Across API processes the job itself refuses the
 * second restore (BeginRestore in the version decider).
 */
function serialized(): <T>(key: number, work: () => Promise<T>) => Promise<T> {
  const tails = new Map<number, Promise<unknown>>();
  return (key, work) => {
    const run = (tails.get(key) ?? Promise.resolve()).then(work, work);
    const tail = run.catch(() => undefined);
    tails.set(key, tail);
    void tail.then(() => tails.get(key) === tail && tails.delete(key));
    return run;
  };
}

export function restoreOperations(deps: ApiDeps): Operation[] {
  const oneAtATime = serialized();
  return [
    operation({
      operationId: 'startRestoreJob',
      method: 'post',
      path: '/api/:projectId/jobs/restore',
      summary: "Start a job that restores a version of another project into this one, which must hold no samples: its data, impulses, DSP configs, features and trained models",
      auth: 'any',
      body: RestoreProjectRequest,
      async handler({ body, project, principal, requestId, settle }) {
        if (body.projectId === project.id) throw new ValidationError('A version is restored into another project, not into its own: create a project and restore into it', 'RESTORE_INTO_SOURCE');
        const { version, reader } = await restoreSource({ projects: deps.projects, apiKeys: deps.apiKeys, versions: deps.versions }, principal, body);
        if (version.totalSamplesCount > MAX_RESTORE_SAMPLES) throw new ValidationError(`Version ${version.versionId} has ${version.totalSamplesCount} samples; a restore takes at most ${MAX_RESTORE_SAMPLES}`, 'RESTORE_TOO_LARGE');
        return oneAtATime(project.id, async () => {
          if ((await deps.samples.count(project.id, { category: 'all' })) > 0) throw new ConflictError('This project holds samples: a version is restored into a project without data (create one, or delete its samples first)', 'RESTORE_TARGET_HAS_DATA');
          const running = (await deps.jobs.active({ projectId: project.id })).find((j) => j.categoryKey === RESTORE_JOB);
          if (running) throw new ConflictError(`Restore job ${running.id} is still running in this project: wait until it ends`, 'RESTORE_RUNNING');
          const parameters: RestoreJobParameters = { sourceProjectId: body.projectId, versionId: body.versionId, maxImpulses: MAX_IMPULSES_FREE_TIER, reader };
          // Settled before the next request's check: the jobs read model then shows this one.
          const jobId = await requestProjectJob(
            { events: deps.events, ids: deps.ids, projects: deps.projects },
            { principal, settle },
            { projectId: project.id, category: 'Restore version', categoryKey: RESTORE_JOB, key: `${body.projectId}/${body.versionId}`, parameters: { ...parameters }, notificationList: null },
            requestContext(principal, requestId),
          );
          return { id: jobId };
        });
      },
    }),
  ];
}

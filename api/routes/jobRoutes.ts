import { Readable } from 'node:stream';
import { z } from 'zod';
import { runJobCommand } from '../../commands/jobs/jobCommands';
import { JOB_NOTIFICATION_UIDS_MAX } from '../../domain/job/jobDecider';
import { JOB_LOG_LEVELS } from '../../domain/job/jobEvents';
import { NotFoundError } from '../../domain/shared/errors';
import type { JobDocument } from '../../projections/jobs/jobDocument';
import type { UserDocument } from '../../projections/users/userDocument';
import type { ApiDeps } from '../apiDeps';
import { requestContext } from '../auth/principal';
import { intParam, operation, queryBoolean, queryInteger, type Operation } from '../http/operation';
import { photoUrl } from '../views/userView';

/** The SDK's `LogStdoutResponse`: "only the last 1000 lines are returned" unless asked for fewer. */
const STDOUT_DEFAULT_LINES = 1000;
const STDOUT_MAX_LINES = 10_000;
const LIST_MAX = 1000;
const DOWNLOAD_PAGE = 1000;

const queryDate = z.string().refine((v) => !Number.isNaN(Date.parse(v)), 'expected an ISO 8601 date-time').transform((v) => new Date(v));
const limit = (max: number) => queryInteger.refine((n) => n >= 1 && n <= max, `expected an integer from 1 to ${max}`);

const ActiveQuery = z.object({ rootOnly: queryBoolean.optional() });
const HistoryQuery = z.object({
  startDate: queryDate.optional(),
  endDate: queryDate.optional(),
  limit: limit(LIST_MAX).optional(),
  offset: queryInteger.optional(),
  rootOnly: queryBoolean.optional(),
});
const AllQuery = HistoryQuery.extend({
  excludePipelineTransformJobs: queryBoolean.optional(),
  key: z.string().max(256).optional(),
  category: z.string().max(256).optional(),
  finished: z.enum(['successful', 'failed', 'all']).optional(),
});
const StdoutQuery = z.object({ limit: limit(STDOUT_MAX_LINES).optional(), logLevel: z.enum(JOB_LOG_LEVELS).optional() });
const CancelQuery = z.object({ forceCancel: z.enum(['true', 'false']).optional() });
const UpdateJobRequest = z.object({ jobNotificationUids: z.array(z.number().int().min(1).max(Number.MAX_SAFE_INTEGER)).max(JOB_NOTIFICATION_UIDS_MAX).optional() });

/** The Job record (sdk-reference 2.3); `computeTime` in seconds, as the SDK documents it. */
export function jobView(j: JobDocument, users: ReadonlyMap<number, UserDocument>, publicUrl: string): Record<string, unknown> {
  const creator = j.createdByUserId === null ? undefined : users.get(j.createdByUserId);
  return {
    id: j.id,
    category: j.category,
    categoryKey: j.categoryKey,
    key: j.key,
    created: j.created,
    ...(j.started !== null ? { started: j.started } : {}),
    // Set only at the end: the SDK's polling reads a boolean `finishedSuccessful` as "done".
    ...(j.state === 'finished' ? { finished: j.finished, finishedSuccessful: j.finishedSuccessful === true } : {}),
    jobNotificationUids: j.jobNotificationUids,
    ...(j.reason !== null ? { additionalInfo: j.reason } : {}),
    ...(j.state === 'finished' ? { computeTime: Math.round(j.computeTimeMs / 1000) } : {}),
    ...(creator ? { createdByUser: { id: creator.id, name: creator.name ?? creator.username, username: creator.username, photo: creator.photo ? photoUrl(publicUrl, creator.photo) : '' } } : {}),
    categoryCount: j.categoryCount,
    metadata: {},
  };
}

/** JobsApi for projects (sdk-reference 2.3). A job of another project is not found. */
export function jobOperations(deps: ApiDeps): Operation[] {
  const jobOf = async (params: Record<string, string>, projectId: number): Promise<JobDocument> => {
    const jobId = intParam(params, 'jobId');
    const job = await deps.jobs.byId(jobId);
    if (!job || job.projectId !== projectId) throw new NotFoundError(`Job ${jobId} not found in project ${projectId}`, 'JOB_NOT_FOUND');
    return job;
  };
  const views = async (jobs: readonly JobDocument[]) => {
    const ids = [...new Set(jobs.map((j) => j.createdByUserId).filter((id): id is number => id !== null))];
    const users = new Map((await deps.users.byIds(ids)).map((u) => [u.id, u]));
    return jobs.map((j) => jobView(j, users, deps.settings.publicUrl));
  };

  return [
    operation({
      operationId: 'listActiveJobs',
      method: 'get',
      path: '/api/:projectId/jobs',
      summary: 'Jobs of the project not finished, newest first',
      auth: 'any',
      // Every job here is a root job (none is started by another yet), so rootOnly changes nothing.
      query: ActiveQuery,
      async handler({ project }) {
        const jobs = await deps.jobs.active({ projectId: project.id });
        return { jobs: await views(jobs), totalJobCount: jobs.length };
      },
    }),
    operation({
      operationId: 'listFinishedJobs',
      method: 'get',
      path: '/api/:projectId/jobs/history',
      summary: 'Finished jobs of the project, newest first, created between the dates',
      auth: 'any',
      query: HistoryQuery,
      async handler({ project, query }) {
        const { jobs, total } = await deps.jobs.list({ projectId: project.id }, { ...query, limit: query.limit ?? 20, onlyFinished: true });
        return { jobs: await views(jobs), totalJobCount: total };
      },
    }),
    operation({
      operationId: 'listAllJobs',
      method: 'get',
      path: '/api/:projectId/jobs/all',
      summary: 'Every job of the project with the filters, newest first; totalJobCount counts before paging',
      auth: 'any',
      query: AllQuery,
      async handler({ project, query }) {
        const { jobs, total } = await deps.jobs.list({ projectId: project.id }, { ...query, limit: query.limit ?? 20 });
        return { jobs: await views(jobs), totalJobCount: total };
      },
    }),
    operation({
      operationId: 'getJobStatus',
      method: 'get',
      path: '/api/:projectId/jobs/:jobId/status',
      summary: 'One job of the project',
      auth: 'any',
      async handler({ params, project }) {
        const [job] = await views([await jobOf(params, project.id)]);
        return { job };
      },
    }),
    operation({
      operationId: 'cancelJob',
      method: 'post',
      path: '/api/:projectId/jobs/:jobId/cancel',
      summary: 'Cancel a job: it stops within a second; forceCancel=true ends it at once',
      auth: 'any',
      query: CancelQuery,
      async handler({ principal, params, query, project, requestId, settle }) {
        const job = await jobOf(params, project.id);
        const ctx = requestContext(principal, requestId);
        const userId = principal.kind === 'user' ? principal.user.id : null;
        const { appended } = await runJobCommand(deps.events, { type: 'RequestJobCancel', data: { jobId: job.id, force: query.forceCancel === 'true', userId, now: ctx.now } }, ctx);
        await settle(appended?.position);
        return {};
      },
    }),
    operation({
      operationId: 'getJobsLogs',
      method: 'get',
      path: '/api/:projectId/jobs/:jobId/stdout',
      summary: "The last lines of a job's output (1000 unless limit says), at logLevel or more severe",
      auth: 'any',
      query: StdoutQuery,
      async handler({ params, query, project }) {
        const job = await jobOf(params, project.id);
        const { lines, totalCount } = await deps.jobs.output(job.id, { limit: query.limit ?? STDOUT_DEFAULT_LINES, ...(query.logLevel ? { logLevel: query.logLevel } : {}) });
        return { stdout: lines.map((l) => ({ created: l.created, data: l.data, logLevel: l.logLevel })), totalCount };
      },
    }),
    operation({
      operationId: 'downloadJobsLogs',
      method: 'get',
      path: '/api/:projectId/jobs/:jobId/stdout/download',
      summary: "A job's output as text: all of it, or its last `limit` lines",
      auth: 'any',
      query: StdoutQuery,
      async handler({ ctx, params, query, project }) {
        const job = await jobOf(params, project.id);
        if (query.limit !== undefined) {
          const { lines } = await deps.jobs.output(job.id, { limit: query.limit, ...(query.logLevel ? { logLevel: query.logLevel } : {}) });
          ctx.state.textBody = lines.map((l) => l.data).join('');
        } else {
          // Page through the lines so a long log is never held whole.
          const jobs = deps.jobs;
          ctx.state.textBody = Readable.from(
            (async function* () {
              let after: string | undefined;
              for (;;) {
                const page = await jobs.outputPage(job.id, after, DOWNLOAD_PAGE, query.logLevel);
                if (page.length === 0) return;
                yield page.map((l) => l.data).join('');
                after = page.at(-1)!._id;
              }
            })(),
          );
        }
        ctx.set('Content-Disposition', `attachment; filename="job-${job.id}.log"`);
        return {};
      },
    }),
    operation({
      operationId: 'updateJob',
      method: 'post',
      path: '/api/:projectId/jobs/:jobId/update',
      summary: 'Change who is e-mailed when the job ends',
      auth: 'any',
      body: UpdateJobRequest,
      async handler({ principal, params, body, project, requestId, settle }) {
        const job = await jobOf(params, project.id);
        if (body.jobNotificationUids === undefined) return {};
        const ctx = requestContext(principal, requestId);
        const { appended } = await runJobCommand(deps.events, { type: 'UpdateJobNotifications', data: { jobId: job.id, jobNotificationUids: body.jobNotificationUids } }, ctx);
        await settle(appended?.position);
        return {};
      },
    }),
  ];
}

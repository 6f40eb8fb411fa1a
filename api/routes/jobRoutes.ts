import { Readable } from 'node:stream';
import { z } from 'zod';
import { runJobCommand } from '../../commands/jobs/jobCommands';
import { JOB_NOTIFICATION_UIDS_MAX } from '../../domain/job/jobDecider';
import { JOB_LOG_LEVELS } from '../../domain/job/jobEvents';
import { NotFoundError } from '../../domain/shared/errors';
import type { JobDocument } from '../../projections/jobs/jobDocument';
import type { JobScope } from '../../projections/jobs/jobQueries';
import type { ProjectDocument } from '../../projections/projects/projectDocument';
import type { UserDocument } from '../../projections/users/userDocument';
import type { ApiDeps } from '../apiDeps';
import { requestContext, type Principal } from '../auth/principal';
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

/** Whose jobs an operation reaches, and the words for them in errors ("project 4"). */
export interface ResolvedJobScope {
  scope: JobScope;
  label: string;
}

/**
 * The job operations of one kind of owner (projects, organizations): their path prefix, operation
 * ids, and how a request's scope is found and checked: `read` for listings and output, `write`
 * for cancelling and updating.
 */
export interface JobScopeSpec {
  prefix: string;
  ids: { active: string; finished: string; all: string; status: string; cancel: string; stdout: string; download: string; update?: string };
  noun: string;
  acceptsOrganizationKey?: boolean;
  authorize?(principal: Principal, params: Record<string, string>, access: 'read' | 'write'): Promise<void>;
  resolve(request: { principal: Principal; params: Record<string, string>; project: ProjectDocument }, access: 'read' | 'write'): Promise<ResolvedJobScope>;
}

/** JobsApi for projects (sdk-reference 2.3). A job of another project is not found. */
export function jobOperations(deps: ApiDeps): Operation[] {
  return scopedJobOperations(deps, {
    prefix: '/api/:projectId',
    ids: { active: 'listActiveJobs', finished: 'listFinishedJobs', all: 'listAllJobs', status: 'getJobStatus', cancel: 'cancelJob', stdout: 'getJobsLogs', download: 'downloadJobsLogs', update: 'updateJob' },
    noun: 'project',
    // The project was found and checked by the mount (reading for GET, changing otherwise).
    resolve: async ({ project }) => ({ scope: { projectId: project.id }, label: `project ${project.id}` }),
  });
}

const inScope = (job: JobDocument, scope: JobScope): boolean => ('projectId' in scope ? job.projectId === scope.projectId : job.organizationId === scope.organizationId);

export function scopedJobOperations(deps: ApiDeps, spec: JobScopeSpec): Operation[] {
  const jobOf = async (params: Record<string, string>, { scope, label }: ResolvedJobScope): Promise<JobDocument> => {
    const jobId = intParam(params, 'jobId');
    const job = await deps.jobs.byId(jobId);
    if (!job || !inScope(job, scope)) throw new NotFoundError(`Job ${jobId} not found in ${label}`, 'JOB_NOT_FOUND');
    return job;
  };
  const views = async (jobs: readonly JobDocument[]) => {
    const ids = [...new Set(jobs.map((j) => j.createdByUserId).filter((id): id is number => id !== null))];
    const users = new Map((await deps.users.byIds(ids)).map((u) => [u.id, u]));
    return jobs.map((j) => jobView(j, users, deps.settings.publicUrl));
  };
  const guard = (access: 'read' | 'write') => ({
    ...(spec.acceptsOrganizationKey ? { acceptsOrganizationKey: true } : {}),
    ...(spec.authorize ? { authorize: (principal: Principal, params: Record<string, string>) => spec.authorize!(principal, params, access) } : {}),
  });
  const p = spec.prefix;
  const n = spec.noun;

  const operations: Operation[] = [
    operation({
      operationId: spec.ids.active,
      method: 'get',
      path: `${p}/jobs`,
      summary: `Jobs of the ${n} not finished, newest first`,
      auth: 'any',
      ...guard('read'),
      // rootOnly leaves out jobs another job requested (a tuner run's trials).
      query: ActiveQuery,
      async handler(request) {
        const jobs = await deps.jobs.active((await spec.resolve(request, 'read')).scope, { rootOnly: request.query.rootOnly === true });
        return { jobs: await views(jobs), totalJobCount: jobs.length };
      },
    }),
    operation({
      operationId: spec.ids.finished,
      method: 'get',
      path: `${p}/jobs/history`,
      summary: `Finished jobs of the ${n}, newest first, created between the dates`,
      auth: 'any',
      ...guard('read'),
      query: HistoryQuery,
      async handler(request) {
        const { query } = request;
        const { jobs, total } = await deps.jobs.list((await spec.resolve(request, 'read')).scope, { ...query, limit: query.limit ?? 20, onlyFinished: true });
        return { jobs: await views(jobs), totalJobCount: total };
      },
    }),
    operation({
      operationId: spec.ids.all,
      method: 'get',
      path: `${p}/jobs/all`,
      summary: `Every job of the ${n} with the filters, newest first; totalJobCount counts before paging`,
      auth: 'any',
      ...guard('read'),
      query: AllQuery,
      async handler(request) {
        const { query } = request;
        const { jobs, total } = await deps.jobs.list((await spec.resolve(request, 'read')).scope, { ...query, limit: query.limit ?? 20 });
        return { jobs: await views(jobs), totalJobCount: total };
      },
    }),
    operation({
      operationId: spec.ids.status,
      method: 'get',
      path: `${p}/jobs/:jobId/status`,
      summary: `One job of the ${n}`,
      auth: 'any',
      ...guard('read'),
      async handler(request) {
        const [job] = await views([await jobOf(request.params, await spec.resolve(request, 'read'))]);
        return { job };
      },
    }),
    operation({
      operationId: spec.ids.cancel,
      method: 'post',
      path: `${p}/jobs/:jobId/cancel`,
      summary: 'Cancel a job: it stops within a second; forceCancel=true ends it at once',
      auth: 'any',
      ...guard('write'),
      query: CancelQuery,
      async handler(request) {
        const { principal, params, query, requestId, settle } = request;
        const job = await jobOf(params, await spec.resolve(request, 'write'));
        const ctx = requestContext(principal, requestId);
        const userId = principal.kind === 'user' ? principal.user.id : null;
        const { appended } = await runJobCommand(deps.events, { type: 'RequestJobCancel', data: { jobId: job.id, force: query.forceCancel === 'true', userId, now: ctx.now } }, ctx);
        await settle(appended?.position);
        return {};
      },
    }),
    operation({
      operationId: spec.ids.stdout,
      method: 'get',
      path: `${p}/jobs/:jobId/stdout`,
      summary: "The last lines of a job's output (1000 unless limit says), at logLevel or more severe",
      auth: 'any',
      ...guard('read'),
      query: StdoutQuery,
      async handler(request) {
        const { params, query } = request;
        const job = await jobOf(params, await spec.resolve(request, 'read'));
        const { lines, totalCount } = await deps.jobs.output(job.id, { limit: query.limit ?? STDOUT_DEFAULT_LINES, ...(query.logLevel ? { logLevel: query.logLevel } : {}) });
        return { stdout: lines.map((l) => ({ created: l.created, data: l.data, logLevel: l.logLevel })), totalCount };
      },
    }),
    operation({
      operationId: spec.ids.download,
      method: 'get',
      path: `${p}/jobs/:jobId/stdout/download`,
      summary: "A job's output as text: all of it, or its last `limit` lines",
      auth: 'any',
      ...guard('read'),
      query: StdoutQuery,
      async handler(request) {
        const { ctx, params, query } = request;
        const job = await jobOf(params, await spec.resolve(request, 'read'));
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
  ];
  if (spec.ids.update) {
    operations.push(
      operation({
        operationId: spec.ids.update,
        method: 'post',
        path: `${p}/jobs/:jobId/update`,
        summary: 'Change who is e-mailed when the job ends',
        auth: 'any',
        ...guard('write'),
        body: UpdateJobRequest,
        async handler(request) {
          const { principal, params, body, requestId, settle } = request;
          const job = await jobOf(params, await spec.resolve(request, 'write'));
          if (body.jobNotificationUids === undefined) return {};
          const ctx = requestContext(principal, requestId);
          const command = { type: 'UpdateJobNotifications' as const, data: { jobId: job.id, jobNotificationUids: body.jobNotificationUids, allowedUids: request.project.collaboratorIds } };
          const { appended } = await runJobCommand(deps.events, command, ctx);
          await settle(appended?.position);
          return {};
        },
      }),
    );
  }
  return operations;
}

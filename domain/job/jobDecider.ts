import type { Decider } from '../shared/decider';
import { ConflictError, NotFoundError, ValidationError, assertNever } from '../shared/errors';
import { FREE_JSON_RULE, checkJsonValue } from '../shared/jsonRules';
import { checkDate, checkId, checkIsoTimestamp, checkNumber } from '../shared/numberRules';
import { checkText, type TextRule } from '../shared/textRules';
import { JOB_LOG_LEVELS, type JobEvent, type JobNotification, type JobOutputLine, type JobRequested } from './jobEvents';

// Bounds of what a job records, so no accepted value can break a read model or an append.
export const JOB_CATEGORY_RULE: TextRule = { max: 256 };
export const JOB_CATEGORY_KEY_RULE: TextRule = { max: 128 };
export const JOB_KEY_RULE: TextRule = { max: 256, allowEmpty: true };
/** One output line (a runner's longer text is cut by the worker before it gets here). */
export const JOB_OUTPUT_LINE_RULE: TextRule = { max: 10_000, multiline: true, allowEmpty: true };
/** Why a job did not succeed, as a person reads it. */
export const JOB_REASON_RULE: TextRule = { max: 1024 };
/** A batch of output stays well under what either event store takes in one append. */
export const JOB_OUTPUT_BATCH_MAX_LINES = 500;
export const JOB_OUTPUT_BATCH_MAX_CHARS = 256_000;
export const JOB_NOTIFICATION_UIDS_MAX = 1000;
/** A job's compute time: up to about 31 years, in whole milliseconds. */
export const JOB_COMPUTE_TIME_MAX_MS = 1e12;
export const WORKER_ID_RULE: TextRule = { max: 128 };

/** A job as requested, before it has an id: what `checkJobRequest` checks. */
export type JobRequest = Omit<JobRequested['data'], 'jobId' | 'created'> & { now: Date };

export type JobCommand =
  | { type: 'RequestJob'; data: JobRequest & { jobId: number } }
  /** A worker claims a requested job. */
  | { type: 'StartJob'; data: { jobId: number; workerId: string; now: Date } }
  /**
   * A worker found a started job whose worker showed no sign of life for `leaseMs`: it retries the
   * job itself while attempts are left (claiming it), else ends it as failed with the reason.
   */
  | { type: 'RecoverJob'; data: { jobId: number; workerId: string; now: Date; leaseMs: number; maxAttempts: number } }
  | { type: 'RecordJobHeartbeat'; data: { jobId: number; workerId: string; attempt: number; now: Date } }
  | { type: 'WriteJobOutput'; data: { jobId: number; workerId: string; attempt: number; lines: JobOutputLine[] } }
  | { type: 'RequestJobCancel'; data: { jobId: number; force: boolean; userId: number | null; now: Date } }
  | {
      type: 'FinishJob';
      data: { jobId: number; workerId: string; attempt: number; successful: boolean; reason: string | null; computeTimeMs: number; now: Date };
    }
  /** `allowedUids`: who may be notified (the project's collaborators, as the caller read them). */
  | { type: 'UpdateJobNotifications'; data: { jobId: number; jobNotificationUids: number[]; allowedUids: readonly number[] } }
  | { type: 'PlanJobNotifications'; data: { jobId: number; notifications: { userId: number; emailId: number }[] } };

export interface JobFacts {
  jobId: number;
  projectId: number | null;
  categoryKey: string;
  /** The claim: who runs it, and which attempt. Null before it was started. */
  workerId: string | null;
  attempt: number;
  startedMs: number | null;
  /** The latest time the running worker was known to be alive (start, output, heartbeat). */
  lastSignOfLifeMs: number;
  cancelRequested: boolean;
  jobNotificationUids: number[];
  /** The e-mails drawn for the job's end (JobNotificationsPlanned); null until they are planned. */
  plannedNotifications: JobNotification[] | null;
}

export type JobState = { status: 'none' } | ({ status: 'requested' | 'started' | 'finished' } & JobFacts);

const notFound = (jobId: number) => new NotFoundError(`Job ${jobId} not found`, 'JOB_NOT_FOUND');
const alreadyFinished = (jobId: number) => new ConflictError(`Job ${jobId} has already finished`, 'JOB_FINISHED');

function validUids(uids: readonly number[]): number[] {
  if (!Array.isArray(uids)) throw new ValidationError('"jobNotificationUids" must be an array of user ids');
  if (uids.length > JOB_NOTIFICATION_UIDS_MAX) throw new ValidationError(`"jobNotificationUids" may name at most ${JOB_NOTIFICATION_UIDS_MAX} users`);
  for (const uid of uids) checkId(uid, '"jobNotificationUids"');
  return [...new Set(uids)];
}

function validLines(lines: readonly JobOutputLine[]): JobOutputLine[] {
  if (lines.length === 0) throw new ValidationError('A job output batch needs at least one line');
  if (lines.length > JOB_OUTPUT_BATCH_MAX_LINES) throw new ValidationError(`A job output batch has at most ${JOB_OUTPUT_BATCH_MAX_LINES} lines`);
  let chars = 0;
  for (const line of lines) {
    checkIsoTimestamp(line.created, 'Output line time ("created")');
    checkText(line.data, 'Output line ("data")', JOB_OUTPUT_LINE_RULE);
    if (!(JOB_LOG_LEVELS as readonly string[]).includes(line.logLevel)) throw new ValidationError(`Output line level ("logLevel") must be one of ${JOB_LOG_LEVELS.join(', ')}`);
    chars += line.data.length;
  }
  if (chars > JOB_OUTPUT_BATCH_MAX_CHARS) throw new ValidationError(`A job output batch holds at most ${JOB_OUTPUT_BATCH_MAX_CHARS} characters`);
  return lines.map((l) => ({ created: l.created, data: l.data, logLevel: l.logLevel }));
}

/** The worker sending this holds the current claim; a worker declared dead (and replaced) does not. */
function requireClaim(state: JobState, jobId: number, workerId: string, attempt: number): asserts state is { status: 'started' } & JobFacts {
  if (state.status === 'none') throw notFound(jobId);
  if (state.status === 'finished') throw alreadyFinished(jobId);
  if (state.status !== 'started' || state.workerId !== workerId || state.attempt !== attempt) {
    throw new ConflictError(`Job ${jobId} is not run by worker ${workerId} (attempt ${attempt})`, 'JOB_NOT_CLAIMED');
  }
}

/**
 * The request as it may be logged (without its id), or a ValidationError naming the first value out
 * of bounds. The decider checks every RequestJob with it; a caller that must refuse bad input before
 * drawing the job's id (requestJob) calls it first, and so gets the same answer.
 */
export function checkJobRequest(c: JobRequest): Omit<JobRequested['data'], 'jobId'> {
  if (c.projectId !== null) checkId(c.projectId, 'Project id');
  if (c.organizationId !== null) checkId(c.organizationId, 'Organization id');
  if (c.createdByUserId !== null) checkId(c.createdByUserId, 'User id');
  const parentJobId = c.parentJobId ?? null;
  if (parentJobId !== null) checkId(parentJobId, 'Parent job id');
  if (c.parameters === null || typeof c.parameters !== 'object' || Array.isArray(c.parameters)) throw new ValidationError('Job parameters must be an object');
  return {
    projectId: c.projectId,
    organizationId: c.organizationId,
    category: checkText(c.category, 'Job category ("category")', JOB_CATEGORY_RULE),
    categoryKey: checkText(c.categoryKey, 'Job category key ("categoryKey")', JOB_CATEGORY_KEY_RULE),
    key: checkText(c.key, 'Job key ("key")', JOB_KEY_RULE),
    parameters: checkJsonValue(c.parameters, 'Job parameters ("parameters")', FREE_JSON_RULE),
    jobNotificationUids: validUids(c.jobNotificationUids),
    createdByUserId: c.createdByUserId,
    // Only when set, so a job without a parent is recorded as before.
    ...(parentJobId === null ? {} : { parentJobId }),
    created: checkDate(c.now, 'Time'),
  };
}

const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;

export const jobDecider: Decider<JobCommand, JobEvent, JobState> = {
  initialState: () => ({ status: 'none' }),

  decide(command, state) {
    switch (command.type) {
      case 'RequestJob': {
        const { jobId, ...request } = command.data;
        if (state.status !== 'none') throw new ConflictError(`Job ${jobId} exists already`, 'JOB_EXISTS');
        checkId(jobId, 'Job id');
        return [{ type: 'JobRequested', data: { jobId, ...checkJobRequest(request) } }];
      }
      case 'StartJob': {
        const c = command.data;
        if (state.status === 'none') throw notFound(c.jobId);
        if (state.status === 'finished') throw alreadyFinished(c.jobId);
        if (state.status === 'started') throw new ConflictError(`Job ${c.jobId} was claimed by worker ${state.workerId ?? '?'}`, 'JOB_CLAIMED');
        checkText(c.workerId, 'Worker id', WORKER_ID_RULE);
        return [{ type: 'JobStarted', data: { jobId: c.jobId, workerId: c.workerId, attempt: state.attempt + 1, started: checkDate(c.now, 'Time') } }];
      }
      case 'RecoverJob': {
        const c = command.data;
        if (state.status === 'none') throw notFound(c.jobId);
        if (state.status === 'finished') throw alreadyFinished(c.jobId);
        if (state.status !== 'started') throw new ConflictError(`Job ${c.jobId} has not been started`, 'JOB_NOT_STARTED');
        checkText(c.workerId, 'Worker id', WORKER_ID_RULE);
        const now = checkDate(c.now, 'Time');
        const silentMs = c.now.getTime() - state.lastSignOfLifeMs;
        if (silentMs <= c.leaseMs) throw new ConflictError(`Job ${c.jobId}: its worker was alive ${seconds(silentMs)} ago`, 'JOB_ALIVE');
        const lost = `Worker ${state.workerId ?? '?'} stopped responding: no sign of life for ${seconds(silentMs)} (attempt ${state.attempt} of ${c.maxAttempts})`;
        // What the lost worker is known to have worked: from its start to its last sign of life.
        const computeTimeMs = Math.min(JOB_COMPUTE_TIME_MAX_MS, Math.max(0, state.lastSignOfLifeMs - (state.startedMs ?? state.lastSignOfLifeMs)));
        if (state.cancelRequested) {
          return [{ type: 'JobFinished', data: { jobId: c.jobId, finishedSuccessful: false, cancelled: true, reason: `Cancelled; ${lost}`, computeTimeMs, finished: now } }];
        }
        if (state.attempt < c.maxAttempts) {
          return [
            { type: 'JobOutputWritten', data: { jobId: c.jobId, lines: [{ created: now, data: `${lost}; retrying\n`, logLevel: 'warn' }] } },
            { type: 'JobStarted', data: { jobId: c.jobId, workerId: c.workerId, attempt: state.attempt + 1, started: now } },
          ];
        }
        return [
          { type: 'JobOutputWritten', data: { jobId: c.jobId, lines: [{ created: now, data: `${lost}; the job failed\n`, logLevel: 'error' }] } },
          { type: 'JobFinished', data: { jobId: c.jobId, finishedSuccessful: false, cancelled: false, reason: lost, computeTimeMs, finished: now } },
        ];
      }
      case 'RecordJobHeartbeat': {
        const c = command.data;
        requireClaim(state, c.jobId, c.workerId, c.attempt);
        return [{ type: 'JobHeartbeat', data: { jobId: c.jobId, workerId: c.workerId, attempt: c.attempt, at: checkDate(c.now, 'Time') } }];
      }
      case 'WriteJobOutput': {
        const c = command.data;
        requireClaim(state, c.jobId, c.workerId, c.attempt);
        return [{ type: 'JobOutputWritten', data: { jobId: c.jobId, lines: validLines(c.lines) } }];
      }
      case 'RequestJobCancel': {
        const c = command.data;
        if (state.status === 'none') throw notFound(c.jobId);
        if (state.status === 'finished') throw alreadyFinished(c.jobId);
        if (c.userId !== null) checkId(c.userId, 'User id');
        const now = checkDate(c.now, 'Time');
        const requested: JobEvent = { type: 'JobCancelRequested', data: { jobId: c.jobId, force: c.force, requestedByUserId: c.userId, requested: now } };
        // No worker runs a job not yet started, so nobody else would end it: it ends now.
        if (state.status === 'requested') {
          return [requested, { type: 'JobFinished', data: { jobId: c.jobId, finishedSuccessful: false, cancelled: true, reason: 'Cancelled before it started', computeTimeMs: 0, finished: now } }];
        }
        if (c.force) {
          const computeTimeMs = Math.min(JOB_COMPUTE_TIME_MAX_MS, Math.max(0, c.now.getTime() - (state.startedMs ?? c.now.getTime())));
          return [requested, { type: 'JobFinished', data: { jobId: c.jobId, finishedSuccessful: false, cancelled: true, reason: 'Cancelled (forced)', computeTimeMs, finished: now } }];
        }
        // The worker sees the request and stops the job; asking again changes nothing.
        return state.cancelRequested ? [] : [requested];
      }
      case 'FinishJob': {
        const c = command.data;
        requireClaim(state, c.jobId, c.workerId, c.attempt);
        const computeTimeMs = checkNumber(c.computeTimeMs, 'Compute time', { min: 0, max: JOB_COMPUTE_TIME_MAX_MS, integer: true });
        // A job asked to stop ends not successful, whatever its runner managed in the meantime.
        const cancelled = state.cancelRequested;
        const successful = c.successful && !cancelled;
        const reason = successful ? null : checkText(c.reason ?? (cancelled ? 'Cancelled' : 'Failed'), 'Reason', JOB_REASON_RULE);
        return [{ type: 'JobFinished', data: { jobId: c.jobId, finishedSuccessful: successful, cancelled, reason, computeTimeMs, finished: checkDate(c.now, 'Time') } }];
      }
      case 'UpdateJobNotifications': {
        const c = command.data;
        if (state.status === 'none') throw notFound(c.jobId);
        const uids = validUids(c.jobNotificationUids);
        // A job's end is e-mailed: naming anyone else would mail strangers and show their address.
        const stranger = uids.find((uid) => !c.allowedUids.includes(uid));
        if (stranger !== undefined) throw new ValidationError(`"jobNotificationUids": user ${stranger} is not a collaborator on this project`, 'NOT_A_COLLABORATOR');
        const same = uids.length === state.jobNotificationUids.length && uids.every((u) => state.jobNotificationUids.includes(u));
        return same ? [] : [{ type: 'JobNotificationsUpdated', data: { jobId: c.jobId, jobNotificationUids: uids } }];
      }
      case 'PlanJobNotifications': {
        const c = command.data;
        if (state.status === 'none') throw notFound(c.jobId);
        if (state.status !== 'finished') throw new ConflictError(`Job ${c.jobId} has not finished`, 'JOB_NOT_FINISHED');
        // Planned once: a saga that sees the end again keeps the first e-mail ids.
        if (state.plannedNotifications !== null) return [];
        for (const n of c.notifications) {
          checkId(n.userId, 'User id');
          checkId(n.emailId, 'E-mail id');
        }
        return [{ type: 'JobNotificationsPlanned', data: { jobId: c.jobId, notifications: c.notifications.map((n) => ({ userId: n.userId, emailId: n.emailId })) } }];
      }
      default:
        return assertNever(command);
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'JobRequested': {
        const d = event.data;
        return {
          status: 'requested',
          jobId: d.jobId,
          projectId: d.projectId,
          categoryKey: d.categoryKey,
          workerId: null,
          attempt: 0,
          startedMs: null,
          lastSignOfLifeMs: Date.parse(d.created),
          cancelRequested: false,
          jobNotificationUids: d.jobNotificationUids,
          plannedNotifications: null,
        };
      }
      case 'JobStarted': {
        if (state.status === 'none') return state;
        const started = Date.parse(event.data.started);
        const status = state.status === 'finished' ? 'finished' : 'started';
        return { ...state, status, workerId: event.data.workerId, attempt: event.data.attempt, startedMs: started, lastSignOfLifeMs: Math.max(state.lastSignOfLifeMs, started) };
      }
      case 'JobOutputWritten': {
        if (state.status === 'none') return state;
        const latest = Math.max(state.lastSignOfLifeMs, ...event.data.lines.map((l) => Date.parse(l.created)));
        return { ...state, lastSignOfLifeMs: latest };
      }
      case 'JobHeartbeat':
        return state.status === 'none' ? state : { ...state, lastSignOfLifeMs: Math.max(state.lastSignOfLifeMs, Date.parse(event.data.at)) };
      case 'JobCancelRequested':
        return state.status === 'none' ? state : { ...state, cancelRequested: true };
      case 'JobFinished':
        return state.status === 'none' ? state : { ...state, status: 'finished' };
      case 'JobNotificationsUpdated':
        return state.status === 'none' ? state : { ...state, jobNotificationUids: event.data.jobNotificationUids };
      case 'JobNotificationsPlanned':
        return state.status === 'none' ? state : { ...state, plannedNotifications: event.data.notifications };
      default:
        return assertNever(event);
    }
  },
};

import type { DomainEvent } from '../shared/decider';

// A background job (feature generation first; training and others later), one stream per job.
// The stream is the job's whole history: request, the claim by a worker, output lines (batched),
// cancellation, the end. Any process can follow a job by reading this stream and subscribing to the
// log, which is how the websocket streams the output of a job run by another process.

export const jobStream = (jobId: number): string => `job-${jobId}`;

export const JOB_LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
export type JobLogLevel = (typeof JOB_LOG_LEVELS)[number];

/** One line (or a few, with their newlines) of a job's output, as the SDK's LogStdoutResponse shows it. */
export interface JobOutputLine {
  /** ISO time the worker wrote it. */
  created: string;
  /** The text, newlines included, passed verbatim to websocket clients. */
  data: string;
  logLevel: JobLogLevel;
}

export type JobRequested = DomainEvent<
  'JobRequested',
  {
    jobId: number;
    /** The project it works on; null for an organization's own jobs. */
    projectId: number | null;
    organizationId: number | null;
    /** What it does, as the Job record shows it (e.g. "Generate features"). */
    category: string;
    /** Stable key of the category (e.g. "generate-features"); the worker picks its runner by it. */
    categoryKey: string;
    /** What the job is about within the category (e.g. the DSP block id), for filtering. */
    key: string;
    /** The runner's input, validated when the job was requested. */
    parameters: Record<string, unknown>;
    /** Copied from the project's list for this kind of job when requested. */
    jobNotificationUids: number[];
    createdByUserId: number | null;
    /** The job that requested this one as part of its work (a tuner run's trials); absent or null: none. */
    parentJobId?: number | null;
    created: string;
  }
>;

/** A worker claimed the job by appending at the revision it read: exactly one worker runs it. */
export type JobStarted = DomainEvent<'JobStarted', { jobId: number; workerId: string; attempt: number; started: string }>;

/** Output lines, batched. */
export type JobOutputWritten = DomainEvent<'JobOutputWritten', { jobId: number; lines: JobOutputLine[] }>;

export type JobCancelRequested = DomainEvent<'JobCancelRequested', { jobId: number; force: boolean; requestedByUserId: number | null; requested: string }>;

export type JobFinished = DomainEvent<
  'JobFinished',
  {
    jobId: number;
    finishedSuccessful: boolean;
    /** Why it did not succeed (failed, cancelled, worker lost), for a person; null on success. */
    reason: string | null;
    cancelled: boolean;
    /** Milliseconds of compute the job used (counts toward the project's compute time). */
    computeTimeMs: number;
    finished: string;
  }
>;

/**
 * The worker holding the claim is alive. Appended only when the worker wrote no output for a
 * heartbeat interval (output is itself a sign of life), so a quiet job running an hour adds at most
 * 360 small events (about 150 bytes each) with the default 10 s interval (JOB_HEARTBEAT_MS). Being events, heartbeats and the claim live in one stream:
 * a worker that declares a job's worker dead appends at the revision it read, so a heartbeat that
 * lands first makes that append fail instead of ending a live job.
 */
export type JobHeartbeat = DomainEvent<'JobHeartbeat', { jobId: number; workerId: string; attempt: number; at: string }>;

/** The users e-mailed when the job ends (`POST .../jobs/{jobId}/update`). */
export type JobNotificationsUpdated = DomainEvent<'JobNotificationsUpdated', { jobId: number; jobNotificationUids: number[] }>;

/** One user to e-mail about a job's end, and the id drawn for that e-mail. */
export interface JobNotification {
  userId: number;
  emailId: number;
}

/**
 * The e-mail ids drawn for the end-of-job notifications, recorded once before any e-mail is queued:
 * a notification saga that sees JobFinished again queues the same e-mails (same ids), never a second.
 */
export type JobNotificationsPlanned = DomainEvent<'JobNotificationsPlanned', { jobId: number; notifications: JobNotification[] }>;

export type JobEvent =
  | JobRequested
  | JobStarted
  | JobOutputWritten
  | JobCancelRequested
  | JobFinished
  | JobHeartbeat
  | JobNotificationsUpdated
  | JobNotificationsPlanned;

import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { JOB_REASON_RULE } from '../../domain/job/jobDecider';
import { jobStream, type JobEvent, type JobRequested } from '../../domain/job/jobEvents';
import { DomainError } from '../../domain/shared/errors';
import { cleanText } from '../../domain/shared/textRules';
import type { ProjectDeleted } from '../../domain/project/projectEvents';
import type { EventStore, StoredEvent } from '../../stores/eventstore/eventStore';
import type { CommandContext } from '../commandContext';
import { startPeriodic, type Periodic } from '../sagas/periodic';
import type { Saga } from '../sagas/sagaRunner';
import { runJobCommand } from './jobCommands';
import type { JobRunner } from './jobRunners';
import { OutputBatcher } from './outputBatcher';
import type { ThreadPool } from './threadPool';
import { PROJECT_DELETED_REASON, workerReaction } from './jobWorkerReaction';

export const JOB_WORKER_SAGA = 'job-worker';

/** What the worker reads from the jobs read model (main.ts passes JobQueries). */
export interface JobLookout {
  /** Jobs requested and not claimed. */
  waiting(): Promise<{ id: number; categoryKey: string }[]>;
  /** Jobs started and not finished, with the last time their worker was known alive (ISO). */
  running(): Promise<{ id: number; categoryKey: string; lastSignOfLife: string }[]>;
}

export interface JobWorkerDeps {
  events: EventStore;
  jobs: JobLookout;
  runners: ReadonlyMap<string, JobRunner>;
  pool: ThreadPool;
  log: Logger;
  /** Names this worker in the claims it appends; unique per process by default. */
  workerId?: string;
  /**
   * A quiet running job gets a heartbeat this often, and the worker looks for lost and waiting jobs
   * as often. A worker silent for `leaseMs` (3 heartbeats by default) is taken for dead. Clocks of
   * the workers' hosts must agree to well within the lease.
   */
  heartbeatMs?: number;
  leaseMs?: number;
  /** Runs of a job whose worker died: the first and one retry by default; then it fails. */
  maxAttempts?: number;
  /**
   * Whether a project was deleted (the projects read model). A job claimed after its project's
   * deletion passed this worker's saga (requested while no worker could run it) ends at once, failed;
   * one running at the deletion is stopped by the saga. Without it, only the latter holds.
   */
  projectDeleted?(projectId: number): Promise<boolean>;
  /** Output is appended every `flushMs` or `flushLines` lines, whichever comes first. */
  flushMs?: number;
  flushLines?: number;
}

interface RunningJob {
  jobId: number;
  projectId: number | null;
  attempt: number;
  controller: AbortController;
  /** Why it was stopped, once it was. */
  stopReason: string | undefined;
  /** Ended by someone else (forced cancel, recovery): nothing more is appended for it. */
  endedElsewhere: boolean;
  lastAppendMs: number;
  done: Promise<void>;
}

/**
 * Runs jobs: claims requested jobs it has a runner for, runs them with their output batched into the
 * job's stream, heartbeats quiet jobs, stops jobs asked to cancel, and ends or retries jobs whose
 * worker went silent. Any number of workers (processes with ROLES=jobs) share the work: claims and
 * recoveries are appends at the revision read, so each decision is taken by exactly one of them.
 */
export class JobWorker {
  readonly workerId: string;
  private readonly heartbeatMs: number;
  private readonly leaseMs: number;
  private readonly maxAttempts: number;
  private readonly running = new Map<number, RunningJob>();
  private periodic: Periodic | undefined;
  private stopping = false;

  constructor(private readonly deps: JobWorkerDeps) {
    this.workerId = deps.workerId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.heartbeatMs = deps.heartbeatMs ?? 10_000;
    this.leaseMs = deps.leaseMs ?? 3 * this.heartbeatMs;
    this.maxAttempts = deps.maxAttempts ?? 2;
  }

  /** The saga the runner feeds with the log: claims requested jobs, stops cancelled ones. */
  saga(): Saga {
    return {
      name: JOB_WORKER_SAGA,
      handles: new Set(['JobRequested', 'JobCancelRequested', 'JobFinished', 'ProjectDeleted']),
      react: (event) => this.react(event),
    };
  }

  /** Starts the heartbeats and the look-out for waiting and lost jobs (at once, then every heartbeat). */
  start(): void {
    this.periodic = startPeriodic('job worker round', this.deps.log, this.heartbeatMs, (now) => this.round(now));
  }

  /** Jobs running here now (tests, health). */
  get runningJobIds(): number[] {
    return [...this.running.keys()];
  }

  /**
   * Stops taking work; running jobs are stopped and end as failed with the reason (another worker
   * cannot resume a run half done; the user can request the job again).
   */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.periodic?.stop();
    for (const job of this.running.values()) this.stopRun(job, 'The worker running it was stopped (service shutdown)', false);
    await Promise.all([...this.running.values()].map((j) => j.done));
  }

  private async react(event: StoredEvent): Promise<void> {
    const actions = workerReaction(event as unknown as JobEvent | ProjectDeleted, {
      hasRunner: (key) => this.deps.runners.has(key),
      runsHere: (jobId) => this.running.has(jobId),
      runningFor: (projectId) => [...this.running.values()].filter((j) => j.projectId === projectId).map((j) => j.jobId),
    });
    for (const action of actions) {
      if (action.kind === 'claim') await this.claim(action.jobId, event.data as JobRequested['data']);
      else {
        const job = this.running.get(action.jobId);
        if (job) this.stopRun(job, action.reason, action.endedElsewhere);
      }
    }
  }

  private context(now = new Date()): CommandContext {
    return { actor: `system:${JOB_WORKER_SAGA}`, correlationId: `job-worker:${this.workerId}`, now };
  }

  /** Claims the job; on success runs it in the background. Losing the claim is normal: another worker won. */
  private async claim(jobId: number, request: JobRequested['data']): Promise<void> {
    if (this.stopping || this.running.has(jobId)) return;
    try {
      const { events } = await runJobCommand(this.deps.events, { type: 'StartJob', data: { jobId, workerId: this.workerId, now: new Date() } }, this.context());
      const started = events.find((e) => e.type === 'JobStarted');
      if (started) this.run(request, started.data.attempt);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      this.deps.log.debug({ jobId, reason: error.message }, 'job not claimed');
    }
  }

  /** One round: heartbeats for quiet jobs here, then waiting jobs to claim and silent workers to replace. */
  private async round(now: Date): Promise<void> {
    for (const job of this.running.values()) {
      if (job.stopReason !== undefined || now.getTime() - job.lastAppendMs < this.heartbeatMs * 0.9) continue;
      try {
        await runJobCommand(this.deps.events, { type: 'RecordJobHeartbeat', data: { jobId: job.jobId, workerId: this.workerId, attempt: job.attempt, now } }, this.context(now));
        job.lastAppendMs = now.getTime();
      } catch (error) {
        this.lostClaim(job, error);
      }
    }
    if (this.stopping) return;
    for (const doc of await this.deps.jobs.waiting()) {
      if (this.deps.runners.has(doc.categoryKey)) {
        const request = await this.requestOf(doc.id);
        if (request) await this.claim(doc.id, request);
      }
    }
    const staleBefore = new Date(now.getTime() - this.leaseMs).toISOString();
    for (const doc of await this.deps.jobs.running()) {
      if (this.running.has(doc.id) || doc.lastSignOfLife >= staleBefore || !this.deps.runners.has(doc.categoryKey)) continue;
      await this.recover(doc.id, now);
    }
  }

  /** The read model said the job's worker went silent; the decider checks it on the stream itself. */
  private async recover(jobId: number, now: Date): Promise<void> {
    try {
      const { events } = await runJobCommand(
        this.deps.events,
        { type: 'RecoverJob', data: { jobId, workerId: this.workerId, now, leaseMs: this.leaseMs, maxAttempts: this.maxAttempts } },
        this.context(now),
      );
      const retry = events.find((e) => e.type === 'JobStarted');
      this.deps.log.warn({ jobId, retry: retry !== undefined }, retry ? 'job of a lost worker retried here' : 'job of a lost worker ended');
      if (retry) {
        const request = await this.requestOf(jobId);
        if (request) this.run(request, retry.data.attempt);
      }
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      this.deps.log.debug({ jobId, reason: error.message }, 'job not recovered');
    }
  }

  private async requestOf(jobId: number): Promise<JobRequested['data'] | undefined> {
    const [first] = await this.deps.events.readStream(jobStream(jobId));
    return first?.type === 'JobRequested' ? (first.data as JobRequested['data']) : undefined;
  }

  private stopRun(job: RunningJob, reason: string, endedElsewhere: boolean): void {
    job.stopReason ??= reason;
    job.endedElsewhere ||= endedElsewhere;
    job.controller.abort(new Error(reason));
  }

  /** A refused append means the job ended elsewhere or was handed to another worker: stop quietly. */
  private lostClaim(job: RunningJob, error: unknown): void {
    if (error instanceof DomainError) this.stopRun(job, error.message, true);
    else this.deps.log.warn({ err: error, jobId: job.jobId }, 'could not append for a running job; trying again later');
  }

  /** Whether the job's project is known to be deleted; a failed look-up is no reason to fail the job. */
  private async projectDeleted(projectId: number | null): Promise<boolean> {
    if (projectId === null || !this.deps.projectDeleted) return false;
    try {
      return await this.deps.projectDeleted(projectId);
    } catch (error) {
      this.deps.log.warn({ err: error, projectId }, 'could not tell whether a job\'s project was deleted; running the job');
      return false;
    }
  }

  private run(request: JobRequested['data'], attempt: number): void {
    const runner = this.deps.runners.get(request.categoryKey);
    if (!runner) return;
    const job: RunningJob = {
      jobId: request.jobId,
      projectId: request.projectId,
      attempt,
      controller: new AbortController(),
      stopReason: undefined,
      endedElsewhere: false,
      lastAppendMs: Date.now(),
      done: Promise.resolve(),
    };
    this.running.set(job.jobId, job);
    const output = new OutputBatcher(
      async (lines) => {
        if (job.endedElsewhere) return;
        try {
          await runJobCommand(this.deps.events, { type: 'WriteJobOutput', data: { jobId: job.jobId, workerId: this.workerId, attempt, lines } }, this.context());
          job.lastAppendMs = Date.now();
        } catch (error) {
          this.lostClaim(job, error);
        }
      },
      { flushMs: this.deps.flushMs ?? 250, maxLines: this.deps.flushLines ?? 100 },
    );
    job.done = (async () => {
      const started = performance.now();
      let successful = false;
      let reason: string | null = null;
      try {
        if (await this.projectDeleted(request.projectId)) this.stopRun(job, PROJECT_DELETED_REASON, false);
        else await runner({
          jobId: job.jobId,
          projectId: request.projectId,
          organizationId: request.organizationId,
          parameters: request.parameters,
          log: (line, level) => output.add(line, level),
          signal: job.controller.signal,
          pool: this.deps.pool,
        });
        successful = job.stopReason === undefined;
        reason = job.stopReason ?? null;
      } catch (error) {
        reason = job.stopReason ?? (error instanceof Error ? error.message : String(error));
        if (job.stopReason === undefined) output.add(`Job failed: ${reason}`, 'error');
      }
      const computeTimeMs = Math.round(performance.now() - started);
      await output.flush();
      if (!job.endedElsewhere) {
        try {
          await runJobCommand(
            this.deps.events,
            {
              type: 'FinishJob',
              data: { jobId: job.jobId, workerId: this.workerId, attempt, successful, reason: reason === null ? null : cleanText(reason.replace(/\s+/g, ' ').trim() || 'Failed', JOB_REASON_RULE), computeTimeMs, now: new Date() },
            },
            this.context(),
          );
        } catch (error) {
          if (!(error instanceof DomainError)) this.deps.log.error({ err: error, jobId: job.jobId }, 'could not record the end of a job; another worker will end it when its lease runs out');
        }
      }
      this.running.delete(job.jobId);
    })();
  }
}

// The tuner-coordinator job: runs one tuner run. It starts the run (seeded by its own job id, or by
// the run it extends), then loops on the run's stream: plans trials, requests each as a child
// `tuner-trial` job (the trial runner appends the trial's result), keeps at most runCapacity children
// requested or running, and waits for their JobFinished on a log subscription. Every decision comes
// from the stream (domain/optimize/coordinatorPlan.ts), so a coordinator retried after a crash
// resumes where the first stopped and plans or runs nothing twice. Its end on cancel or failure is
// the tuner-run-end saga's (tunerRunEndSaga.ts), which also sees a coordinator failed by recovery.
import { jobStream, type JobEvent, type JobFinished } from '../../domain/job/jobEvents';
import { candidateTrials, freshNeeded, hyperbandSchedule, nextStep, runCapacity, type RunPlan } from '../../domain/optimize/coordinatorPlan';
import type { OptimizeSettings } from '../../domain/optimize/optimizeConfig';
import { tunerRunDecider, type TunerRunCommand } from '../../domain/optimize/tunerRunDecider';
import { tunerRunStream, type TunerRunEvent } from '../../domain/optimize/tunerRunEvents';
import { emptyProgress, evolveProgress, type TunerRunProgress } from '../../domain/optimize/tunerRunProgress';
import type { TunerSpaceImpulse } from '../../domain/optimize/tunerSpace';
import type { Subscription } from '../../stores/eventstore/eventStore';
import type { CommandContext } from '../commandContext';
import { handleCommand } from '../handleCommand';
import type { JobRunContext, JobRunner } from '../jobs/jobRunners';
import { requestJobWithId, type RequestJobDeps } from '../jobs/requestJob';
import { readRunLineage } from './tunerLineage';

export const TUNER_COORDINATOR = 'tuner-coordinator';
export const TUNER_TRIAL = 'tuner-trial';

/** The coordinator job's parameters, fixed by the request (api/routes/optimizeJobRoutes.ts) after its checks. */
export interface TunerCoordinatorParameters {
  index: number;
  name: string;
  config: OptimizeSettings;
  /** The space searched: the config's, the extended run's, or the space around the impulse. */
  space: TunerSpaceImpulse[];
  frequencyHz: number | null;
  learnTypes: string[];
  extendedFromJobId: number | null;
}

/** A trial job's parameters: the run it belongs to and its trial number there (docs/tuner.md, How a run runs). */
export interface TunerTrialParameters {
  coordinatorJobId: number;
  trial: number;
}

/** The log, the job id sequence and the projects read model (to request its children). */
export type TunerCoordinatorDeps = RequestJobDeps;

/** Children's ends from a log subscription, in log order; stops waiting when the job's signal aborts. */
class ChildEnds {
  private readonly iterator: AsyncIterator<{ type: string; data: Record<string, unknown> }>;
  private readonly aborted: Promise<never>;
  constructor(
    private readonly subscription: Subscription,
    signal: AbortSignal,
  ) {
    this.iterator = subscription[Symbol.asyncIterator]();
    // One listener for the whole run, however many waits it has.
    this.aborted = new Promise<never>((_, reject) => {
      if (signal.aborted) reject(signal.reason);
      else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
    this.aborted.catch(() => undefined);
  }

  /** The next end of one of `jobIds`. */
  async next(jobIds: ReadonlySet<number>): Promise<JobFinished['data']> {
    for (;;) {
      const r = await Promise.race([this.iterator.next(), this.aborted]);
      if (r.done) throw new Error('The log subscription ended while trials were running');
      if (r.value.type === 'JobFinished' && jobIds.has((r.value.data as JobFinished['data']).jobId)) return r.value.data as JobFinished['data'];
    }
  }

  close(): Promise<void> {
    return this.subscription.close();
  }
}

export function tunerCoordinatorRunner(deps: TunerCoordinatorDeps): JobRunner {
  return async (job) => {
    if (job.projectId === null) throw new Error('A tuner run belongs to a project');
    const projectId = job.projectId;
    const coordinatorJobId = job.jobId;
    const p = job.parameters as unknown as TunerCoordinatorParameters;
    const stream = tunerRunStream(projectId, coordinatorJobId);
    const ctx = (): CommandContext => ({ actor: `system:${TUNER_COORDINATOR}`, correlationId: `tuner-run:${projectId}:${coordinatorJobId}`, now: new Date() });
    const send = (command: TunerRunCommand) => handleCommand(deps.events, stream, tunerRunDecider, command, ctx());
    const run = { projectId, coordinatorJobId };
    // The run's progress, folded on as the stream grows (a long run's stream is read once, not per step).
    let progress = emptyProgress();
    let next = 0n;
    const read = async (): Promise<TunerRunProgress> => {
      for (const e of await deps.events.readStream(stream, { fromRevision: next })) {
        progress = evolveProgress(progress, e as unknown as TunerRunEvent);
        next = e.revision + 1n;
      }
      return progress;
    };

    // Subscribed before anything is read, so no child's end falls between a read and the subscription.
    const head = await deps.events.headPosition();
    const ends = new ChildEnds(deps.events.subscribeToAll(head === undefined ? {} : { after: head }), job.signal);
    try {
      const lineage = p.extendedFromJobId === null ? null : await readRunLineage(deps.events, projectId, p.extendedFromJobId);
      if (p.extendedFromJobId !== null && !lineage) throw new Error(`Tuner run ${p.extendedFromJobId} is not a run of this project`);
      const seed = lineage?.seed ?? coordinatorJobId;
      await send({ type: 'StartTunerRun', data: { ...run, index: p.index, name: p.name, config: p.config, space: p.space, seed, extendedFromJobId: p.extendedFromJobId, now: new Date() } });
      const brackets = p.config.tuningAlgorithm === 'hyperband' ? hyperbandSchedule(p.config.trainingCycles, p.config.tuningMaxTrials) : [];
      const plan: RunPlan = {
        algorithm: p.config.tuningAlgorithm,
        candidates: candidateTrials(p.space, seed, freshNeeded(p.config.tuningAlgorithm, brackets, p.config.tuningMaxTrials), p.frequencyHz ?? undefined, p.learnTypes, lineage?.tried ?? new Set()),
        brackets,
        capacity: runCapacity(p.config.tuningWorkers, job.pool.size),
      };
      job.log(`Tuner run ${p.index} (${p.config.tuningAlgorithm} search, seed ${seed}): ${plan.candidates.length} impulses to try, ${plan.capacity} trials at once`);
      await resumeChildren(deps, job, await read());

      for (;;) {
        job.signal.throwIfAborted();
        const now = await read();
        if (now.ended) return;
        const step = nextStep(now, plan);
        switch (step.kind) {
          case 'plan':
            await send({ type: 'PlanTrials', data: { ...run, trials: step.trials, now: new Date() } });
            break;
          case 'start':
            for (const trial of step.trials) {
              // The id is recorded before the job is requested: a restart requests this child, not another.
              const jobId = await deps.ids.next('job');
              const { events } = await send({ type: 'StartTrial', data: { ...run, trial, jobId, firstAttempt: true, now: new Date() } });
              // Nothing appended: a second coordinator of this run (one taken for lost, still alive) started it.
              if (events.length === 0) continue;
              await requestTrialJob(deps, projectId, coordinatorJobId, trial, jobId);
              job.log(`Trial ${trial}: job ${jobId}`);
            }
            break;
          case 'wait': {
            const end = await ends.next(new Set(step.jobIds));
            await childEnded(deps, job, await read(), end);
            break;
          }
          case 'end':
            await send({ type: 'EndTunerRun', data: { ...run, status: step.status, error: step.error, now: new Date() } });
            if (step.status === 'failed') throw new Error(step.error ?? 'The tuner run failed');
            job.log('Tuner run completed');
            return;
        }
      }
    } finally {
      await ends.close();
    }
  };
}

function requestTrialJob(deps: TunerCoordinatorDeps, projectId: number, coordinatorJobId: number, trial: number, jobId: number): Promise<boolean> {
  const parameters: TunerTrialParameters = { coordinatorJobId, trial };
  return requestJobWithId(
    deps,
    jobId,
    { projectId, category: 'EON tuner trial', categoryKey: TUNER_TRIAL, key: `${coordinatorJobId}:${trial}`, parameters: { ...parameters }, notificationList: null, createdByUserId: null, parentJobId: coordinatorJobId },
    { actor: `system:${TUNER_COORDINATOR}`, correlationId: `tuner-run:${projectId}:${coordinatorJobId}`, now: new Date() },
  );
}

/**
 * A trial whose job ended: the trial runner recorded its result before its job ended; a child that
 * failed, was cancelled, or lost its worker twice without one is finished failed here.
 */
async function childEnded(deps: TunerCoordinatorDeps, job: JobRunContext, progress: TunerRunProgress, end: JobFinished['data']): Promise<void> {
  const trial = [...progress.trials.values()].find((t) => t.jobId === end.jobId);
  if (!trial) return;
  if (trial.status === 'running') {
    const error = end.reason ?? 'The trial\'s job ended without reporting a result';
    await handleCommand(
      deps.events,
      tunerRunStream(job.projectId!, job.jobId),
      tunerRunDecider,
      { type: 'FinishTrial', data: { projectId: job.projectId!, coordinatorJobId: job.jobId, trial: trial.trial, status: 'failed', accuracy: null, loss: null, estimates: null, error, now: new Date() } },
      { actor: `system:${TUNER_COORDINATOR}`, correlationId: `tuner-run:${job.projectId}:${job.jobId}`, now: new Date() },
    );
    job.log(`Trial ${trial.trial} failed: ${error}`, 'warn');
  } else job.log(`Trial ${trial.trial} ${trial.status}${trial.accuracy === null ? '' : `: accuracy ${trial.accuracy.toFixed(3)}`}`);
}

/**
 * After a restart: a child recorded but not requested (the first coordinator stopped in between) is
 * requested now; a child that ended while no coordinator watched is handled as if seen ending.
 */
async function resumeChildren(deps: TunerCoordinatorDeps, job: JobRunContext, progress: TunerRunProgress): Promise<void> {
  for (const trial of progress.trials.values()) {
    if (trial.status !== 'running' || trial.jobId === null) continue;
    const events = (await deps.events.readStream(jobStream(trial.jobId))) as unknown as JobEvent[];
    if (events.length === 0) await requestTrialJob(deps, job.projectId!, job.jobId, trial.trial, trial.jobId);
    const end = events.find((e): e is JobFinished => e.type === 'JobFinished');
    if (end) await childEnded(deps, job, progress, end.data);
  }
}

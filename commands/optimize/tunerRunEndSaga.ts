// The tuner-run-end saga: when a tuner-coordinator job ends, its run ends with it (cancelled, or
// failed with the job's reason) and the run's children still running are cancelled at once. The
// coordinator ends a run it completes itself; this covers every other way its job ends, including a
// forced cancel and a recovery that fails the job after its worker was lost twice, where no
// coordinator code runs. Commands carry ids derived from the event: a replay appends nothing new.
import { jobStream, type JobEvent, type JobFinished } from '../../domain/job/jobEvents';
import { tunerRunDecider } from '../../domain/optimize/tunerRunDecider';
import { runEndAfterCoordinator } from '../../domain/optimize/tunerRunEnd';
import { tunerRunStream, type TunerRunEvent } from '../../domain/optimize/tunerRunEvents';
import { foldProgress } from '../../domain/optimize/tunerRunProgress';
import { DomainError } from '../../domain/shared/errors';
import type { EventStore, StoredEvent } from '../../stores/eventstore/eventStore';
import { handleCommand } from '../handleCommand';
import { runJobCommand } from '../jobs/jobCommands';
import { sagaContext, type Saga } from '../sagas/sagaRunner';
import { TUNER_COORDINATOR } from './tunerCoordinator';

export const TUNER_RUN_END_SAGA = 'tuner-run-end';

export function tunerRunEndSaga(events: EventStore): Saga {
  return {
    name: TUNER_RUN_END_SAGA,
    handles: new Set(['JobFinished']),
    async react(event: StoredEvent) {
      const finished = event.data as JobFinished['data'];
      const [requested] = (await events.readStream(jobStream(finished.jobId), { maxCount: 1 })) as unknown as JobEvent[];
      if (requested?.type !== 'JobRequested' || requested.data.categoryKey !== TUNER_COORDINATOR || requested.data.projectId === null) return;
      const projectId = requested.data.projectId;
      const stream = tunerRunStream(projectId, finished.jobId);
      const decision = runEndAfterCoordinator(foldProgress((await events.readStream(stream)) as unknown as TunerRunEvent[]), finished);
      if (!decision) return;
      for (const [step, jobId] of decision.cancelJobIds.entries()) {
        const ctx = sagaContext(TUNER_RUN_END_SAGA, event, { step: step + 1 });
        try {
          await runJobCommand(events, { type: 'RequestJobCancel', data: { jobId, force: true, userId: null, now: ctx.now } }, ctx);
        } catch (error) {
          // Ended meanwhile, or never requested (the coordinator stopped between recording and requesting it).
          if (!(error instanceof DomainError)) throw error;
        }
      }
      const ctx = sagaContext(TUNER_RUN_END_SAGA, event);
      await handleCommand(events, stream, tunerRunDecider, { type: 'EndTunerRun', data: { projectId, coordinatorJobId: finished.jobId, status: decision.status, error: decision.error, now: ctx.now } }, ctx);
    },
  };
}

import { jobDecider, type JobCommand, type JobState } from '../../domain/job/jobDecider';
import { jobStream, type JobEvent } from '../../domain/job/jobEvents';
import type { EventStore } from '../../stores/eventstore/eventStore';
import type { CommandContext } from '../commandContext';
import { handleCommand, type HandledCommand } from '../handleCommand';

/**
 * Runs a command on a job's stream. Appends are made at the revision just read, so of two workers
 * claiming one job the second's append conflicts, it reads the claim and the decider refuses it:
 * exactly one runs the job, on either event store.
 */
export function runJobCommand(events: EventStore, command: JobCommand, ctx: CommandContext): Promise<HandledCommand<JobEvent, JobState>> {
  return handleCommand(events, jobStream(command.data.jobId), jobDecider, command, ctx);
}

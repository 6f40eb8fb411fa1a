import { checkJobRequest, type JobRequest } from '../../domain/job/jobDecider';
import { ConflictError, NotFoundError } from '../../domain/shared/errors';
import type { ProjectSettingsChange } from '../../domain/project/projectSettings';
import type { EventStore, Position } from '../../stores/eventstore/eventStore';
import type { CommandContext } from '../commandContext';
import type { IdAllocator } from '../idAllocator';
import { runJobCommand } from './jobCommands';

/** Which of the project's notification lists a job copies when requested. */
export const NOTIFICATION_LIST_OF = {
  dsp: 'dspJobNotificationUids',
  train: 'trainJobNotificationUids',
  modelTesting: 'modelTestingJobNotificationUids',
  export: 'exportJobNotificationUids',
} as const;
export type JobNotificationList = keyof typeof NOTIFICATION_LIST_OF;

export interface RequestJobDeps {
  events: EventStore;
  ids: IdAllocator;
  /** The project's settings as the projects read model has them (null: no such project). */
  projects: { byId(projectId: number): Promise<{ settings: ProjectSettingsChange } | null> };
}

export interface RequestJobInput {
  projectId: number;
  /** As the Job record shows it, e.g. "Generate features". */
  category: string;
  /** Picks the runner, e.g. "generate-features". */
  categoryKey: string;
  /** What the job is about within its category (e.g. the DSP block id), for filtering. */
  key: string;
  parameters: Record<string, unknown>;
  /** The project's list whose users are e-mailed when the job ends (`dsp` for DSP jobs); null: nobody. */
  notificationList: JobNotificationList | null;
  createdByUserId: number | null;
  /** The job this one is part of (a tuner run's coordinator for its trials). */
  parentJobId?: number | null;
}

/**
 * Requests a job of a project; a worker picks it up. Resolves with the job's id and the position to
 * settle on (read your writes) once the request is in the log, not when the job is done.
 */
export async function requestJob(deps: RequestJobDeps, input: RequestJobInput, ctx: CommandContext): Promise<{ jobId: number; position: Position }> {
  const data = await requestData(deps, input, ctx);
  // Refuse bad input before an id is taken from the sequence.
  checkJobRequest(data);
  const jobId = await deps.ids.next('job');
  const { appended } = await runJobCommand(deps.events, { type: 'RequestJob', data: { ...data, jobId } }, ctx);
  return { jobId, position: appended!.position };
}

/**
 * Requests a job under an id drawn earlier (a coordinator records a child's id before requesting it,
 * so a restart requests the same child, never a second). Resolves false when that job exists already.
 */
export async function requestJobWithId(deps: RequestJobDeps, jobId: number, input: RequestJobInput, ctx: CommandContext): Promise<boolean> {
  const data = await requestData(deps, input, ctx);
  try {
    await runJobCommand(deps.events, { type: 'RequestJob', data: { ...data, jobId } }, ctx);
    return true;
  } catch (error) {
    if (error instanceof ConflictError && error.code === 'JOB_EXISTS') return false;
    throw error;
  }
}

async function requestData(deps: RequestJobDeps, input: RequestJobInput, ctx: CommandContext): Promise<JobRequest> {
  const project = await deps.projects.byId(input.projectId);
  if (!project) throw new NotFoundError(`Project ${input.projectId} not found`, 'PROJECT_NOT_FOUND');
  const list = input.notificationList === null ? [] : (project.settings[NOTIFICATION_LIST_OF[input.notificationList]] ?? []);
  return {
    projectId: input.projectId,
    organizationId: null,
    category: input.category,
    categoryKey: input.categoryKey,
    key: input.key,
    parameters: input.parameters,
    jobNotificationUids: [...list],
    createdByUserId: input.createdByUserId,
    ...(input.parentJobId === undefined || input.parentJobId === null ? {} : { parentJobId: input.parentJobId }),
    now: ctx.now,
  };
}

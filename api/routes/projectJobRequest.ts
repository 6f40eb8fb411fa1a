// How a route starts a project's job: requested for the caller (a user's id, or none for an API
// key), then answered once the request is in the read models, so the caller's next GET sees it.
import type { CommandContext } from '../../commands/commandContext';
import { requestJob, type RequestJobDeps, type RequestJobInput } from '../../commands/jobs/requestJob';
import type { Position } from '../../stores/eventstore/eventStore';
import type { Principal } from '../auth/principal';

export async function requestProjectJob(
  deps: RequestJobDeps,
  caller: { principal: Principal; settle(position: Position | undefined): Promise<void> },
  input: Omit<RequestJobInput, 'createdByUserId'>,
  ctx: CommandContext,
): Promise<number> {
  const { jobId, position } = await requestJob(deps, { ...input, createdByUserId: caller.principal.kind === 'user' ? caller.principal.user.id : null }, ctx);
  await caller.settle(position);
  return jobId;
}

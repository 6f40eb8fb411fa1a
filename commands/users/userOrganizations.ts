import { userDecider } from '../../domain/user/userDecider';
import type { EventStore, Position } from '../../stores/eventstore/eventStore';
import type { CommandContext } from '../commandContext';
import type { IdAllocator } from '../idAllocator';
import { createOrganization } from '../organizations/createOrganization';
import { loadUser, runUserCommand } from './userCommands';

type Deps = { events: EventStore; ids: IdAllocator };

const later = (a: Position, b: Position) => (a > b ? a : b);

/** The user's personal organization. Checked against the user first, so a refusal creates nothing. */
export async function createDeveloperProfile(deps: Deps, user: { id: number; username: string }, ctx: CommandContext): Promise<{ organizationId: number; position: Position }> {
  userDecider.decide({ type: 'CreateDeveloperProfile', data: { organizationId: 0, now: ctx.now } }, await loadUser(deps.events, user.id));
  const org = await createOrganization(deps, { name: user.username, isDeveloperProfile: true, ownerUserId: user.id, trialId: null }, ctx);
  const { appended } = await runUserCommand(deps.events, user.id, { type: 'CreateDeveloperProfile', data: { organizationId: org.organizationId, now: ctx.now } }, ctx);
  return { organizationId: org.organizationId, position: later(org.position, appended!.position) };
}

export const TRIAL_DAYS = 14;

/** An enterprise trial and its organization; once per user (rule 1 of the spec). */
export async function startEnterpriseTrial(
  deps: Deps,
  user: { id: number; username: string },
  input: { organizationName: string | null; expirationDate: Date | null; notes: string | null },
  ctx: CommandContext,
): Promise<{ trialId: number; organizationId: number; position: Position }> {
  const expirationDate = input.expirationDate ?? new Date(ctx.now.getTime() + TRIAL_DAYS * 24 * 3600 * 1000);
  const probe = { trialId: 0, organizationId: 0, expirationDate, notes: input.notes, now: ctx.now };
  userDecider.decide({ type: 'StartEnterpriseTrial', data: probe }, await loadUser(deps.events, user.id));
  const trialId = await deps.ids.next('trial');
  const org = await createOrganization(deps, { name: input.organizationName ?? `${user.username}'s trial`, isDeveloperProfile: false, ownerUserId: user.id, trialId }, ctx);
  const { appended } = await runUserCommand(deps.events, user.id, { type: 'StartEnterpriseTrial', data: { ...probe, trialId, organizationId: org.organizationId } }, ctx);
  return { trialId, organizationId: org.organizationId, position: later(org.position, appended!.position) };
}

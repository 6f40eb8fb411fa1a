import { organizationDecider } from '../../domain/organization/organizationDecider';
import { organizationStream } from '../../domain/organization/organizationEvents';
import type { EventStore, Position } from '../../stores/eventstore/eventStore';
import type { CommandContext } from '../commandContext';
import { handleCommand } from '../handleCommand';
import type { IdAllocator } from '../idAllocator';

export async function createOrganization(
  deps: { events: EventStore; ids: IdAllocator },
  input: { name: string; isDeveloperProfile: boolean; ownerUserId: number; trialId: number | null },
  ctx: CommandContext,
): Promise<{ organizationId: number; position: Position }> {
  organizationDecider.decide({ type: 'CreateOrganization', data: { ...input, organizationId: 0, now: ctx.now } }, organizationDecider.initialState());
  const organizationId = await deps.ids.next('organization');
  const { appended } = await handleCommand(
    deps.events,
    organizationStream(organizationId),
    organizationDecider,
    { type: 'CreateOrganization', data: { ...input, organizationId, now: ctx.now } },
    ctx,
  );
  return { organizationId, position: appended!.position };
}

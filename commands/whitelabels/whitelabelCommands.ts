// White labels: one decision each on `whitelabel-{id}`. A domain belongs to one white label at a
// time, held by a uniqueness reservation from creation (or change) to deletion.
import { whitelabelDecider, checkWhitelabelSettings, type WhitelabelState } from '../../domain/whitelabel/whitelabelDecider';
import { whitelabelStream, type WhitelabelSettings } from '../../domain/whitelabel/whitelabelEvents';
import type { EventStore, Position } from '../../stores/eventstore/eventStore';
import { aggregateStream } from '../aggregateStream';
import type { CommandContext } from '../commandContext';
import { handleCommand } from '../handleCommand';
import type { IdAllocator } from '../idAllocator';
import type { UniquenessReservations } from '../uniqueness';

type Deps = { events: EventStore; ids: IdAllocator; reservations: UniquenessReservations };

const DOMAIN_TAKEN = 'Another white label already has this domain';

export async function loadWhitelabel(events: EventStore, whitelabelId: number): Promise<WhitelabelState> {
  return (await aggregateStream(events, whitelabelStream(whitelabelId), whitelabelDecider)).state;
}

export async function createWhitelabel(deps: Deps, settings: WhitelabelSettings, ctx: CommandContext): Promise<{ whitelabelId: number; position: Position }> {
  // Refuse bad settings before an id or the domain is taken.
  const checked = { ...settings, ...checkWhitelabelSettings(settings) };
  const whitelabelId = await deps.ids.next('whitelabel');
  const stream = whitelabelStream(whitelabelId);
  await deps.reservations.reserve('whitelabel-domain', checked.domain, stream, ctx, DOMAIN_TAKEN);
  try {
    const { appended } = await handleCommand(deps.events, stream, whitelabelDecider, { type: 'CreateWhitelabel', data: { whitelabelId, settings: checked, now: ctx.now } }, ctx);
    return { whitelabelId, position: appended!.position };
  } catch (error) {
    await deps.reservations.release('whitelabel-domain', checked.domain, stream, ctx);
    throw error;
  }
}

export async function updateWhitelabel(deps: Deps, whitelabelId: number, changes: Partial<WhitelabelSettings>, ctx: CommandContext): Promise<Position | undefined> {
  const stream = whitelabelStream(whitelabelId);
  const before = await loadWhitelabel(deps.events, whitelabelId);
  const checked = checkWhitelabelSettings(changes);
  const newDomain = before.status === 'active' && checked.domain !== undefined && checked.domain !== before.settings.domain ? checked.domain : null;
  if (newDomain) await deps.reservations.reserve('whitelabel-domain', newDomain, stream, ctx, DOMAIN_TAKEN);
  try {
    const { appended } = await handleCommand(deps.events, stream, whitelabelDecider, { type: 'UpdateWhitelabel', data: { changes: checked, now: ctx.now } }, ctx);
    if (newDomain && before.status === 'active') await deps.reservations.release('whitelabel-domain', before.settings.domain, stream, ctx);
    return appended?.position;
  } catch (error) {
    if (newDomain) await deps.reservations.release('whitelabel-domain', newDomain, stream, ctx);
    throw error;
  }
}

/** Deletes the white label and frees its domain for another. */
export async function deleteWhitelabel(deps: Deps, whitelabelId: number, ctx: CommandContext): Promise<Position | undefined> {
  const stream = whitelabelStream(whitelabelId);
  const before = await loadWhitelabel(deps.events, whitelabelId);
  const { appended } = await handleCommand(deps.events, stream, whitelabelDecider, { type: 'DeleteWhitelabel', data: { now: ctx.now } }, ctx);
  if (before.status === 'active') await deps.reservations.release('whitelabel-domain', before.settings.domain, stream, ctx);
  return appended?.position;
}

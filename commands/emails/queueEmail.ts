import { emailDecider } from '../../domain/email/emailDecider';
import { emailStream } from '../../domain/email/emailEvents';
import type { EventStore, Position } from '../../stores/eventstore/eventStore';
import type { CommandContext } from '../commandContext';
import { handleCommand } from '../handleCommand';
import type { IdAllocator } from '../idAllocator';

export interface QueueEmailDeps {
  events: EventStore;
  ids: IdAllocator;
}

export interface QueueEmailInput {
  userId: number | null;
  projectId: number | null;
  from: string;
  to: string;
  subject: string;
  bodyText: string;
  bodyHTML: string;
}

/**
 * Queues an e-mail; the e-mail delivery saga sends it and records the outcome on the e-mail's
 * stream. Resolves once it is queued, not sent.
 */
export async function queueEmail(deps: QueueEmailDeps, input: QueueEmailInput, ctx: CommandContext): Promise<{ emailId: number; position: Position }> {
  // Refuse bad input before an id is taken from the sequence.
  emailDecider.decide({ type: 'QueueEmail', data: { ...input, emailId: 0, now: ctx.now } }, emailDecider.initialState());
  const emailId = await deps.ids.next('email');
  const { appended } = await handleCommand(
    deps.events,
    emailStream(emailId),
    emailDecider,
    { type: 'QueueEmail', data: { ...input, emailId, now: ctx.now } },
    ctx,
  );
  return { emailId, position: appended!.position };
}

import type { DeliveryOutcome, EmailCommand, EmailState } from '../../domain/email/emailDecider';
import { assertNever } from '../../domain/shared/errors';

/**
 * What the delivery saga does about an EmailQueued, given the e-mail's state as its stream tells:
 * `send` while it is queued with no outcome recorded; `recorded` once it was sent or not sent (seen
 * again after a restart: nothing is sent twice); `missing` when its stream is empty. Pure.
 */
export type EmailDeliveryStep = 'send' | 'recorded' | 'missing';

export function emailDeliveryStep(state: EmailState): EmailDeliveryStep {
  switch (state.status) {
    case 'queued':
      return 'send';
    case 'none':
      return 'missing';
    case 'sent':
    case 'notSent':
      return 'recorded';
    default:
      return assertNever(state);
  }
}

/** The command recording how the sending went, on the e-mail's stream. Pure. */
export function recordDelivery(emailId: number, outcome: DeliveryOutcome, now: Date): EmailCommand {
  return { type: 'RecordDelivery', data: { emailId, outcome, now } };
}

// The e-mail delivery saga's decision, given the e-mail's stream, and the command recording the outcome.
import { describe, expect, it } from 'vitest';
import { emailDeliveryStep, recordDelivery, type EmailDeliveryStep } from '../../commands/sagas/emailDeliveryReaction';
import { emailDecider } from '../../domain/email/emailDecider';
import type { EmailEvent } from '../../domain/email/emailEvents';
import { fold } from '../../domain/shared/decider';

const queued: EmailEvent = {
  type: 'EmailQueued',
  data: { emailId: 5, userId: 1, projectId: null, from: 'no-reply@example.com', to: 'ada@example.com', subject: 'Hi', bodyText: 'Hi', bodyHTML: '<p>Hi</p>', queued: '2026-11-25T10:00:00.000Z' },
};
const sent: EmailEvent = { type: 'EmailSent', data: { emailId: 5, providerResponse: '250 OK', sent: '2026-11-25T10:00:01.000Z' } };
const notSent: EmailEvent = { type: 'EmailNotSent', data: { emailId: 5, reason: 'No SMTP server', at: '2026-11-25T10:00:01.000Z' } };

/** Given the e-mail's stream, then what the saga does about its EmailQueued. */
const given = (events: EmailEvent[]) => ({ then: (expected: EmailDeliveryStep) => expect(emailDeliveryStep(fold(emailDecider, events))).toBe(expected) });

describe('an e-mail seen queued', () => {
  it('is sent while no outcome is recorded', () => {
    given([queued]).then('send');
  });

  it('is not sent again once it was sent, or recorded as not sent', () => {
    given([queued, sent]).then('recorded');
    given([queued, notSent]).then('recorded');
  });

  it('whose stream is empty is skipped as missing', () => {
    given([]).then('missing');
  });
});

describe('the outcome of a delivery', () => {
  it("is recorded on the e-mail's stream at the saga's time", () => {
    const now = new Date('2026-11-25T10:00:02.000Z');
    expect(recordDelivery(5, { sent: true, providerResponse: '250 OK' }, now)).toEqual({ type: 'RecordDelivery', data: { emailId: 5, outcome: { sent: true, providerResponse: '250 OK' }, now } });
    const command = recordDelivery(5, { sent: false, reason: 'refused' }, now);
    expect(emailDecider.decide(command, fold(emailDecider, [queued]))).toEqual([{ type: 'EmailNotSent', data: { emailId: 5, reason: 'refused', at: now.toISOString() } }]);
  });
});

import { describe, expect, it } from 'vitest';
import { emailDecider, type EmailCommand } from '../../domain/email/emailDecider';
import type { EmailNotSent, EmailQueued, EmailSent } from '../../domain/email/emailEvents';
import { ConflictError, NotFoundError, ValidationError } from '../../domain/shared/errors';
import { deciderSpecification } from '../support/deciderSpecification';

const spec = deciderSpecification(emailDecider);
const now = new Date('2026-11-25T10:00:00.000Z');
const later = new Date('2026-11-25T10:00:05.000Z');

type QueueData = Extract<EmailCommand, { type: 'QueueEmail' }>['data'];
const queue = (overrides: Partial<QueueData> = {}): EmailCommand => ({
  type: 'QueueEmail',
  data: {
    emailId: 3,
    userId: 7,
    projectId: 12,
    from: 'Studio <noreply@studio.test>',
    to: 'ada@example.com',
    subject: ' Your job finished ',
    bodyText: 'Job 5 finished.',
    bodyHTML: '<p>Job 5 finished.</p>',
    now,
    ...overrides,
  },
});

const queued: EmailQueued = {
  type: 'EmailQueued',
  data: {
    emailId: 3,
    userId: 7,
    projectId: 12,
    from: 'Studio <noreply@studio.test>',
    to: 'ada@example.com',
    subject: 'Your job finished',
    bodyText: 'Job 5 finished.',
    bodyHTML: '<p>Job 5 finished.</p>',
    queued: now.toISOString(),
  },
};

const sentOutcome = (providerResponse = '250 OK: queued'): EmailCommand => ({
  type: 'RecordDelivery',
  data: { emailId: 3, outcome: { sent: true, providerResponse }, now: later },
});
const notSentOutcome = (reason = 'Connection refused'): EmailCommand => ({
  type: 'RecordDelivery',
  data: { emailId: 3, outcome: { sent: false, reason }, now: later },
});

const sent: EmailSent = { type: 'EmailSent', data: { emailId: 3, providerResponse: '250 OK: queued', sent: later.toISOString() } };
const notSent: EmailNotSent = { type: 'EmailNotSent', data: { emailId: 3, reason: 'Connection refused', at: later.toISOString() } };

describe('an e-mail that was not queued yet', () => {
  it('is queued with a trimmed subject and the time of the command', () => {
    spec.given([]).when(queue()).then([queued]);
  });

  it('may be queued for an address without an account or a project', () => {
    spec
      .given([])
      .when(queue({ userId: null, projectId: null, to: 'support@studio.test' }))
      .then([{ ...queued, data: { ...queued.data, userId: null, projectId: null, to: 'support@studio.test' } }]);
  });

  it('is refused a recipient that is not one e-mail address', () => {
    spec.given([]).when(queue({ to: 'ada' })).thenThrows(ValidationError, /not a valid e-mail address/);
    spec.given([]).when(queue({ to: 'ada@example.com, eve@example.com' })).thenThrows(ValidationError, /not a valid e-mail address/);
    spec.given([]).when(queue({ to: 'Ada <ada@example.com>' })).thenThrows(ValidationError, /not a valid e-mail address/);
  });

  it('is refused an empty subject or one over 500 characters', () => {
    spec.given([]).when(queue({ subject: '   ' })).thenThrows(ValidationError, /subject must not be empty/);
    spec.given([]).when(queue({ subject: 'x'.repeat(501) })).thenThrows(ValidationError, /at most 500/);
    spec.given([]).when(queue({ subject: 'x'.repeat(500) })).thenMatches((events) => expect(events).toHaveLength(1));
  });

  it('is refused without a text or an HTML body', () => {
    spec.given([]).when(queue({ bodyText: '' })).thenThrows(ValidationError, /text and an HTML body/);
    spec.given([]).when(queue({ bodyHTML: ' ' })).thenThrows(ValidationError, /text and an HTML body/);
  });

  it('has no delivery to record', () => {
    spec.given([]).when(sentOutcome()).thenThrows(NotFoundError, /never queued/);
  });
});

describe('a queued e-mail', () => {
  it('cannot be queued again', () => {
    spec.given([queued]).when(queue()).thenThrows(ConflictError, /already queued/);
  });

  it('records that it was sent, with the server response', () => {
    spec.given([queued]).when(sentOutcome()).then([sent]);
  });

  it('records that it was not sent, with the reason', () => {
    spec.given([queued]).when(notSentOutcome()).then([notSent]);
  });

  it('needs a reason when it was not sent', () => {
    spec.given([queued]).when(notSentOutcome('  ')).thenThrows(ValidationError, /reason/);
  });
});

describe('an e-mail with a recorded outcome', () => {
  it('ignores the same outcome recorded again (a saga that ran again)', () => {
    spec.given([queued, sent]).when(sentOutcome()).then([]);
    spec.given([queued, notSent]).when(notSentOutcome()).then([]);
  });

  it('keeps the first outcome when another one comes', () => {
    spec.given([queued, sent]).when(notSentOutcome()).then([]);
    spec.given([queued, notSent]).when(sentOutcome()).then([]);
  });
});

describe('texts an e-mail carries (bounded, no control or bidirectional-override characters)', () => {
  it('refuses a subject or an address that hides characters, naming the field', () => {
    spec.given([]).when(queue({ subject: 'Your job\u202E finished' })).thenThrows(ValidationError, /\("subject"\) contains an invisible formatting character/);
    spec.given([]).when(queue({ subject: 'Your job\r\nBcc: x@y.z' })).thenThrows(ValidationError, /\("subject"\) contains a control character/);
    spec.given([]).when(queue({ to: 'ada\u0000@example.com' })).thenThrows(ValidationError, /\("to"\) contains a control character/);
  });

  it('keeps line breaks in the bodies but refuses other control characters there', () => {
    spec.given([]).when(queue({ bodyText: 'Line one\nLine two\r\n\tindented' })).thenMatches((events) => expect(events).toHaveLength(1));
    spec.given([]).when(queue({ bodyHTML: '<p>\u0007</p>' })).thenThrows(ValidationError, /\("bodyHTML"\) contains a control character/);
  });

  it("records a provider's answer whatever it holds, cleaned and cut, never refused", () => {
    const at = new Date('2026-11-25T10:00:05.000Z');
    spec
      .given([queued])
      .when({ type: 'RecordDelivery', data: { emailId: 3, outcome: { sent: true, providerResponse: `250 OK\u0000\u202E${'x'.repeat(20_000)}` }, now: at } })
      .thenMatches(([event]) => {
        const response = (event as EmailSent).data.providerResponse;
        expect(response.startsWith('250 OK\uFFFD\uFFFDx')).toBe(true);
        expect(response).toHaveLength(10_000);
      });
    spec
      .given([queued])
      .when({ type: 'RecordDelivery', data: { emailId: 3, outcome: { sent: false, reason: 'refused:\u0007\r\nmailbox full' }, now: at } })
      .thenMatches(([event]) => expect((event as EmailNotSent).data.reason).toBe('refused:\uFFFD\r\nmailbox full'));
  });
});

import type { Decider } from '../shared/decider';
import { ConflictError, NotFoundError, ValidationError, assertNever } from '../shared/errors';
import { checkDate } from '../shared/numberRules';
import { checkText, cleanText } from '../shared/textRules';
import type { EmailEvent } from './emailEvents';

export const EMAIL_SUBJECT_MAX = 500;
/** Longest address (RFC 5321: 64 + 1 + 255) and body; a delivery report is cut to DELIVERY_REPORT_MAX. */
export const EMAIL_ADDRESS_MAX = 320;
export const EMAIL_BODY_MAX = 1_000_000;
export const DELIVERY_REPORT_MAX = 10_000;

/** How one delivery attempt ended, as the saga that made it reports it. */
export type DeliveryOutcome = { sent: true; providerResponse: string } | { sent: false; reason: string };

export type EmailCommand =
  | {
      type: 'QueueEmail';
      data: {
        emailId: number;
        userId: number | null;
        projectId: number | null;
        from: string;
        to: string;
        subject: string;
        bodyText: string;
        bodyHTML: string;
        now: Date;
      };
    }
  | { type: 'RecordDelivery'; data: { emailId: number; outcome: DeliveryOutcome; now: Date } };

export type EmailState =
  | { status: 'none' }
  | { status: 'queued'; emailId: number }
  | { status: 'sent'; emailId: number }
  | { status: 'notSent'; emailId: number };

// One plain address: no display name, list separators or brackets, so it names exactly one recipient.
const EMAIL = /^[^\s@,;<>()"]+@[^\s@,;<>()"]+\.[^\s@,;<>()"]+$/;

/** One plain address, as e-mails are sent to: no display name, list or brackets. */
export const isEmailAddress = (value: string): boolean => EMAIL.test(value);

export const emailDecider: Decider<EmailCommand, EmailEvent, EmailState> = {
  initialState: () => ({ status: 'none' }),

  decide(command, state) {
    switch (command.type) {
      case 'QueueEmail': {
        const c = command.data;
        if (state.status !== 'none') throw new ConflictError(`E-mail ${c.emailId} was already queued`);
        if (!EMAIL.test(c.to)) throw new ValidationError(`"${c.to}" is not a valid e-mail address`);
        if (c.from.trim() === '') throw new ValidationError('The sender address must not be empty');
        const subject = c.subject.trim();
        if (subject === '') throw new ValidationError('E-mail subject must not be empty');
        if (subject.length > EMAIL_SUBJECT_MAX) throw new ValidationError(`E-mail subject must be at most ${EMAIL_SUBJECT_MAX} characters`);
        if (c.bodyText.trim() === '' || c.bodyHTML.trim() === '') throw new ValidationError('An e-mail needs both a text and an HTML body');
        checkText(c.to, 'The recipient address ("to")', { max: EMAIL_ADDRESS_MAX });
        checkText(c.from, 'The sender address ("from")', { max: EMAIL_ADDRESS_MAX });
        checkText(subject, 'The e-mail subject ("subject")', { max: EMAIL_SUBJECT_MAX });
        checkText(c.bodyText, 'The text body ("bodyText")', { max: EMAIL_BODY_MAX, multiline: true });
        checkText(c.bodyHTML, 'The HTML body ("bodyHTML")', { max: EMAIL_BODY_MAX, multiline: true });
        return [
          {
            type: 'EmailQueued',
            data: {
              emailId: c.emailId,
              userId: c.userId,
              projectId: c.projectId,
              from: c.from,
              to: c.to,
              subject,
              bodyText: c.bodyText,
              bodyHTML: c.bodyHTML,
              queued: checkDate(c.now, 'now'),
            },
          },
        ];
      }
      case 'RecordDelivery': {
        const c = command.data;
        switch (state.status) {
          case 'none':
            throw new NotFoundError(`E-mail ${c.emailId} was never queued`);
          case 'sent':
          case 'notSent':
            // The first recorded outcome stands: a saga that runs again after a restart changes nothing.
            return [];
          case 'queued': {
            if (!c.outcome.sent && c.outcome.reason.trim() === '') throw new ValidationError('An e-mail that was not sent needs a reason');
            const at = checkDate(c.now, 'now');
            // What the provider answered is recorded whatever it holds: cleaned and cut, never refused,
            // or the delivery saga would retry an e-mail that was sent.
            const report = { max: DELIVERY_REPORT_MAX, multiline: true };
            return c.outcome.sent
              ? [{ type: 'EmailSent', data: { emailId: c.emailId, providerResponse: cleanText(c.outcome.providerResponse, report), sent: at } }]
              : [{ type: 'EmailNotSent', data: { emailId: c.emailId, reason: cleanText(c.outcome.reason, report), at } }];
          }
          default:
            return assertNever(state);
        }
      }
      default:
        return assertNever(command);
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'EmailQueued':
        return { status: 'queued', emailId: event.data.emailId };
      case 'EmailSent':
        return { status: 'sent', emailId: event.data.emailId };
      case 'EmailNotSent':
        return { status: 'notSent', emailId: event.data.emailId };
      default:
        return assertNever(event);
    }
  },
};

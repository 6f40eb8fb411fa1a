import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import { emailDecider, type DeliveryOutcome } from '../../domain/email/emailDecider';
import { emailStream, type EmailEvent, type EmailQueued } from '../../domain/email/emailEvents';
import type { EventStore, StoredEvent } from '../../stores/eventstore/eventStore';
import { aggregateStream } from '../aggregateStream';
import { handleCommand } from '../handleCommand';
import { emailDeliveryStep, recordDelivery } from './emailDeliveryReaction';
import { sagaContext, type Saga } from './sagaRunner';

export const EMAIL_DELIVERY_SAGA = 'email-delivery';
export const NO_SMTP_SERVER_REASON = 'No SMTP server is configured (SMTP_URL is not set)';
export const ERASED_RECIPIENT_REASON = "The recipient's address was erased before the e-mail could be sent";

/** Recorded reasons and responses are for people to read; a server that says more is cut short. */
const MAX_TEXT = 2000;

export interface EmailDeliveryDeps {
  events: EventStore;
  /** `smtp://` or `smtps://` URL (credentials and options as nodemailer reads them); undefined: nothing is sent. */
  smtpUrl: string | undefined;
  log: Logger;
}

/**
 * Sends each queued e-mail once and records how it went on the e-mail's stream (EmailSent with the
 * server's response, or EmailNotSent with the reason).
 *
 * At most once, as far as the log can tell: before sending, the saga reads the e-mail's stream and
 * does nothing when an outcome is recorded, so seeing EmailQueued again after a restart sends nothing.
 * One window remains: a crash after the SMTP server accepted the message but before EmailSent was
 * appended sends it again on restart (SMTP gives no way to ask whether a message was delivered).
 */
export function emailDeliverySaga(deps: EmailDeliveryDeps): Saga {
  if (deps.smtpUrl !== undefined && !/^smtps?:\/\//i.test(deps.smtpUrl)) {
    throw new Error('The SMTP URL must start with smtp:// or smtps://');
  }
  // Bounded timeouts: the saga handles one e-mail at a time, so a server that hangs must not stall it
  // (nor delay a stop) for long. Options in the URL's query string take precedence.
  const transport =
    deps.smtpUrl === undefined
      ? undefined
      : nodemailer.createTransport({ url: deps.smtpUrl, connectionTimeout: 15_000, greetingTimeout: 15_000, socketTimeout: 30_000 });

  async function deliver(data: EmailQueued['data']): Promise<DeliveryOutcome> {
    if (!transport) return { sent: false, reason: NO_SMTP_SERVER_REASON };
    // Sealed fields read as null once their key was destroyed (the user was deleted meanwhile).
    if (typeof data.to !== 'string' || typeof data.bodyText !== 'string' || typeof data.bodyHTML !== 'string') {
      return { sent: false, reason: ERASED_RECIPIENT_REASON };
    }
    try {
      const info = await transport.sendMail({ from: data.from, to: data.to, subject: data.subject, text: data.bodyText, html: data.bodyHTML });
      return { sent: true, providerResponse: info.response.slice(0, MAX_TEXT) };
    } catch (error) {
      // The message only: a stack trace says nothing to whoever reads why their mail did not go out.
      const message = error instanceof Error ? error.message : String(error);
      return { sent: false, reason: (message.trim() || 'The SMTP server refused the message').slice(0, MAX_TEXT) };
    }
  }

  return {
    name: EMAIL_DELIVERY_SAGA,
    handles: new Set<EmailEvent['type']>(['EmailQueued']),

    async react(event: StoredEvent) {
      const data = event.data as EmailQueued['data'];
      const stream = emailStream(data.emailId);
      const { state } = await aggregateStream(deps.events, stream, emailDecider);
      const step = emailDeliveryStep(state);
      if (step !== 'send') {
        if (step === 'missing') deps.log.warn({ emailId: data.emailId, eventId: event.id }, 'EmailQueued seen but its stream is empty; skipped');
        return;
      }
      const outcome = await deliver(data);
      if (!outcome.sent) deps.log.warn({ emailId: data.emailId, reason: outcome.reason }, 'e-mail not sent');
      // The same command id after a restart appends the same event ids; the decider also ignores a
      // second outcome, so two runners racing on one e-mail still record one.
      const ctx = sagaContext(EMAIL_DELIVERY_SAGA, event);
      await handleCommand(deps.events, stream, emailDecider, recordDelivery(data.emailId, outcome, ctx.now), ctx);
    },

    async close() {
      transport?.close();
    },
  };
}

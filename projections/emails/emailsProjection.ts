import type { EmailEvent } from '../../domain/email/emailEvents';
import { defineProjection, insertOnce, updateOnce } from '../projection';
import { EMAILS, type EmailDocument } from './emailDocument';

export const emailsProjection = defineProjection<EmailEvent>('emails', [EMAILS], {
  async EmailQueued(event, store) {
    const d = event.data;
    await insertOnce(
      store.collection<EmailDocument>(EMAILS),
      {
        _id: d.emailId,
        id: d.emailId,
        userId: d.userId,
        projectId: d.projectId,
        from: d.from,
        to: d.to,
        created: d.queued,
        subject: d.subject,
        bodyText: d.bodyText,
        bodyHTML: d.bodyHTML,
        sent: false,
        providerResponse: '',
        _position: '',
      },
      event,
    );
  },

  async EmailSent(event, store) {
    const d = event.data;
    await updateOnce(store.collection<EmailDocument>(EMAILS), d.emailId, { $set: { sent: true, providerResponse: d.providerResponse } }, event);
  },

  async EmailNotSent(event, store) {
    const d = event.data;
    await updateOnce(store.collection<EmailDocument>(EMAILS), d.emailId, { $set: { sent: false, providerResponse: d.reason } }, event);
  },
});

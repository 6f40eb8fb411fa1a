import type { EmailEvent } from '../../domain/email/emailEvents';
import type { UserDeleted } from '../../domain/user/userEvents';
import { defineProjection, insertOnce, positionKey, updateOnce } from '../projection';
import { EMAILS, type EmailDocument } from './emailDocument';

export const emailsProjection = defineProjection<EmailEvent | UserDeleted>('emails', [EMAILS], {
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

  // A deleted user's key is destroyed, so a rebuild reads their mail's sealed fields as null: the
  // live read model must forget them too, or it would keep the address and the codes sent there.
  async UserDeleted(event, store) {
    const position = positionKey(event.position);
    await store
      .collection<EmailDocument>(EMAILS)
      .updateMany({ userId: event.data.userId, _position: { $lt: position } }, { $set: { to: null, bodyText: null, bodyHTML: null, _position: position } });
  },

  async EmailNotSent(event, store) {
    const d = event.data;
    await updateOnce(store.collection<EmailDocument>(EMAILS), d.emailId, { $set: { sent: false, providerResponse: d.reason } }, event);
  },
});

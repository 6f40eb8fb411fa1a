import type { ReadStore } from '../../stores/readstore/readStore';
import { EMAILS, type EmailDocument } from './emailDocument';

const NEWEST_FIRST = { created: -1, _id: -1 } as const;

export class EmailQueries {
  constructor(private readonly store: ReadStore) {}

  private get emails() {
    return this.store.collection<EmailDocument>(EMAILS);
  }

  byId(id: number): Promise<EmailDocument | null> {
    return this.emails.findOne({ _id: id });
  }

  /** The e-mails sent to or about a user, newest first. */
  forUser(userId: number): Promise<EmailDocument[]> {
    return this.emails.find({ userId }, { sort: NEWEST_FIRST });
  }

  /** Every e-mail, newest first. */
  all(): Promise<EmailDocument[]> {
    return this.emails.find({}, { sort: NEWEST_FIRST });
  }
}

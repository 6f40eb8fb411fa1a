// Which event fields hold personal data or secrets that must not be usable from the log alone.
// The event store decorator seals them with the subject's key on append and opens them on read;
// destroying a subject's key (crypto-shredding) leaves them unreadable in every replay.

export interface SealedFields {
  /** The key subject, derived from the event data (`user-42`, `project-7`). */
  subject(data: Record<string, unknown>): string;
  fields: readonly string[];
}

export const sealedFieldsByEventType: Readonly<Record<string, SealedFields>> = {
  UserRegistered: { subject: (d) => `user-${String(d.userId)}`, fields: ['name', 'email', 'jobTitle', 'companyName'] },
  UserProfileUpdated: { subject: (d) => `user-${String(d.userId)}`, fields: ['name', 'jobTitle', 'companyName'] },
  UserActivated: { subject: (d) => `user-${String(d.userId)}`, fields: ['name'] },
  UserPhotoChanged: { subject: (d) => `user-${String(d.userId)}`, fields: ['photo'] },
  TotpKeyCreated: { subject: (d) => `user-${String(d.userId)}`, fields: ['key'] },
  // A network address says where a person was.
  LoginSucceeded: { subject: (d) => `user-${String(d.userId)}`, fields: ['address'] },
  LoginFailed: { subject: (d) => `user-${String(d.userId)}`, fields: ['address'] },
  ApiKeyAdded: { subject: (d) => `project-${String(d.projectId)}`, fields: ['apiKey'] },
  HmacKeyAdded: { subject: (d) => `project-${String(d.projectId)}`, fields: ['hmacKey'] },
  // What the inviter typed may be the invitee's e-mail address: theirs, shredded with their account.
  // A name that is nobody's account is the project's: shredded with it.
  CollaboratorInvited: { subject: (d) => (d.userId === null || d.userId === undefined ? `project-${String(d.projectId)}` : `user-${String(d.userId)}`), fields: ['invitedAs'] },
  // A name with no account gets an id no account will have (see the organization decider): its own key.
  OrganizationMemberInvited: { subject: (d) => `user-${String(d.userId)}`, fields: ['invitedAs'] },
  // Mail to an address with no account (userId null, e.g. the support address) gets a key of its own.
  EmailQueued: {
    subject: (d) => (d.userId === null || d.userId === undefined ? `email-${String(d.emailId)}` : `user-${String(d.userId)}`),
    fields: ['to', 'bodyText', 'bodyHTML'],
  },
};

/**
 * Events that erase personal data from the read models: once a batch that applied one is committed,
 * the read store leaves no copy of what was deleted in its files (free pages, write-ahead log).
 * A project's full deletion takes its samples' metadata with it.
 */
export const erasingEventTypes: ReadonlySet<string> = new Set(['UserDeleted', 'ProjectFullyDeleted']);

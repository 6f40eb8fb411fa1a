import { sealedFieldsByEventType } from '../personalData';

// What the history shows of an event's data. Secrets are replaced by a marker, whoever asks:
// values that authenticate (API and HMAC keys, TOTP keys) and hashes of guessable or short-lived
// values (passwords, one-time codes, recovery codes), which a copy would let anyone attack offline.
// E-mail bodies carry one-time codes and reset links. Personal data sealed for a user who was
// forgotten (their key destroyed) shows as forgotten, never as ciphertext or a null that could be
// mistaken for an empty value.

export const REDACTED = '[redacted]';
export const FORGOTTEN = '[forgotten]';

export const SECRET_FIELDS: Readonly<Record<string, readonly string[]>> = {
  UserRegistered: ['passwordHash', 'thirdPartyCodeHash'],
  ActivationCodeIssued: ['codeHash'],
  PasswordResetRequested: ['codeHash'],
  PasswordChanged: ['passwordHash'],
  TotpKeyCreated: ['key'],
  TotpEnabled: ['recoveryCodeHashes'],
  LoginSucceeded: ['recoveryCodeHash'],
  ApiKeyAdded: ['apiKey', 'keyHash'],
  HmacKeyAdded: ['hmacKey'],
  OrganizationApiKeyAdded: ['keyHash'],
  EmailQueued: ['bodyText', 'bodyHTML'],
  OAuthClientRegistered: ['secretHash'],
};

/**
 * Another person's address, shown only to that person and to staff: a job's notification e-mail
 * sits in the project's history, which the owner and the admin keys read.
 */
export const OWN_EYES_FIELDS: Readonly<Record<string, readonly string[]>> = {
  EmailQueued: ['to'],
};

/** Who reads: everything (staff, the operator's export), a project's readers, or one user. */
export type HistoryReader = { kind: 'all' } | { kind: 'project' } | { kind: 'user'; userId: number };

const ownEyes = (reader: HistoryReader, data: Readonly<Record<string, unknown>>): boolean =>
  reader.kind === 'all' || (reader.kind === 'user' && data.userId === reader.userId);

/**
 * The data as the history shows it. `forgotten`: the sealed fields' subject has been forgotten,
 * so those fields (which the log gives back as null) read as FORGOTTEN.
 */
export function historyData(type: string, data: Readonly<Record<string, unknown>>, forgotten: boolean, reader: HistoryReader = { kind: 'all' }): Record<string, unknown> {
  const shown: Record<string, unknown> = { ...data };
  if (!ownEyes(reader, data)) {
    for (const field of OWN_EYES_FIELDS[type] ?? []) if (field in shown && shown[field] !== null) shown[field] = REDACTED;
  }
  if (forgotten) {
    for (const field of sealedFieldsByEventType[type]?.fields ?? []) if (field in shown) shown[field] = FORGOTTEN;
  }
  for (const field of SECRET_FIELDS[type] ?? []) {
    if (field in shown && shown[field] !== null) shown[field] = REDACTED;
  }
  return shown;
}

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
};

/**
 * The data as the history shows it. `forgotten`: the sealed fields' subject has been forgotten,
 * so those fields (which the log gives back as null) read as FORGOTTEN.
 */
export function historyData(type: string, data: Readonly<Record<string, unknown>>, forgotten: boolean): Record<string, unknown> {
  const shown: Record<string, unknown> = { ...data };
  if (forgotten) {
    for (const field of sealedFieldsByEventType[type]?.fields ?? []) if (field in shown) shown[field] = FORGOTTEN;
  }
  for (const field of SECRET_FIELDS[type] ?? []) {
    if (field in shown && shown[field] !== null) shown[field] = REDACTED;
  }
  return shown;
}

import { createHash } from 'node:crypto';

/** API keys are looked up by this hash; the key itself is never stored in the log or read models. */
export const hashApiKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

export const API_KEY_PREFIX = 'ei_';

/**
 * The one answer for a chosen key value that cannot be used, whatever the reason (its form, or a
 * value any project ever had): a refusal must not tell whether, or where, the value is in use.
 */
export const UNUSABLE_API_KEY =
  '"apiKey": this value cannot be used as an API key. A chosen key starts with ei_, has 32 to 256 printable characters without spaces, and is a value never used as a key before; choose another, or leave "apiKey" out to get a generated key';

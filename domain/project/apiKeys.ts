import { createHash } from 'node:crypto';

/** API keys are looked up by this hash; the key itself is never stored in the log or read models. */
export const hashApiKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

export const API_KEY_PREFIX = 'ei_';

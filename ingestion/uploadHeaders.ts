import type { Context } from 'koa';
import { SAMPLE_TEXT_RULES } from '../domain/sample/checkSample';
import { DomainError, ValidationError } from '../domain/shared/errors';
import { storableKeyProblem } from '../domain/shared/jsonRules';
import { textProblem, type TextRule } from '../domain/shared/textRules';

export class MissingHeaderError extends DomainError {
  constructor(header: string) {
    super('MISSING_HEADER', `Missing required header: ${header}`, 421);
  }
}

export const MAX_LABEL_LENGTH = 128;
const MAX_HEADER_LENGTH = 8192;

/** What the ingestion headers ask for (service spec "Ingestion API"; sdk-reference 4.1, 4.2). */
export interface UploadOptions {
  /** An explicit label (`x-label`, URI-decoded); undefined: derive it from the file name. */
  label: string | null | undefined;
  disallowDuplicates: boolean;
  addDateId: boolean;
  metadata: Record<string, string>;
  uploadSource: string | null;
  deviceType: string | null;
}

/** A header's text, refused with a message naming the header (control or bidi characters, length). */
function checkHeaderText(value: string, what: string, rule: TextRule): string {
  const problem = textProblem(value, what, rule);
  if (problem !== undefined) throw new ValidationError(problem);
  return value;
}

function decode(header: string, value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    throw new ValidationError(`Header ${header} is not valid URI-encoded text`);
  }
}

const optionalHeaderText = (value: string | undefined, what: string, rule: TextRule): string | null =>
  value === undefined ? null : checkHeaderText(value, what, rule);

export function uploadOptions(ctx: Context): UploadOptions {
  const get = (name: string): string | undefined => {
    const value = ctx.get(name);
    if (value.length > MAX_HEADER_LENGTH) throw new ValidationError(`Header ${name} is too long (at most ${MAX_HEADER_LENGTH} characters)`);
    return value === '' ? undefined : value;
  };
  const noLabel = get('x-no-label') === '1';
  const rawLabel = get('x-label');
  let label: string | null | undefined = noLabel ? null : rawLabel === undefined ? undefined : decode('x-label', rawLabel).trim();
  if (label === '') label = noLabel ? null : undefined;
  if (typeof label === 'string' && label.length > MAX_LABEL_LENGTH) throw new ValidationError(`Label is too long (at most ${MAX_LABEL_LENGTH} characters)`);
  if (typeof label === 'string') checkHeaderText(label, 'Header x-label', SAMPLE_TEXT_RULES.label);
  let metadata: Record<string, string> = {};
  const rawMetadata = get('x-metadata');
  if (rawMetadata !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(rawMetadata);
    } catch {
      throw new ValidationError('Header x-metadata is not valid JSON');
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new ValidationError('Header x-metadata must be a JSON object');
    metadata = Object.fromEntries(
      Object.entries(parsed).map(([k, v]) => {
        if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') throw new ValidationError(`x-metadata value of "${k}" must be a string, number or boolean`);
        checkHeaderText(k, 'Header x-metadata: a key', SAMPLE_TEXT_RULES.metadataKey);
        const storable = storableKeyProblem(k, 'Header x-metadata');
        if (storable !== undefined) throw new ValidationError(storable);
        return [k, checkHeaderText(String(v), `Header x-metadata: the value of ${JSON.stringify(k)}`, SAMPLE_TEXT_RULES.metadataValue)];
      }),
    );
  }
  const flag = (name: string) => {
    const v = get(name);
    return v !== undefined && v !== '0' && v.toLowerCase() !== 'false';
  };
  return {
    label,
    disallowDuplicates: flag('x-disallow-duplicates'),
    addDateId: get('x-add-date-id') === '1',
    metadata,
    uploadSource: optionalHeaderText(get('x-upload-source'), 'Header x-upload-source', SAMPLE_TEXT_RULES.uploadSource),
    deviceType: optionalHeaderText(get('x-device-type'), 'Header x-device-type', SAMPLE_TEXT_RULES.device),
  };
}

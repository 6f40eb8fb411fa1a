// What any text that enters the log must respect: bounded, and free of characters that can hide or
// reorder what a person reads (control characters, bidirectional overrides and isolates). Parsers
// that answer in their own error type use `textProblem`; deciders use `checkText`, which throws a
// ValidationError naming the field.
import { ValidationError } from './errors';

export interface TextRule {
  /** Most characters (UTF-16 code units, as JavaScript counts them). */
  max: number;
  /** Newlines and tabs allowed (free text such as a readme or a description). */
  multiline?: boolean;
  /** The empty (or all-blank) string allowed. */
  allowEmpty?: boolean;
}

// C0 controls, DEL, C1 controls; with `multiline`, \t \n \r are allowed.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;
const CONTROL_MULTILINE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/u;
// Bidirectional embeddings, overrides and isolates (the "Trojan Source" characters), and the line
// and paragraph separators that split a line where a reader does not see it.
const BIDI_AND_SEPARATORS = /[\u202a-\u202e\u2066-\u2069\u2028\u2029]/u;
// A surrogate half without its partner is not a character: UTF-8 stores (MongoDB, SQLite text)
// turn it into U+FFFD, so a replay would not give back what was accepted.
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * What the rules refuse, for generators of "any accepted value" (property tests): a character
 * matching `REFUSED_CHARACTER` is refused everywhere, one matching `REFUSED_SINGLE_LINE` only
 * where `multiline` is not set; a lone surrogate is refused too. Filtering generated strings with
 * `textProblem(value, field, rule) === undefined` gives exactly the accepted ones.
 */
export const REFUSED_CHARACTER = new RegExp(`${CONTROL_MULTILINE.source}|${BIDI_AND_SEPARATORS.source}`, 'u');
export const REFUSED_SINGLE_LINE = /[\t\n\r]/u;

/** Short names and titles: a person's or a project's name, a key's name, a label. */
export const NAME_RULE: TextRule = { max: 256 };
/** The same, where the empty string means "none" (job title, company). */
export const OPTIONAL_NAME_RULE: TextRule = { max: 256, allowEmpty: true };
/** Free text that may span lines (descriptions, notes). */
export const FREE_TEXT_RULE: TextRule = { max: 100_000, multiline: true, allowEmpty: true };
/** Identifiers and values chosen from lists by clients (versions, notification names, ids of things). */
export const TOKEN_RULE: TextRule = { max: 1024 };

/** Why `value` breaks `rule`, as a sentence about `field`, or undefined when it is acceptable. */
export function textProblem(value: string, field: string, rule: TextRule): string | undefined {
  if (value.length > rule.max) return `${field} is ${value.length} characters long; at most ${rule.max} are allowed`;
  if (!rule.allowEmpty && value.trim() === '') return `${field} is empty`;
  const control = (rule.multiline ? CONTROL_MULTILINE : CONTROL).exec(value);
  if (control) return `${field} contains a control character (${codePoint(control[0])})`;
  const bidi = BIDI_AND_SEPARATORS.exec(value);
  if (bidi) return `${field} contains an invisible formatting character (${codePoint(bidi[0])})`;
  if (LONE_SURROGATE.test(value)) return `${field} is not valid Unicode (it holds half of a surrogate pair)`;
  return undefined;
}

/** Returns `value` when it respects `rule`; throws a ValidationError naming `field` otherwise. */
export function checkText(value: string, field: string, rule: TextRule): string {
  const problem = textProblem(value, field, rule);
  if (problem !== undefined) throw new ValidationError(problem);
  return value;
}

/** `checkText` for a value that may be null (absent): null passes unchanged. */
export function checkOptionalText(value: string | null, field: string, rule: TextRule): string | null {
  return value === null ? null : checkText(value, field, rule);
}

/**
 * Text the service did not choose but must record (a mail provider's answer): cut to `rule.max`
 * and every refused character replaced by U+FFFD, so that recording it can never fail.
 */
export function cleanText(value: string, rule: TextRule): string {
  const refused = new RegExp(`${(rule.multiline ? CONTROL_MULTILINE : CONTROL).source}|${BIDI_AND_SEPARATORS.source}|${LONE_SURROGATE.source}`, 'gu');
  const cleaned = value.replace(refused, '\uFFFD').slice(0, rule.max);
  // Cutting may split a surrogate pair.
  return cleaned.replace(LONE_SURROGATE, '\uFFFD');
}

const codePoint = (char: string): string => `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

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

/** Why `value` breaks `rule`, as a sentence about `field`, or undefined when it is acceptable. */
export function textProblem(value: string, field: string, rule: TextRule): string | undefined {
  if (value.length > rule.max) return `${field} is ${value.length} characters long; at most ${rule.max} are allowed`;
  if (!rule.allowEmpty && value.trim() === '') return `${field} is empty`;
  const control = (rule.multiline ? CONTROL_MULTILINE : CONTROL).exec(value);
  if (control) return `${field} contains a control character (${codePoint(control[0])})`;
  const bidi = BIDI_AND_SEPARATORS.exec(value);
  if (bidi) return `${field} contains an invisible formatting character (${codePoint(bidi[0])})`;
  return undefined;
}

/** Returns `value` when it respects `rule`; throws a ValidationError naming `field` otherwise. */
export function checkText(value: string, field: string, rule: TextRule): string {
  const problem = textProblem(value, field, rule);
  if (problem !== undefined) throw new ValidationError(problem);
  return value;
}

const codePoint = (char: string): string => `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

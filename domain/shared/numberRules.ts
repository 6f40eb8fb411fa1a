// Numbers and times that enter the log: finite, within a range a person would ever use, and in
// one spelling. JSON turns -0 into 0, so a -0 accepted as such would come back different from a
// replay; it is stored as 0.
import { ValidationError } from './errors';

export interface NumberRule {
  min: number;
  max: number;
  /** Only whole numbers (safe integers). */
  integer?: boolean;
}

/** Why `value` breaks `rule`, as a sentence about `field`, or undefined when it is acceptable. */
export function numberProblem(value: number, field: string, rule: NumberRule): string | undefined {
  if (typeof value !== 'number' || Number.isNaN(value)) return `${field} must be a number, got ${String(value)}`;
  if (!Number.isFinite(value)) return `${field} must be a finite number, got ${String(value)}`;
  if (value < rule.min || value > rule.max) return `${field} must be from ${rule.min} to ${rule.max}, got ${value}`;
  if (rule.integer && !Number.isSafeInteger(value)) return `${field} must be a whole number, got ${value}`;
  return undefined;
}

/** Returns `value` (-0 as 0) when it respects `rule`; throws a ValidationError naming `field` otherwise. */
export function checkNumber(value: number, field: string, rule: NumberRule): number {
  const problem = numberProblem(value, field, rule);
  if (problem !== undefined) throw new ValidationError(problem);
  return value === 0 ? 0 : value;
}

/** An id allocated by the service: a positive safe integer. */
export function checkId(value: number, field: string): number {
  return checkNumber(value, field, { min: 1, max: Number.MAX_SAFE_INTEGER, integer: true });
}

/**
 * Earliest and latest time accepted, so every time stays a four-digit-year ISO string that sorts
 * as text (read models compare `lastSeen` and `expires` as strings).
 */
export const MIN_TIME = Date.parse('1970-01-01T00:00:00.000Z');
export const MAX_TIME = Date.parse('9999-12-31T23:59:59.999Z');

/** The ISO form of a valid date within [MIN_TIME, MAX_TIME]; a ValidationError naming `field` otherwise. */
export function checkDate(date: Date, field: string): string {
  const time = date instanceof Date ? date.getTime() : Number.NaN;
  if (Number.isNaN(time)) throw new ValidationError(`${field} is not a valid date`);
  if (time < MIN_TIME || time > MAX_TIME) throw new ValidationError(`${field} must be between 1970 and 9999, got ${date.toISOString()}`);
  return date.toISOString();
}

/** A timestamp as the log keeps it: exactly the form `Date.prototype.toISOString` gives, 1970 to 9999. */
export function checkIsoTimestamp(value: string, field: string): string {
  const time = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(time) || new Date(time).toISOString() !== value) throw new ValidationError(`${field} must be an ISO 8601 timestamp (as 2026-01-31T12:00:00.000Z), got ${JSON.stringify(value)}`);
  return checkDate(new Date(time), field);
}

// Free-form JSON that a client may store (project metadata, a CSV import config): read models keep
// it as a sub-document, so its keys must be valid MongoDB field names (no leading `$`, no `.`, which
// an update would read as an operator or a path), its numbers finite, its strings held to the text
// rules, and the whole bounded in depth and size.
import { ValidationError } from './errors';
import { textProblem, type TextRule } from './textRules';

export interface JsonRule {
  /** Rule for every string value. */
  text: TextRule;
  /** Rule for every object key. */
  key: TextRule;
  /** Deepest nesting of objects and arrays. */
  maxDepth: number;
  /** Most characters of the value written as JSON. */
  maxChars: number;
}

/** Project metadata and similar client-owned settings. */
export const FREE_JSON_RULE: JsonRule = {
  text: { max: 100_000, multiline: true, allowEmpty: true },
  key: { max: 256 },
  maxDepth: 16,
  maxChars: 100_000,
};

/** Why `value` breaks `rule`, as a sentence about `field` (the path of the first problem), or undefined. */
export function jsonProblem(value: unknown, field: string, rule: JsonRule): string | undefined {
  const problem = walk(value, field, rule, 0);
  if (problem !== undefined) return problem;
  const chars = JSON.stringify(value)?.length ?? 0;
  return chars > rule.maxChars ? `${field} is ${chars} characters long as JSON; at most ${rule.maxChars} are allowed` : undefined;
}

/** Returns `value` when it respects `rule`; throws a ValidationError naming the field otherwise. */
export function checkJsonValue<T>(value: T, field: string, rule: JsonRule): T {
  const problem = jsonProblem(value, field, rule);
  if (problem !== undefined) throw new ValidationError(problem);
  return value;
}

/**
 * Why a key a client chose cannot be a field name of a read-model document (MongoDB, and FerretDB
 * which CI runs on, refuse a leading `$` and read `.` as a path), as a sentence about `at`.
 */
export function storableKeyProblem(key: string, at: string): string | undefined {
  return key.startsWith('$') || key.includes('.') ? `${at}: the key ${JSON.stringify(key.slice(0, 64))} must not start with "$" or contain "."` : undefined;
}

function walk(value: unknown, at: string, rule: JsonRule, depth: number): string | undefined {
  if (value === null || typeof value === 'boolean') return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : `${at} must be a finite number, got ${String(value)}`;
  if (typeof value === 'string') return textProblem(value, at, rule.text);
  if (typeof value !== 'object') return `${at} must be JSON (text, a number, true/false, null, a list or an object), got ${typeof value}`;
  if (depth >= rule.maxDepth) return `${at} is nested more than ${rule.maxDepth} levels deep`;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const problem = walk(value[i], `${at}[${i}]`, rule, depth + 1);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value)) {
    const keyProblem = textProblem(key, `${at}: a key`, rule.key);
    if (keyProblem !== undefined) return keyProblem;
    const storable = storableKeyProblem(key, at);
    if (storable !== undefined) return storable;
    const problem = walk(item, `${at}.${key}`, rule, depth + 1);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

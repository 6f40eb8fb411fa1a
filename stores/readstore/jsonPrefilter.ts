// Conditions on fields no key column holds, narrowed in SQL on the stored JSON before mingo decides
// (a raw-data listing filtered by file name or signature over a million samples decoded every
// sample's document first). Each clause keeps every row mingo could match: it drops only rows whose
// value at the path has the operand's own JSON type and fails the comparison, where SQLite compares
// exactly as mingo does; any other value (absent, null, an array, another type, a tagged date or
// double) passes, and mingo still tests every row that passes. So answers stay mingo's.
import { isPlainObject } from './documents/plainObjects';

export interface JsonClause {
  sql: string;
  params: unknown[];
}

/** A dotted path of plain names: one JSON path, with no quoting to get wrong. */
const PLAIN_PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;
/** ASCII: SQLite's LIKE folds case only there, and compares it byte for byte as JavaScript compares code units. */
const ASCII = /^[\x20-\x7e]*$/;
/** An anchored pattern whose rest is a literal (metacharacters escaped), as `escapeRegex` makes them. */
const LITERAL_PREFIX = /^\^((?:[^\\.*+?^${}()|[\]]|\\[.*+?^${}()|[\]\\/-])*)$/;

const RANGE_OPERATORS = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' } as const;

type Typed = { types: string[]; value: unknown };

/** The JSON types json_type names for a scalar operand, and the value SQLite compares with. */
function typed(operand: unknown): Typed | undefined {
  if (typeof operand === 'string') return ASCII.test(operand) ? { types: ['text'], value: operand } : undefined;
  if (typeof operand === 'number') return Number.isFinite(operand) && !Object.is(operand, -0) ? { types: ['integer', 'real'], value: operand } : undefined;
  if (typeof operand === 'boolean') return { types: ['true', 'false'], value: operand ? 1 : 0 };
  return undefined;
}

/** Rows whose value at `path` is of `types` must satisfy `test`; every other row passes. */
function guarded(path: string, types: readonly string[], test: string, params: unknown[]): JsonClause {
  const jsonPath = `$.${path}`;
  return {
    sql: `coalesce(json_type(doc, ?), '') NOT IN (${types.map(() => '?').join(', ')}) OR json_extract(doc, ?) ${test}`,
    params: [jsonPath, ...types, jsonPath, ...params],
  };
}

/** The clauses narrowing `condition` on `path`, or none where SQL cannot narrow it safely. */
export function jsonPrefilter(path: string, condition: unknown): JsonClause[] {
  if (!PLAIN_PATH.test(path)) return [];
  const plain = typed(condition);
  if (plain) return [guarded(path, plain.types, '= ?', [plain.value])];
  if (!isPlainObject(condition)) return [];
  const clauses: JsonClause[] = [];
  for (const [operator, operand] of Object.entries(condition)) {
    if (operator === '$eq') {
      const t = typed(operand);
      if (t) clauses.push(guarded(path, t.types, '= ?', [t.value]));
    } else if (operator in RANGE_OPERATORS && (typeof operand === 'number' || typeof operand === 'string')) {
      const t = typed(operand);
      if (t) clauses.push(guarded(path, t.types, `${RANGE_OPERATORS[operator as keyof typeof RANGE_OPERATORS]} ?`, [t.value]));
    } else if (operator === '$regex' && typeof operand === 'string') {
      const options = (condition as { $options?: unknown }).$options;
      if (options !== undefined && options !== '' && options !== 'i') continue;
      const prefix = LITERAL_PREFIX.exec(operand)?.[1]?.replace(/\\(.)/g, '$1');
      if (prefix === undefined || prefix === '' || !ASCII.test(prefix)) continue;
      // mingo builds `new RegExp(pattern, options)`: without the u flag, /i folds ASCII letters only,
      // as LIKE does; case-sensitive, the first characters must be the prefix itself.
      if (options === 'i') clauses.push(guarded(path, ['text'], "LIKE ? ESCAPE '\\'", [`${prefix.replace(/[\\%_]/g, '\\$&')}%`]));
      else clauses.push(guarded(path, ['text'], 'GLOB ?', [`${prefix.replace(/[*?[]/g, (c) => `[${c}]`)}*`]));
    }
  }
  return clauses;
}

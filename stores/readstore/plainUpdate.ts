// The projections' updates are almost all `$set`/`$inc`/`$push`/`$unset` on plain paths. mingo
// builds a fresh operator context for every update, which costs more than the update itself, so
// such updates are applied here directly; anything else (arrays on the path, `$each`, conflicting
// paths, `_id`, non-numeric `$inc`) returns undefined and goes to mingo, which keeps the reference
// semantics. A property test holds this module to mingo's results.
import type { Document, Update } from './readStore';

type Plain = Record<string, unknown>;

const SUPPORTED = new Set(['$set', '$inc', '$push', '$unset']);

function isPlain(value: unknown): value is Plain {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

interface Step {
  op: string;
  path: string[];
  value: unknown;
}

/** The steps of an update this module can apply, or undefined when mingo must. */
function plan(update: Update): Step[] | undefined {
  const steps: Step[] = [];
  const paths = new Set<string>();
  for (const [op, fields] of Object.entries(update)) {
    if (op === '$setOnInsert') continue;
    if (!SUPPORTED.has(op) || !isPlain(fields)) return undefined;
    for (const [dotted, value] of Object.entries(fields)) {
      const path = dotted.split('.');
      if (path.some((part) => part === '' || part.startsWith('$') || part === '__proto__') || path[0] === '_id') return undefined;
      if (op === '$inc' && typeof value !== 'number') return undefined;
      if (op === '$push' && isPlain(value) && Object.keys(value).some((k) => k.startsWith('$'))) return undefined;
      if (paths.has(dotted)) return undefined;
      paths.add(dotted);
      steps.push({ op, path, value });
    }
  }
  // MongoDB refuses two operators on the same path (above) or on a path and its prefix: leave that
  // to mingo. Each path's proper prefixes are looked up, rather than every pair compared.
  for (const { path } of steps) {
    for (let end = 1; end < path.length; end++) if (paths.has(path.slice(0, end).join('.'))) return undefined;
  }
  return steps;
}

/** Equal as stored documents compare: by content, whatever the objects' prototypes; `undefined` properties count as absent. */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, i) => sameValue(item, b[i]));
  if (a instanceof Date) return b instanceof Date && a.getTime() === b.getTime();
  if (a instanceof Uint8Array) return b instanceof Uint8Array && Buffer.from(a).equals(b);
  if (isPlain(a)) {
    if (!isPlain(b)) return false;
    const keysA = Object.keys(a).filter((k) => a[k] !== undefined);
    const keysB = Object.keys(b).filter((k) => b[k] !== undefined);
    return keysA.length === keysB.length && keysA.every((k) => sameValue(a[k], b[k]));
  }
  return false;
}

/** A copy without `undefined` properties, as stored documents are kept. */
function copyValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copyValue);
  if (isPlain(value)) {
    const out: Plain = {};
    for (const [key, item] of Object.entries(value)) {
      if (item === undefined) continue;
      // An own `__proto__` key (a client's map) stays a key, as MongoDB stores it.
      if (key === '__proto__') Object.defineProperty(out, key, { value: copyValue(item), enumerable: true, writable: true, configurable: true });
      else out[key] = copyValue(item);
    }
    return out;
  }
  if (value instanceof Date) return new Date(value.getTime());
  if (value instanceof Uint8Array) return Buffer.from(value);
  return value;
}

/**
 * The updated document, sharing every untouched subtree with `doc` (stored documents are never handed
 * out, so sharing is safe), and whether anything changed; undefined when mingo must apply it.
 */
export function applyPlainUpdate(doc: Document, update: Update): { next: Document; changed: boolean } | undefined {
  const steps = plan(update);
  if (!steps) return undefined;
  // First check every step against the current document, so nothing is half applied on a fallback.
  for (const { op, path } of steps) {
    let node: unknown = doc;
    for (const part of path.slice(0, -1)) {
      node = (node as Plain)[part];
      if (node === undefined) break;
      if (!isPlain(node)) return undefined;
    }
    if (node === undefined) continue;
    const current = (node as Plain)[path[path.length - 1]!];
    if (op === '$inc' && current !== undefined && typeof current !== 'number') return undefined;
    if (op === '$push' && current !== undefined && !Array.isArray(current)) return undefined;
  }
  const next: Plain = { ...doc };
  const copied = new Set<Plain>([next]);
  let changed = false;
  for (const { op, path, value } of steps) {
    let node = next;
    let missing = false;
    for (const part of path.slice(0, -1)) {
      const child = node[part];
      if (child === undefined) {
        if (op === '$unset') {
          missing = true;
          break;
        }
        const made: Plain = {};
        copied.add(made);
        node[part] = made;
        node = made;
      } else if (copied.has(child as Plain)) {
        node = child as Plain;
      } else {
        const copy = { ...(child as Plain) };
        copied.add(copy);
        node[part] = copy;
        node = copy;
      }
    }
    if (missing) continue;
    const key = path[path.length - 1]!;
    const current = node[key];
    switch (op) {
      case '$set':
        if (current !== undefined && sameValue(current, value)) break;
        if (value === undefined) {
          // Dropped as on insert; it changed only if something was there.
          if (key in node) {
            delete node[key];
            changed = true;
          }
          break;
        }
        node[key] = copyValue(value);
        changed = true;
        break;
      case '$inc': {
        const sum = ((current as number | undefined) ?? 0) + (value as number);
        if (current !== undefined && Object.is(sum, current)) break;
        node[key] = sum;
        changed = true;
        break;
      }
      case '$push':
        node[key] = [...((current as unknown[] | undefined) ?? []), copyValue(value)];
        changed = true;
        break;
      case '$unset':
        if (key in node) {
          delete node[key];
          changed = true;
        }
        break;
    }
  }
  return { next: next as Document, changed };
}

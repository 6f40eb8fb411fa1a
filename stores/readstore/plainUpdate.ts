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
  dotted: string;
  path: readonly string[];
  value: unknown;
}

interface ParsedPath {
  parts: readonly string[];
  /** Its proper prefixes (`a`, `a.b` of `a.b.c`). */
  prefixes: readonly string[];
  /** A path this module may apply: no empty part, no operator, no `__proto__`, not `_id`. */
  plain: boolean;
}

/**
 * The projections update the same few paths over and over (`data.training.dataCount`): each is
 * split and checked once. Bounded: forgotten all at once when full.
 */
const parsedPaths = new Map<string, ParsedPath>();
const PARSED_PATHS_MAX = 10_000;

function parsePath(dotted: string): ParsedPath {
  let parsed = parsedPaths.get(dotted);
  if (parsed) return parsed;
  const parts = dotted.split('.');
  const prefixes: string[] = [];
  for (let dot = dotted.indexOf('.'); dot >= 0; dot = dotted.indexOf('.', dot + 1)) prefixes.push(dotted.slice(0, dot));
  const plain = parts[0] !== '_id' && !parts.some((part) => part === '' || part.startsWith('$') || part === '__proto__');
  parsed = { parts, prefixes, plain };
  if (parsedPaths.size >= PARSED_PATHS_MAX) parsedPaths.clear();
  parsedPaths.set(dotted, parsed);
  return parsed;
}

/** The steps of an update this module can apply, or undefined when mingo must. */
function plan(update: Update): Step[] | undefined {
  const steps: Step[] = [];
  const ops = Object.keys(update) as (keyof Update)[];
  for (const op of ops) {
    if (op === '$setOnInsert') continue;
    const fields = update[op];
    if (!SUPPORTED.has(op) || !isPlain(fields)) return undefined;
    for (const dotted of Object.keys(fields)) {
      const { parts, plain } = parsePath(dotted);
      if (!plain) return undefined;
      const value = fields[dotted];
      if (op === '$inc' && typeof value !== 'number') return undefined;
      if (op === '$push' && isPlain(value) && Object.keys(value).some((k) => k.startsWith('$'))) return undefined;
      // MongoDB refuses two operators on the same path: leave that to mingo. (Updates have few paths: a scan beats a set.)
      for (const step of steps) if (step.dotted === dotted) return undefined;
      steps.push({ op, dotted, path: parts, value });
    }
  }
  // Nor on a path and its prefix: each path's proper prefixes are looked up, rather than every pair compared.
  if (steps.length > 1) {
    for (const { dotted } of steps) {
      for (const prefix of parsePath(dotted).prefixes) for (const other of steps) if (other.dotted === prefix) return undefined;
    }
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
  if (value === null || typeof value !== 'object') return value;
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
  // `$setOnInsert` alone (an insertOnce that found its document): nothing to copy.
  if (steps.length === 0) return { next: doc, changed: false };
  // First check every step against the current document, so nothing is half applied on a fallback.
  for (const { op, path } of steps) {
    let node: unknown = doc;
    for (let i = 0; i < path.length - 1; i++) {
      node = (node as Plain)[path[i]!];
      if (node === undefined) break;
      if (!isPlain(node)) return undefined;
    }
    if (node === undefined) continue;
    const current = (node as Plain)[path[path.length - 1]!];
    if (op === '$inc' && current !== undefined && typeof current !== 'number') return undefined;
    if (op === '$push' && current !== undefined && !Array.isArray(current)) return undefined;
  }
  const next: Plain = { ...doc };
  // The objects made for this update (changed in place by later steps), when a path is nested.
  const copied: Plain[] = [next];
  let changed = false;
  for (const { op, path, value } of steps) {
    let node = next;
    let missing = false;
    for (let i = 0; i < path.length - 1; i++) {
      const part = path[i]!;
      const child = node[part];
      if (child === undefined) {
        if (op === '$unset') {
          missing = true;
          break;
        }
        const made: Plain = {};
        copied.push(made);
        node[part] = made;
        node = made;
      } else if (copied.includes(child as Plain)) {
        node = child as Plain;
      } else {
        const copy = { ...(child as Plain) };
        copied.push(copy);
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

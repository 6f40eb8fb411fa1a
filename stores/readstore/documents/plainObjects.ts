// Copies of documents as the MongoDB driver stores them: plain objects only, `undefined` left out,
// a `__proto__` key kept as data, so the same writes give the same documents on every adapter.

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Sets a property of the object itself: a client's map may hold the key `__proto__` (sample
 * metadata), which an assignment would take for the prototype and drop, while MongoDB stores it.
 */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/**
 * A deep copy that drops `undefined` properties, as the MongoDB adapter's driver does
 * (`ignoreUndefined`), so the same writes give the same documents on both.
 */
export function copyDoc<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => copyDoc(item)) as T;
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) if (item !== undefined) setOwn(out, key, copyDoc(item));
    return out as T;
  }
  if (value instanceof Date) return new Date(value.getTime()) as T;
  if (value instanceof Uint8Array) return Buffer.from(value) as T;
  return value;
}


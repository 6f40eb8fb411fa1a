// Documents handed to many readers at once (the SQLite store's kept answers, the API's kept
// principals) are frozen, so a reader that tried to change one fails loudly instead of changing
// what the others see.

/** Freezes a value and everything in it. */
export function deepFreeze<T>(value: T): T {
  // Typed arrays (Buffers) cannot be frozen: a read model's bytes stay changeable, and are never changed.
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value) && !ArrayBuffer.isView(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

/** What a throttle remembers about one key (an account, an address, or an account seen from an address). */
export interface WindowedCount {
  /** Failures (or requests) counted since `since`. */
  count: number;
  since: number;
  /** Attempts begun and not yet known to have failed or succeeded (kept for account-from-address keys). */
  pending: number;
  /** Refused until then (0: not locked). */
  lockedUntil: number;
}

/**
 * Counts per key over a fixed window that starts at the key's first count, in a map that never holds
 * more than `maxEntries` keys: a spray of random names or addresses evicts the keys touched longest
 * ago instead of growing the process. The price, documented in docs/login-throttling.md, is that an evicted key
 * starts again from zero.
 */
export class WindowedCounts {
  private readonly entries = new Map<string, WindowedCount>();

  constructor(
    private readonly windowMs: number,
    private readonly maxEntries: number,
    private readonly clock: () => number,
  ) {
    if (!(maxEntries >= 1)) throw new RangeError('maxEntries must be at least 1');
  }

  get size(): number {
    return this.entries.size;
  }

  /** The live entry for a key, created if needed; its window and lock are renewed when they have run out. */
  entry(key: string): WindowedCount {
    const now = this.clock();
    let entry = this.entries.get(key);
    if (entry) {
      // Re-inserted so that the Map's insertion order is the order of last use: the first key is the one to evict.
      this.entries.delete(key);
    } else {
      entry = { count: 0, since: now, pending: 0, lockedUntil: 0 };
      while (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    }
    this.entries.set(key, entry);
    this.expire(entry, now);
    return entry;
  }

  /** The entry if the key is known, without creating or reordering it. */
  peek(key: string): WindowedCount | undefined {
    const entry = this.entries.get(key);
    if (entry) this.expire(entry, this.clock());
    return entry;
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  private expire(entry: WindowedCount, now: number): void {
    if (entry.lockedUntil !== 0 && entry.lockedUntil <= now) {
      entry.lockedUntil = 0;
      entry.count = 0;
      entry.since = now;
    }
    if (entry.lockedUntil === 0 && now - entry.since >= this.windowMs) {
      entry.count = 0;
      entry.since = now;
    }
  }
}

// Values made of read-model reads, kept while the read models stand still: the API asks the same
// questions (who holds this key, what is this project) far more often than anything changes. An
// entry is good while the store's change mark (ReadStore.changeMark) is the one taken before its
// reads, and until its own time; any write anywhere, or the time passing, makes it a miss (past its
// time, a memo with a grace lets one caller make it anew while the others are still served it).
// Entries and their bytes are bounded, least recently used first out, so memory does not grow with use.

export interface MemoLimits {
  entries: number;
  /** What the kept values and their keys may weigh together, as the caller counts them. */
  bytes: number;
  /**
   * How long past its time a value whose mark stands may still serve while one caller makes it anew:
   * the first caller after its time misses, the others meanwhile do not all pile onto the store.
   * Zero (the default) for values whose time is a hard limit (a key's expiry).
   */
  graceMs?: number;
}

interface Entry<T> {
  mark: number;
  until: number;
  value: T;
  bytes: number;
  /** Set when a caller was sent to make the value anew after its time. */
  renewing: boolean;
}

export class ReadModelMemo<T> {
  /** In least-recently-used order (a Map keeps insertion order). */
  private readonly entries = new Map<string, Entry<T>>();
  private bytes = 0;

  /** @param changeMark the read store's change mark; a memo over a store without one keeps nothing. */
  constructor(
    private readonly changeMark: (() => number) | undefined,
    private readonly limits: MemoLimits,
  ) {}

  /** The mark to keep a value under, taken before the reads it is made of; undefined when nothing may be kept. */
  mark(): number | undefined {
    return this.changeMark?.();
  }

  get(key: string, now = Date.now()): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    const late = now - entry.until;
    if (entry.mark !== this.changeMark?.() || late >= (this.limits.graceMs ?? 0)) {
      this.forget(key, entry);
      return undefined;
    }
    if (late >= 0 && !entry.renewing) {
      entry.renewing = true;
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Keeps `value`, made of reads after `mark` was taken, until `until` (epoch ms); `bytes` is its weight. */
  set(key: string, mark: number | undefined, value: T, bytes: number, until: number): void {
    if (mark === undefined) return;
    const weight = bytes + key.length * 2;
    if (weight > this.limits.bytes) return;
    const before = this.entries.get(key);
    if (before) this.forget(key, before);
    this.entries.set(key, { mark, until, value, bytes: weight, renewing: false });
    this.bytes += weight;
    for (const [oldest, entry] of this.entries) {
      if (this.entries.size <= this.limits.entries && this.bytes <= this.limits.bytes) break;
      this.forget(oldest, entry);
    }
  }

  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }

  private forget(key: string, entry: Entry<T>): void {
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }
}

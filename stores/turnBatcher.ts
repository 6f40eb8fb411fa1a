// Group commit for the SQLite stores: the writes asked for during one turn of the event loop are
// committed together at the end of the turn, so one WAL sync makes them all durable.

interface Waiting<Item, Result> {
  item: Item;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}

export class TurnBatcher<Item, Result> {
  private queued: Waiting<Item, Result>[] = [];

  /**
   * @param commit writes a batch and answers each item's outcome (an Error fails that item alone);
   *   throwing fails the whole batch.
   */
  constructor(private readonly commit: (items: readonly Item[]) => readonly (Result | Error)[]) {}

  submit(item: Item): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.queued.push({ item, resolve, reject });
      if (this.queued.length === 1) setImmediate(() => this.flush());
    });
  }

  /** Commits what is queued now (also called before a close, so nothing accepted is dropped). */
  flush(): void {
    const batch = this.queued;
    this.queued = [];
    if (batch.length === 0) return;
    let outcomes: readonly (Result | Error)[];
    try {
      outcomes = this.commit(batch.map((w) => w.item));
    } catch (error) {
      for (const w of batch) w.reject(error);
      return;
    }
    batch.forEach((w, i) => {
      const outcome = outcomes[i]!;
      if (outcome instanceof Error) w.reject(outcome);
      else w.resolve(outcome);
    });
  }
}

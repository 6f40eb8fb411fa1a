// Writes through one store run one after another, per collection: on FerretDB an update is a read
// then a replace, so concurrent updates of one document lose all but one (20 concurrent `$inc: 1`
// gave 6); queued, the adapter's read-then-write fallbacks are atomic within a process too.

/** Runs the writes given to it one after another. */
export class WriteQueue {
  private tail: Promise<unknown> = Promise.resolve();

  /** @param changing told as each write starts and again as it ends (the store's change mark). */
  constructor(private readonly changing: () => void) {}

  run<R>(write: () => Promise<R>): Promise<R> {
    // Both ends: an answer read while the write was under way, kept under the mark taken then, must
    // not outlive it.
    const result = this.tail.then(async () => {
      this.changing();
      try {
        return await write();
      } finally {
        this.changing();
      }
    });
    this.tail = result.catch(() => undefined);
    return result;
  }
}

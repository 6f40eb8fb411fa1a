import type { StoredEvent } from '../stores/eventstore/eventStore';

const TURN = Symbol('turn');

/** Resolves after the events already due (I/O callbacks included) have been handled. */
const nextTurn = (): Promise<typeof TURN> => new Promise((resolve) => setImmediate(() => resolve(TURN)));

/**
 * Groups what an event source has already delivered into batches of at most `max`: a batch closes
 * when `max` is reached or at the first turn of the event loop after it opened with an event still
 * to come. So catching up on a long log (events delivered by promises alone, within one turn) gives
 * full batches, while a single live event is handed on at once. One turn is awaited per batch, not
 * per event: a timer per event cost more than the batch's handling of it.
 *
 * A full batch is handed on only after that turn: a source that reads without I/O (SQLite) never
 * lets the event loop turn otherwise, and a catch-up over a long log would hold every timer (group
 * commits, checkpoint flushes, progress) and every request until its end.
 * Closing the returned iterator does not close the source (its owner does, e.g. Subscription.close()).
 */
export async function* eventBatches(source: AsyncIterable<StoredEvent>, max: number): AsyncGenerator<StoredEvent[]> {
  const iterator = source[Symbol.asyncIterator]();
  const pull = () => {
    const next = iterator.next();
    // Observed now so that a failure while no one awaits it is not an unhandled rejection; it is
    // thrown again where it is awaited.
    next.catch(() => undefined);
    return next;
  };
  let pending = pull();
  try {
    for (;;) {
      const first = await pending;
      if (first.done) return;
      const batch = [first.value];
      pending = pull();
      let ended = false;
      const turn = nextTurn();
      while (batch.length < max) {
        const next = await Promise.race([pending, turn]);
        if (next === TURN) break;
        if (next.done) {
          ended = true;
          break;
        }
        batch.push(next.value);
        pending = pull();
      }
      if (batch.length >= max) await turn;
      yield batch;
      if (ended) return;
    }
  } finally {
    // Not awaited: a live subscription's pending read ends only when its owner closes it.
    void iterator.return?.()?.catch?.(() => undefined);
  }
}

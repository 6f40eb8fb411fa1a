import type { StoredEvent } from './eventStore';

const TURN = Symbol('turn');

/**
 * Groups what an event source has already delivered into batches of at most `max`: a batch closes
 * when `max` is reached or when a turn of the event loop has passed since it opened. So
 * catching up on a long log gives full batches, while a single live event is handed on at once.
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
      // One look at the next turn per batch, cancelled when the batch closes. A catch-up delivers on
      // promises alone and never lets a turn pass: a timer per event piled up there, each holding
      // the event it raced against, until the whole log was in memory.
      let turnPassed = false;
      let wake: (() => void) | undefined;
      const turn = setImmediate(() => {
        turnPassed = true;
        wake?.();
      });
      try {
        while (batch.length < max && !turnPassed) {
          const next = await new Promise<IteratorResult<StoredEvent> | typeof TURN>((resolve, reject) => {
            wake = () => resolve(TURN);
            pending.then(resolve, reject);
          });
          wake = undefined;
          if (next === TURN) break;
          if (next.done) {
            ended = true;
            break;
          }
          batch.push(next.value);
          pending = pull();
        }
      } finally {
        clearImmediate(turn);
      }
      yield batch;
      if (ended) return;
    }
  } finally {
    // Not awaited: a live subscription's pending read ends only when its owner closes it.
    void iterator.return?.()?.catch?.(() => undefined);
  }
}

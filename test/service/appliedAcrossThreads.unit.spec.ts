// The projections' thread tells the serving thread how far its committed read models go, and commits
// a position the serving thread waits for once applied. Two channels of one name in one thread hear
// each other as two threads would.
import { BroadcastChannel } from 'node:worker_threads';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AppliedElsewhere, announceApplied } from '../../service/roles/appliedAcrossThreads';
import type { Position } from '../../stores/eventstore/eventStore';
import type { ReadStore } from '../../stores/readstore/readStore';

const DATA_DIR = `/tmp/applied-across-threads-${process.pid}`;

/** A read store that commits on demand and tells its commits, as the SQLite one does. */
function committingStore() {
  const listeners = new Set<() => void>();
  const commit = vi.fn(() => listeners.forEach((l) => l()));
  const store = {
    onCommitted: (listener: () => void) => (listeners.add(listener), () => listeners.delete(listener)),
    commitGroup: commit,
  } as unknown as ReadStore;
  return { store, commit };
}

describe('the applied position across threads', () => {
  const stops: (() => void)[] = [];
  afterEach(() => stops.splice(0).forEach((s) => s()));

  it('tells each commit, and commits a wanted position once it is applied', async () => {
    const runner: { appliedPosition: Position | undefined } = { appliedPosition: undefined };
    const { store, commit } = committingStore();
    stops.push(announceApplied(runner, store, DATA_DIR));
    const serving = new AppliedElsewhere(DATA_DIR);
    stops.push(() => serving.close());
    const changes = vi.fn();
    serving.onChange(changes);

    runner.appliedPosition = 3n;
    store.commitGroup!();
    await vi.waitFor(() => expect(serving.position()).toBe(3n));
    expect(changes).toHaveBeenCalledTimes(1);

    // Wanted before it is applied: committed as soon as it is, not at the window's end.
    commit.mockClear();
    serving.want(7n);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(commit).not.toHaveBeenCalled();
    runner.appliedPosition = 7n;
    await vi.waitFor(() => expect(serving.position()).toBe(7n));
    expect(commit).toHaveBeenCalledTimes(1);
  });

  it('ignores what is not a position or a wish, and never goes back', async () => {
    const serving = new AppliedElsewhere(DATA_DIR);
    stops.push(() => serving.close());
    const other = new BroadcastChannel(`edge-ml-read-models-applied:${DATA_DIR}`);
    stops.push(() => other.close());
    for (const junk of [null, 'x', 5, Number.NaN, { want: 'x' }, { want: 1 }, [1n]]) other.postMessage(junk);
    other.postMessage(9n);
    await vi.waitFor(() => expect(serving.position()).toBe(9n));
    other.postMessage(4n);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(serving.position()).toBe(9n);
  });
});

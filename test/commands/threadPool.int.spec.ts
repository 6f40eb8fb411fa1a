import { availableParallelism } from 'node:os';
import { threadId } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { TaskAbortedError, TaskFailedError, ThreadPool } from '../../commands/jobs/threadPool';

const tasks = new URL('../support/poolTasks.ts', import.meta.url);
const pool = new ThreadPool(2);
afterAll(() => pool.close());

describe('the job thread pool', () => {
  it('is sized to the cores by default', async () => {
    const defaultPool = new ThreadPool();
    expect(defaultPool.size).toBe(availableParallelism());
    await defaultPool.close();
  });

  it('runs a TypeScript function in another thread and answers its result', async () => {
    const result = await pool.run<{ sum: number; threadId: number }>({ module: tasks, name: 'sumOfSquares', input: { n: 1000 } });
    expect(result.sum).toBe((1000 * 1001 * 2001) / 6);
    expect(result.threadId).not.toBe(threadId);
  });

  it('moves the buffers a task names to its thread instead of copying them', async () => {
    const bytes = new Uint8Array(1 << 20).fill(3);
    const result = await pool.run<{ sum: number; length: number }>({ module: tasks, name: 'byteSum', input: { bytes }, transfer: [bytes.buffer] });
    expect(result).toEqual({ sum: 3 << 20, length: 1 << 20 });
    // Detached here: the thread had the only copy.
    expect(bytes.byteLength).toBe(0);
  });

  it('keeps the calling event loop free while a task spins', async () => {
    const spinning = pool.run({ module: tasks, name: 'spin', input: { ms: 600 } });
    const before = Date.now();
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 20);
    await spinning;
    clearInterval(timer);
    // A loop blocked for 600 ms would have ticked about once.
    expect(ticks).toBeGreaterThanOrEqual(Math.floor((Date.now() - before) / 20 / 3));
    expect(ticks).toBeGreaterThan(5);
  });

  it('runs at most its size at once, the others waiting in order', async () => {
    const started = Date.now();
    const results = await Promise.all([1, 2, 3].map(() => pool.run<{ threadId: number }>({ module: tasks, name: 'spin', input: { ms: 300 } })));
    // Two threads: the third task waited for one of the first two.
    expect(Date.now() - started).toBeGreaterThanOrEqual(550);
    expect(new Set(results.map((r) => r.threadId)).size).toBeLessThanOrEqual(2);
    expect(pool.threads).toBeLessThanOrEqual(2);
  });

  it('passes the error of a failing task on, and goes on with the next', async () => {
    await expect(pool.run({ module: tasks, name: 'fails', input: { message: 'bad window' } })).rejects.toThrow(new TaskFailedError('bad window'));
    await expect(pool.run({ module: tasks, name: 'nope' })).rejects.toThrow(/exports no function "nope"/);
    await expect(pool.run<{ sum: number }>({ module: tasks, name: 'sumOfSquares', input: { n: 3 } })).resolves.toMatchObject({ sum: 14 });
  });

  it('stops a busy task within a second of its abort by terminating its thread', async () => {
    const controller = new AbortController();
    const spinning = pool.run({ module: tasks, name: 'spin', input: { ms: 30_000 } }, { signal: controller.signal });
    await new Promise((r) => setTimeout(r, 200));
    const aborted = Date.now();
    controller.abort();
    await expect(spinning).rejects.toBeInstanceOf(TaskAbortedError);
    expect(Date.now() - aborted).toBeLessThan(1000);
    await expect(pool.run<{ sum: number }>({ module: tasks, name: 'sumOfSquares', input: { n: 2 } })).resolves.toMatchObject({ sum: 5 });
  });
});

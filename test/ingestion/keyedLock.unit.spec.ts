import { describe, expect, it } from 'vitest';
import { KeyedLock } from '../../ingestion/keyedLock';

describe('a keyed lock', () => {
  it('runs work for one key one at a time, in arrival order, and other keys alongside', async () => {
    const lock = new KeyedLock();
    const log: string[] = [];
    const step = (name: string, ms: number) => async () => {
      log.push(`${name} start`);
      await new Promise((r) => setTimeout(r, ms));
      log.push(`${name} end`);
      return name;
    };
    const results = await Promise.all([lock.run('a', step('a1', 20)), lock.run('a', step('a2', 1)), lock.run('b', step('b1', 5))]);
    expect(results).toEqual(['a1', 'a2', 'b1']);
    expect(log.indexOf('a1 end')).toBeLessThan(log.indexOf('a2 start'));
    expect(log.indexOf('b1 start')).toBeLessThan(log.indexOf('a1 end'));
  });

  it('lets the next holder in when the work fails', async () => {
    const lock = new KeyedLock();
    await expect(lock.run('k', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await lock.run('k', async () => 'next')).toBe('next');
  });
});

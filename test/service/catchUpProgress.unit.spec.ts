import pino from 'pino';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { describeCatchUp, reportCatchUp } from '../../service/catchUpProgress';

function capture(): { log: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino({ level: 'info' }, sink), lines };
}

describe('catch-up progress at start', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reports the position against the head and the rate every interval, until stopped', () => {
    const { log, lines } = capture();
    const runner = { appliedPosition: 100n as bigint | undefined };
    const progress = reportCatchUp(runner, 1000n, log, 5000);
    vi.advanceTimersByTime(5000);
    runner.appliedPosition = 600n;
    vi.advanceTimersByTime(5000);
    progress.stop();
    vi.advanceTimersByTime(20_000);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ position: '100', head: '1000', percent: 10, perSecond: 0, seconds: 5, msg: 'catching up the read models: 10% of the log applied' });
    expect(lines[1]).toMatchObject({ position: '600', percent: 60, perSecond: 100, seconds: 10 });
  });

  it('gives the progress at any moment: no rate in the first second, then the rate since the start, then that of the last interval', () => {
    const { log } = capture();
    const runner = { appliedPosition: undefined as bigint | undefined };
    const progress = reportCatchUp(runner, 1000n, log, 5000);
    expect(progress.progress()).toEqual({ position: '0', head: '1000', percent: 0, perSecond: null, seconds: 0, secondsLeft: null });
    vi.advanceTimersByTime(2000);
    runner.appliedPosition = 100n;
    expect(progress.progress()).toEqual({ position: '100', head: '1000', percent: 10, perSecond: 50, seconds: 2, secondsLeft: 18 });
    vi.advanceTimersByTime(3000);
    runner.appliedPosition = 400n;
    vi.advanceTimersByTime(5000);
    // The last interval: 300 positions in 5 s.
    expect(progress.progress()).toEqual({ position: '400', head: '1000', percent: 40, perSecond: 60, seconds: 10, secondsLeft: 10 });
    runner.appliedPosition = 1000n;
    expect(progress.progress()).toMatchObject({ percent: 100, secondsLeft: 0 });
    progress.stop();
  });

  it('states the progress in a sentence, leaving out what it does not know yet', () => {
    expect(describeCatchUp({ position: '421', head: '1000', percent: 42.1, perSecond: 90, seconds: 3, secondsLeft: 7 })).toBe('42.1% of the log applied (position 421 of 1000, 90 a second, about 7 s left)');
    expect(describeCatchUp({ position: '0', head: '1000', percent: 0, perSecond: null, seconds: 0, secondsLeft: null })).toBe('0% of the log applied (position 0 of 1000)');
  });

  it('says nothing for an empty log', () => {
    const { log, lines } = capture();
    const progress = reportCatchUp({ appliedPosition: undefined }, undefined, log, 5000);
    vi.advanceTimersByTime(30_000);
    progress.stop();
    expect(lines).toEqual([]);
  });
});

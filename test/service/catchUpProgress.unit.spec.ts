import pino from 'pino';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { reportCatchUp } from '../../service/catchUpProgress';

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

  it('says nothing for an empty log', () => {
    const { log, lines } = capture();
    const progress = reportCatchUp({ appliedPosition: undefined }, undefined, log, 5000);
    vi.advanceTimersByTime(30_000);
    progress.stop();
    expect(lines).toEqual([]);
  });
});

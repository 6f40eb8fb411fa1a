// Admission (api/http/admission.ts): at most `limit` callers run, the next ones wait in order
// without starting their work, past `maxWaiting` one is refused with 503, and a failing caller
// hands its place on like a finishing one.
import { describe, expect, it } from 'vitest';
import { Admission } from '../../api/http/admission';
import { ServiceUnavailableError } from '../../domain/shared/errors';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe('Admission', () => {
  it('runs at most `limit` at once, starts the waiting ones in order as places free, and refuses past the waiting bound', async () => {
    const admission = new Admission(2, 2, 'slices');
    const started: number[] = [];
    const gates = Array.from({ length: 4 }, gate);
    const runs = gates.map((g, i) => admission.run(async () => {
      started.push(i);
      await g.opened;
      return i;
    }));
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0, 1]);
    expect(admission.load).toEqual({ running: 2, waiting: 2 });
    await expect(admission.run(async () => 'never')).rejects.toBeInstanceOf(ServiceUnavailableError);

    gates[1]!.open();
    expect(await runs[1]).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0, 1, 2]);
    gates[0]!.open();
    gates[2]!.open();
    gates[3]!.open();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3]);
    expect(started).toEqual([0, 1, 2, 3]);
    expect(admission.load).toEqual({ running: 0, waiting: 0 });
  });

  it('hands the place of a failing caller on, and passes the failure to that caller', async () => {
    const admission = new Admission(1, 1, 'slices');
    const first = gate();
    const failing = admission.run(async () => {
      await first.opened;
      throw new Error('the sample is gone');
    });
    const next = admission.run(async () => 'ran');
    first.open();
    await expect(failing).rejects.toThrow('the sample is gone');
    expect(await next).toBe('ran');
    expect(admission.load).toEqual({ running: 0, waiting: 0 });
  });
});

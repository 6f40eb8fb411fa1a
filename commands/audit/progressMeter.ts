// Progress of a long walk over the log, on stderr: a bar redrawn in place on a terminal, a plain
// line every few seconds otherwise (CI logs, pipes), and always a last line with the rate.

export interface ProgressMeter {
  /** `done` events so far, at `fraction` (0..1) of the way when known. */
  update(done: number, fraction?: number): void;
  finish(done: number): void;
}

export function progressMeter(what: string, stream: NodeJS.WriteStream = process.stderr, now: () => number = Date.now): ProgressMeter {
  const started = now();
  let lastDrawn = 0;
  const rate = (done: number) => Math.round(done / Math.max((now() - started) / 1000, 1e-3));
  const line = (done: number, fraction?: number) => {
    const share = fraction === undefined ? '' : ` ${(Math.min(Math.max(fraction, 0), 1) * 100).toFixed(1)}%`;
    return `${what}:${share} ${done.toLocaleString('en')} events, ${rate(done).toLocaleString('en')} events/s`;
  };
  return {
    update(done, fraction) {
      const t = now();
      if (stream.isTTY) {
        if (t - lastDrawn < 100) return;
        const width = 30;
        const filled = fraction === undefined ? 0 : Math.round(Math.min(Math.max(fraction, 0), 1) * width);
        stream.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${line(done, fraction)}`);
      } else {
        if (t - lastDrawn < 5000) return;
        stream.write(`${line(done, fraction)}\n`);
      }
      lastDrawn = t;
    },
    finish(done) {
      stream.write(`${stream.isTTY ? '\r' : ''}${line(done, 1)}\n`);
    },
  };
}

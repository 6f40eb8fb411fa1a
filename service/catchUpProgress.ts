// A start that must apply much of the log before it listens (the first start on a folder filled by
// an older version, or a read store replaced) says how far it is, rather than being silent for
// minutes: every few seconds, the position applied against the log's head and the events per second
// (positions of the SQLite log are consecutive; on EventStoreDB they are byte offsets, so the
// percentage holds and the rate is of positions).
import type { Logger } from 'pino';
import type { Position } from '../stores/eventstore/eventStore';

const EVERY_MS = 5000;

export interface CatchUp {
  stop(): void;
}

export function reportCatchUp(runner: { readonly appliedPosition: Position | undefined }, head: Position | undefined, log: Logger, everyMs = EVERY_MS): CatchUp {
  if (head === undefined || head === 0n) return { stop() {} };
  const started = Date.now();
  const from = runner.appliedPosition ?? 0n;
  let last = { at: started, position: from };
  const timer = setInterval(() => {
    const position = runner.appliedPosition ?? 0n;
    const now = Date.now();
    const rate = now > last.at ? Math.round((Number(position - last.position) * 1000) / (now - last.at)) : 0;
    const percent = Number((position * 1000n) / head) / 10;
    log.info({ position: position.toString(), head: head.toString(), percent, perSecond: rate, seconds: Math.round((now - started) / 1000) }, `catching up the read models: ${percent}% of the log applied`);
    last = { at: now, position };
  }, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

// A start that must apply much of the log before it serves (the first start on a folder filled by
// an older version, or a read store replaced) says how far it is, rather than being silent for
// minutes: every few seconds a log line, and at any moment a snapshot that the starting answers
// (service/startingGate.ts) carry: the position applied against the log's head and the events per
// second (positions of the SQLite log are consecutive; on EventStoreDB they are byte offsets, so the
// percentage holds and the rate is of positions).
import type { Logger } from 'pino';
import type { Position } from '../stores/eventstore/eventStore';

const EVERY_MS = 5000;

/** How far a catch-up is, as the log lines and the starting answers state it (positions as decimal strings). */
export interface CatchUpProgress {
  position: string;
  head: string;
  percent: number;
  /** Over the last reporting interval, else since the start once a second has passed; null before. */
  perSecond: number | null;
  seconds: number;
  /** The estimate at that rate; null while there is no rate. */
  secondsLeft: number | null;
}

export interface CatchUp {
  progress(): CatchUpProgress;
  stop(): void;
}

const percentOf = (position: Position, head: Position): number => (head === 0n ? 100 : Number((position * 1000n) / head) / 10);

export function reportCatchUp(runner: { readonly appliedPosition: Position | undefined }, head: Position | undefined, log: Logger, everyMs = EVERY_MS): CatchUp {
  const started = Date.now();
  const from = runner.appliedPosition ?? 0n;
  let last = { at: started, position: from };
  let lastRate: number | undefined;
  const progress = (): CatchUpProgress => {
    const position = runner.appliedPosition ?? 0n;
    const now = Date.now();
    const end = head ?? 0n;
    const elapsed = now - started;
    const perSecond = lastRate ?? (elapsed >= 1000 ? Math.round((Number(position - from) * 1000) / elapsed) : null);
    const left = end > position ? Number(end - position) : 0;
    return {
      position: position.toString(),
      head: end.toString(),
      percent: percentOf(position, end),
      perSecond,
      seconds: Math.round(elapsed / 1000),
      secondsLeft: left === 0 ? 0 : perSecond ? Math.ceil(left / perSecond) : null,
    };
  };
  if (head === undefined || head === 0n) return { progress, stop() {} };
  const timer = setInterval(() => {
    const position = runner.appliedPosition ?? 0n;
    const now = Date.now();
    lastRate = now > last.at ? Math.round((Number(position - last.position) * 1000) / (now - last.at)) : 0;
    last = { at: now, position };
    const { percent, seconds } = progress();
    log.info({ position: position.toString(), head: head.toString(), percent, perSecond: lastRate, seconds }, `catching up the read models: ${percent}% of the log applied`);
  }, everyMs);
  timer.unref();
  return { progress, stop: () => clearInterval(timer) };
}

/** The progress in a sentence, for the starting answers: "42.1% of the log applied (position 421 of 1000, 90 a second, about 7 s left)". */
export function describeCatchUp(p: CatchUpProgress): string {
  const details = [`position ${p.position} of ${p.head}`];
  if (p.perSecond !== null) details.push(`${p.perSecond} a second`);
  if (p.secondsLeft !== null) details.push(`about ${p.secondsLeft} s left`);
  return `${p.percent}% of the log applied (${details.join(', ')})`;
}

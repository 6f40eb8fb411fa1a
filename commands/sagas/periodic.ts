import type { Logger } from 'pino';

export interface Periodic {
  /** Runs the work now (after any run in progress); a failure is logged and retried next time. */
  runOnce(now?: Date): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Work that time, not an event, triggers: run at start and then every interval, one run at a time.
 * The work must be safe to repeat (commands with fixed ids, steps that can be done again).
 */
export function startPeriodic(what: string, log: Logger, intervalMs: number, work: (now: Date) => Promise<void>): Periodic {
  let running: Promise<void> = Promise.resolve();
  const runOnce = (now = new Date()): Promise<void> => {
    running = running.then(() => work(now)).catch((error: unknown) => log.error({ err: error }, `${what} failed; retrying at the next interval`));
    return running;
  };
  const timer = setInterval(() => void runOnce(), intervalMs);
  timer.unref();
  void runOnce();
  return {
    runOnce,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

import { TooManyAttemptsError } from './loginThrottle';

/**
 * Runs `run` (sync or async) and, when a throttle refuses it, tells the client when to come back in
 * a `Retry-After` header (seconds) beside the 429 the envelope writes.
 */
export function refusedWithRetryAfter<T>(ctx: { set(field: string, value: string): void }, run: () => T): T {
  const mark = (error: unknown): never => {
    if (error instanceof TooManyAttemptsError) ctx.set('Retry-After', String(Math.max(1, Math.ceil(error.retryAfterSeconds))));
    throw error;
  };
  try {
    const result = run();
    return (result instanceof Promise ? result.catch(mark) : result) as T;
  } catch (error) {
    return mark(error);
  }
}

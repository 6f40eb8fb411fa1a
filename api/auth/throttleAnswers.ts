import { TooManyAttemptsError } from './loginThrottle';

type Headers = { set(field: string, value: string): void };

/** Throws the refusal, telling the client when to come back in a `Retry-After` header (seconds) beside the 429. */
export function refuse(ctx: Headers, error: TooManyAttemptsError): never {
  ctx.set('Retry-After', String(Math.max(1, Math.ceil(error.retryAfterSeconds))));
  throw error;
}

/** Runs `run` (sync or async); when a throttle refuses it, the answer carries `Retry-After`. */
export function refusedWithRetryAfter<T>(ctx: Headers, run: () => T): T {
  const mark = (error: unknown): never => {
    if (error instanceof TooManyAttemptsError) refuse(ctx, error);
    throw error;
  };
  try {
    const result = run();
    return (result instanceof Promise ? result.catch(mark) : result) as T;
  } catch (error) {
    return mark(error);
  }
}

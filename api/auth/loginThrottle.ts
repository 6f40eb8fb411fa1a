import { DomainError } from '../../domain/shared/errors';

export class TooManyAttemptsError extends DomainError {
  constructor(readonly retryAfterSeconds: number) {
    super('TOO_MANY_ATTEMPTS', `Too many failed attempts: try again in ${Math.ceil(retryAfterSeconds / 60)} minute(s)`, 429);
  }
}

export interface ThrottleSettings {
  /** Failures counted over this window. */
  windowMs: number;
  /** From this many failures on, each attempt is slowed down. */
  slowAfter: number;
  /** At this many failures the key is refused for `lockMs`. */
  lockAfter: number;
  lockMs: number;
}

export const DEFAULT_THROTTLE: ThrottleSettings = { windowMs: 15 * 60_000, slowAfter: 3, lockAfter: 10, lockMs: 15 * 60_000 };

/**
 * Slows down and then refuses repeated failed logins (wrong passwords, wrong TOTP tokens) per
 * account and per network address. In memory: each API process keeps its own counts, so with N
 * processes an attacker gets at most N times the budget.
 */
export class LoginThrottle {
  private readonly failures = new Map<string, number[]>();
  private readonly lockedUntil = new Map<string, number>();

  constructor(
    private readonly settings: ThrottleSettings = DEFAULT_THROTTLE,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Throws 429 if any key is locked; otherwise answers how long to wait before checking the credentials. */
  check(keys: readonly string[]): number {
    const now = this.clock();
    let delay = 0;
    for (const key of keys) {
      const until = this.lockedUntil.get(key);
      if (until !== undefined && until > now) throw new TooManyAttemptsError((until - now) / 1000);
      const count = this.recent(key, now).length;
      if (count >= this.settings.slowAfter) delay = Math.max(delay, Math.min(2000, 100 * 2 ** (count - this.settings.slowAfter)));
    }
    return delay;
  }

  fail(keys: readonly string[]): void {
    const now = this.clock();
    for (const key of keys) {
      const recent = [...this.recent(key, now), now];
      this.failures.set(key, recent);
      if (recent.length >= this.settings.lockAfter) {
        this.lockedUntil.set(key, now + this.settings.lockMs);
        this.failures.delete(key);
      }
    }
  }

  succeed(keys: readonly string[]): void {
    for (const key of keys) this.failures.delete(key);
  }

  private recent(key: string, now: number): number[] {
    const list = (this.failures.get(key) ?? []).filter((t) => t > now - this.settings.windowMs);
    if (list.length === 0) this.failures.delete(key);
    return list;
  }
}

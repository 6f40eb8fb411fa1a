import { setTimeout as sleep } from 'node:timers/promises';
import { DomainError } from '../../domain/shared/errors';
import { WindowedCounts, type WindowedCount } from './windowedCounts';

export class TooManyAttemptsError extends DomainError {
  constructor(
    readonly retryAfterSeconds: number,
    what = 'failed attempts',
  ) {
    super('TOO_MANY_ATTEMPTS', `Too many ${what}: try again in ${TooManyAttemptsError.wait(retryAfterSeconds)}`, 429);
  }

  private static wait(seconds: number): string {
    return seconds < 60 ? `${Math.max(1, Math.ceil(seconds))} second(s)` : `${Math.ceil(seconds / 60)} minute(s)`;
  }
}

export interface ThrottleSettings {
  /** Failures are counted over this window, which starts at a key's first failure. */
  windowMs: number;
  /** This many failures of one address on one account refuse that address, for that account only, for `lockMs`. */
  lockAfter: number;
  lockMs: number;
  /** From this many failures on one account (from any address), every attempt on it waits. */
  accountSlowAfter: number;
  /** From this many failures from one address (on any accounts), every attempt from it waits. */
  addressSlowAfter: number;
  /** The first wait; it doubles with each further failure, up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Keys remembered per table (account, address, account from address); the least recently used go first. */
  maxEntries: number;
}

export const DEFAULT_THROTTLE: ThrottleSettings = {
  windowMs: 15 * 60_000,
  lockAfter: 10,
  lockMs: 15 * 60_000,
  accountSlowAfter: 3,
  addressSlowAfter: 100,
  baseDelayMs: 250,
  maxDelayMs: 3000,
  maxEntries: 20_000,
};

/**
 * Whose secret is being guessed, and from where. `account` is `user:<id>` once the name typed is
 * resolved (so a username and an e-mail share one count), else `name:<typed name, lowercased>`,
 * which is throttled exactly alike so that the throttle tells nothing about which accounts exist.
 */
export interface ThrottleKey {
  account: string;
  address: string;
}

/** One guess in progress: wait `delayMs`, check the secret, then say how it went (exactly once). */
export interface Attempt {
  readonly delayMs: number;
  failed(): void;
  succeeded(): void;
  /** Neither: the check did not happen or proved nothing (a TOTP token asked for after a right password). */
  abandoned(): void;
}

/** Error codes that mean "a secret was guessed wrong": what counts as a failure. */
export const GUESS_FAILURES: ReadonlySet<string> = new Set([
  'INVALID_CREDENTIALS',
  'TOTP_INVALID',
  'INVALID_CODE',
  'INVALID_TOTP',
  'WRONG_PASSWORD',
  'TOTP_REQUIRED',
]);

/**
 * Throttles guesses of secrets (passwords, TOTP tokens, reset and activation codes) without letting
 * anyone lock others out: an address that failed `lockAfter` times on an account is refused for that
 * account only; everyone else trying that account waits a growing, bounded delay; an address that
 * failed on many accounts is slowed at a much higher threshold and never refused. Guesses still in
 * flight count toward the cap, so a burst of parallel guesses cannot overshoot it before they fail.
 * In memory: each API process keeps its own counts (see docs/login-throttling.md for what that means).
 */
export class LoginThrottle {
  private readonly pairs: WindowedCounts;
  private readonly accounts: WindowedCounts;
  private readonly addresses: WindowedCounts;

  constructor(
    private readonly settings: ThrottleSettings = DEFAULT_THROTTLE,
    private readonly clock: () => number = Date.now,
  ) {
    this.pairs = new WindowedCounts(settings.windowMs, settings.maxEntries, clock);
    this.accounts = new WindowedCounts(settings.windowMs, settings.maxEntries, clock);
    this.addresses = new WindowedCounts(settings.windowMs, settings.maxEntries, clock);
  }

  /** Keys held per table, for the memory bound. */
  get sizes(): { pairs: number; accounts: number; addresses: number } {
    return { pairs: this.pairs.size, accounts: this.accounts.size, addresses: this.addresses.size };
  }

  /** Begins a guess; throws 429 when this address is locked out of this account. */
  begin(key: ThrottleKey): Attempt {
    const now = this.clock();
    // NUL cannot occur in an address, so no account/address pair can collide with another.
    const pairKey = `${key.address}\u0000${key.account}`;
    const pair = this.pairs.entry(pairKey);
    if (pair.lockedUntil > now) throw new TooManyAttemptsError((pair.lockedUntil - now) / 1000);
    // Guesses already in flight would overshoot the cap if they all failed.
    if (pair.count + pair.pending >= this.settings.lockAfter) throw new TooManyAttemptsError(1);
    const account = this.accounts.entry(key.account);
    const address = this.addresses.entry(key.address);
    // Delays follow failures only: honest logins in parallel (many users behind one NAT, or jobs
    // sharing one account) are not slowed for being parallel.
    const delayMs = Math.max(this.delay(account.count, this.settings.accountSlowAfter), this.delay(address.count, this.settings.addressSlowAfter));
    pair.pending++;
    let settled = false;
    const settle = (outcome: 'failed' | 'succeeded' | 'abandoned') => {
      if (settled) return;
      settled = true;
      // Looked up again: the window may have run out meanwhile, or the key been evicted.
      const current = this.pairs.entry(pairKey);
      current.pending = Math.max(0, current.pending - 1);
      if (outcome === 'failed') this.recordFailure(current, this.accounts.entry(key.account), this.addresses.entry(key.address));
      // A right secret from this address clears that address's count on the account; it says
      // nothing about other addresses, so the account's and the address's counts stay.
      if (outcome === 'succeeded') current.count = 0;
    };
    return { delayMs, failed: () => settle('failed'), succeeded: () => settle('succeeded'), abandoned: () => settle('abandoned') };
  }

  /**
   * Runs one guess: refused or delayed as `begin` says, then `check`; a `DomainError` whose code is
   * in `GUESS_FAILURES` counts as a failure, any other error as no guess at all.
   */
  async guard<T>(key: ThrottleKey, check: () => Promise<T>, wait: (ms: number) => Promise<unknown> = sleep): Promise<T> {
    const attempt = this.begin(key);
    try {
      if (attempt.delayMs > 0) await wait(attempt.delayMs);
      const result = await check();
      attempt.succeeded();
      return result;
    } catch (error) {
      if (error instanceof DomainError && GUESS_FAILURES.has(error.code)) attempt.failed();
      else attempt.abandoned();
      throw error;
    }
  }

  private recordFailure(pair: WindowedCount, account: WindowedCount, address: WindowedCount): void {
    const now = this.clock();
    for (const e of [pair, account, address]) {
      if (e.count === 0) e.since = now;
      e.count++;
    }
    if (pair.count >= this.settings.lockAfter && pair.lockedUntil <= now) pair.lockedUntil = now + this.settings.lockMs;
  }

  private delay(count: number, slowAfter: number): number {
    if (count < slowAfter) return 0;
    return Math.min(this.settings.maxDelayMs, this.settings.baseDelayMs * 2 ** Math.min(30, count - slowAfter));
  }
}

import { describe, expect, it } from 'vitest';
import { DEFAULT_THROTTLE, LoginThrottle, TooManyAttemptsError, type ThrottleKey, type ThrottleSettings } from '../../api/auth/loginThrottle';
import { DEFAULT_RESET_REQUESTS, ResetRequestThrottle } from '../../api/auth/resetRequestThrottle';
import { accountKey, clientAddress } from '../../api/auth/throttleKeys';
import { UnauthorizedError, ValidationError } from '../../domain/shared/errors';
import type { UserDocument } from '../../projections/users/userDocument';
import { loadConfig } from '../../main';

const minute = 60_000;

/** A clock the test moves by hand. */
function manualClock(start = Date.parse('2026-11-26T10:00:00Z')) {
  let now = start;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

function throttleWith(settings: Partial<ThrottleSettings> = {}) {
  const clock = manualClock();
  return { clock, throttle: new LoginThrottle({ ...DEFAULT_THROTTLE, ...settings }, clock.now) };
}

/** Begins and fails `n` guesses, answering the delay each one was given. */
function failTimes(throttle: LoginThrottle, key: ThrottleKey, n: number): number[] {
  const delays: number[] = [];
  for (let i = 0; i < n; i++) {
    const attempt = throttle.begin(key);
    delays.push(attempt.delayMs);
    attempt.failed();
  }
  return delays;
}

/** The delay a guess would get now, without counting it. */
function delayOf(throttle: LoginThrottle, key: ThrottleKey): number {
  const attempt = throttle.begin(key);
  attempt.abandoned();
  return attempt.delayMs;
}

const refusal = (run: () => unknown): TooManyAttemptsError | undefined => {
  try {
    run();
    return undefined;
  } catch (error) {
    if (error instanceof TooManyAttemptsError) return error;
    throw error;
  }
};

const ada: ThrottleKey = { account: 'user:7', address: '203.0.113.5' };

describe('the login throttle', () => {
  it('refuses an address that failed ten times on an account, for that account only', () => {
    const { throttle } = throttleWith();
    failTimes(throttle, ada, 10);
    const refused = refusal(() => throttle.begin(ada));
    expect(refused?.status).toBe(429);
    expect(refused?.retryAfterSeconds).toBe(15 * 60);
    expect(refused?.message).toBe('Too many failed attempts: try again in 15 minute(s)');
    // Another account from the very same address (a colleague behind the same NAT) is not refused.
    expect(delayOf(throttle, { account: 'user:8', address: ada.address })).toBe(0);
  });

  it('lets the same account be tried from another address after a delay, never a refusal', () => {
    const { throttle } = throttleWith();
    failTimes(throttle, ada, 10);
    const owner = throttle.begin({ account: ada.account, address: '198.51.100.9' });
    expect(owner.delayMs).toBeGreaterThan(0);
    expect(owner.delayMs).toBeLessThanOrEqual(DEFAULT_THROTTLE.maxDelayMs);
    owner.succeeded();
    // Ten attackers from ten addresses do not lock the account either: only each of them out of it.
    for (let i = 0; i < 10; i++) failTimes(throttle, { account: ada.account, address: `192.0.2.${i}` }, 10);
    expect(delayOf(throttle, { account: ada.account, address: '198.51.100.9' })).toBe(DEFAULT_THROTTLE.maxDelayMs);
  });

  it('grows the delay on an account from its third failure, doubling up to the cap', () => {
    const { throttle } = throttleWith();
    const delays = failTimes(throttle, ada, 10);
    expect(delays).toEqual([0, 0, 0, 250, 500, 1000, 2000, 3000, 3000, 3000]);
  });

  it('answers an unknown name exactly as a known account with a wrong password', () => {
    const { throttle } = throttleWith();
    const known = failTimes(throttle, ada, 10);
    const unknown = failTimes(throttle, { account: 'name:nobody', address: ada.address }, 10);
    expect(unknown).toEqual(known);
    expect(refusal(() => throttle.begin({ account: 'name:nobody', address: ada.address }))?.message).toBe(
      refusal(() => throttle.begin(ada))?.message,
    );
  });

  it('slows an address that fails on many accounts only from its hundredth failure, and never refuses it', () => {
    const { throttle } = throttleWith();
    const address = '203.0.113.77';
    for (let i = 0; i < 99; i++) failTimes(throttle, { account: `name:user${i}`, address }, 1);
    expect(delayOf(throttle, { account: 'user:1', address })).toBe(0);
    failTimes(throttle, { account: 'name:user99', address }, 1);
    expect(delayOf(throttle, { account: 'user:2', address })).toBe(250);
    for (let i = 100; i < 1000; i++) failTimes(throttle, { account: `name:user${i}`, address }, 1);
    expect(delayOf(throttle, { account: 'user:3', address })).toBe(DEFAULT_THROTTLE.maxDelayMs);
  });

  it('forgets failures after the window and lifts a lock after its time', () => {
    const { throttle, clock } = throttleWith();
    failTimes(throttle, ada, 10);
    clock.advance(15 * minute - 1);
    expect(refusal(() => throttle.begin(ada))?.retryAfterSeconds).toBeCloseTo(0.001);
    clock.advance(1);
    // The lock is over; the account's own count (from this same address) has its window over too.
    expect(delayOf(throttle, ada)).toBe(0);
  });

  it('clears an address’s count on an account when it gives the right secret, but not the account’s', () => {
    const { throttle } = throttleWith();
    failTimes(throttle, ada, 9);
    throttle.begin(ada).succeeded();
    // Nine more wrong guesses from there do not lock: the count started again.
    failTimes(throttle, ada, 9);
    expect(refusal(() => throttle.begin(ada))).toBeUndefined();
  });

  it('counts guesses in flight, so a parallel burst cannot overshoot the cap', () => {
    const { throttle } = throttleWith();
    const inFlight = Array.from({ length: 10 }, () => throttle.begin(ada));
    // Being parallel is no failure: nothing is slowed yet.
    expect(inFlight.map((a) => a.delayMs)).toEqual(Array(10).fill(0));
    const refused = refusal(() => throttle.begin(ada));
    expect([refused?.retryAfterSeconds, refused?.message]).toEqual([1, 'Too many failed attempts: try again in 1 second(s)']);
    for (const attempt of inFlight) attempt.abandoned();
    // None of them was a wrong guess: nothing is counted.
    expect(delayOf(throttle, ada)).toBe(0);
  });

  it('counts a settled attempt once however often it is settled', () => {
    const { throttle } = throttleWith({ lockAfter: 2 });
    const attempt = throttle.begin(ada);
    attempt.failed();
    attempt.failed();
    attempt.abandoned();
    expect(refusal(() => throttle.begin(ada))).toBeUndefined();
  });

  it('keeps at most maxEntries keys per table under a spray of random names and addresses, evicting the least recently used', () => {
    const { throttle } = throttleWith({ maxEntries: 100 });
    failTimes(throttle, ada, 10);
    for (let i = 0; i < 5000; i++) failTimes(throttle, { account: `name:${i}`, address: `10.0.${i >> 8}.${i & 255}` }, 1);
    expect(throttle.sizes).toEqual({ pairs: 100, accounts: 100, addresses: 100 });
    // Ada's lock was the oldest entry and has gone: the documented price of the bound.
    expect(refusal(() => throttle.begin(ada))).toBeUndefined();
  });

  it('keeps a key that is still being used while older ones are evicted', () => {
    const { throttle } = throttleWith({ maxEntries: 3 });
    failTimes(throttle, ada, 9);
    for (let i = 0; i < 10; i++) {
      failTimes(throttle, { account: `name:${i}`, address: ada.address }, 1);
      // Touching ada's pair keeps it among the most recent.
      throttle.begin(ada).abandoned();
    }
    failTimes(throttle, ada, 1);
    expect(refusal(() => throttle.begin(ada))?.status).toBe(429);
  });

  describe('guarding a check', () => {
    const noWait = async () => undefined;

    it('counts a wrong code as a failure and waits the delay it was given', async () => {
      const { throttle } = throttleWith({ lockAfter: 4 });
      const waits: number[] = [];
      const wrong = () => Promise.reject(new ValidationError('Invalid or expired activation code', 'INVALID_CODE'));
      for (let i = 0; i < 4; i++) await expect(throttle.guard(ada, wrong, async (ms) => waits.push(ms))).rejects.toThrow('Invalid or expired');
      expect(waits).toEqual([250]);
      await expect(throttle.guard(ada, async () => 'never checked', noWait)).rejects.toBeInstanceOf(TooManyAttemptsError);
    });

    it('does not count an error that is no wrong guess', async () => {
      const { throttle } = throttleWith({ lockAfter: 1 });
      await expect(throttle.guard(ada, () => Promise.reject(new Error('store down')), noWait)).rejects.toThrow('store down');
      await expect(throttle.guard(ada, async () => 'checked', noWait)).resolves.toBe('checked');
      await expect(throttle.guard(ada, () => Promise.reject(new UnauthorizedError('The password is not correct', 'WRONG_PASSWORD')), noWait)).rejects.toThrow();
      await expect(throttle.guard(ada, async () => 'checked', noWait)).rejects.toBeInstanceOf(TooManyAttemptsError);
    });
  });
});

describe('the password reset request throttle', () => {
  it('mails an account three times per window whoever asks, then answers without mailing', () => {
    const clock = manualClock();
    const throttle = new ResetRequestThrottle(DEFAULT_RESET_REQUESTS, clock.now);
    const sent = Array.from({ length: 20 }, (_, i) => throttle.admit({ account: 'user:7', address: `192.0.2.${i}` }).send);
    expect(sent.filter(Boolean)).toHaveLength(3);
    expect(sent.slice(0, 3)).toEqual([true, true, true]);
    clock.advance(5 * minute);
    expect(throttle.admit({ account: 'user:7', address: '192.0.2.98' })).toEqual({ send: false, retryAfterSeconds: 10 * 60 });
    clock.advance(10 * minute);
    expect(throttle.admit({ account: 'user:7', address: '192.0.2.99' })).toEqual({ send: true, retryAfterSeconds: 0 });
  });

  it('refuses an address its thirty-first request in a window, known names and unknown alike', () => {
    const clock = manualClock();
    const throttle = new ResetRequestThrottle(DEFAULT_RESET_REQUESTS, clock.now);
    for (let i = 0; i < 30; i++) throttle.admit({ account: i % 2 ? `user:${i}` : `name:nobody${i}@example.com`, address: '203.0.113.5' });
    expect(() => throttle.admit({ account: 'user:1000', address: '203.0.113.5' })).toThrow('Too many password reset requests: try again in 15 minute(s)');
    // Another address is not affected.
    expect(throttle.admit({ account: 'user:1000', address: '203.0.113.6' }).send).toBe(true);
  });

  it('keeps at most maxEntries accounts and addresses', () => {
    const throttle = new ResetRequestThrottle({ ...DEFAULT_RESET_REQUESTS, maxEntries: 50 }, manualClock().now);
    for (let i = 0; i < 2000; i++) throttle.admit({ account: `name:${i}@example.com`, address: `10.1.${i >> 8}.${i & 255}` });
    expect(throttle.sizes).toEqual({ accounts: 50, addresses: 50 });
  });
});

describe('what a guess is counted under', () => {
  const user = { id: 7, username: 'Ada', usernameLower: 'ada', email: 'Ada@Example.com', emailLower: 'ada@example.com' } as UserDocument;

  it('counts a username and an e-mail in any case under the one account they name', () => {
    expect(accountKey(user, 'ADA')).toBe('user:7');
    expect(accountKey(user, ' ada@EXAMPLE.com ')).toBe('user:7');
  });

  it('counts a name that matches no one under the name, lowercased', () => {
    expect(accountKey(null, ' NoBody ')).toBe('name:nobody');
  });

  const peer = (ip: string, forwardedFor = '') => ({ ip, get: (field: string) => (field.toLowerCase() === 'x-forwarded-for' ? forwardedFor : '') });

  it('takes the socket address, IPv4-mapped addresses as IPv4 and IPv6 by their /64', () => {
    expect(clientAddress(peer('::ffff:203.0.113.5'))).toBe('203.0.113.5');
    expect(clientAddress(peer('127.0.0.2'))).toBe('127.0.0.2');
    expect(clientAddress(peer('2001:db8:1:2:aaaa:bbbb:cccc:dddd'))).toBe('2001:db8:1:2::/64');
    expect(clientAddress(peer('2001:0db8:0001:0002::1'))).toBe('2001:db8:1:2::/64');
    expect(clientAddress(peer('2001:db8::1'))).toBe('2001:db8:0:0::/64');
    expect(clientAddress(peer('::1'))).toBe('0:0:0:0::/64');
    expect(clientAddress(peer('fe80::1%eth0'))).toBe('fe80:0:0:0::/64');
    expect(clientAddress(peer(''))).toBe('unknown');
  });

  it('ignores X-Forwarded-For unless proxies are trusted', () => {
    expect(clientAddress(peer('10.0.0.1', '198.51.100.7'))).toBe('10.0.0.1');
  });

  it('takes, behind trusted proxies, the entry the outermost of them appended, which a client cannot forge', () => {
    // The client wrote "1.2.3.4" itself; the one trusted proxy appended the address it saw.
    expect(clientAddress(peer('10.0.0.1', '1.2.3.4, 198.51.100.7'), 1)).toBe('198.51.100.7');
    expect(clientAddress(peer('10.0.0.1', '1.2.3.4, 198.51.100.7, 10.0.0.9'), 2)).toBe('198.51.100.7');
    // Fewer entries than proxies: the leftmost was still written by a trusted proxy.
    expect(clientAddress(peer('10.0.0.1', '198.51.100.7'), 2)).toBe('198.51.100.7');
    // No header (a request from the proxy itself) or a value that is no address: the socket's peer.
    expect(clientAddress(peer('10.0.0.1'), 1)).toBe('10.0.0.1');
    expect(clientAddress(peer('10.0.0.1', 'x'.repeat(5000)), 1)).toBe('10.0.0.1');
    expect(clientAddress(peer('10.0.0.1', '2001:db8:5:6::1'), 1)).toBe('2001:db8:5:6::/64');
  });
});

describe('the trusted proxy setting', () => {
  it('trusts no proxy by default and reads a number of hops', () => {
    expect(loadConfig({}).trustedProxyHops).toBe(0);
    expect(loadConfig({ TRUSTED_PROXY_HOPS: '2' }).trustedProxyHops).toBe(2);
  });

  it('stops the start with a message naming the variable for a value that is not a small number', () => {
    for (const value of ['yes', '-1', '1.5', '10']) expect(() => loadConfig({ TRUSTED_PROXY_HOPS: value })).toThrow(/TRUSTED_PROXY_HOPS/);
  });
});

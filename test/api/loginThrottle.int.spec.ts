import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerUser, routeSpec, type Answer as SpecAnswer, type RouteSpec } from '../support/routeSpec';

const PASSWORD = 'correct horse battery';

interface Answer {
  status: number;
  body: Record<string, unknown>;
  retryAfter: string | undefined;
  /** Milliseconds the request took on the throttles' (virtual) clock. */
  ms: number;
  /** That clock when the answer arrived. */
  at: number;
}

/**
 * A JSON call to the management API from a chosen address (the in-memory socket's peer): distinct
 * clients as the service sees them, without trusting any header.
 */
async function callFrom(spec: RouteSpec, from: string, pathname: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const answer: SpecAnswer = await spec.request('POST', pathname, { body, headers, from });
  const retryAfter = answer.headers['retry-after'];
  return { status: answer.status, body: answer.body, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, ms: answer.ms, at: answer.at };
}

const login = (service: RouteSpec, from: string, username: string, password: string, headers?: Record<string, string>) =>
  callFrom(service, from, '/api-login', { username, password }, headers);

/** `n` wrong passwords sent at once, as an impatient guesser would. */
const wrongPasswords = (service: RouteSpec, from: string, names: readonly string[]) =>
  Promise.all(names.map((name, i) => login(service, from, name, `wrong guess ${i}`)));

// The throttle lives in the API process's memory, the same whichever stores run behind it: the API
// app over in-memory stores (test/support/routeSpec.ts), whose throttles wait on a virtual clock.
describe('login and code throttling over HTTP, clients told apart by their source address', () => {
  let service: RouteSpec;
  let staffToken: string;

  beforeAll(async () => {
    service = await routeSpec();
    staffToken = (await registerUser(service, 'staff')).token;
  });
  afterAll(async () => {
    await service?.close();
  });

  it('locks an address out of one account after ten wrong passwords, whatever name was typed, and no one else', async () => {
    await registerUser(service, 'owner');
    await registerUser(service, 'colleague');
    // Half by username, half by e-mail in another case: one account, one count.
    const names = [...Array<string>(5).fill('owner'), ...Array<string>(5).fill('OWNER@Example.com')];
    const failures = await wrongPasswords(service, '127.0.0.2', names);
    expect(failures.map((f) => f.status)).toEqual(Array(10).fill(401));

    const refused = await login(service, '127.0.0.2', 'owner@example.com', PASSWORD);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ success: false, error: 'Too many failed attempts: try again in 15 minute(s)' });
    expect(Number(refused.retryAfter)).toBeGreaterThan(14 * 60);
    expect((await login(service, '127.0.0.2', 'Owner', PASSWORD)).status).toBe(429);
    // A forged X-Forwarded-For is not believed: the app does not sit behind a trusted proxy.
    expect((await login(service, '127.0.0.2', 'owner', PASSWORD, { 'x-forwarded-for': '198.51.100.1' })).status).toBe(429);

    // A colleague behind the same address is not refused.
    expect((await login(service, '127.0.0.2', 'colleague', PASSWORD)).status).toBe(200);

    // The real owner from another address gets in, after the account's bounded delay (3 s at most).
    const fromHome = await login(service, '127.0.0.3', 'owner', PASSWORD);
    expect(fromHome.status).toBe(200);
    expect(fromHome.ms).toBeGreaterThanOrEqual(2900);
    // A wrong password from there is a plain 401, not a refusal.
    expect((await login(service, '127.0.0.3', 'owner', 'still wrong')).status).toBe(401);
  }, 60_000);

  it('answers an unknown name exactly as a known account with a wrong password', async () => {
    await registerUser(service, 'known');
    const [known, unknown] = await Promise.all([
      wrongPasswords(service, '127.0.0.4', Array<string>(10).fill('known')),
      wrongPasswords(service, '127.0.0.5', Array<string>(10).fill('ghost')),
    ]);
    expect(unknown.map((a) => [a.status, a.body])).toEqual(known.map((a) => [a.status, a.body]));
    const [knownRefused, unknownRefused] = await Promise.all([login(service, '127.0.0.4', 'known', 'x'), login(service, '127.0.0.5', 'GHOST', 'x')]);
    expect([unknownRefused.status, unknownRefused.body]).toEqual([knownRefused.status, knownRefused.body]);
    // Each lockout ends a fixed time after its tenth failure: the two waits differ only by when the
    // two guessers' last failures and these refusals landed (apart by seconds on a loaded machine).
    const lockoutEnd = (refused: Answer) => Number(refused.retryAfter) + refused.at / 1000;
    const lastFailure = (answers: Answer[]) => Math.max(...answers.map((a) => a.at)) / 1000;
    expect(Math.abs(lockoutEnd(unknownRefused) - lockoutEnd(knownRefused) - (lastFailure(unknown) - lastFailure(known)))).toBeLessThanOrEqual(1);
    // From elsewhere, both are slowed alike.
    const [knownSlowed, unknownSlowed] = await Promise.all([login(service, '127.0.0.6', 'known', 'x'), login(service, '127.0.0.6', 'ghost', 'x')]);
    expect([unknownSlowed.status, unknownSlowed.body]).toEqual([knownSlowed.status, knownSlowed.body]);
    expect(knownSlowed.ms).toBeGreaterThanOrEqual(2900);
    expect(unknownSlowed.ms).toBeGreaterThanOrEqual(2900);
  }, 60_000);

  it('sends at most three reset e-mails to an account per window, answering every request alike, and refuses a spraying address', async () => {
    const user = await registerUser(service, 'forgetful');
    const answers = [];
    for (let i = 0; i < 20; i++) answers.push(await callFrom(service, `127.0.1.${i + 1}`, '/api-user-request-reset-password', { email: 'forgetful@example.com' }));
    expect(answers.map((a) => [a.status, a.body])).toEqual(Array(20).fill([200, { success: true }]));
    await service.caughtUp();
    const mails = await service.request('GET', `/api/users/${user.id}/emails`, { headers: { 'x-jwt-token': staffToken } });
    const { emails } = mails.body as unknown as { emails: { subject: string }[] };
    expect(emails.filter((m) => m.subject === 'Reset your password')).toHaveLength(3);

    // One address asking for many accounts, known or not, is refused from its 31st request.
    const spray = [];
    for (let i = 0; i < 30; i++) spray.push(await callFrom(service, '127.0.2.1', '/api-user-request-reset-password', { email: `nobody${i}@example.com` }));
    expect(spray.every((a) => a.status === 200)).toBe(true);
    const refused = await callFrom(service, '127.0.2.1', '/api-user-request-reset-password', { email: 'forgetful@example.com' });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toBe('Too many password reset requests: try again in 15 minute(s)');
    expect((await callFrom(service, '127.0.2.2', '/api-user-request-reset-password', { email: 'nobody0@example.com' })).status).toBe(200);
  }, 60_000);

  it('counts wrong reset codes like wrong passwords: that address is refused, the owner elsewhere resets', async () => {
    const user = await registerUser(service, 'resetter');
    await callFrom(service, '127.0.3.1', '/api-user-request-reset-password', { email: 'resetter@example.com' });
    await service.caughtUp();
    const mails = await service.request('GET', `/api/users/${user.id}/emails`, { headers: { 'x-jwt-token': staffToken } });
    const { emails } = mails.body as unknown as { emails: { subject: string; bodyText: string }[] };
    const code = /code is: ([A-Z0-9-]+)/.exec(emails.find((m) => m.subject === 'Reset your password')?.bodyText ?? '')?.[1];
    expect(code).toBeDefined();

    const guesses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => callFrom(service, '127.0.3.2', '/api-user-verify-reset-password-code', { email: 'resetter@example.com', code: `AAAA-AAA${i}` })),
    );
    expect(guesses.map((g) => g.status)).toEqual(Array(10).fill(400));
    expect((await callFrom(service, '127.0.3.2', '/api-user-verify-reset-password-code', { email: 'resetter@example.com', code })).status).toBe(429);
    // The same account's login from that address is refused too: one budget per account and address.
    expect((await login(service, '127.0.3.2', 'resetter', PASSWORD)).status).toBe(429);

    const reset = await callFrom(service, '127.0.3.1', '/api-user-reset-password', { email: 'resetter@example.com', code, newPassword: 'a brand new password' });
    expect(reset.status).toBe(200);
    expect((await login(service, '127.0.3.1', 'resetter', 'a brand new password')).status).toBe(200);
  }, 60_000);

  it('throttles a signed-in session guessing the current password', async () => {
    const user = await registerUser(service, 'stolen');
    const guesses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        callFrom(service, '127.0.4.1', '/api/user/change-password', { currentPassword: `guess ${i}`, newPassword: 'attacker password' }, { 'x-jwt-token': user.token }),
      ),
    );
    expect(guesses.map((g) => g.status)).toEqual(Array(10).fill(401));
    const refused = await callFrom(service, '127.0.4.1', '/api/user/change-password', { currentPassword: PASSWORD, newPassword: 'attacker password' }, { 'x-jwt-token': user.token });
    expect(refused.status).toBe(429);
    expect((await login(service, '127.0.4.2', 'stolen', PASSWORD)).status).toBe(200);
  }, 60_000);

  it('refuses an address that guessed invitation codes, and no other', async () => {
    const guesses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => callFrom(service, '127.0.5.1', '/api/user/by-third-party-activation-code', { activationCode: `ZZZZ-ZZZ${i}` })),
    );
    expect(guesses.map((g) => g.status)).toEqual(Array(10).fill(400));
    expect((await callFrom(service, '127.0.5.1', '/api/user/by-third-party-activation-code', { activationCode: 'ZZZZ-ZZZZ' })).status).toBe(429);
    expect((await callFrom(service, '127.0.5.2', '/api/user/by-third-party-activation-code', { activationCode: 'ZZZZ-ZZZZ' })).status).toBe(400);
  }, 60_000);

  it('slows down and then refuses repeated wrong passwords with 429', async () => {
    await registerUser(service, 'target');
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await login(service, '127.0.7.1', 'target', `wrong ${i}`)).status);
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(statuses[10]).toBe(429);
    const right = await login(service, '127.0.7.1', 'target', PASSWORD);
    expect(right.status).toBe(429);
    expect(String(right.body.error)).toMatch(/Too many failed attempts/);
  }, 60_000);

  it('does not slow or refuse an address shared by many honest users who log in', async () => {
    const names = ['nat1', 'nat2', 'nat3', 'nat4', 'nat5'];
    for (const name of names) await registerUser(service, name);
    // Each of them mistypes twice, then logs in: ten failures on the address, on five accounts.
    await wrongPasswords(service, '127.0.6.1', names.flatMap((n) => [n, n]));
    const logins = await Promise.all(names.map((n) => login(service, '127.0.6.1', n, PASSWORD)));
    expect(logins.map((l) => l.status)).toEqual(Array(5).fill(200));
  }, 60_000);
});

describe('login throttling behind one trusted reverse proxy (TRUSTED_PROXY_HOPS=1)', () => {
  let service: RouteSpec;
  beforeAll(async () => {
    service = await routeSpec({ settings: { trustedProxyHops: 1 } });
  });
  afterAll(async () => {
    await service?.close();
  });

  // Every request comes from the proxy's socket (127.0.0.1 here); the proxy appends the client's address.
  const viaProxy = (client: string, username: string, password: string, forgedByClient?: string) =>
    login(service, '127.0.0.1', username, password, { 'x-forwarded-for': forgedByClient ? `${forgedByClient}, ${client}` : client });

  it('counts clients by the address the proxy appended, which a client cannot forge', async () => {
    await registerUser(service, 'owner');
    const failures = await Promise.all(Array.from({ length: 10 }, (_, i) => viaProxy('198.51.100.1', 'owner', `wrong ${i}`)));
    expect(failures.map((f) => f.status)).toEqual(Array(10).fill(401));
    expect((await viaProxy('198.51.100.1', 'owner', PASSWORD)).status).toBe(429);
    // Writing another address in front of the header does not escape the lock.
    expect((await viaProxy('198.51.100.1', 'owner', PASSWORD, '203.0.113.9')).status).toBe(429);
    // Another client behind the same proxy is not refused.
    expect((await viaProxy('198.51.100.2', 'owner', PASSWORD)).status).toBe(200);
  }, 60_000);
});

import { afterAll, beforeAll, expect, it } from 'vitest';
import { signBody } from '../../commands/users/subscriptions';
import { totpSteps } from '../support/totp';
import { TEST_PAYMENT_SECRET, call, describeOn, setups, signup, startTestService, type TestService } from '../support/testService';

const PASSWORD = 'correct horse battery';

/** The code in the newest e-mail with this subject the user received (read as staff). */
async function codeFromEmail(service: TestService, staffToken: string, userId: number, subject: string): Promise<string> {
  // A reset request answers before its e-mail is in the read models (so that its timing does not
  // tell whether the address exists): wait for them to catch up with the log.
  await service.projections!.waitFor((await service.stores.events.headPosition())!, 5000);
  const res = await call(service, 'GET', `/api/users/${userId}/emails`, { headers: { 'x-jwt-token': staffToken } });
  const mail = (res.body.emails as { subject: string; bodyText: string }[]).find((m) => m.subject === subject);
  const code = /code is: ([A-Z0-9-]+)/.exec(mail?.bodyText ?? '')?.[1];
  if (!code) throw new Error(`no "${subject}" e-mail with a code for user ${userId}: ${JSON.stringify(res.body)}`);
  return code;
}


for (const setup of setups) {
  describeOn(setup, 'user accounts over HTTP', () => {
    let service: TestService;
    let staff: { id: number; token: string };
    let grace: { id: number; token: string };

    const jwt = (token: string) => ({ 'x-jwt-token': token });
    const loginAs = async (username: string, password = PASSWORD, totpToken?: string) =>
      call(service, 'POST', '/api-login', { body: { username, password, ...(totpToken ? { totpToken } : {}) } });
    const register = async (username: string) => {
      const res = await call(service, 'POST', '/api-user-create', { body: signup({ username, email: `${username}@example.com`, name: username }) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const token = String((await loginAs(username)).body.token);
      return { id: Number(res.body.id), token };
    };

    beforeAll(async () => {
      service = await startTestService({ mongo: setup.mongo });
      staff = await register('admin');
      grace = await register('grace');
    });
    afterAll(async () => {
      await service?.destroy();
    });

    it('makes the first user staff, with the permission to list e-mails, and no one else', async () => {
      const admin = await call(service, 'GET', '/api/user', { headers: jwt(staff.token) });
      expect(admin.body).toMatchObject({ staffInfo: { isStaff: true }, permissions: expect.arrayContaining(['users:emails:read']) });
      const user = await call(service, 'GET', '/api/user', { headers: jwt(grace.token) });
      expect(user.body).toMatchObject({ staffInfo: { isStaff: false }, permissions: [] });
      const denied = await call(service, 'GET', '/api/user/emails', { headers: jwt(grace.token) });
      expect(denied.status).toBe(403);
    });

    it('records the activation e-mail, unsent without SMTP, with subject and both bodies', async () => {
      const res = await call(service, 'GET', `/api/users/${grace.id}/emails`, { headers: jwt(staff.token) });
      expect(res.status).toBe(200);
      expect(res.body.emails).toEqual([
        expect.objectContaining({
          userId: grace.id,
          to: 'grace@example.com',
          subject: 'Activate your account',
          bodyText: expect.stringMatching(/code is: [A-Z0-9]{4}-[A-Z0-9]{4}/),
          bodyHTML: expect.stringContaining('<p>'),
          sent: false,
          providerResponse: expect.stringMatching(/SMTP/),
        }),
      ]);
    });

    it('activates with the e-mailed code; a fresh code replaces the old one', async () => {
      const first = await codeFromEmail(service, staff.token, grace.id, 'Activate your account');
      const wrong = await call(service, 'POST', '/api/user/activate', { headers: jwt(grace.token), body: { code: 'AAAA-BBBB' } });
      expect(wrong).toMatchObject({ status: 400, body: { success: false, error: 'Invalid or expired activation code' } });
      expect((await call(service, 'POST', '/api/user/request-activation', { headers: jwt(grace.token) })).status).toBe(200);
      const second = await codeFromEmail(service, staff.token, grace.id, 'Activate your account');
      expect(second).not.toBe(first);
      expect((await call(service, 'POST', '/api/user/activate', { headers: jwt(grace.token), body: { code: first } })).status).toBe(400);
      expect((await call(service, 'POST', '/api/user/activate', { headers: jwt(grace.token), body: { code: second } })).status).toBe(200);
      const user = await call(service, 'GET', '/api/user', { headers: jwt(grace.token) });
      expect(user.body.activated).toBe(true);
      expect(user.body.notifications).not.toContain('activate-account');
      expect((await call(service, 'POST', '/api/user/activate', { headers: jwt(grace.token), body: { code: second } })).status).toBe(409);
    });

    it('updates the profile and refuses bad values', async () => {
      const ok = await call(service, 'POST', '/api/user', { headers: jwt(grace.token), body: { name: 'Grace Hopper', jobTitle: 'Rear admiral', experiments: ['dark-mode'], timezone: 'Europe/Amsterdam', projectsSortOrder: 'name-asc' } });
      expect(ok.status).toBe(200);
      const user = await call(service, 'GET', '/api/user', { headers: jwt(grace.token) });
      expect(user.body).toMatchObject({ name: 'Grace Hopper', jobTitle: 'Rear admiral', timezone: 'Europe/Amsterdam', projectsSortOrder: 'name-asc' });
      expect(user.body.experiments).toContainEqual(expect.objectContaining({ type: 'dark-mode', enabled: true }));
      expect((await call(service, 'POST', '/api/user', { headers: jwt(grace.token), body: { timezone: 'Mars/Olympus' } })).body.error).toMatch(/time zone/);
      expect((await call(service, 'POST', '/api/user', { headers: jwt(grace.token), body: { projectsSortOrder: 'random' } })).status).toBe(400);
      expect((await call(service, 'POST', '/api/user', { headers: jwt(grace.token), body: { name: 42 } })).body.error).toMatch(/"name"/);
    });

    it('records terms, EULAs and dismissed notifications', async () => {
      expect((await call(service, 'POST', '/api/user/accept-tos', { headers: jwt(grace.token) })).status).toBe(200);
      expect((await call(service, 'POST', '/api/user/accept-eula', { headers: jwt(grace.token), body: { name: 'syntiant' } })).status).toBe(200);
      expect((await call(service, 'POST', '/api/user/accept-eula', { headers: jwt(grace.token), body: { name: 'acme' } })).status).toBe(400);
      expect((await call(service, 'POST', '/api/user/dismiss-notification', { headers: jwt(grace.token), body: { notification: 'welcome' } })).status).toBe(200);
      const user = await call(service, 'GET', '/api/user', { headers: jwt(grace.token) });
      expect(user.body.lastAcceptedTermsOfService).toEqual({ version: expect.any(String), acceptanceDate: expect.any(String) });
      expect(user.body.eulas).toContainEqual(expect.objectContaining({ name: 'syntiant', acceptedVersion: '2022-08', userIsCompliant: true }));
      expect(user.body.notifications).not.toContain('welcome');
    });

    it('creates the developer profile once and lists its organization', async () => {
      const res = await call(service, 'POST', '/api/user/create-developer-profile', { headers: jwt(grace.token) });
      expect(res.body).toEqual({ success: true, organizationId: expect.any(Number) });
      const again = await call(service, 'POST', '/api/user/create-developer-profile', { headers: jwt(grace.token) });
      expect(again.status).toBe(409);
      const orgs = await call(service, 'GET', '/api/user/organizations', { headers: jwt(grace.token) });
      expect(orgs.body.organizations).toEqual([expect.objectContaining({ id: res.body.organizationId, name: 'grace', isDeveloperProfile: true, isAdmin: true })]);
      expect((await call(service, 'GET', '/api/users/buckets', { headers: jwt(grace.token) })).body).toEqual({ success: true, buckets: [] });
    });

    it('starts one enterprise trial with its organization', async () => {
      const res = await call(service, 'POST', '/api/user/trial', { headers: jwt(grace.token), body: { organizationName: 'Navy labs' } });
      expect(res.body).toEqual({ success: true, id: expect.any(Number), userId: grace.id });
      const again = await call(service, 'POST', '/api/user/trial', { headers: jwt(grace.token), body: {} });
      expect(again).toMatchObject({ status: 409, body: { error: 'An enterprise trial can be started only once per user' } });
      const trials = await call(service, 'GET', `/api/users/${grace.id}/trials`, { headers: jwt(grace.token) });
      expect(trials.body.trials).toEqual([expect.objectContaining({ userId: grace.id, organizationId: res.body.id, expiredDate: null })]);
      const user = await call(service, 'GET', '/api/user', { headers: jwt(grace.token) });
      expect(user.body).toMatchObject({ hasEnterpriseFeaturesAccess: true, activeEnterpriseTrial: expect.objectContaining({ organizationId: res.body.id }) });
    });

    it('lets a user act on themselves by id, staff on anyone, and nobody else', async () => {
      expect((await call(service, 'GET', `/api/users/${grace.id}`, { headers: jwt(grace.token) })).status).toBe(200);
      expect((await call(service, 'GET', `/api/users/${staff.id}`, { headers: jwt(grace.token) })).status).toBe(403);
      expect((await call(service, 'GET', `/api/users/${grace.id}`, { headers: jwt(staff.token) })).body.username).toBe('grace');
      expect((await call(service, 'GET', '/api/users/99999', { headers: jwt(staff.token) })).status).toBe(404);
      expect((await call(service, 'DELETE', `/api/users/${grace.id}`, { headers: jwt(staff.token), body: { password: PASSWORD } })).status).toBe(403);
    });

    it('refuses an API key on JWT-only operations', async () => {
      const projects = await call(service, 'GET', '/api/projects', { headers: jwt(grace.token) });
      const project = (projects.body.projects as { id: number }[])[0]!;
      const keys = await call(service, 'GET', `/api/${project.id}/devkeys`, { headers: jwt(grace.token) });
      const res = await call(service, 'POST', '/api/user/accept-tos', { headers: { 'x-api-key': String(keys.body.apiKey) } });
      expect(res.status).toBe(401);
    });

    it('runs a subscription through checkout, payment, cancellation, undo and its end', async () => {
      const user = await register('sub');
      expect((await call(service, 'GET', '/api/user/subscription/metrics', { headers: jwt(user.token) })).status).toBe(403);
      const upgrade = await fetch(`${service.apiUrl}/v1/api/user/subscription/upgrade`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/json', ...jwt(user.token) }, body: '{}' });
      expect(upgrade.status).toBe(302);
      const location = new URL(upgrade.headers.get('location')!);
      expect(location.origin + location.pathname).toBe('https://pay.test/checkout');
      const checkoutId = location.searchParams.get('checkout')!;
      const notify = async (body: object, signature?: string) => {
        const raw = JSON.stringify(body);
        return call(service, 'POST', '/api/payments/notification', { rawBody: raw, headers: { 'x-payment-signature': signature ?? signBody(raw, TEST_PAYMENT_SECRET) } });
      };
      const periodStart = new Date(Date.now() - 1000).toISOString();
      const periodEnd = new Date(Date.now() + 1500).toISOString();
      const paid = { type: 'checkout.completed', checkoutId, userId: user.id, periodStart, periodEnd };
      expect((await notify(paid, 'sha256=' + '0'.repeat(64))).status).toBe(401);
      expect((await notify({ ...paid, checkoutId: 'co_other' })).status).toBe(400);
      expect((await notify(paid)).status).toBe(200);
      expect((await notify(paid)).status).toBe(200);
      expect((await call(service, 'GET', '/api/user', { headers: jwt(user.token) })).body.tier).toBe('professional');
      expect((await call(service, 'GET', '/api/user/subscription/metrics', { headers: jwt(user.token) })).status).toBe(200);
      expect((await call(service, 'POST', '/api/user/subscription/cancel', { headers: jwt(user.token), body: {} })).status).toBe(200);
      expect((await call(service, 'GET', '/api/user', { headers: jwt(user.token) })).body.subscriptionCancellationRequestDate).toEqual(expect.any(String));
      expect((await call(service, 'POST', '/api/user/subscription/undo-cancel', { headers: jwt(user.token) })).status).toBe(200);
      expect((await call(service, 'GET', '/api/user', { headers: jwt(user.token) })).body.subscriptionCancellationRequestDate).toBeUndefined();
      expect((await call(service, 'POST', '/api/user/subscription/cancel', { headers: jwt(user.token), body: {} })).status).toBe(200);
      await new Promise((r) => setTimeout(r, 1600));
      await service.endDueSubscriptions();
      await service.projections!.waitFor((await service.stores.events.headPosition())!, 2000);
      const ended = await call(service, 'GET', '/api/user', { headers: jwt(user.token) });
      expect(ended.body).toMatchObject({ tier: 'free', subscriptionTerminationDate: expect.any(String) });
      const undo = await call(service, 'POST', '/api/user/subscription/undo-cancel', { headers: jwt(user.token) });
      expect(undo).toMatchObject({ status: 409, body: { error: 'A canceled subscription cannot be reactivated' } });
      expect((await call(service, 'GET', '/api/user/subscription/metrics', { headers: jwt(user.token) })).status).toBe(403);
    });

    it('resets a password with the e-mailed code, ending every earlier session', async () => {
      const user = await register('resetme');
      const unknown = await call(service, 'POST', '/api-user-request-reset-password', { body: { email: 'nobody@example.com' } });
      const known = await call(service, 'POST', '/api-user-request-reset-password', { body: { email: 'resetme@example.com' } });
      expect(unknown.body).toEqual(known.body);
      const code = await codeFromEmail(service, staff.token, user.id, 'Reset your password');
      expect((await call(service, 'POST', '/api-user-verify-reset-password-code', { body: { email: 'resetme@example.com', code: 'AAAA-AAAA' } })).status).toBe(400);
      expect((await call(service, 'POST', '/api-user-verify-reset-password-code', { body: { email: 'resetme@example.com', code } })).status).toBe(200);
      expect((await call(service, 'POST', '/api-user-reset-password', { body: { email: 'resetme@example.com', code, newPassword: 'short' } })).status).toBe(400);
      expect((await call(service, 'POST', '/api-user-reset-password', { body: { email: 'resetme@example.com', code, newPassword: 'a brand new password' } })).status).toBe(200);
      const old = await call(service, 'GET', '/api/user', { headers: jwt(user.token) });
      expect(old).toMatchObject({ status: 401, body: { error: expect.stringMatching(/session has ended/) } });
      expect((await loginAs('resetme')).status).toBe(401);
      expect((await loginAs('resetme', 'a brand new password')).status).toBe(200);
      expect((await call(service, 'POST', '/api-user-reset-password', { body: { email: 'resetme@example.com', code, newPassword: 'yet another password' } })).status).toBe(400);
    });

    it('changes a password only with the current one, ending earlier sessions', async () => {
      const user = await register('changer');
      const wrong = await call(service, 'POST', '/api/user/change-password', { headers: jwt(user.token), body: { currentPassword: 'nope', newPassword: 'another password' } });
      expect(wrong.status).toBe(401);
      const ok = await call(service, 'POST', '/api/user/change-password', { headers: jwt(user.token), body: { currentPassword: PASSWORD, newPassword: 'another password' } });
      expect(ok.status).toBe(200);
      expect((await call(service, 'GET', '/api/user', { headers: jwt(user.token) })).status).toBe(401);
      expect((await loginAs('changer', 'another password')).status).toBe(200);
    });

    it('runs TOTP MFA: create, confirm, required at login, single use, recovery codes, clear', async () => {
      const user = await register('mfa');
      const created = await call(service, 'POST', '/api/user/mfa/totp/create-key', { headers: jwt(user.token) });
      expect(created.body).toEqual({ success: true, key: expect.stringMatching(/^[A-Z2-7]+$/), url: expect.stringMatching(/^otpauth:\/\/totp\//) });
      const key = String(created.body.key);
      const tokens = await totpSteps(key, 10);
      expect((await call(service, 'POST', '/api/user/mfa/totp/set-key', { headers: jwt(user.token), body: { key, totpToken: '000000' } })).status).toBe(400);
      const set = await call(service, 'POST', '/api/user/mfa/totp/set-key', { headers: jwt(user.token), body: { key, totpToken: tokens.previous } });
      expect(set.body.recoveryCodes).toHaveLength(10);
      const recovery = (set.body.recoveryCodes as string[])[0]!;
      expect((await call(service, 'POST', '/api/user/mfa/totp/create-key', { headers: jwt(user.token) })).status).toBe(409);
      expect((await call(service, 'GET', '/api/user', { headers: jwt(user.token) })).body.mfaConfigured).toBe(true);

      const noToken = await loginAs('mfa');
      expect(noToken.status).toBe(401);
      expect(String(noToken.body.error)).toMatch(/^ERR_TOTP_TOKEN IS REQUIRED/);
      const token = tokens.current;
      expect((await loginAs('mfa', PASSWORD, token)).status).toBe(200);
      expect((await loginAs('mfa', PASSWORD, token)).status, 'a token is not accepted twice').toBe(401);
      expect((await loginAs('mfa', 'wrong password', tokens.next)).body.error).toBe('Invalid username or password');
      expect((await loginAs('mfa', PASSWORD, recovery)).status).toBe(200);
      expect((await loginAs('mfa', PASSWORD, recovery)).status, 'a recovery code is used once').toBe(401);

      const fresh = String((await loginAs('mfa', PASSWORD, (set.body.recoveryCodes as string[])[1])).body.token);
      expect((await call(service, 'POST', '/api/user/mfa/totp/clear', { headers: jwt(fresh), body: { totpToken: '123456' } })).status).toBe(400);
      expect((await call(service, 'POST', '/api/user/mfa/totp/clear', { headers: jwt(fresh), body: { totpToken: tokens.next } })).status).toBe(200);
      expect((await loginAs('mfa')).status).toBe(200);
    });

    it('records logins, failed and successful, for auditors, without the password', async () => {
      const events = await service.stores.events.readStream(`logins-${grace.id}`);
      const logins = events.filter((e) => e.type === 'LoginSucceeded' || e.type === 'LoginFailed');
      // Password logins are audit records beside the user's stream, which does not grow with them.
      expect((await service.stores.events.readStream(`user-${grace.id}`)).some((e) => e.type === 'LoginSucceeded')).toBe(false);
      expect(logins.length).toBeGreaterThan(0);
      expect(logins[0]!.data).toMatchObject({ userId: grace.id, address: '127.0.0.1' });
      expect(JSON.stringify(events, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))).not.toContain(PASSWORD);
    });

    it('deletes an account with its password: it cannot log in, its names are free, its data is unreadable', async () => {
      const victim = await register('forgetme');
      await call(service, 'POST', '/api/user', { headers: jwt(victim.token), body: { jobTitle: 'Secret agent', companyName: 'Hidden Corp' } });
      expect((await call(service, 'DELETE', '/api/user', { headers: jwt(victim.token), body: {} })).status).toBe(400);
      expect((await call(service, 'DELETE', '/api/user', { headers: jwt(victim.token), body: { password: 'wrong' } })).status).toBe(401);
      expect((await call(service, 'DELETE', '/api/user', { headers: jwt(victim.token), body: { password: PASSWORD } })).status).toBe(200);
      expect((await call(service, 'GET', '/api/user', { headers: jwt(victim.token) })).status).toBe(401);
      expect((await loginAs('forgetme')).status).toBe(401);

      // No personal value of the user stands in clear in the whole log.
      const inner = (service.stores.events as unknown as { inner: { readAll(): AsyncIterable<unknown> } }).inner;
      const raw: unknown[] = [];
      for await (const e of inner.readAll()) raw.push(e);
      const text = JSON.stringify(raw, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
      for (const value of ['forgetme@example.com', 'Secret agent', 'Hidden Corp']) expect(text).not.toContain(value);
      // Replayed through the sealing store, the user's sealed fields are gone for good.
      const replay = await service.stores.events.readStream(`user-${victim.id}`);
      expect(replay[0]!.data).toMatchObject({ email: null, name: null });

      const again = await call(service, 'POST', '/api-user-create', { body: signup({ username: 'forgetme', email: 'forgetme@example.com', name: 'New person' }) });
      expect(again.status).toBe(200);
    });
  });
}

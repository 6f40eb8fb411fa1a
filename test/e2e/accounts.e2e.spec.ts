import { EdgeImpulseApi } from 'edge-impulse-api';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { signBody } from '../../commands/users/subscriptions';
import { totpSteps } from '../support/totp';
import { TEST_PAYMENT_SECRET, describeOn, setups, startTestService, type TestService } from '../support/testService';

// Account flows through the official SDK, unmodified.
for (const setup of setups) {
  describeOn(setup, 'account flows through the official SDK', () => {
    let service: TestService;
    let admin: EdgeImpulseApi;
    let adminId: number;

    const sdk = () => new EdgeImpulseApi({ endpoint: service.apiUrl });
    const signIn = async (username: string, password: string, totpToken?: string) => {
      const api = sdk();
      const { token } = await api.login.login({ username, password, ...(totpToken ? { totpToken } : {}) });
      await api.authenticate({ method: 'jwtToken', jwtToken: token! });
      return api;
    };
    const signUp = async (username: string, password = 'a long password') => {
      const { id } = await sdk().user.createUser({ name: username, username, email: `${username}@example.com`, password, privacyPolicy: true, turnstileResponse: 'ok' });
      return { id: id!, api: await signIn(username, password) };
    };
    /** The code of the newest e-mail with this subject, read by staff through the SDK. */
    const emailedCode = async (userId: number, subject: string) => {
      await service.projections!.waitFor((await service.stores.events.headPosition())!, 5000);
      const { emails } = await admin.user.listEmailsUser(userId);
      return /code is: ([A-Z0-9-]+)/.exec(emails.find((e) => e.subject === subject)?.bodyText ?? '')![1]!;
    };

    beforeAll(async () => {
      service = await startTestService({ mongo: setup.mongo });
      const first = await signUp('admin');
      admin = first.api;
      adminId = first.id;
    });
    afterAll(async () => {
      await service?.destroy();
    });

    it('signs up and activates the account with the code from the e-mail', async () => {
      const { id, api } = await signUp('ada');
      expect((await api.user.getCurrentUser()).activated).toBe(false);
      await api.user.activateCurrentUser({ code: await emailedCode(id, 'Activate your account') });
      expect((await api.user.getCurrentUser()).activated).toBe(true);
      expect((await admin.user.getUser(adminId)).staffInfo.isStaff).toBe(true);
    });

    it('logs in with MFA: the SDK sees the TOTP error text the CLI looks for, then succeeds with a token', async () => {
      const { api } = await signUp('mfa');
      const { key } = await api.user.userGenerateNewTotpMfaKey();
      const tokens = await totpSteps(key);
      const { recoveryCodes } = await api.user.userSetTotpMfaKey({ key, totpToken: tokens.previous });
      expect(recoveryCodes).toHaveLength(10);
      await expect(sdk().login.login({ username: 'mfa', password: 'a long password' })).rejects.toThrow(/^ERR_TOTP_TOKEN IS REQUIRED/);
      const withToken = await signIn('mfa', 'a long password', tokens.current);
      expect((await withToken.user.getCurrentUser()).mfaConfigured).toBe(true);
    });

    it('resets a forgotten password with the e-mailed code', async () => {
      const { id } = await signUp('forgetful');
      await sdk().user.requestResetPassword({ email: 'forgetful@example.com' });
      const code = await emailedCode(id, 'Reset your password');
      await sdk().user.verifyResetPassword({ email: 'forgetful@example.com', code });
      await sdk().user.resetPassword({ email: 'forgetful@example.com', code, newPassword: 'remembered at last' });
      await expect(sdk().login.login({ username: 'forgetful', password: 'a long password' })).rejects.toThrow('Invalid username or password');
      await signIn('forgetful', 'remembered at last');
    });

    it('cancels a subscription and undoes the cancellation', async () => {
      const { id, api } = await signUp('payer');
      const upgrade = await fetch(`${service.apiUrl}/v1/api/user/subscription/upgrade`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/json', 'x-jwt-token': String((await sdk().login.login({ username: 'payer', password: 'a long password' })).token) },
        body: '{}',
      });
      const checkoutId = new URL(upgrade.headers.get('location')!).searchParams.get('checkout')!;
      const raw = JSON.stringify({ type: 'checkout.completed', checkoutId, userId: id, periodStart: new Date().toISOString(), periodEnd: new Date(Date.now() + 30 * 86400_000).toISOString() });
      const paid = await fetch(`${service.apiUrl}/v1/api/payments/notification`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-payment-signature': signBody(raw, TEST_PAYMENT_SECRET) }, body: raw });
      expect(paid.status).toBe(200);
      expect((await api.user.getCurrentUser()).tier).toBe('professional');
      await api.user.userCancelSubscription({});
      expect((await api.user.getCurrentUser()).subscriptionCancellationRequestDate).toBeInstanceOf(Date);
      await api.user.userUndoCancelSubscription();
      expect((await api.user.getCurrentUser()).subscriptionCancellationRequestDate).toBeUndefined();
      await api.user.userGetSubscriptionMetrics();
    });

    it('deletes the account: it can no longer log in', async () => {
      const { api } = await signUp('leaver');
      await expect(api.user.deleteCurrentUser({ password: 'not it' })).rejects.toThrow('The password is not correct');
      await api.user.deleteCurrentUser({ password: 'a long password' });
      await expect(api.user.getCurrentUser()).rejects.toThrow();
      await expect(sdk().login.login({ username: 'leaver', password: 'a long password' })).rejects.toThrow('Invalid username or password');
    });
  });
}

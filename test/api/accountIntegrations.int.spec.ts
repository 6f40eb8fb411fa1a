import { SignJWT, exportSPKI, generateKeyPair, type CryptoKey } from 'jose';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPendingUser } from '../../commands/users/pendingUser';
import { signBody } from '../../commands/users/subscriptions';
import { IdAllocator } from '../../commands/idAllocator';
import { UniquenessReservations } from '../../commands/uniqueness';
import { queueEmail } from '../../commands/emails/queueEmail';
import { allProjections } from '../../projections';
import { EMAILS, type EmailDocument } from '../../projections/emails/emailDocument';
import { ProjectionRunner } from '../../projections/projectionRunner';
import { snapshot } from '../support/sampleLog';
import { call, describeOn, setups, signup, startTestService, type TestService } from '../support/testService';
import pino from 'pino';

const INTERNAL_SECRET = 'internal-secret-0123456789';
const PASSWORD = 'correct horse battery';

for (const setup of setups) {
  describeOn(setup, 'SSO, invitations, internal callers and support mail over HTTP', () => {
    let service: TestService;
    let idpKey: CryptoKey;
    let staffToken: string;

    const jwt = (token: string) => ({ 'x-jwt-token': token });
    const accessToken = (email: string, key: CryptoKey = idpKey) =>
      new SignJWT({ email }).setProtectedHeader({ alg: 'RS256' }).setIssuer('https://idp.test').setExpirationTime('5m').sign(key);
    const signed = (pathname: string, body: object, secret = INTERNAL_SECRET) => {
      const raw = JSON.stringify(body);
      return call(service, 'POST', pathname, { rawBody: raw, headers: { 'x-internal-signature': signBody(raw, secret) } });
    };
    const mailsTo = async (userId: number) => {
      await service.projections!.waitFor((await service.stores.events.headPosition())!, 5000);
      return (await call(service, 'GET', `/api/users/${userId}/emails`, { headers: jwt(staffToken) })).body.emails as { subject: string; bodyText: string; to: string }[];
    };

    beforeAll(async () => {
      const pair = await generateKeyPair('RS256');
      idpKey = pair.privateKey;
      const providers = [{ name: 'corp-idp', domains: ['corp.test'], publicKey: await exportSPKI(pair.publicKey), algorithm: 'RS256', issuer: 'https://idp.test' }];
      service = await startTestService({
        mongo: setup.mongo,
        env: { SSO_IDENTITY_PROVIDERS: JSON.stringify(providers), INTERNAL_API_SECRET: INTERNAL_SECRET, SUPPORT_EMAIL: 'help@support.test', STAFF_USERNAMES: 'Helper, other' },
      });
      await call(service, 'POST', '/api-user-create', { body: signup({ username: 'staff', email: 'staff@example.com' }) });
      staffToken = String((await call(service, 'POST', '/api-login', { body: { username: 'staff', password: PASSWORD } })).body.token);
    });
    afterAll(async () => {
      await service?.destroy();
    });

    it('makes the users named by STAFF_USERNAMES staff too', async () => {
      await call(service, 'POST', '/api-user-create', { body: signup({ username: 'helper', email: 'helper@example.com' }) });
      const token = String((await call(service, 'POST', '/api-login', { body: { username: 'helper', password: PASSWORD } })).body.token);
      const me = await call(service, 'GET', '/api/user', { headers: jwt(token) });
      expect(me.body).toMatchObject({ staffInfo: { isStaff: true }, permissions: expect.arrayContaining(['users:emails:read']) });
      expect((await call(service, 'GET', `/api/users/${String(me.body.id)}/emails`, { headers: jwt(token) })).status).toBe(200);
    });

    it('lists identity providers by e-mail domain and lets an SSO user set a password with a signed access token', async () => {
      expect((await call(service, 'GET', '/api-sso/someone%40corp.test')).body).toEqual({ success: true, idps: ['corp-idp'] });
      expect((await call(service, 'GET', '/api-sso/someone%40other.test')).body).toEqual({ success: true, idps: [] });
      const created = await call(service, 'POST', '/api-user-create', { body: signup({ username: 'sso', email: 'sso@corp.test', password: undefined, identityProvider: 'corp-idp' }) });
      const userId = Number(created.body.id);
      const need = await call(service, 'GET', '/api-user-need-to-set-password/sso');
      expect(need.body).toMatchObject({ needPassword: true, email: 'sso@corp.test', idps: ['corp-idp'] });

      const forged = await accessToken('sso@corp.test', (await generateKeyPair('RS256')).privateKey);
      expect((await call(service, 'POST', `/api/users/${userId}/set-password`, { body: { accessToken: forged, identityProvider: 'corp-idp', password: 'sso password 1' } })).status).toBe(401);
      const otherUser = await accessToken('boss@corp.test');
      expect((await call(service, 'POST', `/api/users/${userId}/set-password`, { body: { accessToken: otherUser, identityProvider: 'corp-idp', password: 'sso password 1' } })).status).toBe(401);
      expect((await call(service, 'POST', `/api/users/${userId}/set-password`, { body: { accessToken: await accessToken('sso@corp.test'), identityProvider: 'nope', password: 'sso password 1' } })).status).toBe(400);
      const ok = await call(service, 'POST', `/api/users/${userId}/set-password`, { body: { accessToken: await accessToken('sso@corp.test'), identityProvider: 'corp-idp', password: 'sso password 1' } });
      expect(ok.status).toBe(200);
      expect((await call(service, 'POST', '/api-login', { body: { username: 'sso', password: 'sso password 1' } })).status).toBe(200);
      const again = await call(service, 'POST', `/api/users/${userId}/set-password`, { body: { accessToken: await accessToken('sso@corp.test'), identityProvider: 'corp-idp', password: 'sso password 2' } });
      expect(again.status).toBe(409);
    });

    it('lets an invited user look themselves up and activate with their third-party code', async () => {
      const { code, position } = await createPendingUser(
        { events: service.stores.events, ids: new IdAllocator(service.stores.events), reservations: new UniquenessReservations(service.stores.events, service.stores.keys), sendEmail: (m, ctx) => queueEmail({ events: service.stores.events, ids: new IdAllocator(service.stores.events) }, { ...m, projectId: null, from: 'no-reply@example.com' }, ctx) },
        { email: 'invitee@example.com', name: 'Invited Person', invitedBy: 'staff' },
        { actor: 'user:1', correlationId: 'test', now: new Date() },
      );
      await service.projections!.waitFor(position, 5000);
      expect((await call(service, 'POST', '/api/user/by-third-party-activation-code', { body: { activationCode: 'ZZZZ-ZZZZ' } })).status).toBe(400);
      const found = await call(service, 'POST', '/api/user/by-third-party-activation-code', { body: { activationCode: code } });
      expect(found.body).toMatchObject({ success: true, email: 'invitee@example.com', pending: true, activated: false });
      const taken = await call(service, 'POST', '/api/user/activate-by-third-party-activation-code', { body: { activationCode: code, username: 'staff', password: 'invitee password' } });
      expect(taken.status).toBe(409);
      const activated = await call(service, 'POST', '/api/user/activate-by-third-party-activation-code', { body: { activationCode: code, username: 'invitee', name: 'Invitee', password: 'invitee password' } });
      expect(activated.body.token).toEqual(expect.any(String));
      const me = await call(service, 'GET', '/api/user', { headers: jwt(String(activated.body.token)) });
      expect(me.body).toMatchObject({ username: 'invitee', name: 'Invitee', activated: true, pending: false });
      expect((await call(service, 'POST', '/api/user/by-third-party-activation-code', { body: { activationCode: code } })).status).toBe(400);
      expect((await call(service, 'POST', '/api-login', { body: { username: 'invitee', password: 'invitee password' } })).status).toBe(200);
    });

    it('creates pro-tier and enterprise-trial users only for a caller with a valid signature', async () => {
      const pro = { name: 'Pro', username: 'pro', email: 'pro@example.com', password: 'pro password 1', privacyPolicy: true, turnstileResponse: 'x' };
      expect((await call(service, 'POST', '/api-create-pro-user', { body: pro })).status).toBe(401);
      expect((await signed('/api-create-pro-user', pro, 'a-wrong-secret-0123456789')).status).toBe(401);
      const created = await signed('/api-create-pro-user', pro);
      expect(created.body).toEqual({ success: true, id: expect.any(Number), redirectUrl: expect.stringMatching(/^https:\/\/pay\.test\/checkout\?checkout=co_/) });
      const token = String((await call(service, 'POST', '/api-login', { body: { username: 'pro', password: 'pro password 1' } })).body.token);
      // The paid plan starts only with the payment notification.
      expect((await call(service, 'GET', '/api/user', { headers: jwt(token) })).body.tier).toBe('free');

      const trialUser = { name: 'Trial', username: 'trialist', email: 'trial@example.com', password: 'trial password 1', privacyPolicy: true, turnstileResponse: 'x', organizationName: 'Trial org' };
      const trial = await signed('/api-user-create-enterprise-trial', trialUser);
      expect(trial.body).toEqual({ success: true, id: expect.any(Number), userId: expect.any(Number) });
      const trials = await call(service, 'GET', `/api/users/${String(trial.body.userId)}/trials`, { headers: jwt(staffToken) });
      expect(trials.body.trials).toEqual([expect.objectContaining({ organizationId: trial.body.id })]);
    });

    it('sends feedback, upgrade and trial-extension requests to the support address', async () => {
      await call(service, 'POST', '/api-user-create', { body: signup({ username: 'asker', email: 'asker@example.com' }) });
      const token = String((await call(service, 'POST', '/api-login', { body: { username: 'asker', password: PASSWORD } })).body.token);
      const me = await call(service, 'GET', '/api/user', { headers: jwt(token) });
      const userId = Number(me.body.id);
      expect((await call(service, 'POST', `/api/users/${userId}/feedback`, { headers: jwt(token), body: { type: 'feedback', subject: 'Love it', body: 'Great service' } })).status).toBe(200);
      expect((await call(service, 'POST', `/api/users/${userId}/feedback`, { headers: jwt(token), body: { type: 'complaint', subject: 'x', body: 'y' } })).status).toBe(400);
      expect((await call(service, 'POST', `/api/users/${userId}/upgrade`, { headers: jwt(token), body: { reason: 'We grow' } })).status).toBe(200);
      const trial = await call(service, 'POST', '/api/user/trial', { headers: jwt(token), body: { organizationName: 'Askers' } });
      const organizationId = Number(trial.body.id);
      expect((await call(service, 'POST', `/api/organizations/${organizationId}/trial/request-extension`, { headers: jwt(token), body: { reason: 'More time' } })).status).toBe(200);
      expect((await call(service, 'POST', `/api/organizations/${organizationId}/trial/request-extension`, { headers: jwt(staffToken), body: {} })).status).toBe(404);

      const support = await service.stores.readStore.collection<EmailDocument>(EMAILS).find({ to: 'help@support.test' });
      expect(support.map((m) => m.subject).sort()).toEqual(['Enterprise trial started by asker', 'Enterprise upgrade request from asker', 'Feedback: Love it', 'Trial extension request for Askers']);
      expect(support.find((m) => m.subject === 'Feedback: Love it')!.bodyText).toContain('Great service');
      // The user's own listing shows what was sent to them, not what was sent about them.
      expect((await mailsTo(userId)).map((m) => m.to)).toEqual(['asker@example.com']);
    });

    it('leaves no personal data of a deleted user in read models rebuilt from the log', async () => {
      await call(service, 'POST', '/api-user-create', { body: signup({ username: 'ghost', email: 'ghost@example.com', name: 'Gary Ghost', companyName: 'Haunted Ltd' }) });
      const token = String((await call(service, 'POST', '/api-login', { body: { username: 'ghost', password: PASSWORD } })).body.token);
      const me = await call(service, 'GET', '/api/user', { headers: jwt(token) });
      await call(service, 'POST', `/api/users/${String(me.body.id)}/feedback`, { headers: jwt(token), body: { type: 'feedback', subject: 'Bye', body: 'Signed, Gary Ghost' } });
      expect((await call(service, 'DELETE', '/api/user', { headers: jwt(token), body: { password: PASSWORD } })).status).toBe(200);

      await service.projections!.stop();
      await service.stores.readStore.dropAll();
      const rebuild = new ProjectionRunner(service.stores.events, service.stores.readStore, allProjections, pino({ level: 'silent' }));
      await rebuild.start();
      await rebuild.stop();
      const text = JSON.stringify(await snapshot(service.stores.readStore));
      for (const value of ['ghost@example.com', 'Gary Ghost', 'Haunted Ltd']) expect(text).not.toContain(value);
      expect(text).toContain('staff@example.com');
    });
  });
}

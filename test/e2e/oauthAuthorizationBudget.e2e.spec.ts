import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTHORIZATION_BUDGET } from '../../api/oauth/authorizationServer';
import { call, registerUser, startTestService, type TestService } from '../support/testService';

const REDIRECT = 'http://localhost:3000/cb';

/**
 * Each authorization request saves an interaction in the log, and anyone may send one: an address
 * has a budget of them (api/oauth/authorizationServer.ts). Its own service: the budget it spends
 * would refuse other files' flows from the same address.
 */
describe('OAuth authorization budget per address', () => {
  let service: TestService;
  let clientId: string;

  beforeAll(async () => {
    service = await startTestService({ mongo: false });
    const ada = await registerUser(service, 'ada');
    const created = await call(service, 'POST', '/api/oauth/clients', { headers: { 'x-jwt-token': ada.token }, body: { name: 'Dashboard', redirectUris: [REDIRECT] } });
    clientId = String(created.body.clientId);
  });
  afterAll(async () => {
    await service?.destroy();
  });

  it('answers a flood of authorization requests with a 429 page past the budget, appending nothing more', async () => {
    const url = new URL(`${service.apiUrl}/oauth/auth`);
    for (const [name, value] of Object.entries({ client_id: clientId, response_type: 'code', redirect_uri: REDIRECT, scope: 'user:read', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' })) {
      url.searchParams.set(name, value);
    }
    const statuses = new Map<number, number>();
    for (let i = 0; i < AUTHORIZATION_BUDGET.perAddress; i++) {
      const status = (await fetch(url, { redirect: 'manual' })).status;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
    expect(statuses).toEqual(new Map([[303, AUTHORIZATION_BUDGET.perAddress]]));
    const head = await service.stores.events.headPosition();
    for (const path of [url.href, `${service.apiUrl}/oauth/auth/someInteractionUid`]) {
      const refused = await fetch(path, { redirect: 'manual' });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(refused.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await refused.text()).toContain('Too many authorizations');
    }
    expect(await service.stores.events.headPosition()).toBe(head);
    // Discovery and the token endpoint, which applications' servers call, are not counted.
    expect((await fetch(`${service.apiUrl}/.well-known/openid-configuration`)).status).toBe(200);
  });
});

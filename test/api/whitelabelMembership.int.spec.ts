// White labels that do something, over HTTP: each switch on and off on the white label's domain and
// on the main host, which white label a project and an organization belong to (by host, by owner
// organization), the fields the views answer, and the targets and learn blocks a project sees.
import { exportSPKI, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPLOYMENT_TARGET_FORMATS } from '../../domain/deployment/deploymentTargets';
import { impulseBlockCatalog } from '../../domain/impulse/blockCatalog';
import { callWithHost } from '../support/hostRequest';
import { call, describeOn, registerUser, setups, signup, startTestService, type TestService } from '../support/testService';

const DOMAIN = 'studio.acme.test';
const PASSWORD = 'correct horse battery';
const ALL_LEARN_BLOCKS = impulseBlockCatalog().learnBlocks.map((b) => b.type).sort();

for (const setup of setups) describeOn(setup, 'white label membership and switches over HTTP', () => {
  let service: TestService;
  let idpKey: CryptoKey;
  let organizationId: number;
  let otherOrganizationId: number;
  let whitelabelId: number;
  const h = {} as Record<'staff' | 'ada' | 'bob', Record<string, string>>;
  const jwt = (token: string) => ({ 'x-jwt-token': token });
  const onLabel = (method: string, pathname: string, options: { body?: unknown; headers?: Record<string, string> } = {}) => callWithHost(service, method, pathname, DOMAIN, options);
  const onMain = (method: string, pathname: string, options: { body?: unknown; headers?: Record<string, string> } = {}) => call(service, method, pathname, options);
  const setSwitches = async (changes: Record<string, unknown>) => {
    const res = await call(service, 'PUT', `/api/whitelabel/${whitelabelId}`, { headers: h.staff, body: changes });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  };
  const project = async (id: unknown) => (await call(service, 'GET', `/api/${String(id)}`, { headers: h.ada })).body.project as Record<string, unknown>;
  const accessToken = (email: string) => new SignJWT({ email }).setProtectedHeader({ alg: 'RS256' }).setIssuer('https://idp.test').setExpirationTime('5m').sign(idpKey);

  beforeAll(async () => {
    const pair = await generateKeyPair('RS256');
    idpKey = pair.privateKey;
    const publicKey = await exportSPKI(pair.publicKey);
    const providers = ['corp-idp', 'other-idp'].map((name) => ({ name, domains: ['corp.test'], publicKey, algorithm: 'RS256', issuer: 'https://idp.test' }));
    service = await startTestService({ mongo: setup.mongo, env: { SSO_IDENTITY_PROVIDERS: JSON.stringify(providers) } });
    h.staff = jwt((await registerUser(service, 'staffer')).token);
    h.ada = jwt((await registerUser(service, 'ada')).token);
    h.bob = jwt((await registerUser(service, 'bob')).token);
    organizationId = Number((await call(service, 'POST', '/api/user/trial', { headers: h.ada, body: { organizationName: 'Acme' } })).body.id);
    otherOrganizationId = Number((await call(service, 'POST', '/api/user/create-developer-profile', { headers: h.ada })).body.organizationId);
    const invited = await call(service, 'POST', `/api/organizations/${organizationId}/members/add`, { headers: h.ada, body: { usernameOrEmail: 'bob', role: 'guest', datasets: [] } });
    expect((await call(service, 'POST', `/api/user/organization-invitations/${Number(invited.body.id)}/accept`, { headers: h.bob })).status).toBe(200);
    const created = await call(service, 'POST', '/api/whitelabels', {
      headers: h.staff,
      body: { name: 'Acme ML', domain: DOMAIN, ownerOrganizationId: organizationId, identityProviders: ['corp-idp'], deploymentTargets: ['zip', 'wasm'], learningBlocks: ['keras'] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    whitelabelId = Number(created.body.id);
  });
  afterAll(async () => {
    await service?.destroy();
  });

  describe('sign-up (allowSignup)', () => {
    it("is open on the white label's domain while allowSignup is on, and the first project is in the white label", async () => {
      const res = await onLabel('POST', '/api-user-create', { body: signup({ username: 'carol', email: 'carol@example.com' }) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const token = String((await onMain('POST', '/api-login', { body: { username: 'carol', password: PASSWORD } })).body.token);
      const { projects } = (await call(service, 'GET', '/api/projects', { headers: jwt(token) })).body as { projects: Record<string, unknown>[] };
      expect(projects).toEqual([expect.objectContaining({ whitelabelId, whitelabelName: 'Acme ML' })]);
      // Her project is the white label's: she reads the blocks it offers, though no member of its organization.
      const blocks = await call(service, 'GET', `/api/whitelabel/${whitelabelId}/impulse/blocks`, { headers: jwt(token) });
      expect(blocks.status, JSON.stringify(blocks.body)).toBe(200);
      expect((blocks.body.learnBlocks as { type: string }[]).map((b) => b.type)).toEqual(['keras']);
    });

    it('is refused on its domain with allowSignup off, naming the switch, and stays open on the main host', async () => {
      await setSwitches({ allowSignup: false });
      const refused = await onLabel('POST', '/api-user-create', { body: signup({ username: 'dave', email: 'dave@example.com' }) });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatch(/allowSignup is false/);
      // Nothing was registered: the same username is free on the main host.
      const main = await onMain('POST', '/api-user-create', { body: signup({ username: 'dave', email: 'dave@example.com' }) });
      expect(main.status, JSON.stringify(main.body)).toBe(200);
      const token = String((await onMain('POST', '/api-login', { body: { username: 'dave', password: PASSWORD } })).body.token);
      const { projects } = (await call(service, 'GET', '/api/projects', { headers: jwt(token) })).body as { projects: Record<string, unknown>[] };
      expect(projects).toEqual([expect.objectContaining({ whitelabelId: null })]);
      expect(projects[0]).not.toHaveProperty('whitelabelName');
      await setSwitches({ allowSignup: true });
    });

    it('gives no first project on a white label without free projects', async () => {
      await setSwitches({ allowFreeProjects: false });
      const res = await onLabel('POST', '/api-user-create', { body: signup({ username: 'erin', email: 'erin@example.com' }) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const token = String((await onMain('POST', '/api-login', { body: { username: 'erin', password: PASSWORD } })).body.token);
      expect((await call(service, 'GET', '/api/projects', { headers: jwt(token) })).body.projects).toEqual([]);
      await setSwitches({ allowFreeProjects: true });
    });
  });

  describe('password sign-in and SSO (allowPasswordAuth, identityProviders)', () => {
    it('signs in with a password on the domain while allowPasswordAuth is on', async () => {
      const res = await onLabel('POST', '/api-login', { body: { username: 'ada', password: PASSWORD } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.token).toEqual(expect.any(String));
    });

    it('refuses a password sign-in on the domain with allowPasswordAuth off, naming the switch, and not on the main host', async () => {
      await setSwitches({ allowPasswordAuth: false });
      const refused = await onLabel('POST', '/api-login', { body: { username: 'ada', password: PASSWORD } });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatch(/allowPasswordAuth is false/);
      expect(refused.body).not.toHaveProperty('token');
      expect((await onMain('POST', '/api-login', { body: { username: 'ada', password: PASSWORD } })).status).toBe(200);
      await setSwitches({ allowPasswordAuth: true });
    });

    it("offers only the white label's identity providers on its domain, every configured one on the main host", async () => {
      expect((await onLabel('GET', '/api-sso/someone@corp.test')).body.idps).toEqual(['corp-idp']);
      expect((await onMain('GET', '/api-sso/someone@corp.test')).body.idps).toEqual(['corp-idp', 'other-idp']);
    });

    it('refuses an identity provider the white label does not list on its domain, and accepts it on the main host', async () => {
      const ssoUser = async (username: string) => {
        const created = await onMain('POST', '/api-user-create', { body: signup({ username, email: `${username}@corp.test`, password: undefined, identityProvider: 'corp-idp' }) });
        expect(created.status, JSON.stringify(created.body)).toBe(200);
        return Number(created.body.id);
      };
      const [onLabelId, onMainId] = [await ssoUser('sso'), await ssoUser('sso2')];
      expect((await onLabel('GET', '/api-user-need-to-set-password/sso')).body.idps).toEqual(['corp-idp']);
      const body = async (username: string, identityProvider: string) => ({ accessToken: await accessToken(`${username}@corp.test`), identityProvider, password: 'sso password 1' });
      const refused = await onLabel('POST', `/api/users/${onLabelId}/set-password`, { body: await body('sso', 'other-idp') });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatch(/"other-idp" is not one of the white label's identityProviders/);
      expect((await onLabel('POST', `/api/users/${onLabelId}/set-password`, { body: await body('sso', 'corp-idp') })).status).toBe(200);
      expect((await onMain('POST', `/api/users/${onMainId}/set-password`, { body: await body('sso2', 'other-idp') })).status).toBe(200);
    });
  });

  describe('projects (allowFreeProjects) and which white label they belong to', () => {
    it("makes a personal project on the domain in the white label, and on the main host in none", async () => {
      const labelled = await onLabel('POST', '/api/projects/create', { headers: h.ada, body: { projectName: 'On the label' } });
      expect(labelled.status, JSON.stringify(labelled.body)).toBe(200);
      expect(await project(labelled.body.id)).toMatchObject({ whitelabelId, whitelabelName: 'Acme ML' });
      const plain = await onMain('POST', '/api/projects/create', { headers: h.ada, body: { projectName: 'On the main host' } });
      expect(await project(plain.body.id)).toMatchObject({ whitelabelId: null });
    });

    it('refuses a personal project on the domain with allowFreeProjects off, naming the switch, and not on the main host', async () => {
      await setSwitches({ allowFreeProjects: false });
      const before = await service.stores.events.headPosition();
      const refused = await onLabel('POST', '/api/projects/create', { headers: h.ada, body: { projectName: 'Free' } });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatch(/allowFreeProjects is false/);
      expect(await service.stores.events.headPosition()).toBe(before);
      expect((await onMain('POST', '/api/projects/create', { headers: h.ada, body: { projectName: 'Free elsewhere' } })).status).toBe(200);
      await setSwitches({ allowFreeProjects: true });
    });

    it("makes a project of the white label's organization on its domain even without free projects", async () => {
      await setSwitches({ allowFreeProjects: false });
      const res = await onLabel('POST', `/api/organizations/${organizationId}/new-project`, { headers: h.ada, body: { projectName: 'Fleet' } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.apiKey).toMatch(/^ei_/);
      expect(await project(res.body.id)).toMatchObject({ whitelabelId, whitelabelName: 'Acme ML', ownerOrganizationId: organizationId, ownerUserId: expect.any(Number) });
      const other = await onLabel('POST', `/api/organizations/${otherOrganizationId}/new-project`, { headers: h.ada, body: { projectName: 'Elsewhere' } });
      expect(other.status).toBe(403);
      expect(other.body.error).toMatch(/allowFreeProjects/);
      await setSwitches({ allowFreeProjects: true });
    });

    it("makes a project of the organization on the main host in the organization's white label; another organization's in none", async () => {
      const owned = await onMain('POST', `/api/organizations/${organizationId}/new-project`, { headers: h.ada, body: { projectName: 'By owner' } });
      expect(await project(owned.body.id)).toMatchObject({ whitelabelId, whitelabelName: 'Acme ML', ownerOrganizationId: organizationId });
      const plain = await onMain('POST', `/api/organizations/${otherOrganizationId}/new-project`, { headers: h.ada, body: { projectName: 'Developer' } });
      expect(await project(plain.body.id)).toMatchObject({ whitelabelId: null, ownerOrganizationId: otherOrganizationId });
    });

    it("refuses an organization's project to a guest, and to a named owner who is a guest", async () => {
      const guest = await onMain('POST', `/api/organizations/${organizationId}/new-project`, { headers: h.bob, body: { projectName: 'Guest' } });
      expect(guest.status).toBe(403);
      const named = await onMain('POST', `/api/organizations/${organizationId}/new-project`, { headers: h.ada, body: { projectName: 'For bob', projectOwnerUsernameOrEmail: 'bob' } });
      expect(named.status).toBe(400);
      expect(named.body.error).toMatch(/projectOwnerUsernameOrEmail/);
    });
  });

  describe('views', () => {
    it('answers the white label of each organization in GET /api/user, the organization listings and the organization information', async () => {
      const me = (await call(service, 'GET', '/api/user', { headers: h.ada })).body as { organizations: Record<string, unknown>[]; projects: Record<string, unknown>[] };
      expect(me.organizations.find((o) => o.id === organizationId)).toMatchObject({ whitelabelId, whitelabelName: 'Acme ML' });
      const plain = me.organizations.find((o) => o.id === otherOrganizationId)!;
      expect(plain.whitelabelId).toBeNull();
      expect(plain).not.toHaveProperty('whitelabelName');
      expect(me.projects.filter((p) => p.whitelabelId === whitelabelId).length).toBeGreaterThan(0);
      // The white labels of the user's organizations: admin of the owner organization, admin of it.
      expect((me as unknown as { whitelabels: unknown[] }).whitelabels).toEqual([{ id: whitelabelId, domain: DOMAIN, name: 'Acme ML', ownerOrganizationId: organizationId, isAdmin: true }]);
      const bob = (await call(service, 'GET', '/api/user', { headers: h.bob })).body as { whitelabels: unknown[] };
      expect(bob.whitelabels).toEqual([{ id: whitelabelId, domain: DOMAIN, name: 'Acme ML', ownerOrganizationId: organizationId, isAdmin: false }]);
      const staff = (await call(service, 'GET', '/api/user', { headers: h.staff })).body as { whitelabels: unknown[] };
      expect(staff.whitelabels).toEqual([]);
      const listed = (await call(service, 'GET', '/api/organizations', { headers: h.ada })).body.organizations as Record<string, unknown>[];
      expect(listed.find((o) => o.id === organizationId)).toMatchObject({ whitelabelId, whitelabelName: 'Acme ML' });
      const info = (await call(service, 'GET', `/api/organizations/${organizationId}`, { headers: h.ada })).body;
      expect(info).toMatchObject({ whitelabelId, organization: { whitelabelId, whitelabelName: 'Acme ML' } });
      const otherInfo = (await call(service, 'GET', `/api/organizations/${otherOrganizationId}`, { headers: h.ada })).body;
      expect(otherInfo).not.toHaveProperty('whitelabelId');
      expect(otherInfo).toMatchObject({ organization: { whitelabelId: null } });
    });
  });

  describe('deployment targets and learn blocks', () => {
    let labelled: number;
    let plain: number;
    const formats = (res: { body: Record<string, unknown> }) => (res.body.targets as { format: string }[]).map((t) => t.format).sort();
    const learnTypes = (res: { body: Record<string, unknown> }) => (res.body.learnBlocks as { type: string }[]).map((b) => b.type).sort();

    beforeAll(async () => {
      labelled = Number((await onLabel('POST', '/api/projects/create', { headers: h.ada, body: { projectName: 'Targets' } })).body.id);
      plain = Number((await onMain('POST', '/api/projects/create', { headers: h.ada, body: { projectName: 'All targets' } })).body.id);
    });

    it("shows a project of the white label only its targets and learn blocks, from whatever host it is reached", async () => {
      for (const via of [onMain, onLabel]) {
        expect(formats(await via('GET', `/api/${labelled}/deployment/targets`, { headers: h.ada }))).toEqual(['wasm', 'zip']);
        expect(learnTypes(await via('GET', `/api/${labelled}/impulse/blocks`, { headers: h.ada }))).toEqual(['keras']);
      }
    });

    it('shows a project of none every target and learn block on the main host, and those of the white label on its domain', async () => {
      expect(formats(await onMain('GET', `/api/${plain}/deployment/targets`, { headers: h.ada }))).toEqual([...DEPLOYMENT_TARGET_FORMATS].sort());
      expect(learnTypes(await onMain('GET', `/api/${plain}/impulse/blocks`, { headers: h.ada }))).toEqual(ALL_LEARN_BLOCKS);
      expect(formats(await onLabel('GET', `/api/${plain}/deployment/targets`, { headers: h.ada }))).toEqual(['wasm', 'zip']);
      expect(learnTypes(await onLabel('GET', `/api/${plain}/impulse/blocks`, { headers: h.ada }))).toEqual(['keras']);
    });

    it("refuses an impulse with a learn block its white label does not enable, naming it, and changes nothing", async () => {
      const impulse = (learnType: string) => ({
        inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX'], windowSizeMs: 1000, windowIncreaseMs: 500, frequencyHz: 100 }],
        dspBlocks: [{ id: 2, type: 'raw', name: 'Raw', title: 'Raw data', axes: ['accX'], input: 1 }],
        learnBlocks: [{ id: 3, type: learnType, name: 'Learn', title: 'Learn', dsp: [2] }],
      });
      const refused = await onMain('POST', `/api/${labelled}/impulse`, { headers: h.ada, body: impulse('anomaly') });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatch(/"learnBlocks": "anomaly" is not enabled in the white label Acme ML \(it enables "keras"\)/);
      expect((await onMain('GET', `/api/${labelled}/impulses`, { headers: h.ada })).body.impulses).toEqual([]);
      expect((await onMain('POST', `/api/${labelled}/impulse`, { headers: h.ada, body: impulse('keras') })).status).toBe(200);
      // A project of none, on the main host: every learn block.
      expect((await onMain('POST', `/api/${plain}/impulse`, { headers: h.ada, body: impulse('anomaly') })).status).toBe(200);
    });

    it('follows a change of the white label at once', async () => {
      await call(service, 'POST', `/api/whitelabel/${whitelabelId}/deploymentTargets`, { headers: h.ada, body: { targets: ['arduino'] } });
      expect(formats(await onMain('GET', `/api/${labelled}/deployment/targets`, { headers: h.ada }))).toEqual(['arduino']);
    });

    it('once the white label is deleted: its projects keep its id without a name and see what a project of none sees; its organization belongs to none', async () => {
      expect((await call(service, 'DELETE', `/api/whitelabel/${whitelabelId}`, { headers: h.staff })).status).toBe(200);
      const p = await project(labelled);
      expect(p.whitelabelId).toBe(whitelabelId);
      expect(p).not.toHaveProperty('whitelabelName');
      expect(formats(await onMain('GET', `/api/${labelled}/deployment/targets`, { headers: h.ada }))).toEqual([...DEPLOYMENT_TARGET_FORMATS].sort());
      expect(learnTypes(await onMain('GET', `/api/${labelled}/impulse/blocks`, { headers: h.ada }))).toEqual(ALL_LEARN_BLOCKS);
      const listed = (await call(service, 'GET', '/api/organizations', { headers: h.ada })).body.organizations as Record<string, unknown>[];
      expect(listed.find((o) => o.id === organizationId)).toMatchObject({ whitelabelId: null });
      // Its domain is the main host again: no switch of the deleted white label applies.
      expect((await onLabel('POST', '/api/projects/create', { headers: h.ada, body: { projectName: 'After' } })).status).toBe(200);
    });
  });
});

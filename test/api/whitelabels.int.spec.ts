// White labels and the deployment target catalog over HTTP: who may do what, what each operation
// does, and how a white label narrows the targets and learn blocks its users see.
import http from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEPLOYMENT_TARGET_FORMATS } from '../../domain/deployment/deploymentTargets';
import { call, describeOn, registerUser, setups, startTestService, type TestService } from '../support/testService';

/** A GET with a chosen Host header (fetch does not let one set it). */
function getWithHost(service: TestService, pathname: string, host: string, headers: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const url = new URL(`${service.apiUrl}/v1${pathname}`);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'GET', headers: { ...headers, host } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
    });
    req.on('error', reject);
    req.end();
  });
}

for (const setup of setups) describeOn(setup, 'white labels and deployment targets over HTTP', () => {
  let service: TestService;
  let organizationId: number;
  let whitelabelId: number;
  let projectId: number;
  const h = {} as Record<'staff' | 'owner' | 'member' | 'outsider' | 'adminKey' | 'memberKey' | 'projectKey', Record<string, string>>;
  const jwt = (token: string) => ({ 'x-jwt-token': token });
  const wl = (suffix = '') => `/api/whitelabel/${whitelabelId}${suffix}`;
  const create = (body: Record<string, unknown>, headers = h.staff) =>
    call(service, 'POST', '/api/whitelabels', { headers, body: { name: 'Acme ML', domain: 'studio.acme.test', ownerOrganizationId: organizationId, ...body } });

  beforeAll(async () => {
    service = await startTestService({ mongo: setup.mongo });
    h.staff = jwt((await registerUser(service, 'staffer')).token);
    const ada = await registerUser(service, 'ada');
    h.owner = jwt(ada.token);
    h.member = jwt((await registerUser(service, 'bob')).token);
    h.outsider = jwt((await registerUser(service, 'eve')).token);
    organizationId = Number((await call(service, 'POST', '/api/user/trial', { headers: h.owner, body: { organizationName: 'Acme' } })).body.id);
    const invited = await call(service, 'POST', `/api/organizations/${organizationId}/members/add`, { headers: h.owner, body: { usernameOrEmail: 'bob', role: 'member', datasets: [] } });
    expect((await call(service, 'POST', `/api/user/organization-invitations/${Number(invited.body.id)}/accept`, { headers: h.member })).status).toBe(200);
    h.adminKey = { 'x-api-key': String((await call(service, 'POST', `/api/organizations/${organizationId}/apikeys`, { headers: h.owner, body: { name: 'k', role: 'admin' } })).body.apiKey) };
    h.memberKey = { 'x-api-key': String((await call(service, 'POST', `/api/organizations/${organizationId}/apikeys`, { headers: h.owner, body: { name: 'k', role: 'member' } })).body.apiKey) };
    const project = await call(service, 'POST', '/api/projects/create', { headers: h.owner, body: { projectName: 'Gestures' } });
    projectId = Number(project.body.id);
    h.projectKey = { 'x-api-key': String(project.body.apiKey) };
  });
  afterAll(async () => {
    await service?.destroy();
  });

  it('is created by staff only, with every reference checked and a 400 naming what is wrong', async () => {
    expect((await create({}, h.owner)).status).toBe(403);
    expect((await create({}, h.adminKey)).status).toBe(401);
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ domain: 'not a domain' }, /"domain"/],
      [{ ownerOrganizationId: 999_999 }, /organization 999999 not found/],
      [{ deploymentTargets: ['zip', 'toaster'] }, /unknown target format\(s\) "toaster"/],
      [{ learningBlocks: ['telepathy'] }, /unknown learn block type\(s\) "telepathy"/],
      [{ identityProviders: ['okta'] }, /unknown identity provider\(s\) "okta"/],
      [{ sandboxed: true }, /sandboxed/],
    ];
    for (const [body, error] of cases) {
      const res = await create({ domain: 'studio.acme.test', ...body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toMatch(error);
    }
    const res = await create({ learningBlocks: ['keras', 'anomaly'] });
    expect(res.body).toEqual({ success: true, id: expect.any(Number), themeId: 0 });
    whitelabelId = Number(res.body.id);
    const taken = await create({ name: 'Copycat', domain: 'STUDIO.acme.test' });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toMatch(/already has this domain/);
  });

  it('answers its domain without authentication, and 404 for an unknown one', async () => {
    expect((await call(service, 'GET', wl('/domain'))).body).toEqual({ success: true, domain: 'studio.acme.test' });
    expect((await call(service, 'GET', '/api/whitelabel/999999/domain')).status).toBe(404);
  });

  it('is read by staff and the owner organization admins, and changed by staff only', async () => {
    const all = await call(service, 'GET', '/api/whitelabels', { headers: h.staff });
    expect(all.body.whitelabels).toEqual([expect.objectContaining({ id: whitelabelId, ownerOrganizationId: organizationId, deploymentTargets: [...DEPLOYMENT_TARGET_FORMATS] })]);
    expect((await call(service, 'GET', '/api/whitelabels', { headers: h.owner })).status).toBe(403);
    expect((await call(service, 'GET', wl(), { headers: h.owner })).body.whitelabel).toMatchObject({ name: 'Acme ML', learningBlocks: ['keras', 'anomaly'], allowSignup: true });
    expect((await call(service, 'GET', wl(), { headers: h.member })).status).toBe(403);
    expect((await call(service, 'GET', wl(), { headers: h.outsider })).status).toBe(403);
    expect((await call(service, 'PUT', wl(), { headers: h.owner, body: { allowSignup: false } })).status).toBe(403);
    expect((await call(service, 'PUT', wl(), { headers: h.staff, body: { allowSignup: false, allowFreeProjects: true, disableForumAccess: true } })).status).toBe(200);
    expect((await call(service, 'GET', wl(), { headers: h.staff })).body.whitelabel).toMatchObject({ allowSignup: false, allowFreeProjects: true, disableForumAccess: true });
    expect((await call(service, 'PUT', wl(), { headers: h.staff, body: { deploymentTargets: ['nope'] } })).status).toBe(400);
  });

  it('lets the owner organization admins and staff choose its deployment targets, by known format only', async () => {
    const set = (headers: Record<string, string>, targets: unknown) => call(service, 'POST', wl('/deploymentTargets'), { headers, body: { targets } });
    for (const refused of [h.member, h.memberKey, h.outsider, h.projectKey]) expect((await set(refused, ['zip'])).status).toBe(403);
    const unknown = await set(h.owner, ['zip', 'toaster']);
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatch(/"toaster"/);
    expect((await set(h.adminKey, ['wasm', 'zip'])).status).toBe(200);
    expect((await call(service, 'GET', wl(), { headers: h.staff })).body.whitelabel).toMatchObject({ deploymentTargets: ['wasm', 'zip'] });
    expect((await set(h.staff, ['zip', 'arduino', 'runner-linux-aarch64'])).status).toBe(200);
  });

  it('offers only the learn blocks the white label enables', async () => {
    const res = await call(service, 'GET', wl('/impulse/blocks'), { headers: h.member });
    expect((res.body.learnBlocks as { type: string }[]).map((b) => b.type)).toEqual(['keras', 'anomaly']);
    expect((res.body.dspBlocks as unknown[]).length).toBeGreaterThan(0);
    expect((await call(service, 'GET', '/api/whitelabel/999999/impulse/blocks', { headers: h.member })).status).toBe(404);
  });

  it('lists the whole catalog, or the white label’s targets when the request comes to its domain', async () => {
    const all = await call(service, 'GET', '/api/deployment/targets', { headers: h.member });
    expect((all.body.targets as { format: string }[]).map((t) => t.format)).toEqual([...DEPLOYMENT_TARGET_FORMATS]);
    expect(all.body.targets).toContainEqual(expect.objectContaining({ format: 'zip', name: 'C++ library', uiSection: 'library', preferredEngine: 'tflite-eon', hasEonCompiler: true, modelVariants: expect.any(Array), parameters: [] }));
    const branded = await getWithHost(service, '/api/deployment/targets', 'studio.acme.test', h.member);
    expect((branded.body.targets as { format: string }[]).map((t) => t.format)).toEqual(['zip', 'arduino', 'runner-linux-aarch64']);
    expect((await call(service, 'GET', '/api/deployment/targets')).status).toBe(401);
  });

  it("recommends the project's targets by its latency device, and keeps projects to their readers", async () => {
    const targets = async () => (await call(service, 'GET', `/api/${projectId}/deployment/targets`, { headers: h.projectKey })).body.targets as { format: string; recommendedForProject: boolean; disabledForProject: boolean }[];
    expect((await targets()).filter((t) => t.recommendedForProject).map((t) => t.format)).toEqual(['zip']);
    expect((await call(service, 'POST', `/api/${projectId}`, { headers: h.owner, body: { latencyDevice: 'jetson-nano' } })).status).toBe(200);
    expect((await targets()).filter((t) => t.recommendedForProject).map((t) => t.format)).toEqual(['tensorrt', 'runner-linux-aarch64-jetson-nano']);
    const branded = await getWithHost(service, `/api/${projectId}/deployment/targets`, 'studio.acme.test', h.owner);
    expect((branded.body.targets as { format: string }[]).map((t) => t.format)).toEqual(['zip', 'arduino', 'runner-linux-aarch64']);
    expect((await call(service, 'GET', `/api/${projectId}/deployment/targets`, { headers: h.outsider })).status).toBe(403);
    expect((await call(service, 'GET', `/api/${projectId}/deployment/targets`, { headers: h.adminKey })).status).toBe(401);
  });

  it('lets each kind of caller through, or refuses them before the body is read, on every white label and deployment route', async () => {
    const revoked = await call(service, 'POST', `/api/organizations/${organizationId}/apikeys`, { headers: h.owner, body: { name: 'gone', role: 'admin' } });
    await call(service, 'DELETE', `/api/organizations/${organizationId}/apikeys/${Number(revoked.body.id)}`, { headers: h.owner });
    const callers: Record<string, Record<string, string>> = { ...h, revokedKey: { 'x-api-key': String(revoked.body.apiKey) }, nobody: {} };
    // Who gets past authorization on each route; everyone else gets the status given.
    const table: { method: string; path: string; allowed: string[]; refused: Record<string, number> }[] = [
      { method: 'GET', path: '/api/whitelabels', allowed: ['staff'], refused: { owner: 403, member: 403, outsider: 403, adminKey: 401, memberKey: 401, projectKey: 401 } },
      { method: 'POST', path: '/api/whitelabels', allowed: ['staff'], refused: { owner: 403, member: 403, outsider: 403, adminKey: 401, memberKey: 401, projectKey: 401 } },
      { method: 'GET', path: wl(), allowed: ['staff', 'owner'], refused: { member: 403, outsider: 403, adminKey: 401, memberKey: 401, projectKey: 401 } },
      { method: 'PUT', path: wl(), allowed: ['staff'], refused: { owner: 403, member: 403, outsider: 403, adminKey: 401, memberKey: 401, projectKey: 401 } },
      { method: 'DELETE', path: wl(), allowed: [], refused: { owner: 403, member: 403, outsider: 403, adminKey: 401, memberKey: 401, projectKey: 401 } },
      { method: 'POST', path: wl('/deploymentTargets'), allowed: ['staff', 'owner', 'adminKey'], refused: { member: 403, outsider: 403, memberKey: 403, projectKey: 403 } },
      // Another tenant learns nothing of it: a project key of a project outside the white label neither.
      { method: 'GET', path: wl('/impulse/blocks'), allowed: ['staff', 'owner', 'member', 'adminKey', 'memberKey'], refused: { outsider: 403, projectKey: 403 } },
      { method: 'GET', path: wl('/domain'), allowed: ['staff', 'owner', 'member', 'outsider', 'adminKey', 'memberKey', 'projectKey', 'nobody'], refused: {} },
      { method: 'GET', path: '/api/deployment/targets', allowed: ['staff', 'owner', 'member', 'outsider', 'adminKey', 'memberKey', 'projectKey'], refused: {} },
      { method: 'GET', path: `/api/${projectId}/deployment/targets`, allowed: ['owner', 'projectKey'], refused: { staff: 403, member: 403, outsider: 403, adminKey: 401, memberKey: 401 } },
    ];
    for (const { method, path, allowed, refused } of table) {
      for (const [name, headers] of Object.entries(callers)) {
        // Staff deleting is the deletion test's.
        if (method === 'DELETE' && name === 'staff') continue;
        const want = allowed.includes(name) ? 'allowed' : (refused[name] ?? (name === 'revokedKey' ? 401 : name === 'nobody' ? 401 : undefined));
        if (want === undefined) throw new Error(`no expectation for ${name} on ${method} ${path}`);
        const before = await service.stores.events.headPosition();
        const res = await call(service, method, path, { headers, ...(method === 'GET' || method === 'DELETE' ? {} : { body: { notAField: true } }) });
        const label = `${method} ${path} by ${name}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
        if (want === 'allowed') expect([200, 400], label).toContain(res.status);
        else expect(res.status, label).toBe(want);
        expect(await service.stores.events.headPosition(), label).toBe(before);
      }
    }
  });

  it('is deleted by staff, freeing its domain', async () => {
    expect((await call(service, 'DELETE', wl(), { headers: h.owner })).status).toBe(403);
    expect((await call(service, 'DELETE', wl(), { headers: h.staff })).status).toBe(200);
    expect((await call(service, 'GET', wl('/domain'))).status).toBe(404);
    expect((await call(service, 'DELETE', wl(), { headers: h.staff })).status).toBe(404);
    const again = await create({ name: 'Acme ML 2' });
    expect(again.status).toBe(200);
  });
});

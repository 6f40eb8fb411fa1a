// Organizations over HTTP: every organization route tried by every kind of caller (the access
// matrix), then what each operation does: members, invitations, keys, settings, deletion.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { IdAllocator } from '../../commands/idAllocator';
import { runJobCommand } from '../../commands/jobs/jobCommands';
import { EMAILS, type EmailDocument } from '../../projections/emails/emailDocument';
import { withTestJobRunners } from '../support/testJobRunners';
import { SdkSocket } from './socketClient';
import { call, describeOn, registerUser, setups, startTestService, type TestService } from '../support/testService';


type Need = 'guest' | 'read' | 'readByUser' | 'manage' | 'manageByUser' | 'memberUser';
type Actor = 'owner' | 'admin' | 'member' | 'guest' | 'outsider' | 'adminKey' | 'memberKey' | 'revokedKey' | 'projectKey' | 'staff';

/** What each operation on one organization needs (organizationRoutes, organizationJobRoutes). */
const NEEDS: Record<string, Need> = {
  getOrganizationInfo: 'guest',
  updateOrganization: 'manage',
  deleteOrganization: 'manage',
  addOrganizationMember: 'manageByUser',
  inviteOrganizationMember: 'manageByUser',
  removeOrganizationMember: 'memberUser',
  setOrganizationMemberRole: 'manageByUser',
  setOrganizationMemberDatasets: 'manageByUser',
  withdrawOrganizationMemberInvitation: 'manage',
  listOrganizationApiKeys: 'manage',
  addOrganizationApiKey: 'manage',
  revokeOrganizationApiKey: 'manage',
  listActiveOrganizationJobs: 'read',
  listFinishedOrganizationJobs: 'read',
  listAllOrganizationJobs: 'read',
  getOrganizationJobStatus: 'read',
  cancelOrganizationJob: 'manage',
  getOrganizationJobsLogs: 'read',
  downloadOrganizationJobsLogs: 'read',
  getOrganizationSocketToken: 'read',
  organizationCreateEmptyProject: 'readByUser',
};

/** Whether the actor gets past authorization; otherwise the expected refusal. */
function expected(actor: Actor, need: Need): 'allowed' | 401 | 403 {
  if (actor === 'revokedKey') return 401;
  if (actor === 'outsider' || actor === 'projectKey') return 403;
  const level = { owner: 2, admin: 2, staff: 2, adminKey: 2, member: 1, memberKey: 1, guest: 0 }[actor];
  const isKey = actor === 'adminKey' || actor === 'memberKey';
  switch (need) {
    case 'guest':
      return 'allowed';
    case 'read':
      return level >= 1 ? 'allowed' : 403;
    case 'manage':
      return level >= 2 ? 'allowed' : 403;
    case 'readByUser':
      return !isKey && level >= 1 ? 'allowed' : 403;
    case 'manageByUser':
      return !isKey && level >= 2 ? 'allowed' : 403;
    case 'memberUser':
      return isKey ? 403 : 'allowed';
  }
}

for (const setup of setups) describeOn(setup, 'organizations over HTTP', () => {
  let service: TestService;
  let organizationId: number;
  const ids: Record<string, number> = {};
  const headers: Record<Actor, Record<string, string>> = {} as never;
  let adminKey: string;

  const jwt = (token: string) => ({ 'x-jwt-token': token });
  const org = (suffix = '') => `/api/organizations/${organizationId}${suffix}`;

  beforeAll(async () => {
    service = await startTestService({ mongo: setup.mongo, jobRunners: withTestJobRunners });
    // The first user is staff.
    const staff = await registerUser(service, 'staffer');
    const users: Record<string, { id: number; token: string }> = {};
    for (const name of ['ada', 'bob', 'carol', 'dave', 'eve', 'fay']) users[name] = await registerUser(service, name);
    for (const [name, u] of Object.entries(users)) ids[name] = u.id;
    const trial = await call(service, 'POST', '/api/user/trial', { headers: jwt(users.ada!.token), body: { organizationName: 'Navy labs' } });
    organizationId = Number(trial.body.id);
    // Members join by accepting the invitation with their own JWT.
    const add = async (usernameOrEmail: string, role: string, datasets: string[] = [], invitee = usernameOrEmail.replace(/@.*/, '')) => {
      const res = await call(service, 'POST', org('/members/add'), { headers: jwt(users.ada!.token), body: { usernameOrEmail, role, datasets } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const accepted = await call(service, 'POST', `/api/user/organization-invitations/${Number(res.body.id)}/accept`, { headers: jwt(users[invitee]!.token) });
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
      return res;
    };
    await add('bob', 'admin');
    await add('carol@example.com', 'member');
    await add('dave', 'guest', ['wrists']);
    const key = async (role: string) => {
      const res = await call(service, 'POST', org('/apikeys'), { headers: jwt(users.ada!.token), body: { name: `${role} key`, role } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return { id: Number(res.body.id), apiKey: String(res.body.apiKey) };
    };
    adminKey = (await key('admin')).apiKey;
    const memberKey = (await key('member')).apiKey;
    const revoked = await key('admin');
    expect((await call(service, 'DELETE', org(`/apikeys/${revoked.id}`), { headers: jwt(users.ada!.token) })).status).toBe(200);
    const project = await call(service, 'POST', '/api/projects/create', { headers: jwt(users.ada!.token), body: { projectName: 'Owned by Ada' } });
    Object.assign(headers, {
      owner: jwt(users.ada!.token),
      admin: jwt(users.bob!.token),
      member: jwt(users.carol!.token),
      guest: jwt(users.dave!.token),
      outsider: jwt(users.eve!.token),
      staff: jwt(staff.token),
      adminKey: { 'x-api-key': adminKey },
      memberKey: { 'x-api-key': memberKey },
      revokedKey: { 'x-api-key': revoked.apiKey },
      projectKey: { 'x-api-key': String(project.body.apiKey) },
    });
    ids.fay = users.fay!.id;
  });
  afterAll(async () => {
    await service?.destroy();
  });

  describe('the access matrix', () => {
    let routes: { method: string; path: string; operationId: string }[] = [];
    beforeAll(async () => {
      const doc = await call(service, 'GET', '/openapi.json');
      routes = [];
      for (const [path, methods] of Object.entries(doc.body.paths as Record<string, Record<string, { operationId: string }>>)) {
        if (!path.includes('{organizationId}')) continue;
        for (const [method, op] of Object.entries(methods)) routes.push({ method: method.toUpperCase(), path, operationId: op.operationId });
      }
    });

    it('knows what every organization route needs', () => {
      // The trial extension is the user's own request to support (accountIntegrations covers it).
      const listed = routes.map((r) => r.operationId).filter((id) => id !== 'requestEnterpriseTrialExtension');
      expect(listed.sort()).toEqual(Object.keys(NEEDS).sort());
    });

    it('lets each caller through, or refuses them before the body is read, on every route; refusals append nothing', async () => {
      const fill = (path: string) => path.replace('{organizationId}', String(organizationId)).replace('{memberId}', String(ids.carol)).replace('{apiKeyId}', '999999').replace('{jobId}', '999999').replace('{invitationId}', '999999');
      for (const { method, path, operationId } of routes.filter((r) => NEEDS[r.operationId])) {
        for (const actor of Object.keys(headers) as Actor[]) {
          const want = expected(actor, NEEDS[operationId]!);
          // Deleting is tried only by those who may not; the deletion test does the rest.
          if (operationId === 'deleteOrganization' && want === 'allowed') continue;
          const before = await service.stores.events.headPosition();
          // A body no operation accepts: an allowed caller gets 400 from validation, and nothing changes.
          const res = await call(service, method, fill(path), { headers: headers[actor], ...(method === 'POST' ? { body: { notAField: true } } : {}) });
          const label = `${operationId} by ${actor}: ${res.status} ${JSON.stringify(res.body)}`;
          if (want === 'allowed') expect([200, 400, 404], label).toContain(res.status);
          else {
            expect(res.status, label).toBe(want);
            expect(await service.stores.events.headPosition(), label).toBe(before);
          }
        }
      }
    });
  });

  describe('listings', () => {
    it("lists a user's organizations, and an organization key's own organization", async () => {
      const mine = await call(service, 'GET', '/api/organizations', { headers: headers.member });
      expect(mine.body.organizations).toEqual([expect.objectContaining({ id: organizationId, name: 'Navy labs', isAdmin: false, userCount: 4, adminCount: 2 })]);
      const byKey = await call(service, 'GET', '/api/organizations', { headers: headers.memberKey });
      expect(byKey.body.organizations).toEqual([expect.objectContaining({ id: organizationId })]);
      const current = await call(service, 'GET', '/api/user/organizations', { headers: headers.owner });
      expect(current.body.organizations).toEqual([expect.objectContaining({ id: organizationId, isAdmin: true })]);
      expect((await call(service, 'GET', '/api/organizations', { headers: headers.outsider })).body.organizations).toEqual([]);
    });

    it('answers a project key with "Invalid API key", which is how the official CLI tells the two kinds apart', async () => {
      const res = await call(service, 'GET', '/api/organizations', { headers: headers.projectKey });
      expect(res.status).toBe(401);
      expect(String(res.body.error)).toMatch(/^Invalid API key/);
      const projects = await call(service, 'GET', '/api/projects', { headers: headers.adminKey });
      expect(projects.status).toBe(401);
      expect(String(projects.body.error)).toMatch(/^Invalid API key/);
      // An operation open to anyone serves an organization key's holder as anyone.
      const login = await call(service, 'POST', '/api-login', { headers: headers.adminKey, body: { username: 'carol', password: 'correct horse battery' } });
      expect(login.status, JSON.stringify(login.body)).toBe(200);
    });

    it('shows the members with role and datasets; a guest sees only themselves', async () => {
      const info = await call(service, 'GET', org(), { headers: headers.member });
      const users = (info.body.organization as { users: { username: string; role: string; datasets: string[] }[] }).users;
      expect(users.map((u) => [u.username, u.role, u.datasets])).toEqual([
        ['ada', 'admin', []],
        ['bob', 'admin', []],
        ['carol', 'member', []],
        ['dave', 'guest', ['wrists']],
      ]);
      expect((info.body.organization as { users: { email: string }[] }).users[0]!.email).toBe('ada@example.com');
      // A key sees who the members are, not their e-mail.
      const byKey = await call(service, 'GET', org(), { headers: headers.adminKey });
      const keyUsers = (byKey.body.organization as { users: { username: string; email: string; role: string }[] }).users;
      expect(keyUsers.map((u) => [u.username, u.email, u.role])).toEqual([
        ['ada', '', 'admin'],
        ['bob', '', 'admin'],
        ['carol', '', 'member'],
        ['dave', '', 'guest'],
      ]);
      const guest = await call(service, 'GET', org(), { headers: headers.guest });
      expect((guest.body.organization as { users: { username: string }[] }).users.map((u) => u.username)).toEqual(['dave']);
      // Pending invitations (what admins typed) only to the signed-in admins who may withdraw them.
      expect((await call(service, 'GET', org(), { headers: headers.admin })).body.memberInvitations).toEqual([]);
      for (const body of [info.body, byKey.body, guest.body]) expect(body).not.toHaveProperty('memberInvitations');
    });
  });

  describe('members', () => {
    it('refuses a member added twice and a bad role with a 400 naming the problem (an unknown name is invited like any other: organizationInvitations)', async () => {
      const twice = await call(service, 'POST', org('/members/add'), { headers: headers.admin, body: { usernameOrEmail: 'carol', role: 'admin', datasets: [] } });
      expect(twice.status).toBe(400);
      expect(twice.body.error).toMatch(/already a member/);
      const badRole = await call(service, 'POST', org('/members/add'), { headers: headers.owner, body: { usernameOrEmail: 'fay', role: 'owner', datasets: [] } });
      expect(badRole.status).toBe(400);
      expect(badRole.body.error).toMatch(/"role"/);
    });

    it("changes a member's role and a guest's datasets", async () => {
      expect((await call(service, 'POST', org(`/members/${ids.dave}/datasets`), { headers: headers.admin, body: { datasets: ['wrists', 'ankles'] } })).status).toBe(200);
      expect((await call(service, 'POST', org(`/members/${ids.carol}/role`), { headers: headers.staff, body: { role: 'guest' } })).status).toBe(200);
      const info = await call(service, 'GET', org(), { headers: headers.owner });
      const users = (info.body.organization as { users: { username: string; role: string; datasets: string[] }[] }).users;
      expect(users.find((u) => u.username === 'dave')!.datasets).toEqual(['wrists', 'ankles']);
      expect(users.find((u) => u.username === 'carol')!.role).toBe('guest');
      // A guest now: she may no longer read the jobs or the keys.
      expect((await call(service, 'GET', org('/apikeys'), { headers: headers.member })).status).toBe(403);
      expect((await call(service, 'POST', org(`/members/${ids.carol}/role`), { headers: headers.owner, body: { role: 'member' } })).status).toBe(200);
      expect((await call(service, 'POST', org(`/members/${ids.eve}/role`), { headers: headers.owner, body: { role: 'member' } })).body.error).toMatch(/not a member/);
    });

    it('does not let the last admin leave or be demoted', async () => {
      const other = await call(service, 'POST', '/api/user/create-developer-profile', { headers: headers.outsider });
      const profile = `/api/organizations/${Number(other.body.organizationId)}`;
      const leave = await call(service, 'POST', `${profile}/members/remove`, { headers: headers.outsider, body: { id: ids.eve } });
      expect(leave.status).toBe(400);
      expect(leave.body.error).toMatch(/only member/);
      const invited = await call(service, 'POST', `${profile}/members/add`, { headers: headers.outsider, body: { usernameOrEmail: 'fay', role: 'member', datasets: [] } });
      expect((await call(service, 'POST', `/api/user/organization-invitations/${Number(invited.body.id)}/accept`, { headers: jwt(await tokenOf('fay')) })).status).toBe(200);
      const leaveAgain = await call(service, 'POST', `${profile}/members/remove`, { headers: headers.outsider, body: { id: ids.eve } });
      expect(leaveAgain.status).toBe(400);
      expect(leaveAgain.body.error).toMatch(/last admin/);
      const demote = await call(service, 'POST', `${profile}/members/${ids.eve}/role`, { headers: headers.outsider, body: { role: 'member' } });
      expect(demote.status).toBe(400);
      expect(demote.body.error).toMatch(/last admin/);
      // A member leaves by their own id; another member cannot remove anyone.
      expect((await call(service, 'POST', `${profile}/members/remove`, { headers: jwt(await tokenOf('fay')), body: { id: ids.eve } })).status).toBe(403);
      expect((await call(service, 'POST', `${profile}/members/remove`, { headers: jwt(await tokenOf('fay')), body: { id: ids.fay } })).status).toBe(200);
      expect((await call(service, 'GET', '/api/user/organizations', { headers: jwt(await tokenOf('fay')) })).body.organizations).toEqual([]);
    });

    it('invites by e-mail: an existing account is invited, a new address gets a pending account and a code through the outbox', async () => {
      const known = await call(service, 'POST', org('/members/invite'), { headers: headers.owner, body: { email: 'fay@example.com', role: 'member', datasets: [] } });
      expect(known.status, JSON.stringify(known.body)).toBe(200);
      // Fay is not a member until she accepts.
      expect((await call(service, 'GET', '/api/user/organizations', { headers: jwt(await tokenOf('fay')) })).body.organizations).toEqual([]);
      expect((await call(service, 'POST', `/api/user/organization-invitations/${Number(known.body.id)}/accept`, { headers: jwt(await tokenOf('fay')) })).status).toBe(200);
      expect((await call(service, 'GET', '/api/user/organizations', { headers: jwt(await tokenOf('fay')) })).body.organizations).toEqual([expect.objectContaining({ id: organizationId })]);
      const invited = await call(service, 'POST', org('/members/invite'), { headers: headers.admin, body: { email: 'grace@navy.test', role: 'guest', datasets: ['wrists'] } });
      expect(invited.status, JSON.stringify(invited.body)).toBe(200);
      const [mail] = await service.stores.readStore.collection<EmailDocument>(EMAILS).find({ to: 'grace@navy.test' });
      const code = /activation code is: (\S+)/.exec(String(mail!.bodyText))![1]!;
      expect(mail!.bodyText).toMatch(/Navy labs/);
      const activated = await call(service, 'POST', '/api/user/activate-by-third-party-activation-code', {
        body: { activationCode: code, username: 'grace', password: 'correct horse battery', privacyPolicy: true },
      });
      expect(activated.status, JSON.stringify(activated.body)).toBe(200);
      const mine = await call(service, 'GET', '/api/user/organizations', { headers: jwt(String(activated.body.token)) });
      expect(mine.body.organizations).toEqual([expect.objectContaining({ id: organizationId })]);
      const again = await call(service, 'POST', org('/members/invite'), { headers: headers.owner, body: { email: 'grace@navy.test', role: 'guest', datasets: [] } });
      expect(again.status).toBe(400);
    });
  });

  describe('API keys', () => {
    it('lists keys truncated, never whole, and keeps key values out of the log', async () => {
      const res = await call(service, 'GET', org('/apikeys'), { headers: headers.adminKey });
      const keys = res.body.apiKeys as { apiKey: string; role: string; name: string }[];
      expect(keys.map((k) => [k.name, k.role])).toEqual([
        ['admin key', 'admin'],
        ['member key', 'member'],
      ]);
      for (const k of keys) expect(k.apiKey).toMatch(/^ei_.{7}\.\.\.$/);
      const raw: unknown[] = [];
      const inner = (service.stores.events as unknown as { inner: { readAll(): AsyncIterable<unknown> } }).inner;
      for await (const e of inner.readAll()) raw.push(e);
      const text = JSON.stringify(raw, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
      expect(text).not.toContain(adminKey);
      expect(text).not.toContain(adminKey.slice(10));
    });

    it('refuses a key outside its organization, and an expired or revoked key at once', async () => {
      const other = await call(service, 'POST', '/api/organizations/create', { headers: headers.staff, body: { organizationName: 'Elsewhere' } });
      expect(other.status).toBe(200);
      expect((await call(service, 'GET', org(), { headers: { 'x-api-key': String(other.body.apiKey) } })).status).toBe(403);
      expect((await call(service, 'GET', `/api/organizations/${Number(other.body.id)}`, { headers: { 'x-api-key': String(other.body.apiKey) } })).status).toBe(200);
      const short = await call(service, 'POST', org('/apikeys'), { headers: headers.owner, body: { name: 'short', role: 'member', ttl: 1 } });
      const shortKey = { 'x-api-key': String(short.body.apiKey) };
      expect((await call(service, 'GET', org(), { headers: shortKey })).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect((await call(service, 'GET', org(), { headers: shortKey })).status).toBe(401);
      const doomed = await call(service, 'POST', org('/apikeys'), { headers: headers.adminKey, body: { name: 'doomed', role: 'member' } });
      const doomedKey = { 'x-api-key': String(doomed.body.apiKey) };
      expect((await call(service, 'GET', org(), { headers: doomedKey })).status).toBe(200);
      expect((await call(service, 'DELETE', org(`/apikeys/${Number(doomed.body.id)}`), { headers: headers.admin })).status).toBe(200);
      expect((await call(service, 'GET', org(), { headers: doomedKey })).status).toBe(401);
      expect((await call(service, 'DELETE', org(`/apikeys/${Number(doomed.body.id)}`), { headers: headers.admin })).status).toBe(404);
    });

    it('does not let a caller choose a value any key ever had', async () => {
      const chosen = 'ei_chosen_value_for_the_org_0123456789';
      expect((await call(service, 'POST', org('/apikeys'), { headers: headers.owner, body: { name: 'chosen', role: 'member', apiKey: chosen } })).status).toBe(200);
      const again = await call(service, 'POST', org('/apikeys'), { headers: headers.owner, body: { name: 'chosen again', role: 'member', apiKey: chosen } });
      expect(again.status).toBe(400);
      const project = await call(service, 'POST', org('/apikeys'), { headers: headers.owner, body: { name: 'a project key', role: 'member', apiKey: headers.projectKey['x-api-key'] } });
      expect(project.status).toBe(400);
    });
  });

  describe('jobs', () => {
    const ids_: number[] = [];
    /** Requests a job for an organization (or a project), as code starting an organization's job does, and waits for the read model. */
    async function requestJob(input: { organizationId: number | null; projectId?: number | null; categoryKey: string; category?: string; key?: string; parameters?: Record<string, unknown> }): Promise<number> {
      const jobId = await new IdAllocator(service.stores.events).next('job');
      const { appended } = await runJobCommand(
        service.stores.events,
        {
          type: 'RequestJob',
          data: { jobId, projectId: input.projectId ?? null, organizationId: input.organizationId, category: input.category ?? 'Test job', categoryKey: input.categoryKey, key: input.key ?? 'k', parameters: input.parameters ?? {}, jobNotificationUids: [], createdByUserId: ids.ada!, now: new Date() },
        },
        { actor: `user:${ids.ada}`, correlationId: 'test', now: new Date() },
      );
      await service.projections!.waitFor(appended!.position, 5000);
      ids_.push(jobId);
      return jobId;
    }
    async function finished(jobId: number): Promise<Record<string, unknown>> {
      for (const until = Date.now() + 10_000; ; await sleep(50)) {
        const res = await call(service, 'GET', org(`/jobs/${jobId}/status`), { headers: headers.member });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        const job = res.body.job as Record<string, unknown>;
        if (typeof job.finishedSuccessful === 'boolean') return job;
        if (Date.now() > until) throw new Error(`job ${jobId} did not finish`);
      }
    }

    it("lists the organization's own jobs with every filter, counting before paging, and runs them", async () => {
      const ok = await requestJob({ organizationId, categoryKey: 'test-lines', category: 'Lines', key: 'a', parameters: { lines: 2 } });
      const failed = await requestJob({ organizationId, categoryKey: 'test-lines', category: 'Lines', key: 'b', parameters: { lines: 1, failWith: 'broken on purpose' } });
      const waiting = await requestJob({ organizationId, categoryKey: 'no-such-runner', category: 'Waiting', key: 'c' });
      const elsewhere = await requestJob({ organizationId: organizationId + 1000, categoryKey: 'no-such-runner' });
      expect((await finished(ok)).finishedSuccessful).toBe(true);
      expect((await finished(failed)).finishedSuccessful).toBe(false);
      const all = await call(service, 'GET', org('/jobs/all'), { headers: headers.memberKey });
      expect(all.body.totalJobCount).toBe(3);
      expect((all.body.jobs as { id: number }[]).map((j) => j.id)).toEqual([waiting, failed, ok]);
      const page = await call(service, 'GET', org('/jobs/all?limit=1&offset=1'), { headers: headers.member });
      expect(page.body).toMatchObject({ totalJobCount: 3, jobs: [expect.objectContaining({ id: failed })] });
      const byKey = await call(service, 'GET', org('/jobs/all?key=a'), { headers: headers.member });
      expect((byKey.body.jobs as { id: number }[]).map((j) => j.id)).toEqual([ok]);
      const byCategory = await call(service, 'GET', org('/jobs/all?category=Lines&finished=failed'), { headers: headers.member });
      expect(byCategory.body).toMatchObject({ totalJobCount: 1, jobs: [expect.objectContaining({ id: failed, finishedSuccessful: false })] });
      const future = await call(service, 'GET', org(`/jobs/all?startDate=${new Date(Date.now() + 3_600_000).toISOString()}`), { headers: headers.member });
      expect(future.body.totalJobCount).toBe(0);
      const active = await call(service, 'GET', org('/jobs'), { headers: headers.member });
      expect((active.body.jobs as { id: number }[]).map((j) => j.id)).toEqual([waiting]);
      const history = await call(service, 'GET', org('/jobs/history'), { headers: headers.member });
      expect((history.body.jobs as { id: number }[]).map((j) => j.id)).toEqual([failed, ok]);
      const stdout = await call(service, 'GET', org(`/jobs/${ok}/stdout`), { headers: headers.member });
      expect((stdout.body.stdout as { data: string }[]).map((l) => l.data)).toEqual(['line 1\n', 'line 2\n']);
      const download = await fetch(`${service.apiUrl}/v1${org(`/jobs/${ok}/stdout/download`)}`, { headers: headers.member });
      expect(await download.text()).toBe('line 1\nline 2\n');
      // Another organization's job is not found here, nor is the organization's job under a project.
      expect((await call(service, 'GET', org(`/jobs/${elsewhere}/status`), { headers: headers.member })).status).toBe(404);
      expect((await call(service, 'GET', org('/jobs/all?finished=sometimes'), { headers: headers.member })).status).toBe(400);
    });

    it('lets admins cancel a job, and not members', async () => {
      const waiting = (await call(service, 'GET', org('/jobs'), { headers: headers.member })).body.jobs as { id: number }[];
      const jobId = waiting[0]!.id;
      expect((await call(service, 'POST', org(`/jobs/${jobId}/cancel`), { headers: headers.memberKey })).status).toBe(403);
      expect((await call(service, 'POST', org(`/jobs/${jobId}/cancel`), { headers: headers.adminKey })).status).toBe(200);
      const job = await finished(jobId);
      expect(job).toMatchObject({ finishedSuccessful: false, additionalInfo: 'Cancelled before it started' });
    });

    it('admits members and live keys to the job websocket, and refuses them once they may no longer read the jobs', async () => {
      const tokenFor = async (headers: Record<string, string>) => String(((await call(service, 'GET', org('/socket-token'), { headers })).body.token as { socketToken: string }).socketToken);
      const handshake = (token: string) =>
        SdkSocket.open(service.apiUrl, token).then(
          (s) => (s.close(), 'accepted'),
          (error: Error) => error.message.replace(/^handshake refused: 400 /, ''),
        );
      const carols = await tokenFor(headers.member);
      expect(await handshake(carols)).toBe('accepted');
      expect((await call(service, 'POST', org(`/members/${ids.carol}/role`), { headers: headers.owner, body: { role: 'guest' } })).status).toBe(200);
      expect(await handshake(carols)).toBe('Guests of an organization see only its information and their own datasets');
      expect((await call(service, 'POST', org(`/members/${ids.carol}/role`), { headers: headers.owner, body: { role: 'member' } })).status).toBe(200);
      const key = await call(service, 'POST', org('/apikeys'), { headers: headers.owner, body: { name: 'socket', role: 'member' } });
      const keys = await tokenFor({ 'x-api-key': String(key.body.apiKey) });
      expect(await handshake(keys)).toBe('accepted');
      expect((await call(service, 'DELETE', org(`/apikeys/${Number(key.body.id)}`), { headers: headers.owner })).status).toBe(200);
      expect(await handshake(keys)).toBe('The API key of this socket token was revoked');
    });

    it('issues a socket token for the organization to its members and keys', async () => {
      const res = await call(service, 'GET', org('/socket-token'), { headers: headers.memberKey });
      expect(res.body.token).toEqual({ socketToken: expect.any(String), expires: expect.any(String) });
      expect((await call(service, 'GET', org('/socket-token'), { headers: headers.guest })).status).toBe(403);
    });
  });

  describe('settings and deletion', () => {
    it('is created by staff only, who become its admin', async () => {
      expect((await call(service, 'POST', '/api/organizations/create', { headers: headers.owner, body: { organizationName: 'Mine' } })).status).toBe(403);
      const res = await call(service, 'POST', '/api/organizations/create', { headers: headers.staff, body: { organizationName: 'Staff made' } });
      expect(res.body).toEqual({ success: true, id: expect.any(Number), apiKey: expect.stringMatching(/^ei_/) });
    });

    it('updates the name and readme, and refuses fields it does not have', async () => {
      expect((await call(service, 'POST', org(), { headers: headers.adminKey, body: { name: 'Navy research labs', readme: '# Hello' } })).status).toBe(200);
      const info = await call(service, 'GET', org(), { headers: headers.guest });
      expect(info.body.organization).toMatchObject({ name: 'Navy research labs' });
      expect(info.body.readme).toEqual({ markdown: '# Hello', html: expect.stringContaining('Hello') });
      const unknown = await call(service, 'POST', org(), { headers: headers.owner, body: { jobLimitM: 5 } });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error).toMatch(/jobLimitM/);
    });

    it('is deleted by an admin: gone from lists and routes, its keys refused', async () => {
      expect((await call(service, 'DELETE', org(), { headers: headers.member })).status).toBe(403);
      expect((await call(service, 'DELETE', org(), { headers: headers.admin })).status).toBe(200);
      expect((await call(service, 'GET', org(), { headers: headers.owner })).status).toBe(404);
      expect((await call(service, 'GET', org(), { headers: headers.adminKey })).status).toBe(401);
      expect((await call(service, 'GET', '/api/organizations', { headers: headers.owner })).body.organizations).toEqual([]);
    });
  });

  async function tokenOf(username: string): Promise<string> {
    const res = await call(service, 'POST', '/api-login', { body: { username, password: 'correct horse battery' } });
    return String(res.body.token);
  }
});

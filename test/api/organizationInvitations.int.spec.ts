// Organization membership takes the person's consent: any user is the admin of their own
// developer profile, so `members/add` and `members/invite` must not enrol anyone, nor show their
// profile, nor say whether a name has an account.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMAILS, type EmailDocument } from '../../projections/emails/emailDocument';
import { call, describeOn, registerUser, setups, startTestService, type TestService } from '../support/testService';

type Invitation = { id: number; usernameOrEmail: string; role: string; datasets: string[]; invited: string; invitedBy?: { id: number; username: string } };

for (const setup of setups) describeOn(setup, 'organization invitations over HTTP', () => {
  let service: TestService;
  const jwt = (token: string) => ({ 'x-jwt-token': token });
  const h: Record<string, Record<string, string>> = {};
  const ids: Record<string, number> = {};
  /** Eve's developer profile: anyone can make one and is its admin. */
  let profile: number;
  const org = (suffix = '') => `/api/organizations/${profile}${suffix}`;
  const add = (usernameOrEmail: string, role = 'member', datasets: string[] = [], headers = h.eve!) =>
    call(service, 'POST', org('/members/add'), { headers, body: { usernameOrEmail, role, datasets } });
  const invite = (email: string, role = 'member', datasets: string[] = []) => call(service, 'POST', org('/members/invite'), { headers: h.eve!, body: { email, role, datasets } });
  const pendingOf = async (): Promise<Invitation[]> => (await call(service, 'GET', org(), { headers: h.eve! })).body.memberInvitations as Invitation[];
  const mine = async (who: string) => (await call(service, 'GET', '/api/user/organization-invitations', { headers: h[who]! })).body.invitations as { id: number; organizationId: number; role: string; datasets: string[] }[];
  const listed = async (who: string) => {
    const lists = await Promise.all([
      call(service, 'GET', '/api/user/organizations', { headers: h[who]! }),
      call(service, 'GET', `/api/users/${ids[who]}/organizations`, { headers: h[who]! }),
      call(service, 'GET', '/api/organizations', { headers: h[who]! }),
    ]);
    return lists.map((l) => (l.body.organizations as { id: number }[]).map((o) => o.id));
  };
  /** The raw log, sealed fields as stored. */
  const rawLog = async () => {
    const raw: unknown[] = [];
    const inner = (service.stores.events as unknown as { inner: { readAll(): AsyncIterable<unknown> } }).inner;
    for await (const e of inner.readAll()) raw.push(e);
    return JSON.stringify(raw, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
  };

  beforeAll(async () => {
    service = await startTestService({ mongo: setup.mongo });
    await registerUser(service, 'staffer');
    for (const name of ['eve', 'victim', 'bob', 'carol', 'dan', 'fay']) {
      const u = await registerUser(service, name, { name: `${name} Person`, jobTitle: `${name}'s job`, companyName: `${name} Inc` });
      ids[name] = u.id;
      h[name] = jwt(u.token);
    }
    const created = await call(service, 'POST', '/api/user/create-developer-profile', { headers: h.eve! });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    profile = Number(created.body.organizationId);
  });
  afterAll(async () => {
    await service?.destroy();
  });

  describe('before the invitee answers', () => {
    let victimInvitation: number;

    it('makes nobody a member: the invitee has no access and the organization is in none of their lists', async () => {
      const res = await add('victim@example.com', 'admin');
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toEqual({ success: true, id: expect.any(Number) });
      victimInvitation = Number(res.body.id);
      expect(await listed('victim')).toEqual([[], [], []]);
      expect((await call(service, 'GET', org(), { headers: h.victim! })).status).toBe(403);
      expect((await call(service, 'GET', org('/jobs'), { headers: h.victim! })).status).toBe(403);
    });

    it("shows the organization only what was typed, never the invitee's e-mail, name, last seen, MFA state or tier", async () => {
      const info = await call(service, 'GET', org(), { headers: h.eve! });
      const users = (info.body.organization as { users: { id: number; username: string }[] }).users;
      expect(users.map((u) => u.username)).toEqual(['eve']);
      expect(info.body.memberInvitations).toEqual([{ id: victimInvitation, usernameOrEmail: 'victim@example.com', role: 'admin', datasets: [], invited: expect.any(String), invitedBy: { id: ids.eve, username: 'eve' } }]);
      // Nothing of the victim's profile anywhere in the answer, and no user id or other field in the invitation.
      const text = JSON.stringify(info.body);
      for (const leak of ['victim Person', "victim's job", 'victim Inc', 'victim@example.com"', `"id":${ids.victim},`]) {
        if (leak === 'victim@example.com"') expect(text.split(leak).length - 1, 'the e-mail only as typed').toBe(1);
        else expect(text, leak).not.toContain(leak);
      }
      expect(Object.keys((info.body.memberInvitations as Invitation[])[0]!).sort()).toEqual(['datasets', 'id', 'invited', 'invitedBy', 'role', 'usernameOrEmail']);
      expect(userCountOf(info.body)).toBe(1);
    });

    it('answers an unknown name exactly as a known one: same status, same body shape, and the same pending entry', async () => {
      const known = await add('bob', 'guest', ['wrists']);
      const unknown = await add('nobody-at-all', 'guest', ['wrists']);
      const unknownEmail = await add('nobody@nowhere.test', 'guest', ['wrists']);
      for (const res of [known, unknown, unknownEmail]) {
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(Object.keys(res.body).sort()).toEqual(['id', 'success']);
        expect(res.body.id).toEqual(expect.any(Number));
      }
      const pending = await pendingOf();
      const entryOf = (id: unknown) => pending.find((i) => i.id === id)!;
      const shape = (i: Invitation) => ({ ...i, id: 0, usernameOrEmail: '', invited: typeof i.invited });
      expect(shape(entryOf(unknown.body.id))).toEqual(shape(entryOf(known.body.id)));
      expect(shape(entryOf(unknownEmail.body.id))).toEqual(shape(entryOf(known.body.id)));
      // And in the admin's own history the events read alike: the invitee is a user id either way.
      const history = await call(service, 'GET', `/api/users/${ids.eve}/history?type=OrganizationMemberInvited`, { headers: h.eve! });
      const events = (history.body.events as { data: Record<string, unknown> }[]).map((e) => e.data);
      const dataOf = (id: unknown) => events.find((d) => d.invitationId === id)!;
      const keysAndKinds = (d: Record<string, unknown>) => Object.entries(d).map(([k, v]) => [k, typeof v]).sort();
      expect(keysAndKinds(dataOf(unknown.body.id))).toEqual(keysAndKinds(dataOf(known.body.id)));
      expect(dataOf(unknown.body.id).userId).toEqual(expect.any(Number));
    });

    it('refuses the same name typed twice alike, known or not, and takes another name for an invitee without saying who it is', async () => {
      const knownAgain = await add('BOB');
      const unknownAgain = await add('Nobody-At-All');
      expect(knownAgain.status).toBe(409);
      expect(unknownAgain.status).toBe(409);
      expect(knownAgain.body.error).toBe('"BOB" is already invited to the organization; the invitation waits for an answer');
      expect(unknownAgain.body.error).toBe('"Nobody-At-All" is already invited to the organization; the invitation waits for an answer');
      // Bob is invited as "bob": typing his address is a second invitation, not a refusal naming him.
      const byEmail = await add('bob@example.com', 'member');
      expect(byEmail.status, JSON.stringify(byEmail.body)).toBe(200);
      expect(byEmail.body).toEqual({ success: true, id: expect.any(Number) });
    });

    it('answers members/invite alike for an address with an account and one without (which gets a pending account and a code)', async () => {
      const existing = await invite('carol@example.com', 'member');
      const fresh = await invite('grace@navy.test', 'guest', ['wrists']);
      for (const res of [existing, fresh]) {
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(res.body).toEqual({ success: true, id: expect.any(Number) });
      }
      expect(await listed('carol')).toEqual([[], [], []]);
      const [mail] = await service.stores.readStore.collection<EmailDocument>(EMAILS).find({ to: 'grace@navy.test' });
      expect(mail!.bodyText).toMatch(/activation code is: \S+/);
      const carolAgain = await invite('carol@example.com');
      const graceAgain = await invite('grace@navy.test');
      expect([carolAgain.status, graceAgain.status]).toEqual([409, 409]);
    });

    it('cannot be sent with an API key, nor by a member who is not an admin', async () => {
      const key = await call(service, 'POST', org('/apikeys'), { headers: h.eve!, body: { name: 'k', role: 'admin' } });
      const byKey = await call(service, 'POST', org('/members/add'), { headers: { 'x-api-key': String(key.body.apiKey) }, body: { usernameOrEmail: 'dan', role: 'member', datasets: [] } });
      expect(byKey.status).toBe(403);
      expect((await add('dan', 'member', [], h.bob!)).status).toBe(403);
    });

    it("keeps the typed name out of the log's clear text (sealed with the invitee's key)", async () => {
      expect((await add('DAN@example.com')).status).toBe(200);
      expect((await add('sealed-nobody@nowhere.test')).status).toBe(200);
      const text = await rawLog();
      expect(text).not.toContain('DAN@example.com');
      expect(text).not.toContain('sealed-nobody@nowhere.test');
    });
  });

  describe('the invitee answers', () => {
    it('lists their invitations with the role and datasets offered, and nothing of anyone else', async () => {
      const bobs = await mine('bob');
      expect(bobs).toEqual([
        expect.objectContaining({ organizationId: profile, organizationName: 'eve', role: 'guest', datasets: ['wrists'], invitedBy: { id: ids.eve, username: 'eve', name: 'eve Person' } }),
        expect.objectContaining({ organizationId: profile, role: 'member', datasets: [] }),
      ]);
      expect(await mine('fay')).toEqual([]);
    });

    it("cannot be answered by anyone but the invitee, nor with an API key", async () => {
      const [invitation] = await mine('victim');
      expect((await call(service, 'POST', `/api/user/organization-invitations/${invitation!.id}/accept`, { headers: h.dan! })).status).toBe(404);
      expect((await call(service, 'POST', `/api/user/organization-invitations/${invitation!.id}/accept`, { headers: h.eve! })).status).toBe(404);
      const project = await call(service, 'POST', '/api/projects/create', { headers: h.victim!, body: { projectName: 'Mine' } });
      expect((await call(service, 'POST', `/api/user/organization-invitations/${invitation!.id}/accept`, { headers: { 'x-api-key': String(project.body.apiKey) } })).status).toBe(401);
      expect(await listed('victim')).toEqual([[], [], []]);
    });

    it('declines: the invitation is gone for both, and the organization learned nothing more', async () => {
      const [invitation] = await mine('victim');
      const res = await call(service, 'POST', `/api/user/organization-invitations/${invitation!.id}/decline`, { headers: h.victim! });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(await mine('victim')).toEqual([]);
      expect((await pendingOf()).map((i) => i.usernameOrEmail)).not.toContain('victim@example.com');
      expect(await listed('victim')).toEqual([[], [], []]);
      expect((await call(service, 'POST', `/api/user/organization-invitations/${invitation!.id}/accept`, { headers: h.victim! })).status).toBe(404);
    });

    it('accepts: a member with the role and datasets offered, listed everywhere, whose profile the organization now sees; their other invitation closes', async () => {
      const [asBob] = await mine('bob');
      const res = await call(service, 'POST', `/api/user/organization-invitations/${asBob!.id}/accept`, { headers: h.bob! });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toEqual({ success: true, organizationId: profile });
      expect(await listed('bob')).toEqual([[profile], [profile], [profile]]);
      expect(await mine('bob')).toEqual([]);
      const info = await call(service, 'GET', org(), { headers: h.eve! });
      const users = (info.body.organization as { users: { username: string; email: string; role: string; datasets: string[] }[] }).users;
      expect(users.find((u) => u.username === 'bob')).toMatchObject({ email: 'bob@example.com', role: 'guest', datasets: ['wrists'] });
      expect((info.body.memberInvitations as Invitation[]).map((i) => i.usernameOrEmail)).not.toContain('bob@example.com');
      expect((await call(service, 'GET', org(), { headers: h.bob! })).status).toBe(200);
      // A member typed again is refused as a member: the admins see members' profiles anyway.
      const again = await add('bob');
      expect(again.status).toBe(400);
      expect(again.body.error).toMatch(/already a member/);
    });

    it("is withdrawn by an admin, known name or not, and the invitee can no longer accept", async () => {
      const carols = await mine('carol');
      const pending = await pendingOf();
      const carolsEntry = pending.find((i) => i.usernameOrEmail === 'carol@example.com')!;
      const nobodys = pending.find((i) => i.usernameOrEmail === 'nobody-at-all')!;
      expect(carols.map((i) => i.id)).toEqual([carolsEntry.id]);
      for (const entry of [carolsEntry, nobodys]) {
        const res = await call(service, 'DELETE', org(`/members/invitations/${entry.id}`), { headers: h.eve! });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
      }
      expect(await mine('carol')).toEqual([]);
      expect((await call(service, 'POST', `/api/user/organization-invitations/${carolsEntry.id}/accept`, { headers: h.carol! })).status).toBe(404);
      expect((await call(service, 'DELETE', org(`/members/invitations/${carolsEntry.id}`), { headers: h.eve! })).status).toBe(404);
      expect((await call(service, 'DELETE', org(`/members/invitations/${nobodys.id}`), { headers: h.bob! })).status).toBe(403);
      expect(await listed('carol')).toEqual([[], [], []]);
    });

    it('makes the holder of the mailbox a member when they activate the account the invitation created, with the code e-mailed', async () => {
      const [mail] = await service.stores.readStore.collection<EmailDocument>(EMAILS).find({ to: 'grace@navy.test' });
      const code = /activation code is: (\S+)/.exec(String(mail!.bodyText))![1]!;
      // Another organization invites the same (still pending) address: no code was e-mailed for that one.
      const dans = Number((await call(service, 'POST', '/api/user/create-developer-profile', { headers: h.dan! })).body.organizationId);
      const other = await call(service, 'POST', `/api/organizations/${dans}/members/invite`, { headers: h.dan!, body: { email: 'grace@navy.test', role: 'admin', datasets: [] } });
      expect(other.body).toEqual({ success: true, id: expect.any(Number) });
      const activated = await call(service, 'POST', '/api/user/activate-by-third-party-activation-code', {
        body: { activationCode: code, username: 'grace', password: 'correct horse battery', privacyPolicy: true },
      });
      expect(activated.status, JSON.stringify(activated.body)).toBe(200);
      const grace = jwt(String(activated.body.token));
      const organizations = await call(service, 'GET', '/api/user/organizations', { headers: grace });
      expect(organizations.body.organizations).toEqual([expect.objectContaining({ id: profile, isAdmin: false })]);
      const waiting = await call(service, 'GET', '/api/user/organization-invitations', { headers: grace });
      expect(waiting.body.invitations).toEqual([expect.objectContaining({ id: Number(other.body.id), organizationId: dans, role: 'admin' })]);
      const info = await call(service, 'GET', org(), { headers: h.eve! });
      expect((info.body.organization as { users: { username: string; role: string; datasets: string[] }[] }).users.find((u) => u.username === 'grace')).toMatchObject({ role: 'guest', datasets: ['wrists'] });
    });
  });

  it("drops a deleted account's invitation from the list, and its name can be invited again", async () => {
    const gone = await registerUser(service, 'gone');
    expect((await add('gone')).status).toBe(200);
    expect((await call(service, 'DELETE', '/api/user', { headers: jwt(gone.token), body: { password: 'correct horse battery' } })).status).toBe(200);
    expect((await pendingOf()).map((i) => i.usernameOrEmail)).not.toContain('gone');
    const again = await add('gone');
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect((await pendingOf()).map((i) => i.usernameOrEmail)).toContain('gone');
  });
});

function userCountOf(body: Record<string, unknown>): number {
  return Number((body.organization as { userCount: number }).userCount);
}

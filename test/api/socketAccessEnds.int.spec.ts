// Access that ends ends on the job websocket too: for every way a grant
// ends, a socket token issued before is refused at the next handshake, and a socket already open is
// told why, closed, and sent nothing more, not even of a job started after the end.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inviteAndAccept } from '../support/collaborators';
import { call, registerUser, startTestService, type TestService } from '../support/testService';
import { SdkSocket } from './socketClient';
import { dataOf, line, requestJob, writeOutput } from './simulatedJobs';

const PASSWORD = 'correct horse battery';
const jwt = (token: string) => ({ 'x-jwt-token': token });

type Scope = number | { organizationId: number };

/** A socket token, and the project or organization whose jobs it follows. */
interface Grant {
  token: string;
  scope: Scope;
}

async function socketToken(service: TestService, scope: Scope, headers: Record<string, string>): Promise<string> {
  const path = typeof scope === 'number' ? `/api/${scope}/socket-token` : `/api/organizations/${scope.organizationId}/socket-token`;
  const res = await call(service, 'GET', path, { headers });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.token as { socketToken: string }).socketToken;
}

/** A socket token for the holder of `headers`, with the scope it follows. */
const grantOf = async (service: TestService, scope: Scope, headers: Record<string, string>): Promise<Grant> => ({ token: await socketToken(service, scope, headers), scope });

/** Whether `done` comes to hold within `ms` (no throw: the assertions after it say what was missing). */
const within = (socket: SdkSocket, done: () => boolean, ms: number) => socket.until(done, 'it', ms).then(
  () => true,
  () => false,
);

/**
 * Opens a socket with the grant, follows a job, ends the grant, then checks the three promises:
 * the open socket is told and closed, it gets nothing of the old job nor of one started after the
 * end, and the token no longer opens a socket.
 */
async function expectAccessToEnd(service: TestService, grant: Grant, end: () => Promise<void>, reason: RegExp): Promise<void> {
  const events = service.stores.events;
  const before = await requestJob(events, grant.scope);
  const socket = await SdkSocket.open(service.apiUrl, grant.token);
  try {
    await socket.hello();
    socket.startLogStream(before);
    await writeOutput(events, before, [line('before the end\n')]);
    await socket.until(() => dataOf(socket, before).length === 1, 'the line written before the end');

    await end();
    const closed = await within(socket, () => socket.closed, 5_000);
    const after = await requestJob(events, grant.scope);
    if (!socket.closed) socket.startLogStream(after);
    await writeOutput(events, after, [line('after the end\n')]);
    await writeOutput(events, before, [line('after the end\n')]);
    await sleep(300);

    expect(socket.frames.join('\n')).not.toContain('after the end');
    expect(socket.named('access-ended').map((m) => m.payload.reason)).toEqual([expect.stringMatching(reason)]);
    expect(closed, 'the socket was closed').toBe(true);
    await expect(SdkSocket.open(service.apiUrl, grant.token)).rejects.toThrow(reason);
  } finally {
    socket.close();
  }
}

describe('the job websocket when access ends', () => {
  let service: TestService;
  let staff: { id: number; token: string };
  let ada: { id: number; token: string };
  let projectId: number;
  let organizationId: number;
  let organizationKey: string;
  let users = 0;

  /** A user who collaborates on Ada's project. */
  const collaborator = async () => {
    const name = `collaborator${++users}`;
    const user = await registerUser(service, name);
    await inviteAndAccept(service, projectId, ada.token, user.token, name);
    return { ...user, name };
  };
  const organizationKeyWith = async (body: Record<string, unknown>) => {
    const res = await call(service, 'POST', `/api/organizations/${organizationId}/apikeys`, { headers: { 'x-api-key': organizationKey }, body: { name: 'socket', role: 'member', ...body } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return { id: Number(res.body.id), apiKey: String(res.body.apiKey) };
  };

  beforeAll(async () => {
    service = await startTestService({ mongo: false });
    staff = await registerUser(service, 'staffer');
    ada = await registerUser(service, 'ada');
    projectId = Number((await call(service, 'POST', '/api/projects/create', { headers: jwt(ada.token), body: { projectName: 'Followed' } })).body.id);
    const organization = await call(service, 'POST', '/api/organizations/create', { headers: jwt(staff.token), body: { organizationName: 'Followers' } });
    expect(organization.status, JSON.stringify(organization.body)).toBe(200);
    organizationId = Number(organization.body.id);
    organizationKey = String(organization.body.apiKey);
  });
  afterAll(async () => {
    await service?.destroy();
  });

  it('ends for a collaborator who is removed', async () => {
    const bob = await collaborator();
    const grant = await grantOf(service, projectId, jwt(bob.token));
    await expectAccessToEnd(
      service,
      grant,
      async () => {
        expect((await call(service, 'POST', `/api/${projectId}/collaborators/remove`, { headers: jwt(ada.token), body: { usernameOrEmail: bob.name } })).status).toBe(200);
        // What REST answers him now, the socket answers too.
        expect((await call(service, 'GET', `/api/${projectId}/jobs`, { headers: jwt(bob.token) })).status).toBe(403);
      },
      /collaborator/,
    );
  });

  it('ends for a project API key that is revoked', async () => {
    const created = await call(service, 'POST', `/api/${projectId}/apikeys`, { headers: jwt(ada.token), body: { name: 'socket', role: 'admin' } });
    expect(created.status).toBe(200);
    const grant = await grantOf(service, projectId, { 'x-api-key': String(created.body.apiKey) });
    await expectAccessToEnd(
      service,
      grant,
      async () => {
        expect((await call(service, 'DELETE', `/api/${projectId}/apikeys/${Number(created.body.id)}`, { headers: jwt(ada.token) })).status).toBe(200);
      },
      /API key/,
    );
  });

  it('ends for a user whose password changed', async () => {
    const carol = await collaborator();
    const grant = await grantOf(service, projectId, jwt(carol.token));
    await expectAccessToEnd(
      service,
      grant,
      async () => {
        expect((await call(service, 'POST', '/api/user/change-password', { headers: jwt(carol.token), body: { currentPassword: PASSWORD, newPassword: 'another fine password' } })).status).toBe(200);
      },
      /password/,
    );
  });

  it('ends for a user whose account is deleted', async () => {
    const dave = await collaborator();
    const grant = await grantOf(service, projectId, jwt(dave.token));
    await expectAccessToEnd(
      service,
      grant,
      async () => {
        expect((await call(service, 'DELETE', '/api/user', { headers: jwt(dave.token), body: { password: PASSWORD } })).status).toBe(200);
      },
      /no longer exists/,
    );
  });

  it('ends for everyone on a project that is deleted', async () => {
    const doomed = Number((await call(service, 'POST', '/api/projects/create', { headers: jwt(ada.token), body: { projectName: 'Doomed' } })).body.id);
    const grant = await grantOf(service, doomed, jwt(ada.token));
    await expectAccessToEnd(
      service,
      grant,
      async () => {
        expect((await call(service, 'DELETE', `/api/${doomed}`, { headers: jwt(ada.token) })).status).toBe(200);
      },
      /Project \d+ (was deleted|not found)/,
    );
  });

  it('ends for an organization key that is revoked', async () => {
    const key = await organizationKeyWith({});
    const grant = await grantOf(service, { organizationId }, { 'x-api-key': key.apiKey });
    await expectAccessToEnd(
      service,
      grant,
      async () => {
        expect((await call(service, 'DELETE', `/api/organizations/${organizationId}/apikeys/${key.id}`, { headers: { 'x-api-key': organizationKey } })).status).toBe(200);
      },
      /API key/,
    );
  });

  it('ends for an organization key when it expires, with no event to say so', async () => {
    const ttlSeconds = 3;
    const issued = Date.now();
    const key = await organizationKeyWith({ ttl: ttlSeconds });
    const grant = await grantOf(service, { organizationId }, { 'x-api-key': key.apiKey });
    await expectAccessToEnd(
      service,
      grant,
      async () => {
        await sleep(issued + ttlSeconds * 1000 + 200 - Date.now());
      },
      /API key/,
    );
  });

  it('ends for a member who leaves the organization', async () => {
    const erin = await registerUser(service, 'erin');
    const invited = await call(service, 'POST', `/api/organizations/${organizationId}/members/add`, { headers: jwt(staff.token), body: { usernameOrEmail: 'erin', role: 'member', datasets: [] } });
    expect(invited.status).toBe(200);
    // Membership takes her consent.
    expect((await call(service, 'POST', `/api/user/organization-invitations/${String(invited.body.id)}/accept`, { headers: jwt(erin.token) })).status).toBe(200);
    const grant = await grantOf(service, { organizationId }, jwt(erin.token));
    await expectAccessToEnd(
      service,
      grant,
      async () => {
        expect((await call(service, 'POST', `/api/organizations/${organizationId}/members/remove`, { headers: jwt(erin.token), body: { id: erin.id } })).status).toBe(200);
      },
      /member/,
    );
  });

  it('goes on for a socket whose grant still holds while another ends', async () => {
    const frank = await collaborator();
    const gina = await collaborator();
    const events = service.stores.events;
    const jobId = await requestJob(events, projectId);
    const staying = await SdkSocket.open(service.apiUrl, await socketToken(service, projectId, jwt(gina.token)));
    try {
      await staying.hello();
      staying.startLogStream(jobId);
      expect((await call(service, 'POST', `/api/${projectId}/collaborators/remove`, { headers: jwt(ada.token), body: { usernameOrEmail: frank.name } })).status).toBe(200);
      await writeOutput(events, jobId, [line('still for gina\n')]);
      await staying.until(() => dataOf(staying, jobId).length === 1, 'the line after another left');
      expect(staying.closed).toBe(false);
      expect(staying.named('access-ended')).toEqual([]);
    } finally {
      staying.close();
    }
  });
});

describe('the job websocket when its socket token expires', () => {
  const TTL_SECONDS = 3;
  let service: TestService;
  let ada: { id: number; token: string };
  let projectId: number;

  beforeAll(async () => {
    service = await startTestService({ mongo: false, env: { SOCKET_TOKEN_TTL_SECONDS: String(TTL_SECONDS) } });
    ada = await registerUser(service, 'ada');
    projectId = Number((await call(service, 'POST', '/api/projects/create', { headers: jwt(ada.token), body: { projectName: 'Short-lived' } })).body.id);
  });
  afterAll(async () => {
    await service?.destroy();
  });

  it('closes the socket at the expiry and refuses the token from then on', async () => {
    const res = await call(service, 'GET', `/api/${projectId}/socket-token`, { headers: jwt(ada.token) });
    const { socketToken: token, expires } = res.body.token as { socketToken: string; expires: string };
    expect(Date.parse(expires) - Date.now()).toBeLessThanOrEqual(TTL_SECONDS * 1000);
    await expectAccessToEnd(
      service,
      { token, scope: projectId },
      async () => {
        await sleep(Date.parse(expires) + 200 - Date.now());
      },
      /expired/,
    );
  });
});

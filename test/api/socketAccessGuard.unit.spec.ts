// The job websocket's access guard over fake read models and a fake log feed: which events end
// which sockets, and the ends no event announces (expiry, a periodic look at the read models).
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { endingOf } from '../../api/socket/accessEndings';
import type { SocketAccessDeps } from '../../api/socket/socketAccess';
import { SocketAccessGuard, type GuardedSocket } from '../../api/socket/socketAccessGuard';
import type { SocketTokenClaims } from '../../api/socket/socketTokens';
import type { ApiKeyDocument } from '../../projections/apiKeys/apiKeyDocument';
import type { Project } from '../../projections/projects/projectQueries';
import type { UserDocument } from '../../projections/users/userDocument';
import type { StoredEvent } from '../../stores/eventstore/eventStore';

const HOUR = 3600_000;
const userClaims = (userId: number, projectId = 7, sessionVersion = 0, expires = new Date(Date.now() + HOUR)): SocketTokenClaims => ({ caller: { kind: 'user', userId, sessionVersion }, projectId, expires });
const keyClaims = (apiKeyId: number, projectId = 7): SocketTokenClaims => ({ caller: { kind: 'apiKey', apiKeyId }, projectId, expires: new Date(Date.now() + HOUR) });
const orgClaims = (caller: SocketTokenClaims['caller'], organizationId = 2): SocketTokenClaims => ({ caller, organizationId, expires: new Date(Date.now() + HOUR) });
const event = (type: string, data: Record<string, unknown>) => ({ type, data });

describe('the events that end a socket', () => {
  it('end the sockets of the user, key, project or organization they name, and no other', () => {
    expect(endingOf(event('CollaboratorRemoved', { projectId: 7, userId: 3 }), userClaims(3))).toMatch(/collaborator/);
    expect(endingOf(event('CollaboratorRemoved', { projectId: 8, userId: 3 }), userClaims(3))).toBeUndefined();
    expect(endingOf(event('CollaboratorRemoved', { projectId: 7, userId: 4 }), userClaims(3))).toBeUndefined();
    expect(endingOf(event('ApiKeyRevoked', { projectId: 7, apiKeyId: 5 }), keyClaims(5))).toMatch(/revoked/);
    expect(endingOf(event('ApiKeyRevoked', { projectId: 7, apiKeyId: 5 }), keyClaims(6))).toBeUndefined();
    // A user id that happens to equal a key id is not that key.
    expect(endingOf(event('ApiKeyRevoked', { projectId: 7, apiKeyId: 3 }), userClaims(3))).toBeUndefined();
    expect(endingOf(event('ProjectDeleted', { projectId: 7 }), keyClaims(5))).toMatch(/deleted/);
    expect(endingOf(event('ProjectDeleted', { projectId: 7 }), orgClaims({ kind: 'organizationKey', apiKeyId: 5 }, 7))).toBeUndefined();
    expect(endingOf(event('UserDeleted', { userId: 3 }), userClaims(3))).toMatch(/no longer exists/);
    expect(endingOf(event('UserDeleted', { userId: 3 }), orgClaims({ kind: 'user', userId: 3, sessionVersion: 0 }))).toMatch(/no longer exists/);
    expect(endingOf(event('OrganizationDeleted', { organizationId: 2 }), orgClaims({ kind: 'organizationKey', apiKeyId: 5 }))).toMatch(/deleted/);
    expect(endingOf(event('OrganizationMemberRemoved', { organizationId: 2, userId: 3 }), orgClaims({ kind: 'user', userId: 3, sessionVersion: 0 }))).toMatch(/member/);
    expect(endingOf(event('OrganizationMemberRemoved', { organizationId: 2, userId: 3 }), userClaims(3))).toBeUndefined();
    expect(endingOf(event('OrganizationMemberRoleSet', { organizationId: 2, userId: 3, role: 'guest' }), orgClaims({ kind: 'user', userId: 3, sessionVersion: 0 }))).toMatch(/guest/);
    expect(endingOf(event('OrganizationMemberRoleSet', { organizationId: 2, userId: 3, role: 'admin' }), orgClaims({ kind: 'user', userId: 3, sessionVersion: 0 }))).toBeUndefined();
    expect(endingOf(event('OrganizationApiKeyRevoked', { organizationId: 2, apiKeyId: 5 }), orgClaims({ kind: 'organizationKey', apiKeyId: 5 }))).toMatch(/revoked/);
    expect(endingOf(event('OrganizationApiKeyRevoked', { organizationId: 2, apiKeyId: 5 }), keyClaims(5))).toBeUndefined();
    expect(endingOf(event('JobOutputWritten', { projectId: 7, userId: 3 }), userClaims(3))).toBeUndefined();
  });

  it('end a session only when its password changed after the token was issued', () => {
    expect(endingOf(event('PasswordChanged', { userId: 3, sessionVersion: 1 }), userClaims(3, 7, 0))).toMatch(/password/);
    // The change the token was issued after (a replayed or late event) ends nothing.
    expect(endingOf(event('PasswordChanged', { userId: 3, sessionVersion: 1 }), userClaims(3, 7, 1))).toBeUndefined();
  });
});

/** Read models the test changes under the guard. */
function world() {
  const users = new Map<number, Pick<UserDocument, 'id' | 'sessionVersion' | 'username'>>([[3, { id: 3, sessionVersion: 0, username: 'ada' }]]);
  const projects = new Map<number, Pick<Project, 'id' | 'collaboratorIds'>>([[7, { id: 7, collaboratorIds: [3] }]]);
  const keys = new Map<number, Partial<ApiKeyDocument>>();
  const access: SocketAccessDeps = {
    users: { byId: async (id: number) => (users.get(id) as UserDocument | undefined) ?? null } as SocketAccessDeps['users'],
    apiKeys: { byId: async (id: number) => (keys.get(id) as ApiKeyDocument | undefined) ?? null },
    projects: { byId: async (id: number) => (projects.get(id) as Project | undefined) ?? null },
    organizations: { byId: async () => null, keyById: async () => null },
    settings: { staffUsernames: new Set() },
  };
  let listener: ((event: StoredEvent) => void) | undefined;
  let watches = 0;
  const guard = new SocketAccessGuard({
    access,
    events: { headPosition: async () => undefined },
    feed: {
      async watch(l) {
        watches += 1;
        listener = l;
        return () => (listener = undefined);
      },
    },
    settleTimeoutMs: 1000,
    recheckMs: 60_000,
    releaseAfterMs: 1000,
    log: pino({ level: 'silent' }),
  });
  let position = 0n;
  const append = (type: string, data: Record<string, unknown>) =>
    listener?.({ type, data, streamId: 'x', revision: 0n, position: (position += 1n), id: 'e', metadata: { actor: 'system:test', correlationId: 'c', time: '' } } as unknown as StoredEvent);
  const open = async (claims: SocketTokenClaims) => {
    const ended: string[] = [];
    const socket: GuardedSocket = { claims, end: (reason) => ended.push(reason) };
    const { standing, mark } = await guard.admit(claims);
    return { socket, ended, standing, register: () => standing.holds && guard.register(socket, standing.until, mark) };
  };
  return { guard, users, projects, keys, append, open, watches: () => watches, watching: () => listener !== undefined };
}

describe('the socket access guard', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('admits a grant that holds, and refuses one REST would refuse, with REST\'s reason', async () => {
    const w = world();
    expect((await w.open(userClaims(3))).standing).toMatchObject({ holds: true });
    expect((await w.open(userClaims(4))).standing).toEqual({ holds: false, reason: 'The user of this token no longer exists' });
    expect((await w.open(userClaims(3, 7, 1))).standing).toEqual({ holds: false, reason: 'This session has ended (the password was changed): log in again' });
    expect((await w.open(userClaims(3, 8))).standing).toEqual({ holds: false, reason: 'Project 8 not found' });
    w.keys.set(5, { apiKeyId: 5, projectId: 7, role: 'readonly', revoked: false, projectDeleted: false, expires: null });
    w.keys.set(6, { apiKeyId: 6, projectId: 7, role: 'admin', revoked: true, projectDeleted: false, expires: null });
    w.keys.set(9, { apiKeyId: 9, projectId: 7, role: 'admin', revoked: false, projectDeleted: false, expires: new Date(Date.now() - 1).toISOString() });
    w.keys.set(10, { apiKeyId: 10, projectId: 7, role: 'ingestiononly', revoked: false, projectDeleted: false, expires: null });
    expect((await w.open(keyClaims(5))).standing).toMatchObject({ holds: true });
    expect((await w.open(keyClaims(6))).standing).toEqual({ holds: false, reason: 'The API key of this socket token was revoked' });
    expect((await w.open(keyClaims(9))).standing).toEqual({ holds: false, reason: 'The API key of this socket token has expired' });
    expect((await w.open(keyClaims(10))).standing).toMatchObject({ holds: false, reason: expect.stringMatching(/cannot read/) });
    await w.guard.close();
  });

  it('ends the sockets an event names, at once, and leaves the others', async () => {
    const w = world();
    w.projects.get(7)!.collaboratorIds.push(4);
    w.users.set(4, { id: 4, sessionVersion: 0, username: 'bob' });
    const ada = await w.open(userClaims(3));
    const bob = await w.open(userClaims(4));
    ada.register();
    bob.register();
    w.append('CollaboratorRemoved', { projectId: 7, userId: 4 });
    expect(bob.ended).toEqual(['You are no longer a collaborator on project 7']);
    expect(ada.ended).toEqual([]);
    // Once only, however many events follow.
    w.append('UserDeleted', { userId: 4 });
    expect(bob.ended).toHaveLength(1);
    await w.guard.close();
  });

  it('ends a socket for an event written between its handshake and its registration', async () => {
    const w = world();
    const ada = await w.open(userClaims(3));
    w.append('PasswordChanged', { userId: 3, sessionVersion: 1 });
    ada.register();
    expect(ada.ended).toEqual(['This session has ended (the password was changed): log in again']);
    await w.guard.close();
  });

  it('ends a socket when its token expires, with no event', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    const w = world();
    const ada = await w.open(userClaims(3, 7, 0, new Date(Date.now() + 10_000)));
    ada.register();
    await vi.advanceTimersByTimeAsync(9_000);
    expect(ada.ended).toEqual([]);
    await vi.advanceTimersByTimeAsync(1_500);
    expect(ada.ended).toEqual(['Socket token has expired, get a new one']);
    await w.guard.close();
  });

  it('ends a socket at its next periodic look when the read models say so and no event did', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const w = world();
    const ada = await w.open(userClaims(3));
    ada.register();
    w.projects.get(7)!.collaboratorIds = [];
    await vi.advanceTimersByTimeAsync(61_000);
    expect(ada.ended).toEqual(['You are not a collaborator on project 7']);
    await w.guard.close();
  });

  it('checks again before every request, and ends a socket whose access is gone', async () => {
    const w = world();
    const ada = await w.open(userClaims(3));
    ada.register();
    expect(await w.guard.check(ada.socket)).toBe(true);
    w.users.delete(3);
    expect(await w.guard.check(ada.socket)).toBe(false);
    expect(ada.ended).toEqual(['The user of this token no longer exists']);
    await w.guard.close();
  });

  it('watches the log while sockets are open, and stops some time after the last', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const w = world();
    const ada = await w.open(userClaims(3));
    ada.register();
    expect(w.watching()).toBe(true);
    w.guard.unregister(ada.socket);
    await vi.advanceTimersByTimeAsync(1_500);
    expect(w.watching()).toBe(false);
    // A refused handshake starts the watch and lets it go again.
    expect((await w.open(userClaims(4))).standing.holds).toBe(false);
    await vi.advanceTimersByTimeAsync(1_500);
    expect(w.watching()).toBe(false);
    expect(w.watches()).toBe(2);
    await w.guard.close();
  });
});

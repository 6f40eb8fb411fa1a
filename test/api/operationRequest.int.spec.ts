// What a handler gets besides the body: the signed-in user, and what `authorize` found; and the
// by-id twin of a current-user operation. Served by a bare router (no service), over port 0.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthDeps, Principal } from '../../api/auth/principal';
import { jsonEnvelope } from '../../api/http/envelope';
import { intParam, mountOperations, operation, type Operation } from '../../api/http/operation';
import { withTwinByUserId } from '../../api/routes/userRequests';
import { ForbiddenError } from '../../domain/shared/errors';
import type { UserDocument } from '../../projections/users/userDocument';

/** Only what the session check and `isStaff` read. */
const userDoc = (id: number, username: string): UserDocument => ({ id, username, firstUser: false, sessionVersion: 0 }) as UserDocument;
const ada = userDoc(1, 'ada');
const grace = userDoc(2, 'grace');
const users = new Map([ada, grace].map((u) => [u.id, u]));

const auth = {
  tokens: { verify: async (token: string) => (users.has(Number(token)) ? { userId: Number(token), sessionVersion: 0 } : { invalid: 'bad token' }) },
  users: { byId: async (id: number) => users.get(id) ?? null },
  settings: { publicUrl: 'http://studio.test' },
} as unknown as AuthDeps;

describe('operation requests', () => {
  let server: http.Server;
  let base: string;
  const handled: string[] = [];

  beforeAll(async () => {
    const router = new Router();
    mountOperations(
      router,
      [
        operation({
          operationId: 'whoAmI',
          method: 'get',
          path: '/me',
          summary: 'test',
          auth: 'jwt',
          async handler({ user }) {
            return { id: user.id, username: user.username };
          },
        }),
        operation({
          operationId: 'anyone',
          method: 'get',
          path: '/anyone',
          summary: 'test',
          auth: 'none',
          async handler({ user }) {
            return { user };
          },
        }),
        operation({
          operationId: 'shelf',
          method: 'get',
          path: '/shelves/:shelfId',
          summary: 'test',
          auth: 'none',
          async authorize(_principal, params) {
            const shelfId = intParam(params, 'shelfId');
            if (shelfId > 10) throw new ForbiddenError(`Shelf ${shelfId} is not yours`);
            return { shelfId, label: `shelf ${shelfId}` };
          },
          async handler({ authorized }) {
            handled.push(authorized.label);
            return { found: authorized };
          },
        }),
      ],
      { auth, settle: async () => {}, projectAccess: () => Promise.reject(new Error('no project route here')) },
    );
    const app = new Koa();
    app.use(jsonEnvelope());
    app.use(router.routes());
    server = http.createServer(app.callback()).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  const get = async (path: string, headers: Record<string, string> = {}) => {
    const response = await fetch(`${base}${path}`, { headers });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it('gives a JWT-only handler the signed-in user', async () => {
    expect(await get('/me', { 'x-jwt-token': '2' })).toEqual({ status: 200, body: { success: true, id: 2, username: 'grace' } });
  });

  it('gives null for the user when nobody signed in', async () => {
    expect(await get('/anyone')).toEqual({ status: 200, body: { success: true, user: null } });
  });

  it("hands authorize's answer to the handler", async () => {
    expect(await get('/shelves/4')).toEqual({ status: 200, body: { success: true, found: { shelfId: 4, label: 'shelf 4' } } });
    expect(handled).toEqual(['shelf 4']);
  });

  it('never reaches the handler when authorize refuses', async () => {
    const before = handled.length;
    const refused = await get('/shelves/11');
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('Shelf 11 is not yours');
    expect(handled.length).toBe(before);
  });
});

describe('withTwinByUserId', () => {
  const current = operation({
    operationId: 'getCurrentThing',
    method: 'get',
    path: '/api/user/thing',
    summary: "The user's thing",
    auth: 'jwt',
    keepAnswer: () => true,
    async handler() {
      return {};
    },
  });
  const [first, twin] = withTwinByUserId(new Set(['grace']), { operationId: 'getThing', path: '/api/users/:userId/thing' }, current) as [Operation, Operation];
  const principal = (user: UserDocument): Principal => ({ kind: 'user', user, via: 'jwt' });

  it('keeps the current-user operation and adds its twin at the by-id path, with the same handler and schemas', () => {
    expect(first).toBe(current);
    expect(twin).toMatchObject({ operationId: 'getThing', path: '/api/users/:userId/thing', method: 'get', auth: 'jwt', summary: "The user's thing (oneself; staff may act on others)" });
    expect(twin.handler).toBe(current.handler);
    expect(twin.keepAnswer).toBe(current.keepAnswer);
    expect(current.authorize).toBeUndefined();
  });

  it('lets a user act on themselves and staff on anyone; refuses others before the body', async () => {
    await expect(twin.authorize!(principal(ada), { userId: '1' })).resolves.toBeUndefined();
    await expect(twin.authorize!(principal(grace), { userId: '1' })).resolves.toBeUndefined();
    await expect(twin.authorize!(principal(ada), { userId: '2' })).rejects.toMatchObject({ code: 'NOT_YOURSELF', status: 403 });
  });

  it('refuses a by-id path without :userId (its handler could not find the user)', () => {
    expect(() => withTwinByUserId(new Set(), { operationId: 'x', path: '/api/users/thing' }, current)).toThrow(/:userId/);
  });
});

import { describe, expect, it } from 'vitest';
import { oauthAdapter } from '../../commands/oauth/oauthAdapter';
import type { OAuthClientDocument } from '../../projections/oauthClients/oauthClientDocument';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';

class InvalidGrant extends Error {}

function setup(client: OAuthClientDocument | null = null) {
  const events = SqliteEventStore.open(':memory:');
  let clock = new Date('2026-11-28T10:00:00.000Z');
  // Users' session versions by account id; a user missing here is gone.
  const sessionVersions = new Map<string, number>([['7', 0]]);
  const Adapter = oauthAdapter({
    events,
    clients: { live: async (id) => (client?.clientId === id ? client : null) },
    invalidGrant: (d) => new InvalidGrant(d),
    sessionVersion: async (accountId) => sessionVersions.get(accountId) ?? null,
    now: () => clock,
  });
  const log = async () => {
    const all = [];
    for await (const e of events.readAll()) all.push(e);
    return all;
  };
  return { events, Adapter, log, sessionVersions, advance: (seconds: number) => (clock = new Date(clock.getTime() + seconds * 1000)) };
}

const TOKEN = 'Ax7dJ2kLqP9sR4tV6wY8zB1cE3fG5hN0mQ2rT4uW6yZ';
const GRANT = 'grant-id-0123456789abcdefghijklmnopqrstuvwxyz';

describe('oidc-provider persistence on the log', () => {
  it('finds a saved token by its value, with jti put back, while the log never holds the value', async () => {
    const { Adapter, log } = setup();
    await new Adapter('Grant').upsert(GRANT, { accountId: '7', clientId: 'c', kind: 'Grant', jti: GRANT }, 3600);
    await new Adapter('AccessToken').upsert(TOKEN, { accountId: '7', clientId: 'c', grantId: GRANT, scope: 'user:read', kind: 'AccessToken', jti: TOKEN }, 3600);
    expect(await new Adapter('AccessToken').find(TOKEN)).toEqual({ accountId: '7', clientId: 'c', grantId: GRANT, scope: 'user:read', kind: 'AccessToken', jti: TOKEN });
    expect(await new Adapter('AccessToken').find(`${TOKEN}x`)).toBeUndefined();
    const written = await log();
    expect(written.map((e) => e.type)).toEqual(['OAuthArtifactSaved', 'OAuthArtifactSaved']);
    const text = JSON.stringify(written.map((e) => ({ streamId: e.streamId, data: e.data })));
    // A grant id is a reference, not a credential: tokens name it; only presented values are hashed.
    expect(text).not.toContain(TOKEN);
  });

  it('names the person as the actor of their grant and the application as that of its tokens', async () => {
    const { Adapter, log } = setup();
    const clientId = 'Yq3x9V0pKcN2mW7tRb5sLa';
    await new Adapter('Grant').upsert(GRANT, { accountId: '7', clientId, kind: 'Grant' }, 3600);
    await new Adapter('AccessToken').upsert(TOKEN, { accountId: '7', clientId, grantId: GRANT, kind: 'AccessToken' }, 3600);
    await new Adapter('Session').upsert('session-id-0123456789', { accountId: '7', uid: 'session-uid-0123', kind: 'Session' }, 3600);
    await new Adapter('Grant').upsert(`${GRANT}2`, { accountId: 'not-a-user', clientId, kind: 'Grant' }, 3600);
    expect((await log()).map((e) => e.metadata.actor)).toEqual(['user:7', `oauth:${clientId}`, 'system:oauth', 'system:oauth', 'system:oauth']);
  });

  it("never writes an application's login_hint (often an e-mail address) to the log", async () => {
    const { Adapter, log } = setup();
    const params = { client_id: 'c', login_hint: 'ada@example.com', scope: 'user:read', state: 's' };
    await new Adapter('Interaction').upsert('interaction-uid-0123456789', { kind: 'Interaction', params, returnTo: '/oauth/auth/x' }, 3600);
    expect(await new Adapter('Interaction').find('interaction-uid-0123456789')).toMatchObject({ params: { client_id: 'c', scope: 'user:read', state: 's' } });
    expect(JSON.stringify((await log()).map((e) => e.data))).not.toContain('ada@example.com');
  });

  it('keeps a payload with fields oidc-provider left undefined, as JSON would', async () => {
    const { Adapter } = setup();
    await new Adapter('Grant').upsert(GRANT, { accountId: '7', clientId: 'c' }, 3600);
    await new Adapter('AccessToken').upsert(TOKEN, { grantId: GRANT, accountId: '7', sessionUid: undefined, extra: { a: undefined, b: 1 }, list: ['x'] }, 3600);
    expect(await new Adapter('AccessToken').find(TOKEN)).toEqual({ grantId: GRANT, accountId: '7', extra: { b: 1 }, list: ['x'], jti: TOKEN });
  });

  it('finds nothing once it has expired', async () => {
    const { Adapter, advance } = setup();
    await new Adapter('Interaction').upsert('i1', { kind: 'Interaction', uid: 'i1' }, 60);
    expect(await new Adapter('Interaction').find('i1')).toBeDefined();
    advance(61);
    expect(await new Adapter('Interaction').find('i1')).toBeUndefined();
  });

  it('consumes a code once; the second consumption is invalid_grant, never a server error', async () => {
    const { Adapter } = setup();
    const codes = new Adapter('AuthorizationCode');
    await new Adapter('Grant').upsert(GRANT, { accountId: '7', clientId: 'c' }, 3600);
    await codes.upsert(TOKEN, { grantId: GRANT, accountId: '7' }, 60);
    await codes.consume(TOKEN);
    expect(await codes.find(TOKEN)).toMatchObject({ consumed: expect.any(Number) });
    await expect(codes.consume(TOKEN)).rejects.toBeInstanceOf(InvalidGrant);
  });

  it('ends every token of a grant with one event on the grant', async () => {
    const { Adapter, log } = setup();
    await new Adapter('Grant').upsert(GRANT, { accountId: '7', clientId: 'c' }, 3600);
    await new Adapter('AccessToken').upsert(TOKEN, { grantId: GRANT }, 3600);
    await new Adapter('RefreshToken').upsert(`r${TOKEN}`, { grantId: GRANT }, 3600);
    const before = (await log()).length;
    await Promise.all(['AccessToken', 'RefreshToken', 'AuthorizationCode'].map((m) => new Adapter(m).revokeByGrantId(GRANT)));
    await new Adapter('Grant').destroy(GRANT);
    expect((await log()).slice(before).map((e) => e.type)).toEqual(['OAuthArtifactEnded']);
    expect(await new Adapter('AccessToken').find(TOKEN)).toBeUndefined();
    expect(await new Adapter('RefreshToken').find(`r${TOKEN}`)).toBeUndefined();
    expect(await new Adapter('Grant').find(GRANT)).toBeUndefined();
  });

  it("ends a grant and its tokens when the user's session version moves on (password change) or the user is gone", async () => {
    const { Adapter, sessionVersions, log } = setup();
    await new Adapter('Grant').upsert(GRANT, { accountId: '7', clientId: 'c' }, 3600);
    await new Adapter('AccessToken').upsert(TOKEN, { grantId: GRANT, accountId: '7' }, 3600);
    expect(await new Adapter('Grant').find(GRANT)).toEqual({ accountId: '7', clientId: 'c', sessionVersion: 0, jti: GRANT });
    expect(await new Adapter('AccessToken').find(TOKEN)).toBeDefined();
    const before = (await log()).length;
    sessionVersions.set('7', 1);
    expect(await new Adapter('AccessToken').find(TOKEN)).toBeUndefined();
    expect(await new Adapter('Grant').find(GRANT)).toBeUndefined();
    // Nothing written: the version is compared at each find.
    expect((await log()).length).toBe(before);
    // A grant saved after the change holds again; the user's deletion ends it too.
    await new Adapter('Grant').upsert('grant-2', { accountId: '7', clientId: 'c' }, 3600);
    expect(await new Adapter('Grant').find('grant-2')).toMatchObject({ sessionVersion: 1 });
    sessionVersions.delete('7');
    expect(await new Adapter('Grant').find('grant-2')).toBeUndefined();
  });

  it('finds no token whose grant was never saved', async () => {
    const { Adapter } = setup();
    await new Adapter('AccessToken').upsert(TOKEN, { grantId: 'nowhere' }, 3600);
    expect(await new Adapter('AccessToken').find(TOKEN)).toBeUndefined();
  });

  it('finds a session by its id and by its uid, and by neither once destroyed', async () => {
    const { Adapter } = setup();
    const sessions = new Adapter('Session');
    await sessions.upsert('cookie-value', { uid: 'u1', accountId: '7', kind: 'Session', jti: 'cookie-value' }, 3600);
    expect(await sessions.find('cookie-value')).toEqual({ uid: 'u1', accountId: '7', kind: 'Session', jti: 'cookie-value' });
    expect(await sessions.findByUid('u1')).toEqual({ uid: 'u1', accountId: '7', kind: 'Session' });
    await sessions.destroy('cookie-value');
    expect(await sessions.find('cookie-value')).toBeUndefined();
    expect(await sessions.findByUid('u1')).toBeUndefined();
  });

  it('follows a session regenerated at login: destroyed, then saved under a new id with the same uid', async () => {
    const { Adapter } = setup();
    const sessions = new Adapter('Session');
    await sessions.upsert('first-cookie', { uid: 'u1', kind: 'Session' }, 3600);
    await sessions.destroy('first-cookie');
    await sessions.upsert('second-cookie', { uid: 'u1', accountId: '7', kind: 'Session' }, 3600);
    expect(await sessions.findByUid('u1')).toEqual({ uid: 'u1', accountId: '7', kind: 'Session' });
    expect(await sessions.find('first-cookie')).toBeUndefined();
  });

  it('serves a live client from the read model with only the hash of its secret, and no deleted one', async () => {
    const doc: OAuthClientDocument = { _id: 'c1', clientId: 'c1', ownerUserId: 7, name: 'Dash', redirectUris: ['https://d.example.com/cb'], secretHash: 'h'.repeat(43), registered: '2026-11-28T10:00:00.000Z', deleted: null, _position: '' };
    const { Adapter } = setup(doc);
    expect(await new Adapter('Client').find('c1')).toMatchObject({ client_id: 'c1', client_secret: 'h'.repeat(43), redirect_uris: ['https://d.example.com/cb'], token_endpoint_auth_method: 'client_secret_basic' });
    expect(await new Adapter('Client').find('c2')).toBeUndefined();
    await expect(new Adapter('Client').upsert('c3', {}, 1)).rejects.toThrow(/registered through/);
  });

  it('refuses models of features left off, loudly', async () => {
    const { Adapter } = setup();
    await expect(new Adapter('DeviceCode').upsert('d', {}, 60)).rejects.toThrow(/DeviceCode is not persisted/);
  });
});

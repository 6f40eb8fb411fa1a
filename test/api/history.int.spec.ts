// The auditors' view over HTTP: who may read which history, what a page looks like and how paging
// and filters behave, and that no secret of any kind reaches an answer while the log keeps them.
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAudit } from '../../commands/audit/auditCli';
import { FORGOTTEN, REDACTED, SECRET_FIELDS } from '../../domain/audit/historyRedaction';
import type { HistoryEntry } from '../../projections/history/historyEntry';
import { inviteAndAccept } from '../support/collaborators';
import { call, startTestService, registerUser, type TestService } from '../support/testService';

type Entry = HistoryEntry;

const jwt = (token: string) => ({ 'x-jwt-token': token });

describe('the history endpoints', () => {
  let service: TestService;
  let staffToken: string;
  let ada: { id: number; token: string };
  let bob: { id: number; token: string };
  let mallory: { id: number; token: string };
  let projectId: number;
  let developmentKey: string;
  let adminKey: string;
  let readonlyKey: string;
  let otherAdminKey: string;
  let hmacKey: string;
  let totpKey: string;
  let forgotten: { id: number; token: string };

  /** Every entry of a history, following nextCursor page by page. */
  async function all(path: string, headers: Record<string, string>, limit = 1000): Promise<Entry[]> {
    const entries: Entry[] = [];
    let cursor: string | null = null;
    do {
      const q = new URLSearchParams({ limit: String(limit), ...(cursor ? { cursor } : {}) });
      const res = await call(service, 'GET', `${path}${path.includes('?') ? '&' : '?'}${q}`, { headers });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      entries.push(...(res.body.events as Entry[]));
      cursor = res.body.nextCursor as string | null;
    } while (cursor);
    return entries;
  }

  beforeAll(async () => {
    service = await startTestService({ mongo: false });
    staffToken = (await registerUser(service, 'staffer')).token;
    ada = await registerUser(service, 'ada');
    bob = await registerUser(service, 'bob');
    mallory = await registerUser(service, 'mallory');
    forgotten = await registerUser(service, 'forgetme', { name: 'Forget Me', jobTitle: 'Secret agent' });
    const created = await call(service, 'POST', '/api/projects/create', { headers: jwt(ada.token), body: { projectName: 'Audited' } });
    projectId = Number(created.body.id);
    developmentKey = String(created.body.apiKey);
    const addKey = async (role: string) =>
      String((await call(service, 'POST', `/api/${projectId}/apikeys`, { headers: jwt(ada.token), body: { name: role, role, isDevelopmentKey: false } })).body.apiKey);
    adminKey = await addKey('admin');
    readonlyKey = await addKey('readonly');
    hmacKey = 'a-very-secret-hmac-key-0123456789';
    const hmac = await call(service, 'POST', `/api/${projectId}/hmackeys`, { headers: jwt(ada.token), body: { name: 'signing', hmacKey, isDevelopmentKey: false } });
    expect(hmac.status, JSON.stringify(hmac.body)).toBe(200);
    const other = await call(service, 'POST', '/api/projects/create', { headers: jwt(mallory.token), body: { projectName: 'Elsewhere' } });
    otherAdminKey = String(other.body.apiKey);
    await inviteAndAccept(service, projectId, ada.token, bob.token, 'bob');
    const update = await call(service, 'POST', `/api/${projectId}`, { headers: { ...jwt(ada.token), 'x-request-id': 'audit-trail-0001' }, body: { description: 'under audit' } });
    expect(update.status, JSON.stringify(update.body)).toBe(200);
    totpKey = String((await call(service, 'POST', '/api/user/mfa/totp/create-key', { headers: jwt(ada.token) })).body.key);
    expect((await call(service, 'POST', '/api/user/change-password', { headers: jwt(ada.token), body: { currentPassword: 'correct horse battery', newPassword: 'another fine password' } })).status).toBe(200);
    expect((await call(service, 'POST', '/api-user-request-reset-password', { body: { email: 'bob@example.com' } })).status).toBe(200);
    expect((await call(service, 'DELETE', '/api/user', { headers: jwt(forgotten.token), body: { password: 'correct horse battery' } })).status).toBe(200);
    ada.token = String((await call(service, 'POST', '/api-login', { body: { username: 'ada', password: 'another fine password' } })).body.token);
  });

  afterAll(async () => {
    await service?.destroy();
  });

  describe("a project's history", () => {
    const path = () => `/api/${projectId}/history`;

    it('is read by the owner, the admin key and staff, in log order with the whole shape', async () => {
      // A key's use is recorded (ApiKeyUsed, an event of the project) after it was answered.
      const withoutUses = (entries: Entry[]) => entries.filter((e) => e.type !== 'ApiKeyUsed');
      const byOwner = await all(path(), jwt(ada.token));
      expect(byOwner.length).toBeGreaterThan(5);
      expect(withoutUses(await all(path(), { 'x-api-key': adminKey }))).toEqual(withoutUses(byOwner));
      expect(withoutUses(await all(path(), jwt(staffToken)))).toEqual(withoutUses(byOwner));
      const positions = byOwner.map((e) => BigInt(e.position));
      for (let i = 1; i < positions.length; i++) expect(positions[i]! > positions[i - 1]!).toBe(true);
      expect(byOwner.map((e) => e.type)).toEqual(expect.arrayContaining(['ProjectCreated', 'ApiKeyAdded', 'HmacKeyAdded', 'CollaboratorInvited', 'CollaboratorAdded', 'ProjectUpdated']));
      for (const e of byOwner) {
        expect(e).toEqual({
          position: expect.stringMatching(/^\d+$/),
          streamId: expect.any(String),
          type: expect.any(String),
          created: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          actor: expect.stringMatching(/^(user|apikey|system):/),
          correlationId: expect.any(String),
          causationId: e.causationId === null ? null : expect.any(String),
          data: expect.any(Object),
        });
      }
      // The request id a client sent is the correlation id of what the request did.
      expect(byOwner.find((e) => e.type === 'ProjectUpdated')).toMatchObject({ correlationId: 'audit-trail-0001', actor: `user:${ada.id}` });
      // Only this project's events: nothing of Mallory's project or of the users' accounts.
      expect(byOwner.every((e) => !e.streamId.startsWith('user-'))).toBe(true);
    });

    it('is refused to a collaborator who is not the owner, a stranger, other keys, and without credentials', async () => {
      const before = await service.stores.events.headPosition();
      expect((await call(service, 'GET', path(), { headers: jwt(bob.token) })).status).toBe(403);
      expect((await call(service, 'GET', path(), { headers: jwt(mallory.token) })).status).toBe(403);
      expect((await call(service, 'GET', path(), { headers: { 'x-api-key': readonlyKey } })).status).toBe(403);
      expect((await call(service, 'GET', path(), { headers: { 'x-api-key': otherAdminKey } })).status).toBe(403);
      expect((await call(service, 'GET', path())).status).toBe(401);
      expect((await call(service, 'GET', '/api/987654/history', { headers: jwt(staffToken) })).status).toBe(404);
      expect((await call(service, 'GET', '/api/987654/history', { headers: jwt(ada.token) })).status).toBe(404);
      expect(await service.stores.events.headPosition()).toBe(before);
    });

    it('pages with an opaque cursor, page after page, to the same list', async () => {
      const whole = await all(path(), jwt(ada.token));
      const paged = await all(path(), jwt(ada.token), 2);
      expect(paged).toEqual(whole);
      const first = await call(service, 'GET', `${path()}?limit=2`, { headers: jwt(ada.token) });
      expect(first.body.nextCursor).toEqual(expect.any(String));
      const last = await call(service, 'GET', `${path()}?limit=1000`, { headers: jwt(ada.token) });
      expect(last.body.nextCursor).toBeNull();
    });

    it('filters by type, actor and time', async () => {
      // Read by the owner alone from here: nothing is appended between the reads compared.
      const whole = await all(path(), jwt(ada.token));
      const added = await all(`${path()}?type=ApiKeyAdded`, jwt(ada.token));
      expect(added.length).toBe(whole.filter((e) => e.type === 'ApiKeyAdded').length);
      expect(added.length).toBeGreaterThanOrEqual(3);
      const byBob = await all(`${path()}?actor=user:${bob.id}`, jwt(ada.token));
      expect(byBob.length).toBeGreaterThan(0);
      expect(byBob.every((e) => e.actor === `user:${bob.id}`)).toBe(true);
      const pivot = whole.find((e) => e.type === 'ProjectUpdated')!.created;
      const since = await all(`${path()}?from=${encodeURIComponent(pivot)}`, jwt(ada.token));
      expect(since).toEqual(whole.filter((e) => e.created >= pivot));
      const until = await all(`${path()}?to=${encodeURIComponent(pivot)}`, jwt(ada.token));
      expect(until).toEqual(whole.filter((e) => e.created <= pivot));
      expect(await all(`${path()}?to=2001-01-01T00:00:00Z`, jwt(ada.token))).toEqual([]);
    });

    it('refuses bad queries with 400 naming the parameter', async () => {
      for (const [query, word] of [
        ['limit=0', 'limit'],
        ['limit=1001', 'limit'],
        ['limit=ten', 'limit'],
        ['cursor=not-a-cursor', 'cursor'],
        [`cursor=${Buffer.from('99999999999999999999x').toString('base64url')}`, 'cursor'],
        ['from=yesterday', 'from'],
        ['from=2030-01-01T00:00:00Z&to=2020-01-01T00:00:00Z', 'from'],
        ['type=$where', 'type'],
        ['actor=nobody', 'actor'],
      ] as const) {
        const res = await call(service, 'GET', `${path()}?${query}`, { headers: jwt(ada.token) });
        expect(res.status, query).toBe(400);
        expect(String(res.body.error), query).toContain(word);
      }
    });
  });

  describe("a user's history", () => {
    it("is read by the user and staff: the account's events and what the user did", async () => {
      const own = await all(`/api/users/${ada.id}/history`, jwt(ada.token));
      expect(await all(`/api/users/${ada.id}/history`, jwt(staffToken))).toEqual(own);
      expect(own.map((e) => e.type)).toEqual(expect.arrayContaining(['UserRegistered', 'TotpKeyCreated', 'PasswordChanged', 'ProjectCreated', 'ProjectUpdated']));
      expect(own.every((e) => e.streamId === `user-${ada.id}` || e.actor === `user:${ada.id}`)).toBe(true);
    });

    it('is refused to other users, and to API keys', async () => {
      expect((await call(service, 'GET', `/api/users/${ada.id}/history`, { headers: jwt(bob.token) })).status).toBe(403);
      expect((await call(service, 'GET', `/api/users/${ada.id}/history`, { headers: { 'x-api-key': adminKey } })).status).toBe(401);
    });

    it('shows the sealed personal data of a forgotten user as forgotten, never as ciphertext', async () => {
      const entries = await all(`/api/users/${forgotten.id}/history`, jwt(staffToken));
      const registered = entries.find((e) => e.type === 'UserRegistered')!;
      expect(registered.data).toMatchObject({ username: 'forgetme', name: FORGOTTEN, email: FORGOTTEN, jobTitle: FORGOTTEN });
      expect(JSON.stringify(entries)).not.toContain('sealed:v1:');
      expect(JSON.stringify(entries)).not.toContain('Secret agent');
    });
  });

  describe('the whole log', () => {
    it('is read by staff only', async () => {
      expect((await call(service, 'GET', '/api/audit/events', { headers: jwt(ada.token) })).status).toBe(403);
      expect((await call(service, 'GET', '/api/audit/events', { headers: { 'x-api-key': adminKey } })).status).toBe(401);
      const entries = await all('/api/audit/events', jwt(staffToken));
      const head = await service.stores.events.headPosition();
      // Every event up to the head, system streams included.
      expect(entries.at(-1)!.position).toBe(head!.toString());
      expect(entries.some((e) => e.streamId.startsWith('unique-'))).toBe(true);
    });

    it('never shows a secret of any kind, though the log holds them all', async () => {
      const entries = await all('/api/audit/events', jwt(staffToken));
      const text = JSON.stringify(entries);
      for (const secret of [developmentKey, adminKey, readonlyKey, otherAdminKey, hmacKey, totpKey]) {
        expect(secret.length).toBeGreaterThan(10);
        expect(text).not.toContain(secret);
      }
      expect(text).not.toMatch(/scrypt\$/);
      const kinds = new Set<string>();
      for (const entry of entries) {
        for (const field of SECRET_FIELDS[entry.type] ?? []) {
          const value = entry.data?.[field];
          if (value === undefined || value === null) continue;
          expect(value, `${entry.type}.${field}`).toBe(REDACTED);
          kinds.add(`${entry.type}.${field}`);
          // The log itself holds the real value: the redaction is the history's, not a loss.
          const [stored] = await service.stores.events.readStream(entry.streamId, { fromRevision: BigInt(revisionOf(entries, entry)), maxCount: 1 });
          expect(stored!.data[field]).not.toBe(REDACTED);
        }
      }
      expect([...kinds]).toEqual(
        expect.arrayContaining([
          'ApiKeyAdded.apiKey',
          'ApiKeyAdded.keyHash',
          'HmacKeyAdded.hmacKey',
          'TotpKeyCreated.key',
          'UserRegistered.passwordHash',
          'PasswordChanged.passwordHash',
          'ActivationCodeIssued.codeHash',
          'PasswordResetRequested.codeHash',
          'EmailQueued.bodyText',
        ]),
      );
    });
  });

  describe('npm run audit -- export', () => {
    const run = async (...args: string[]) => {
      const out = new PassThrough();
      let text = '';
      out.on('data', (chunk: Buffer) => (text += chunk.toString()));
      const code = await runAudit(args, service.stores.events, out);
      return { code, text };
    };
    const lines = async (file: string) => (await readFile(file, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Entry);

    it("writes the whole log, or one project's history, as NDJSON in the history's shape", async () => {
      const folder = await mkdtemp(path.join(os.tmpdir(), 'export-'));
      try {
        const everything = path.join(folder, 'all.ndjson');
        expect((await run('export', '--out', everything)).code).toBe(0);
        const exported = await lines(everything);
        expect(exported).toEqual(await all('/api/audit/events', jwt(staffToken)));
        const one = path.join(folder, 'project.ndjson');
        const result = await run('export', '--out', one, '--project', String(projectId));
        expect(result.code).toBe(0);
        const projectLines = await lines(one);
        expect(result.text).toContain(`${projectLines.length} events written`);
        expect(projectLines).toEqual(await all(`/api/${projectId}/history`, jwt(staffToken)));
        expect(await readFile(one, 'utf8')).not.toContain(adminKey);
        // Nothing partial is left beside the results.
        expect((await readdir(folder)).sort()).toEqual(['all.ndjson', 'project.ndjson']);
      } finally {
        await rm(folder, { recursive: true, force: true });
      }
    });

    it('refuses bad arguments with exit code 2, writing nothing', async () => {
      expect((await run('export')).code).toBe(2);
      expect((await run('export', '--out', '/tmp/x.ndjson', '--project', 'abc')).code).toBe(2);
      expect((await run('export', '--bogus')).code).toBe(2);
      expect((await run('frobnicate')).code).toBe(2);
      expect((await run()).code).toBe(2);
    });

    it('verifies the log of all this traffic as intact', async () => {
      const result = await run('verify');
      expect(result.code).toBe(0);
      expect(result.text).toMatch(/^log intact: \d+ events/);
    });
  });
});

/** An entry's revision in its stream: how many entries of that stream came before it. */
function revisionOf(entries: readonly Entry[], entry: Entry): number {
  return entries.filter((e) => e.streamId === entry.streamId && BigInt(e.position) < BigInt(entry.position)).length;
}

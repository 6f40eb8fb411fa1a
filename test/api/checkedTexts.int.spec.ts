import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeSpec, type RouteSpec } from '../support/routeSpec';
import { signup } from '../support/signup';

/**
 * Texts with control or bidirectional-override characters, and values no read model could store,
 * sent to the management API: each is answered 400 naming the field, and nothing is appended.
 * (Storage does not matter here: the API app over in-memory stores, test/support/routeSpec.ts.)
 */
describe('texts and values the deciders refuse, over the management API', () => {
  let spec: RouteSpec;
  let token: string;
  let projectId: number;

  beforeAll(async () => {
    spec = await routeSpec();
    await spec.request('POST', '/api-user-create', { body: signup() });
    token = String((await spec.request('POST', '/api-login', { body: { username: 'ada', password: 'correct horse battery' } })).body.token);
    const project = await spec.request('POST', '/api/projects/create', { headers: { 'x-jwt-token': token }, body: { projectName: 'Texts' } });
    projectId = Number(project.body.id);
  });
  afterAll(async () => {
    await spec?.close();
  });

  const head = () => spec.deps.events.headPosition();
  const asUser = (method: string, pathname: string, body: unknown) => spec.request(method, pathname, { headers: { 'x-jwt-token': token }, body });

  async function refusedWithoutAppend(send: () => Promise<{ status: number; body: Record<string, unknown> }>, names: RegExp): Promise<void> {
    const before = await head();
    const res = await send();
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.success).toBe(false);
    expect(String(res.body.error)).toMatch(names);
    expect(await head()).toBe(before);
  }

  it('accepts a readme and a description with line breaks, and names in any script (so the refusals below are about the characters)', async () => {
    const res = await asUser('POST', `/api/${projectId}`, { readme: '# Title\n\n\tcode\r\n', description: 'two\nlines', name: 'Жесты 手势' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });

  it('refuses a project name with a direction override on creation, naming projectName', async () => {
    await refusedWithoutAppend(() => asUser('POST', '/api/projects/create', { projectName: 'Gest\u202Eures' }), /"projectName".*invisible formatting character \(U\+202E\)/);
  });

  it('refuses settings texts with control or bidi characters, naming the field', async () => {
    await refusedWithoutAppend(() => asUser('POST', `/api/${projectId}`, { name: 'Gest\u2066ures' }), /"name" contains an invisible formatting character/);
    await refusedWithoutAppend(() => asUser('POST', `/api/${projectId}`, { readme: '# Title\u0000' }), /"readme" contains a control character \(U\+0000\)/);
    await refusedWithoutAppend(() => asUser('POST', `/api/${projectId}`, { description: 'x\u202Ey' }), /"description" contains an invisible formatting character/);
    await refusedWithoutAppend(() => asUser('POST', `/api/${projectId}/tags`, { tags: ['au\u0007dio'] }), /"tags"\[0\] contains a control character/);
  });

  it('refuses metadata a read model cannot store as a sub-document, and numbers JSON turns into Infinity', async () => {
    await refusedWithoutAppend(() => asUser('POST', `/api/${projectId}`, { metadata: { $set: 1 } }), /"metadata": the key "\$set" must not start with "\$"/);
    const before = await head();
    const res = await spec.request('POST', `/api/${projectId}`, { headers: { 'x-jwt-token': token }, rawBody: '{"metadata":{"size":1e400}}' });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(String(res.body.error)).toMatch(/"metadata"\.size must be a finite number, got Infinity/);
    expect(await head()).toBe(before);
  });

  it('refuses API key and HMAC key names with hidden characters, naming the field', async () => {
    await refusedWithoutAppend(() => asUser('POST', `/api/${projectId}/apikeys`, { name: 'CI\u202E', role: 'readonly' }), /"name".*invisible formatting character/);
    await refusedWithoutAppend(() => asUser('POST', `/api/${projectId}/hmackeys`, { name: 'signing\u0000', hmacKey: 'secret' }), /"name".*control character/);
  });

  it('refuses a profile name or company with hidden characters, and a sign-up name with them', async () => {
    await refusedWithoutAppend(() => asUser('POST', '/api/user', { name: 'Ada\u202E' }), /"name" contains an invisible formatting character/);
    await refusedWithoutAppend(() => asUser('POST', '/api/user', { companyName: 'ACME\u0085' }), /"companyName" contains a control character \(U\+0085\)/);
    await refusedWithoutAppend(
      () => spec.request('POST', '/api-user-create', { body: signup({ username: 'grace', email: 'grace@example.com', name: 'Grace\u2067' }) }),
      /"name" contains an invisible formatting character/,
    );
  });
});

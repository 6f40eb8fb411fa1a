// Every project route of the OpenAPI document, tried by callers who must not get in: another
// project's admin key, a user who is not a collaborator, and this project's keys whose role does
// not allow the operation. Each gets 403 before its body is even validated, and nothing is appended.
// The API app alone over in-memory stores (test/support/routeSpec.ts): access is the routes' concern.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerUser, routeSpec, type RouteSpec } from '../support/routeSpec';

interface Route {
  method: string;
  path: string;
  operationId: string;
}

describe('every project route, refused to those without access', () => {
  let spec: RouteSpec;
  let routes: Route[] = [];
  let projectId: number;
  let strangerToken: string;
  let otherProjectKey: string;
  let readonlyKey: string;
  let ingestionOnlyKey: string;

  const fill = (path: string) =>
    path
      .replace('{projectId}', String(projectId))
      .replace(/\{(apiKeyId|hmacId|sampleId|dspId|impulseId|versionId)\}/g, '1')
      .replace('{deviceId}', 'some-device')
      .replace('{category}', 'training');
  // A body that is not valid for any operation: the refusal must come before validation.
  const bodyFor = (method: string) => (method === 'GET' || method === 'DELETE' ? {} : { body: { notAField: true } });

  beforeAll(async () => {
    spec = await routeSpec();
    // The first user is staff; the others are ordinary users.
    await registerUser(spec, 'staffer');
    const ada = (await registerUser(spec, 'ada')).token;
    strangerToken = (await registerUser(spec, 'mallory')).token;
    const created = await spec.request('POST', '/api/projects/create', { headers: { 'x-jwt-token': ada }, body: { projectName: 'Guarded' } });
    projectId = Number(created.body.id);
    const other = await spec.request('POST', '/api/projects/create', { headers: { 'x-jwt-token': strangerToken }, body: { projectName: 'Elsewhere' } });
    otherProjectKey = String(other.body.apiKey);
    const addKey = async (role: string) =>
      String((await spec.request('POST', `/api/${projectId}/apikeys`, { headers: { 'x-jwt-token': ada }, body: { name: role, role, isDevelopmentKey: false } })).body.apiKey);
    readonlyKey = await addKey('readonly');
    ingestionOnlyKey = await addKey('ingestiononly');
    const doc = await spec.request('GET', '/openapi.json');
    for (const [path, methods] of Object.entries(doc.body.paths as Record<string, Record<string, { operationId: string }>>)) {
      if (!path.includes('{projectId}')) continue;
      for (const [method, op] of Object.entries(methods)) routes.push({ method: method.toUpperCase(), path, operationId: op.operationId });
    }
  });
  afterAll(async () => {
    await spec?.close();
  });

  it('covers the project routes of this issue', () => {
    const ids = routes.map((r) => r.operationId);
    for (const id of ['getProjectInfo', 'updateProject', 'deleteProject', 'listProjectApiKeys', 'addProjectApiKey', 'revokeProjectApiKey', 'listProjectHmacKeys', 'addProjectHmacKey', 'addCollaborator', 'removeCollaborator', 'getImpulse', 'createImpulse', 'getDspConfig', 'listDevices', 'createDevice', 'listSamples']) {
      expect(ids).toContain(id);
    }
  });

  it("refuses another project's API key and a user who is not a collaborator, on every route", async () => {
    const before = await spec.deps.events.headPosition();
    for (const { method, path, operationId } of routes) {
      const url = fill(path);
      const byKey = await spec.request(method, url, { ...bodyFor(method), headers: { 'x-api-key': otherProjectKey } });
      expect(byKey.status, `${operationId} with another project's key: ${JSON.stringify(byKey.body)}`).toBe(403);
      const byStranger = await spec.request(method, url, { ...bodyFor(method), headers: { 'x-jwt-token': strangerToken } });
      expect(byStranger.status, `${operationId} by a stranger: ${JSON.stringify(byStranger.body)}`).toBe(403);
      expect(byStranger.body.success).toBe(false);
    }
    expect(await spec.deps.events.headPosition()).toBe(before);
  });

  it('lets a read-only key read but change nothing, and an ingestion-only key do nothing here', async () => {
    const before = await spec.deps.events.headPosition();
    for (const { method, path, operationId } of routes) {
      const url = fill(path);
      const ingestionOnly = await spec.request(method, url, { ...bodyFor(method), headers: { 'x-api-key': ingestionOnlyKey } });
      expect(ingestionOnly.status, `${operationId} with an ingestion-only key`).toBe(403);
      if (method === 'GET') continue;
      const readonly = await spec.request(method, url, { ...bodyFor(method), headers: { 'x-api-key': readonlyKey } });
      expect(readonly.status, `${operationId} with a read-only key: ${JSON.stringify(readonly.body)}`).toBe(403);
    }
    expect(await spec.deps.events.headPosition()).toBe(before);
    const read = await spec.request('GET', `/api/${projectId}`, { headers: { 'x-api-key': readonlyKey } });
    expect(read.status).toBe(200);
  });
});

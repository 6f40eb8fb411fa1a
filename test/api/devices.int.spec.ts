import { afterAll, beforeAll, expect, it } from 'vitest';
import { signedSample } from '../support/signedSample';
import { adaAndBob, call, describeOn, setups, startTestService, type TestService } from '../support/testService';
import { readModelsCaughtUp } from '../support/readModels';

/** Required fields of the SDK's Device. */
const REQUIRED_DEVICE_FIELDS = ['id', 'deviceId', 'created', 'lastSeen', 'name', 'deviceType', 'sensors', 'remote_mgmt_connected', 'supportsSnapshotStreaming', 'remoteMgmtMode'];

for (const setup of setups) {
  describeOn(setup, 'devices over HTTP', () => {
    let service: TestService;
    let ada: string;
    let bob: string;
    let projectId: number;
    let apiKey: string;
    let hmacKey: string;
    let bobApiKey: string;

    const jwt = (token: string) => ({ 'x-jwt-token': token });
    const device = (deviceId: string) => `/api/${projectId}/device/${encodeURIComponent(deviceId)}`;
    const create = (body: Record<string, unknown>, headers: Record<string, string> = jwt(ada)) =>
      call(service, 'POST', `/api/${projectId}/devices/create`, { headers, body });
    const rename = (deviceId: string, body: Record<string, unknown>, headers: Record<string, string> = jwt(ada)) =>
      call(service, 'POST', `/api/${projectId}/devices/${encodeURIComponent(deviceId)}/rename`, { headers, body });
    const list = async () => (await call(service, 'GET', `/api/${projectId}/devices`, { headers: jwt(ada) })).body.devices as Record<string, unknown>[];
    const get = (deviceId: string, headers: Record<string, string> = jwt(ada)) => call(service, 'GET', device(deviceId), { headers });
    // Ingestion answers on durability: the device read model is waited for before it is read.
    const ingest = async (deviceName: string, fileName: string) => {
      const res = await fetch(`${service.ingestionUrl}/api/training/data`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': fileName },
        body: signedSample(hmacKey, [[1, 2], [3, 4]], { deviceName }),
      });
      await readModelsCaughtUp(service);
      return res;
    };
    const head = () => service.stores.events.headPosition();

    beforeAll(async () => {
      service = await startTestService({ mongo: setup.mongo });
      ({ ada, bob } = await adaAndBob(service));
      const project = await call(service, 'POST', '/api/projects/create', { headers: jwt(ada), body: { projectName: 'Devices' } });
      projectId = Number(project.body.id);
      apiKey = String(project.body.apiKey);
      hmacKey = String((await call(service, 'GET', `/api/${projectId}/devkeys`, { headers: jwt(ada) })).body.hmacKey);
      bobApiKey = String((await call(service, 'POST', '/api/projects/create', { headers: jwt(bob), body: { projectName: 'Bob things' } })).body.apiKey);
    });
    afterAll(async () => {
      await service?.destroy();
    });

    it('lists no devices in a new project', async () => {
      const res = await call(service, 'GET', `/api/${projectId}/devices`, { headers: jwt(ada) });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, devices: [] });
    });

    it('creates a device, named after its id, disconnected from remote management', async () => {
      const res = await create({ deviceId: 'ac:87:a3:0a:2d:01', deviceType: 'LINUX', ifNotExists: false });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true });
      const got = await get('ac:87:a3:0a:2d:01');
      expect(got.status).toBe(200);
      const d = got.body.device as Record<string, unknown>;
      for (const f of REQUIRED_DEVICE_FIELDS) expect(d, f).toHaveProperty(f);
      expect(d).toMatchObject({
        id: expect.any(Number),
        deviceId: 'ac:87:a3:0a:2d:01',
        name: 'ac:87:a3:0a:2d:01',
        deviceType: 'LINUX',
        sensors: [],
        remote_mgmt_connected: false,
        supportsSnapshotStreaming: false,
        remoteMgmtMode: 'disconnected',
      });
      expect(d.created).toBe(d.lastSeen);
      expect((await list()).map((x) => x.deviceId)).toEqual(['ac:87:a3:0a:2d:01']);
    });

    it('answers success for an existing device with ifNotExists, and 409 without', async () => {
      const before = await head();
      expect((await create({ deviceId: 'ac:87:a3:0a:2d:01', deviceType: 'LINUX', ifNotExists: true })).status).toBe(200);
      expect(await head()).toBe(before);
      const again = await create({ deviceId: 'ac:87:a3:0a:2d:01', deviceType: 'LINUX', ifNotExists: false });
      expect(again.status).toBe(409);
      expect(again.body).toEqual({ success: false, error: expect.stringMatching(/already exists/) });
    });

    it('renames a device, and the project information shows the new name', async () => {
      const res = await rename('ac:87:a3:0a:2d:01', { name: 'Kitchen sensor' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true });
      expect(((await get('ac:87:a3:0a:2d:01')).body.device as { name: string }).name).toBe('Kitchen sensor');
      const info = await call(service, 'GET', `/api/${projectId}`, { headers: jwt(ada) });
      expect(info.body.devices).toEqual([expect.objectContaining({ deviceId: 'ac:87:a3:0a:2d:01', name: 'Kitchen sensor' })]);
    });

    it('takes device ids with slashes, spaces and other characters that need encoding in the path', async () => {
      const id = 'lab/bench 2?#%';
      expect((await create({ deviceId: id, deviceType: 'CUSTOM', ifNotExists: true })).status).toBe(200);
      expect((await rename(id, { name: 'Bench 2' })).status).toBe(200);
      expect((await get(id)).body.device).toMatchObject({ deviceId: id, name: 'Bench 2', deviceType: 'CUSTOM' });
      expect((await call(service, 'DELETE', device(id), { headers: jwt(ada) })).status).toBe(200);
    });

    it('answers 404 for a device the project does not know: get, rename, delete', async () => {
      const before = await head();
      const got = await get('nope');
      expect(got.status).toBe(404);
      expect(got.body).toEqual({ success: false, error: expect.stringMatching(/not found/) });
      expect((await rename('nope', { name: 'x' })).status).toBe(404);
      expect((await call(service, 'DELETE', device('nope'), { headers: jwt(ada) })).status).toBe(404);
      expect(await head()).toBe(before);
    });

    it('refuses bad bodies with 400 naming the field, appending nothing', async () => {
      const before = await head();
      const cases: [Record<string, unknown>, string][] = [
        [{ deviceType: 'LINUX', ifNotExists: true }, 'deviceId'],
        [{ deviceId: '', deviceType: 'LINUX', ifNotExists: true }, 'deviceId'],
        [{ deviceId: 'x'.repeat(257), deviceType: 'LINUX', ifNotExists: true }, 'deviceId'],
        [{ deviceId: 'bad\u0007id', deviceType: 'LINUX', ifNotExists: true }, 'deviceId'],
        [{ deviceId: 'ok', ifNotExists: true }, 'deviceType'],
        [{ deviceId: 'ok', deviceType: 'T'.repeat(257), ifNotExists: true }, 'deviceType'],
        [{ deviceId: 'dev\u202Eice', deviceType: 'LINUX', ifNotExists: true }, 'deviceId'],
        [{ deviceId: 'ok', deviceType: 'LINUX\u2066', ifNotExists: true }, 'deviceType'],
        [{ deviceId: 'ok', deviceType: 'LINUX' }, 'ifNotExists'],
        [{ deviceId: 'ok', deviceType: 'LINUX', ifNotExists: 'yes' }, 'ifNotExists'],
      ];
      for (const [body, field] of cases) {
        const res = await create(body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(String(res.body.error)).toMatch(new RegExp(`^Invalid request body: "${field}"`));
      }
      for (const body of [{}, { name: '' }, { name: 'n'.repeat(257) }, { name: 3 }, { name: 'Kitchen\u0000' }]) {
        const res = await rename('ac:87:a3:0a:2d:01', body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(String(res.body.error)).toMatch(/^Invalid request body: "name"/);
      }
      expect(await head()).toBe(before);
    });

    it("refuses another project's API key and another user's JWT with 403 on every operation", async () => {
      const before = await head();
      for (const headers of [{ 'x-api-key': bobApiKey }, jwt(bob)]) {
        const attempts = [
          await call(service, 'GET', `/api/${projectId}/devices`, { headers }),
          await get('ac:87:a3:0a:2d:01', headers),
          await create({ deviceId: 'intruder', deviceType: 'LINUX', ifNotExists: true }, headers),
          // A bad body too: refused for access before it is validated.
          await create({}, headers),
          await rename('ac:87:a3:0a:2d:01', { name: 'Mine now' }, headers),
          await call(service, 'DELETE', device('ac:87:a3:0a:2d:01'), { headers }),
        ];
        for (const res of attempts) {
          expect(res.status, JSON.stringify(headers)).toBe(403);
          expect(res.body.success).toBe(false);
        }
      }
      expect(await head()).toBe(before);
    });

    it('lets a readonly API key read devices and refuses it every change with 403', async () => {
      const added = await call(service, 'POST', `/api/${projectId}/apikeys`, { headers: jwt(ada), body: { name: 'viewer', role: 'readonly', isDevelopmentKey: false } });
      expect(added.status).toBe(200);
      const headers = { 'x-api-key': String(added.body.apiKey) };
      expect((await call(service, 'GET', `/api/${projectId}/devices`, { headers })).status).toBe(200);
      expect((await get('ac:87:a3:0a:2d:01', headers)).status).toBe(200);
      const before = await head();
      for (const res of [
        await create({ deviceId: 'viewer-made', deviceType: 'LINUX', ifNotExists: true }, headers),
        await rename('ac:87:a3:0a:2d:01', { name: 'Viewer name' }, headers),
        await call(service, 'DELETE', device('ac:87:a3:0a:2d:01'), { headers }),
      ]) {
        expect(res.status).toBe(403);
        expect(String(res.body.error)).toMatch(/readonly/);
      }
      expect(await head()).toBe(before);
    });

    it('answers 400 for a device id path parameter with control characters', async () => {
      expect((await get('a\u0001b')).status).toBe(400);
    });

    it('lists a device seen in ingested data with its last seen time; a rename survives new data', async () => {
      expect((await ingest('sensor-7', 'one.json')).status).toBe(200);
      const seen = (await list()).find((d) => d.deviceId === 'sensor-7')!;
      expect(seen).toMatchObject({ name: 'sensor-7', deviceType: 'LINUX_TEST', lastSeen: expect.any(String), remoteMgmtMode: 'disconnected' });
      const samples = (await call(service, 'GET', `/api/${projectId}/raw-data?category=training`, { headers: jwt(ada) })).body.samples as { id: number }[];
      expect(seen.id).toBe(samples[0]!.id);
      // Seen in data, so it exists: created again only with ifNotExists.
      expect((await create({ deviceId: 'sensor-7', deviceType: 'OTHER', ifNotExists: true })).status).toBe(200);
      expect((await create({ deviceId: 'sensor-7', deviceType: 'OTHER', ifNotExists: false })).status).toBe(409);
      expect((await rename('sensor-7', { name: 'Greenhouse' })).status).toBe(200);
      expect((await ingest('sensor-7', 'two.json')).status).toBe(200);
      const after = (await get('sensor-7')).body.device as Record<string, unknown>;
      expect(after).toMatchObject({ id: seen.id, name: 'Greenhouse', deviceType: 'LINUX_TEST', created: seen.created });
      expect(Date.parse(String(after.lastSeen))).toBeGreaterThanOrEqual(Date.parse(String(seen.lastSeen)));
    });

    it('deletes a device, which comes back with its next data', async () => {
      const res = await call(service, 'DELETE', device('sensor-7'), { headers: jwt(ada) });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true });
      expect((await get('sensor-7')).status).toBe(404);
      expect((await list()).map((d) => d.deviceId)).not.toContain('sensor-7');
      expect((await rename('sensor-7', { name: 'Ghost' })).status).toBe(404);
      expect((await ingest('sensor-7', 'three.json')).status).toBe(200);
      expect((await get('sensor-7')).body.device).toMatchObject({ deviceId: 'sensor-7', name: 'sensor-7', deviceType: 'LINUX_TEST' });
    });

    it('creates a deleted device again with a new id', async () => {
      const first = (await get('ac:87:a3:0a:2d:01')).body.device as { id: number };
      expect((await call(service, 'DELETE', device('ac:87:a3:0a:2d:01'), { headers: jwt(ada) })).status).toBe(200);
      expect((await create({ deviceId: 'ac:87:a3:0a:2d:01', deviceType: 'LINUX', ifNotExists: false })).status).toBe(200);
      const again = (await get('ac:87:a3:0a:2d:01')).body.device as { id: number; name: string };
      expect(again.name).toBe('ac:87:a3:0a:2d:01');
      expect(again.id).not.toBe(first.id);
    });

    it('serves reads and changes to the project API key', async () => {
      const headers = { 'x-api-key': apiKey };
      expect((await create({ deviceId: 'keyed', deviceType: 'LINUX', ifNotExists: false }, headers)).status).toBe(200);
      expect((await rename('keyed', { name: 'Keyed' }, headers)).status).toBe(200);
      expect((await get('keyed', headers)).body.device).toMatchObject({ name: 'Keyed' });
      expect((await call(service, 'DELETE', device('keyed'), { headers })).status).toBe(200);
    });

    it('gives every device a distinct id', async () => {
      const ids = (await list()).map((d) => d.id);
      expect(new Set(ids).size).toBe(ids.length);
    });
  });
}

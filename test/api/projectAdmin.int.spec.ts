// Keys, settings and deletion of a project over HTTP, and how they meet the ingestion API:
// chosen and moved development keys, HMAC keys verifying device data, settings rules, and a
// deleted project's full deletion removing its blobs but not content other projects still hold.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, describeOn, setups, startTestService, type TestService, registerUser } from '../support/testService';
import { signedSample } from '../support/signedSample';
import { inviteAndAccept } from '../support/collaborators';
import { readModelsCaughtUp } from '../support/readModels';

for (const setup of setups) {
  describeOn(setup, 'project keys, settings and deletion over HTTP', () => {
    let service: TestService;
    let staff: string;
    let ada: string;
    let bob: string;
    let bobId: number;
    let projectId: number;
    let apiKey: string;

    const jwt = (token: string) => ({ 'x-jwt-token': token });
    // Ingestion answers on durability: what follows reads the read models, so it waits for them.
    const ingest = async (key: string, body: string, fileName: string) => {
      const res = await fetch(`${service.ingestionUrl}/api/training/data`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json', 'x-file-name': fileName },
        body,
      });
      await readModelsCaughtUp(service);
      return res;
    };
    const samples = async (pid: number, token: string) =>
      (await call(service, 'GET', `/api/${pid}/raw-data?category=training`, { headers: jwt(token) })).body.samples as Record<string, unknown>[];

    beforeAll(async () => {
      service = await startTestService({ mongo: setup.mongo });
      staff = (await registerUser(service, 'staffer')).token;
      ada = (await registerUser(service, 'ada')).token;
      const b = await registerUser(service, 'bob');
      bob = b.token;
      bobId = b.id;
      const created = await call(service, 'POST', '/api/projects/create', { headers: jwt(ada), body: { projectName: 'Admin' } });
      projectId = Number(created.body.id);
      apiKey = String(created.body.apiKey);
    });
    afterAll(async () => {
      await service?.destroy();
    });

    it('takes a chosen API key only with the ei_ prefix and 32 characters, and never the same key twice', async () => {
      const add = (key: string, token = ada, pid = projectId) =>
        call(service, 'POST', `/api/${pid}/apikeys`, { headers: jwt(token), body: { name: 'Chosen', apiKey: key, role: 'admin', isDevelopmentKey: false } });
      const short = await add('ei_short');
      expect(short.status).toBe(400);
      expect(String(short.body.error)).toMatch(/32 to 256/);
      expect((await add('xx_0123456789012345678901234567890123')).status).toBe(400);
      const chosen = 'ei_chosen_key_0123456789abcdef0123456789';
      const ok = await add(chosen);
      expect(ok.status).toBe(200);
      expect(ok.body.apiKey).toBe(chosen);
      expect((await call(service, 'GET', `/api/${projectId}`, { headers: { 'x-api-key': chosen } })).status).toBe(200);
      expect((await add(chosen)).status).toBe(400);
      // Not in another project either: a key alone names its project.
      const bobs = await call(service, 'POST', '/api/projects/create', { headers: jwt(bob), body: { projectName: 'Bob' } });
      expect((await add(chosen, bob, Number(bobs.body.id))).status).toBe(400);
    });

    it('moves the development flag to a new development key, shown in full only to a JWT user', async () => {
      const added = await call(service, 'POST', `/api/${projectId}/apikeys`, { headers: jwt(ada), body: { name: 'New dev', role: 'admin', isDevelopmentKey: true } });
      const newKey = String(added.body.apiKey);
      const list = (await call(service, 'GET', `/api/${projectId}/apikeys`, { headers: jwt(ada) })).body.apiKeys as Record<string, unknown>[];
      const development = list.filter((k) => k.isDevelopmentKey);
      expect(development).toEqual([expect.objectContaining({ id: added.body.id, apiKey: newKey, name: 'New dev' })]);
      const old = list.find((k) => k.name === 'Development key');
      expect(old).toMatchObject({ isDevelopmentKey: false, apiKey: `${apiKey.slice(0, 10)}...` });
      const info = await call(service, 'GET', `/api/${projectId}`, { headers: jwt(ada) });
      expect((info.body.developmentKeys as Record<string, unknown>).apiKey).toBe(newKey);
      // An API key sees every key truncated.
      const byKey = (await call(service, 'GET', `/api/${projectId}/apikeys`, { headers: { 'x-api-key': newKey } })).body.apiKeys as Record<string, unknown>[];
      expect(byKey.every((k) => String(k.apiKey).endsWith('...'))).toBe(true);
    });

    it("gives the key the CLI makes for a device (ingestion_deployment) what the device needs, and no more", async () => {
      const made = await call(service, 'POST', `/api/${projectId}/apikeys`, { headers: jwt(ada), body: { name: 'Device', role: 'ingestion_deployment', isDevelopmentKey: false } });
      const key = { 'x-api-key': String(made.body.apiKey) };
      // The CLI's connect sequence: register, read back, rename, read the project; then upload.
      expect((await call(service, 'POST', `/api/${projectId}/devices/create`, { headers: key, body: { deviceId: 'cli-device', deviceType: 'RASPBERRY_PI', ifNotExists: true } })).status).toBe(200);
      expect((await call(service, 'GET', `/api/${projectId}/device/cli-device`, { headers: key })).status).toBe(200);
      expect((await call(service, 'POST', `/api/${projectId}/devices/cli-device/rename`, { headers: key, body: { name: 'Kitchen' } })).status).toBe(200);
      expect((await call(service, 'GET', `/api/${projectId}`, { headers: key })).status).toBe(200);
      expect((await ingest(String(made.body.apiKey), signedSample('none', [[9, 9]], { alg: 'none' }), 'from.device.json')).status).toBe(200);
      // Not the project itself, nor its devices' removal.
      const refused = await call(service, 'POST', `/api/${projectId}`, { headers: key, body: { description: 'no' } });
      expect(refused.status).toBe(403);
      expect((await call(service, 'DELETE', `/api/${projectId}/device/cli-device`, { headers: key })).status).toBe(403);
    });

    it('keeps when a key was last used', async () => {
      const before = ((await call(service, 'GET', `/api/${projectId}/apikeys`, { headers: jwt(ada) })).body.apiKeys as Record<string, unknown>[]).find((k) => k.name === 'Development key');
      expect(before?.lastUsed).toBeUndefined();
      expect((await call(service, 'GET', `/api/${projectId}`, { headers: { 'x-api-key': apiKey } })).status).toBe(200);
      await expect
        .poll(async () => ((await call(service, 'GET', `/api/${projectId}/apikeys`, { headers: jwt(ada) })).body.apiKeys as Record<string, unknown>[]).find((k) => k.name === 'Development key')?.lastUsed)
        .toEqual({ date: expect.any(String) });
    });

    it('verifies device data with every live HMAC key, and no longer with a revoked one', async () => {
      const added = await call(service, 'POST', `/api/${projectId}/hmackeys`, { headers: jwt(ada), body: { name: 'Fleet', hmacKey: 'fleet-secret-0123', isDevelopmentKey: false } });
      expect(added.status).toBe(200);
      const hmacId = Number(added.body.id);
      const keys = (await call(service, 'GET', `/api/${projectId}/hmackeys`, { headers: jwt(ada) })).body.hmacKeys as Record<string, unknown>[];
      expect(keys).toEqual(expect.arrayContaining([expect.objectContaining({ id: hmacId, name: 'Fleet', hmacKey: 'fleet-secret-0123', isDevelopmentKey: false })]));
      expect((await ingest(apiKey, signedSample('fleet-secret-0123', [[1, 2], [3, 4]]), 'fleet.1.json')).status).toBe(200);
      expect((await call(service, 'DELETE', `/api/${projectId}/hmackeys/${hmacId}`, { headers: jwt(ada) })).status).toBe(200);
      expect((await ingest(apiKey, signedSample('fleet-secret-0123', [[5, 6]]), 'fleet.2.json')).status).toBe(200);
      const listed = await samples(projectId, ada);
      expect(listed.find((s) => s.filename === 'fleet.1.json')).toMatchObject({ signatureValidate: true, signatureMethod: 'HS256' });
      expect(listed.find((s) => s.filename === 'fleet.2.json')).toMatchObject({ signatureValidate: false });
      // The event records which key verified it.
      const sample = listed.find((s) => s.filename === 'fleet.1.json')!;
      const [ingested] = await service.stores.events.readStream(`sample-${String(sample.id)}`);
      expect(ingested?.data.signatureKeyId).toBe(hmacId);
      expect((await call(service, 'DELETE', `/api/${projectId}/hmackeys/${hmacId}`, { headers: jwt(ada) })).status).toBe(404);
    });

    it('refuses settings that break the rules, each naming the field, and records nothing', async () => {
      const before = await service.stores.events.headPosition();
      const update = (body: unknown, token = ada) => call(service, 'POST', `/api/${projectId}`, { headers: jwt(token), body });
      const cases: [unknown, RegExp, number][] = [
        [{ nmae: 'typo' }, /nmae/, 400],
        [{ dspPageSize: 0 }, /dspPageSize/, 400],
        [{ trainJobNotificationUids: [bobId] }, /trainJobNotificationUids.*not a collaborator/, 400],
        [{ datasetSplitOptions: { trainingSplitRatio: 0.9, testingSplitRatio: 0.3 } }, /add up to 1/, 400],
        [{ anomalyLabelsConfig: { anomalyLabels: ['x'], noAnomalyLabels: ['x'] } }, /both an anomaly and not/, 400],
        [{ labelingMethod: 'guesswork' }, /labelingMethod/, 400],
        [{ useGpu: true }, /Only staff/, 403],
        [{ defaultImpulseId: 999 }, /defaultImpulseId.*does not exist/, 400],
      ];
      for (const [body, message, status] of cases) {
        const res = await update(body);
        expect(res.status, JSON.stringify(body)).toBe(status);
        expect(String(res.body.error)).toMatch(message);
      }
      const byKey = await call(service, 'POST', `/api/${projectId}`, { headers: { 'x-api-key': apiKey }, body: { experiments: ['x'] } });
      expect(byKey.status).toBe(403);
      expect(await service.stores.events.headPosition()).toBe(before);
    });

    it('lets staff change the limits, which project information then reports', async () => {
      // Staff reach a project they collaborate on; add the staff user first.
      await inviteAndAccept(service, projectId, ada, staff, 'staffer');
      const res = await call(service, 'POST', `/api/${projectId}`, { headers: jwt(staff), body: { useGpu: true, computeTimeLimitM: 120, trainJobRamMb: 8192 } });
      expect(res.status).toBe(200);
      const info = await call(service, 'GET', `/api/${projectId}`, { headers: jwt(ada) });
      expect(info.body.performance).toEqual({ gpu: true, jobLimitM: 120, dspFileSizeMb: 100, enterprisePerformance: false, trainJobRamMb: 8192 });
      expect(info.body.computeTime).toMatchObject({ timeUsedMs: 0, timeLeftMs: 120 * 60_000 });
      expect((info.body.project as Record<string, unknown>).lastModificationDetails).toMatch(/performance/);
    });

    it('renders the readme as sanitized HTML', async () => {
      const markdown = '# Wrist data\n\nSee [docs](https://example.com) and [this](javascript:alert(1)).\n\n<img src="x.png" onerror="alert(1)">\n\n<script>alert(1)</script>';
      expect((await call(service, 'POST', `/api/${projectId}`, { headers: jwt(ada), body: { readme: markdown } })).status).toBe(200);
      const readme = (await call(service, 'GET', `/api/${projectId}`, { headers: jwt(ada) })).body.readme as { markdown: string; html: string };
      expect(readme.markdown).toBe(markdown);
      expect(readme.html).toContain('<h1>Wrist data</h1>');
      expect(readme.html).toContain('<a href="https://example.com" rel="noopener noreferrer nofollow">docs</a>');
      expect(readme.html).not.toMatch(/script|onerror|javascript:/);
      expect((await call(service, 'POST', `/api/${projectId}`, { headers: jwt(ada), body: { readme: null } })).status).toBe(200);
      expect((await call(service, 'GET', `/api/${projectId}`, { headers: jwt(ada) })).body.readme).toBeUndefined();
    });

    it('reports the impulse in project information as it is created, configured and chosen as default', async () => {
      const info = async (query = '') => (await call(service, 'GET', `/api/${projectId}${query}`, { headers: jwt(ada) })).body;
      expect(await info()).toMatchObject({ impulse: { created: false, configured: false, complete: false }, showCreateFirstImpulse: true });
      const body = {
        inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY'], windowSizeMs: 1000, windowIncreaseMs: 500, frequencyHz: 100 }],
        dspBlocks: [{ id: 2, type: 'spectral-analysis', name: 'Spectral', title: 'Spectral Analysis', axes: ['accX', 'accY'], input: 1, implementationVersion: 4 }],
        learnBlocks: [{ id: 3, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [2] }],
      };
      const created = await call(service, 'POST', `/api/${projectId}/impulse`, { headers: jwt(ada), body });
      expect(created.status).toBe(200);
      const first = Number(created.body.id);
      let now = await info();
      expect(now).toMatchObject({ impulse: { created: true, configured: false, complete: false }, showCreateFirstImpulse: false, defaultImpulseId: first });
      expect((now.project as Record<string, unknown>).lastModificationDetails).toMatch(/Impulse/);
      const config = await call(service, 'GET', `/api/${projectId}/dsp/2`, { headers: jwt(ada) });
      const items = (config.body.config as { items: { param: string; value?: string; defaultValue: string }[] }[]).flatMap((g) => g.items);
      const values = Object.fromEntries(items.map((i) => [i.param, i.value ?? i.defaultValue]));
      expect((await call(service, 'POST', `/api/${projectId}/dsp/2`, { headers: jwt(ada), body: { config: values } })).status).toBe(200);
      now = await info();
      expect(now.impulse).toEqual({ created: true, configured: true, complete: false });
      // A second, empty impulse: chosen as the default, project information follows it.
      const second = Number((await call(service, 'POST', `/api/${projectId}/impulse/new`, { headers: jwt(ada), body: {} })).body.id);
      expect((await call(service, 'POST', `/api/${projectId}`, { headers: jwt(ada), body: { defaultImpulseId: second } })).status).toBe(200);
      now = await info();
      expect(now).toMatchObject({ defaultImpulseId: second, impulse: { created: false, configured: false } });
      // The impulse operations mean the same impulse when none is named.
      expect(((await call(service, 'GET', `/api/${projectId}/impulse`, { headers: jwt(ada) })).body.impulse as { id: number }).id).toBe(second);
      expect(((await call(service, 'GET', `/api/${projectId}/impulse?impulseId=${first}`, { headers: jwt(ada) })).body.impulse as { id: number }).id).toBe(first);
      expect((await info(`?impulseId=${first}`)).impulse).toEqual({ created: true, configured: true, complete: false });
      expect((await call(service, 'GET', `/api/${projectId}?impulseId=9999`, { headers: jwt(ada) })).status).toBe(404);
    });

    it('deletes a project at once and fully at the scheduled time, keeping content another project holds', async () => {
      const a = await call(service, 'POST', '/api/projects/create', { headers: jwt(ada), body: { projectName: 'Doomed' } });
      const doomed = Number(a.body.id);
      const doomedKey = String(a.body.apiKey);
      const b = await call(service, 'POST', '/api/projects/create', { headers: jwt(ada), body: { projectName: 'Survivor' } });
      const survivorKey = String(b.body.apiKey);
      const shared = signedSample('none', [[1, 1]], { alg: 'none' });
      const only = signedSample('none', [[2, 2]], { alg: 'none' });
      for (const [key, body, name] of [[doomedKey, shared, 'shared.json'], [doomedKey, only, 'only.json'], [survivorKey, shared, 'shared.json']] as const) {
        expect((await ingest(key, body, name)).status).toBe(200);
      }
      const doomedSamples = await samples(doomed, ada);
      const hashOf = (name: string) => String(doomedSamples.find((s) => s.filename === name)?.sha256Hash);
      expect(await service.stores.blobs.stat(hashOf('only.json'))).toBeDefined();

      expect((await call(service, 'DELETE', `/api/${doomed}`, { headers: jwt(bob) })).status).toBe(403);
      expect((await call(service, 'DELETE', `/api/${doomed}`, { headers: { 'x-api-key': doomedKey } })).status).toBe(403);
      const deleted = await call(service, 'DELETE', `/api/${doomed}`, { headers: jwt(ada) });
      expect(deleted.status).toBe(200);
      expect((await call(service, 'GET', `/api/${doomed}`, { headers: jwt(ada) })).status).toBe(404);
      const listed = (await call(service, 'GET', '/api/projects', { headers: jwt(ada) })).body.projects as Record<string, unknown>[];
      expect(listed.map((p) => p.id)).not.toContain(doomed);
      expect((await ingest(doomedKey, only, 'again.json')).status).toBe(401);
      expect((await call(service, 'GET', `/api/${doomed}/raw-data?category=training`, { headers: { 'x-api-key': doomedKey } })).status).toBe(401);

      // Not yet due: nothing is removed.
      await service.fullyDeleteDueProjects(new Date());
      expect(await service.stores.blobs.stat(hashOf('only.json'))).toBeDefined();
      await service.fullyDeleteDueProjects(new Date(Date.now() + 8 * 24 * 3600_000));
      expect(await service.stores.blobs.stat(hashOf('only.json'))).toBeUndefined();
      expect(await service.stores.blobs.stat(hashOf('shared.json'))).toBeDefined();
      expect(await samples(Number(b.body.id), ada)).toHaveLength(1);
      // Set aside, not yet gone: the purge comes a grace period later.
      const types = async () => (await service.stores.events.readStream(`project-${doomed}`)).map((e) => e.type);
      expect((await types()).slice(-2)).toEqual(['ProjectDeleted', 'ProjectFullyDeleted']);
      // Another project receives content that was set aside: it is stored afresh, and survives the purge.
      const late = signedSample('none', [[3, 3]], { alg: 'none' });
      expect((await ingest(doomedKey, late, 'late.json')).status).toBe(401);
      expect((await ingest(survivorKey, only, 'same.as.only.json')).status).toBe(200);
      await service.fullyDeleteDueProjects(new Date(Date.now() + 9 * 24 * 3600_000));
      expect((await types()).slice(-3)).toEqual(['ProjectDeleted', 'ProjectFullyDeleted', 'ProjectBlobsPurged']);
      expect(await service.stores.blobs.stat(hashOf('only.json'))).toEqual({ sha256: hashOf('only.json'), size: expect.any(Number) });
      const kept = (await samples(Number(b.body.id), ada)).find((x) => x.filename === 'same.as.only.json')!;
      const values = await call(service, 'GET', `/api/${Number(b.body.id)}/raw-data/${String(kept.id)}`, { headers: jwt(ada) });
      expect((values.body.payload as { values: number[][] }).values).toEqual([[2, 2]]);
      expect(await service.stores.blobs.stat(hashOf('shared.json'))).toBeDefined();
      // A further run finds nothing more to do.
      const head = await service.stores.events.headPosition();
      await service.fullyDeleteDueProjects(new Date(Date.now() + 10 * 24 * 3600_000));
      expect(await service.stores.events.headPosition()).toBe(head);
    });
  });
}

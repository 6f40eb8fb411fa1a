import { afterAll, beforeAll, expect, it } from 'vitest';
import { impulsesStream } from '../../domain/impulse/impulseEvents';
import { adaAndBob, call, describeOn, setups, startTestService, type TestService } from '../support/testService';

const motion = (ids = { input: 1, dsp: 2, learn: 3 }, dspType = 'spectral-analysis') => ({
  name: 'Motion',
  inputBlocks: [{ id: ids.input, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY', 'accZ'], windowSizeMs: 2000, windowIncreaseMs: 80, frequencyHz: 62.5 }],
  dspBlocks: [{ id: ids.dsp, type: dspType, name: 'Spectral features', title: 'Spectral Analysis', axes: ['accX', 'accY', 'accZ'], input: ids.input, ...(dspType === 'spectral-analysis' ? { implementationVersion: 4 } : {}) }],
  learnBlocks: [{ id: ids.learn, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [ids.dsp] }],
});

for (const setup of setups) {
  describeOn(setup, 'impulses and DSP configs over HTTP', () => {
    let service: TestService;
    let ada: Record<string, string>;
    let bob: Record<string, string>;
    let projectId: number;
    let adaKey: Record<string, string>;
    let bobKey: Record<string, string>;
    let readonlyKey: Record<string, string>;
    let impulseId: number;

    // What a refusal must not touch: the project's impulses stream (API key use is recorded elsewhere).
    const head = async () => (await service.stores.events.readStream(impulsesStream(projectId))).length;

    beforeAll(async () => {
      service = await startTestService({ mongo: setup.mongo });
      const users = await adaAndBob(service);
      ada = { 'x-jwt-token': users.ada };
      bob = { 'x-jwt-token': users.bob };
      const mine = await call(service, 'POST', '/api/projects/create', { headers: ada, body: { projectName: 'Impulses' } });
      projectId = Number(mine.body.id);
      adaKey = { 'x-api-key': String(mine.body.apiKey) };
      const bobs = await call(service, 'POST', '/api/projects/create', { headers: bob, body: { projectName: 'Bob things' } });
      bobKey = { 'x-api-key': String(bobs.body.apiKey) };
      const readonly = await call(service, 'POST', `/api/${projectId}/apikeys`, { headers: ada, body: { name: 'ci', role: 'readonly', isDevelopmentKey: false } });
      readonlyKey = { 'x-api-key': String(readonly.body.apiKey) };
    });
    afterAll(async () => {
      await service?.destroy();
    });

    it('serves the block catalog to the project and to white labels', async () => {
      const res = await call(service, 'GET', `/api/${projectId}/impulse/blocks`, { headers: adaKey });
      expect(res.status).toBe(200);
      expect((res.body.dspBlocks as { type: string }[]).map((b) => b.type)).toEqual(['raw', 'flatten', 'image', 'spectral-analysis', 'mfe', 'mfcc', 'spectrogram']);
      expect(res.body.inputBlocks).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'time-series', blockType: 'official' })]));
      expect(res.body.postProcessingBlocks).toEqual([expect.objectContaining({ defaultParameters: expect.any(Array) })]);
      // A white label's catalog is its own (test/api/whitelabels.int.spec.ts); an unknown one is not found.
      const wl = await call(service, 'GET', '/api/whitelabel/1/impulse/blocks', { headers: bob });
      expect(wl.status).toBe(404);
    });

    it('answers no impulse before one is created', async () => {
      const res = await call(service, 'GET', `/api/${projectId}/impulse`, { headers: ada });
      expect(res.body).toEqual({ success: true });
      expect((await call(service, 'GET', `/api/${projectId}/impulses`, { headers: ada })).body).toEqual({ success: true, impulses: [], maxImpulseCount: 3 });
    });

    it('creates an impulse and serves it as the default', async () => {
      const res = await call(service, 'POST', `/api/${projectId}/impulse`, { headers: adaKey, body: motion() });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, id: expect.any(Number) });
      impulseId = Number(res.body.id);
      const got = await call(service, 'GET', `/api/${projectId}/impulse`, { headers: ada });
      expect(got.body.impulse).toMatchObject({ id: impulseId, name: 'Motion', type: 'default', dspBlocks: [{ id: 2, type: 'spectral-analysis', input: 1, implementationVersion: 4 }], learnBlocks: [{ id: 3, dsp: [2] }], postProcessingBlocks: [] });
      const all = await call(service, 'GET', `/api/${projectId}/impulse/all?impulseId=${impulseId}`, { headers: ada });
      expect(all.body.impulse).toEqual(got.body.impulse);
      const info = await call(service, 'GET', `/api/${projectId}`, { headers: ada });
      expect(info.status).toBe(200);
    });

    it('refuses a bad impulse with 400 naming the block and field, appending nothing', async () => {
      const before = await head();
      const badInput = motion();
      badInput.dspBlocks[0]!.input = 42;
      let res = await call(service, 'POST', `/api/${projectId}/impulse/new`, { headers: ada, body: { type: 'nonsense' } });
      expect(res.status).toBe(400);
      expect(String(res.body.error)).toMatch(/"type"/);
      res = await call(service, 'POST', `/api/${projectId}/impulse`, { headers: ada, body: badInput });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/DSP block 2 \(spectral-analysis\): "input" refers to block 42/);
      res = await call(service, 'POST', `/api/${projectId}/impulse`, { headers: ada, body: { ...motion(), dspBlocks: 'no' } });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/"dspBlocks"/);
      res = await call(service, 'POST', `/api/${projectId}/impulse?impulseId=999999`, { headers: ada, body: motion() });
      expect(res.status).toBe(404);
      expect(await head()).toBe(before);
    });

    it('hands out block ids not used in the project', async () => {
      const first = await call(service, 'POST', `/api/${projectId}/impulse/get-new-block-id`, { headers: ada });
      const second = await call(service, 'POST', `/api/${projectId}/impulse/get-new-block-id`, { headers: adaKey });
      expect(first.body).toEqual({ success: true, blockId: 4 });
      expect(second.body).toEqual({ success: true, blockId: 5 });
    });

    it('creates empty impulses up to the limit, updates and deletes them', async () => {
      const created = await call(service, 'POST', `/api/${projectId}/impulse/new`, { headers: ada, body: { type: 'BYOM' } });
      expect(created.body).toEqual({ success: true, id: expect.any(Number), redirectUrl: expect.stringContaining(`/studio/${projectId}/`) });
      const second = Number(created.body.id);
      // A second impulse cannot reuse the first one's block ids.
      let res = await call(service, 'POST', `/api/${projectId}/impulse?impulseId=${second}`, { headers: ada, body: motion() });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/input block 1 \(time-series\): "id" 1 is used by a block of another impulse/);
      res = await call(service, 'POST', `/api/${projectId}/impulse?impulseId=${second}`, { headers: ada, body: motion({ input: 10, dsp: 11, learn: 12 }, 'flatten') });
      expect(res.body).toEqual({ success: true, id: second });
      res = await call(service, 'POST', `/api/${projectId}/impulse/update?impulseId=${second}`, { headers: ada, body: { name: 'Flat', tags: ['v2'] } });
      expect(res.body).toEqual({ success: true });
      await call(service, 'POST', `/api/${projectId}/impulse/new`, { headers: ada, body: {} });
      const list = await call(service, 'GET', `/api/${projectId}/impulses`, { headers: ada });
      expect((list.body.impulses as { name: string }[]).map((i) => i.name)).toEqual(['Motion', 'Flat', 'Impulse #3']);
      const before = await head();
      res = await call(service, 'POST', `/api/${projectId}/impulse/new`, { headers: ada, body: {} });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/most its plan allows \(3\)/);
      expect(await head()).toBe(before);
      res = await call(service, 'DELETE', `/api/${projectId}/impulse?impulseId=${second}`, { headers: ada });
      expect(res.body).toEqual({ success: true });
      expect((await call(service, 'GET', `/api/${projectId}/impulse?impulseId=${second}`, { headers: ada })).status).toBe(404);
      expect(((await call(service, 'GET', `/api/${projectId}/impulses`, { headers: ada })).body.impulses as unknown[]).length).toBe(2);
    });

    it('serves, sets and clears a DSP block config', async () => {
      let res = await call(service, 'GET', `/api/${projectId}/dsp/2`, { headers: adaKey });
      expect(res.status).toBe(200);
      expect(res.body.dsp).toMatchObject({ id: 2, type: 'spectral-analysis', windowLength: 2000, inputAxes: ['accX', 'accY', 'accZ'], features: { generated: false }, hasAutoTune: true });
      const item = (param: string) => (res.body.config as { items: { param: string; value: string }[] }[]).flatMap((g) => g.items).find((i) => i.param === param);
      expect(item('fft-length')).toMatchObject({ value: '16', defaultValue: '16' });
      res = await call(service, 'POST', `/api/${projectId}/dsp/2`, { headers: adaKey, body: { config: { 'fft-length': '64' } } });
      expect(res.body).toEqual({ success: true });
      res = await call(service, 'POST', `/api/${projectId}/dsp/2`, { headers: adaKey, body: { config: { 'filter-type': 'low' } } });
      res = await call(service, 'GET', `/api/${projectId}/dsp/2`, { headers: adaKey });
      expect(item('fft-length')!.value).toBe('64');
      expect(item('filter-type')!.value).toBe('low');
      res = await call(service, 'POST', `/api/${projectId}/dsp/2/clear`, { headers: ada });
      expect(res.body).toEqual({ success: true });
      res = await call(service, 'GET', `/api/${projectId}/dsp/2`, { headers: adaKey });
      expect(item('fft-length')!.value).toBe('16');
      expect((await call(service, 'GET', `/api/${projectId}/dsp/77`, { headers: ada })).status).toBe(404);
    });

    it('refuses a bad DSP config with 400 naming the parameter, appending nothing', async () => {
      const before = await head();
      let res = await call(service, 'POST', `/api/${projectId}/dsp/2`, { headers: ada, body: { config: { 'fft-length': '100' } } });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/"fft-length": must be a power of 2/);
      res = await call(service, 'POST', `/api/${projectId}/dsp/2`, { headers: ada, body: { config: { 'do-log': 'maybe' } } });
      expect(res.body.error).toMatch(/"do-log": expected "true" or "false"/);
      res = await call(service, 'POST', `/api/${projectId}/dsp/2`, { headers: ada, body: {} });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/"config" is required/);
      expect(await head()).toBe(before);
    });

    it("refuses another project's API key, another user and a readonly key's changes with 403, appending nothing", async () => {
      const before = await head();
      const reads: [string, string][] = [
        ['GET', `/api/${projectId}/impulse`],
        ['GET', `/api/${projectId}/impulse/all`],
        ['GET', `/api/${projectId}/impulses`],
        ['GET', `/api/${projectId}/impulse/blocks`],
        ['GET', `/api/${projectId}/dsp/2`],
      ];
      const changes: [string, string, unknown][] = [
        ['POST', `/api/${projectId}/impulse`, motion()],
        ['POST', `/api/${projectId}/impulse/new`, {}],
        ['POST', `/api/${projectId}/impulse/update`, { name: 'x' }],
        ['DELETE', `/api/${projectId}/impulse`, undefined],
        ['POST', `/api/${projectId}/impulse/get-new-block-id`, undefined],
        ['POST', `/api/${projectId}/dsp/2`, { config: { 'fft-length': '32' } }],
        ['POST', `/api/${projectId}/dsp/2/clear`, undefined],
      ];
      for (const headers of [bobKey, bob]) {
        for (const [method, path] of reads) expect((await call(service, method, path, { headers })).status, `${method} ${path}`).toBe(403);
        for (const [method, path, body] of changes) expect((await call(service, method, path, { headers, body })).status, `${method} ${path}`).toBe(403);
      }
      for (const [method, path] of reads) expect((await call(service, method, path, { headers: readonlyKey })).status, `${method} ${path}`).toBe(200);
      for (const [method, path, body] of changes) {
        const res = await call(service, method, path, { headers: readonlyKey, body });
        expect(res.status, `${method} ${path}`).toBe(403);
      }
      // A bad body from someone without access learns nothing from validation.
      expect((await call(service, 'POST', `/api/${projectId}/impulse`, { headers: bob, body: { inputBlocks: 'x' } })).status).toBe(403);
      expect(await head()).toBe(before);
    });
  });
}

import { afterAll, beforeAll, expect, it } from 'vitest';
import { processingBlocks } from '../../domain/dsp/blocks';
import { impulsesStream } from '../../domain/impulse/impulseEvents';
import { call, describeOn, setups, signup, startTestService, loginToken, type TestService } from '../support/testService';

const WINDOW_ROWS = 125; // 2000 ms at 62.5 Hz
const impulse = {
  name: 'Motion',
  inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY', 'accZ'], windowSizeMs: 2000, windowIncreaseMs: 500, frequencyHz: 62.5 }],
  dspBlocks: [{ id: 2, type: 'spectral-analysis', name: 'Spectral features', title: 'Spectral Analysis', axes: ['accX', 'accY', 'accZ'], input: 1, implementationVersion: 4 }],
  learnBlocks: [{ id: 3, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [2] }],
};
// A deterministic window: three sines of different rates plus a ramp, interleaved by row.
const window = Array.from({ length: WINDOW_ROWS * 3 }, (_, i) => {
  const row = Math.floor(i / 3);
  const axis = i % 3;
  return Math.round(1000 * (Math.sin((2 * Math.PI * (axis + 1) * 3 * row) / 62.5) + row / 200)) / 1000;
});

for (const setup of setups) {
  describeOn(setup, 'running a DSP block on one window over HTTP (dsp/{dspId}/run)', () => {
    let service: TestService;
    let ada: Record<string, string>;
    let projectId: number;
    const head = async () => (await service.stores.events.readStream(impulsesStream(projectId))).length;

    beforeAll(async () => {
      service = await startTestService({ mongo: setup.mongo });
      await call(service, 'POST', '/api-user-create', { body: signup() });
      ada = { 'x-jwt-token': await loginToken(service, 'ada') };
      const project = await call(service, 'POST', '/api/projects/create', { headers: ada, body: { projectName: 'DSP run' } });
      projectId = Number(project.body.id);
      expect((await call(service, 'POST', `/api/${projectId}/impulse`, { headers: ada, body: impulse })).status).toBe(200);
      expect((await call(service, 'POST', `/api/${projectId}/dsp/2`, { headers: ada, body: { config: { 'fft-length': '64' } } })).status).toBe(200);
    });
    afterAll(async () => {
      await service?.destroy();
    });

    it('answers the features the block computes with the saved config, and overrides apply to this run only', async () => {
      const block = processingBlocks.get('spectral-analysis')!;
      const input = { values: window, axes: ['accX', 'accY', 'accZ'], frequency: 62.5 };
      const options = { implementationVersion: 4, drawGraphs: false };
      const items = (body: Record<string, unknown>) => (body.config as { items: { param: string; value: string }[] }[]).flatMap((g) => g.items);
      const defaults = Object.fromEntries(items((await call(service, 'GET', `/api/${projectId}/dsp/2`, { headers: ada })).body).map((item) => [item.param, item.value]));
      expect(defaults['fft-length']).toBe('64');

      let res = await call(service, 'POST', `/api/${projectId}/dsp/2/run`, { headers: ada, body: { features: window, params: {}, drawGraphs: false } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const direct = block.run(input, defaults, options);
      expect(res.body.features).toEqual(Array.from(direct.features).map((v) => expect.closeTo(v, 6)));
      expect(res.body.labels).toEqual(direct.labels);
      expect(res.body.graphs).toEqual([]);

      res = await call(service, 'POST', `/api/${projectId}/dsp/2/run`, { headers: ada, body: { features: window, params: { 'fft-length': 128 }, drawGraphs: true } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const overridden = block.run(input, { ...defaults, 'fft-length': '128' }, { ...options, drawGraphs: true });
      expect(res.body.features).toHaveLength(overridden.features.length);
      expect(res.body.features).not.toHaveLength(direct.features.length);
      expect((res.body.graphs as { name: string }[]).map((g) => g.name)).toEqual(overridden.graphs.map((g) => g.name));
      expect((res.body.graphs as unknown[]).length).toBeGreaterThan(0);
      // The saved config is untouched by an override.
      const after = await call(service, 'GET', `/api/${projectId}/dsp/2`, { headers: ada });
      expect(JSON.stringify(after.body.config)).toContain('"param":"fft-length"');
      expect(items(after.body).find((i) => i.param === 'fft-length')?.value).toBe('64');
    });

    it('refuses bad parameters and bad windows with a 400 naming the problem, appending nothing', async () => {
      const before = await head();
      const cases: [unknown, RegExp][] = [
        [{ features: window, params: { 'fft-length': '100' } }, /"fft-length": must be a power of 2/],
        [{ features: window, params: { 'no-such': '1' } }, /"no-such": unknown parameter/],
        [{ features: window.slice(0, 10), params: {} }, /"features": 10 values are not whole rows of 3 axes/],
        [{ features: [], params: {} }, /features/],
        [{ features: ['a', 1, 2], params: {} }, /features/],
        [{ params: {} }, /features/],
        // Finite in JSON, but beyond what the block's float32 features can hold.
        [{ features: window.map(() => 1e308), params: {} }, /"features": the spectral-analysis block gave a value outside the float32 range/],
      ];
      for (const [body, error] of cases) {
        const res = await call(service, 'POST', `/api/${projectId}/dsp/2/run`, { headers: ada, body });
        expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
        expect(String(res.body.error)).toMatch(error);
      }
      expect((await call(service, 'POST', `/api/${projectId}/dsp/77/run`, { headers: ada, body: { features: window, params: {} } })).status).toBe(404);
      expect(await head()).toBe(before);
    });

    it('refuses to save parameters the block would refuse when run on a window of the impulse, naming the parameter', async () => {
      const before = await head();
      // 2 s at 62.5 Hz is 125 rows: a level-6 wavelet needs 32.8 s of them.
      const res = await call(service, 'POST', `/api/${projectId}/dsp/2`, { headers: ada, body: { config: { 'analysis-type': 'Wavelet', 'wavelet-level': '6' } } });
      expect(res.status).toBe(400);
      expect(String(res.body.error)).toMatch(/"wavelet-level": wavelet decomposition level is too high, please increase window size to at least 32768 ms/);
      expect(await head()).toBe(before);
      expect((await call(service, 'POST', `/api/${projectId}/dsp/2`, { headers: ada, body: { config: { 'analysis-type': 'Wavelet', 'wavelet-level': '1' } } })).status).toBe(200);
    });
  });
}

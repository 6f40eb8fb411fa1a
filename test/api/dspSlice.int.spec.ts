import { jobFinished } from '../support/jobStatus';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readModelsCaughtUp } from '../support/readModels';
import { dspFeaturesStream, type DspFeaturesGenerated } from '../../domain/dsp/dspFeaturesEvents';
import { decodeNpy } from '../../domain/dsp/npy';
import { impulsesStream } from '../../domain/impulse/impulseEvents';
import { signedSample } from '../support/signedSample';
import { call, describeOn, setups, startTestService, type TestService, adaWithProject, blobBytes } from '../support/testService';

// 100 Hz impulse, windows of 500 ms (50 rows) every 250 ms. A 100 Hz sample of 200 rows gives 7
// windows; a 50 Hz one of 100 rows (resampled to 200) gives 7 too; one of 20 rows is shorter than a window.
const impulse = (padZeros = false) => ({
  name: 'Motion',
  inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY'], windowSizeMs: 500, windowIncreaseMs: 250, frequencyHz: 100, padZeros }],
  dspBlocks: [{ id: 2, type: 'spectral-analysis', name: 'Spectral features', title: 'Spectral Analysis', axes: ['accY', 'accX'], input: 1, implementationVersion: 4 }],
  learnBlocks: [{ id: 3, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [2] }],
});
// `+ 0` turns -0 into 0, as JSON does.
const rows = (f: number, n: number, rate = 100): number[][] =>
  Array.from({ length: n }, (_, i) => [Math.round(1000 * Math.sin((2 * Math.PI * f * i) / rate)) / 100 + 0, Math.round(1000 * Math.cos((2 * Math.PI * f * i) / rate + 1)) / 200 + 0]);

interface SliceResponse {
  features: number[];
  labels: string[];
  graphs: { name: string }[];
  labelForWindow?: string;
  labelAtEndOfWindow?: string;
  canProfilePerformance: boolean;
  sample: { sample: { id: number; filename: string }; payload: { sensors: { name: string; index: number }[]; values: number[][]; frequencyHz: number }; totalPayloadLength: number };
}

for (const setup of setups) {
  describeOn(setup, 'running a DSP block on a slice of a stored sample (dsp/{dspId}/raw-data/{sampleId}/slice/run)', () => {
    let service: TestService;
    let ada: Record<string, string>;
    let projectId: number;
    let apiKey: string;
    const ids: Record<string, number> = {};
    const post = (path: string, body: unknown, headers = ada) => call(service, 'POST', `/api/${projectId}${path}`, { headers, body });
    const get = (path: string) => call(service, 'GET', `/api/${projectId}${path}`, { headers: ada });
    const slice = (sampleId: number, query: string, body: unknown = { params: {}, store: false }) => post(`/dsp/2/raw-data/${sampleId}/slice/run?${query}`, body);
    const ingest = async (label: string, values: number[][], name: string, intervalMs = 10) => {
      const res = await fetch(`${service.ingestionUrl}/api/training/data`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': `${name}.json`, 'x-label': label },
        body: signedSample('none', values, { alg: 'none', intervalMs }),
      });
      expect(res.status, await res.text()).toBe(200);
    };
    const blob = (sha256: string) => blobBytes(service, sha256);

    beforeAll(async () => {
      service = await startTestService({ mongo: setup.mongo });
      ({ ada, projectId, apiKey } = await adaWithProject(service, 'Slices'));
      expect((await post('/impulse', impulse())).status).toBe(200);
      await ingest('idle', rows(1, 200), 'idle');
      await ingest('wave', rows(9, 100, 50), 'wave.50hz', 20);
      await ingest('wave', rows(9, 20), 'short');
      await readModelsCaughtUp(service);
      const listed = (await get('/raw-data?category=training')).body.samples as { id: number; filename: string }[];
      for (const s of listed) ids[s.filename.replace(/\.json$/, '')] = s.id;
      expect(Object.keys(ids).sort()).toEqual(['idle', 'short', 'wave.50hz']);
    });
    afterAll(async () => {
      await service?.destroy();
    });

    it("gives, for a slice at a window's start, the row the generate-features job writes for that window, resampled samples included", async () => {
      const res = await post('/jobs/generate-features', { dspId: 2, skipFeatureExplorer: true });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect((await jobFinished(service, get, Number(res.body.id), 60_000)).finishedSuccessful).toBe(true);
      const [result] = (await service.stores.events.readStream(dspFeaturesStream(projectId, 2))).map((e) => e as unknown as DspFeaturesGenerated);
      const { featureCount, categories } = result!.data;
      const x = decodeNpy(await blob(categories.training.x));
      // Rows: idle's 7 windows, then wave.50hz's 7 (short is skipped: no zero padding).
      expect(x.shape).toEqual([14, featureCount]);
      const row = (i: number) => Array.from(x.data.subarray(i * featureCount, (i + 1) * featureCount));
      const asFloat32 = (values: number[]) => Array.from(Float32Array.from(values));

      // Window 3 of idle starts at 750 ms = row 75; sliceEnd defaults to one window (50 rows).
      let r = await slice(ids.idle!, 'sliceStart=75');
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      let body = r.body as unknown as SliceResponse;
      expect(asFloat32(body.features)).toEqual(row(3));
      expect(body).toMatchObject({ labelForWindow: 'idle', labelAtEndOfWindow: 'idle', canProfilePerformance: false });
      // The block's labels per axis, as dsp/{dspId}/run answers them (the job prefixes the axis names).
      expect(body.labels).toHaveLength(featureCount / 2);
      expect(body.graphs.length).toBeGreaterThan(0);
      // The payload is the slice as stored, the block's axes only, in the block's order.
      expect(body.sample.sample).toMatchObject({ id: ids.idle, filename: 'idle.json' });
      expect(body.sample.payload.sensors.map((s) => [s.name, s.index])).toEqual([['accY', 1], ['accX', 0]]);
      expect(body.sample.payload.values).toEqual(rows(1, 200).slice(75, 125).map(([a, b]) => [b, a]));
      expect(body.sample.totalPayloadLength).toBe(200);

      // The 50 Hz sample: window 2 starts at 500 ms, its stored row 25; a window is 25 of its rows.
      r = await slice(ids['wave.50hz']!, 'sliceStart=25&sliceEnd=50');
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      body = r.body as unknown as SliceResponse;
      expect(asFloat32(body.features)).toEqual(row(7 + 2));
      expect(body.labelForWindow).toBe('wave');
      expect(body.sample.payload.values).toHaveLength(25);
      expect(body.sample.payload.frequencyHz).toBe(50);

      // The read-only variant runs the saved config.
      const ro = await get(`/dsp/2/raw-data/${ids.idle}/slice/run/readonly?sliceStart=75`);
      expect(ro.status).toBe(200);
      expect(asFloat32(ro.body.features as number[])).toEqual(row(3));
    }, 90_000);

    it('applies overrides to this run only, and saves them with store=true', async () => {
      const config = async () => ((await get('/dsp/2')).body.config as { items: { param: string; value: string }[] }[]).flatMap((g) => g.items).find((i) => i.param === 'fft-length')?.value;
      const before = await config();
      expect(before).toBe('16');
      const base = (await slice(ids.idle!, 'sliceStart=0')).body.features as number[];
      const overridden = await slice(ids.idle!, 'sliceStart=0', { params: { 'fft-length': '64', 'scale-axes': null }, store: false });
      expect(overridden.status, JSON.stringify(overridden.body)).toBe(200);
      expect((overridden.body.features as number[]).length).toBeGreaterThan(base.length);
      expect(await config()).toBe('16');
      const stored = await slice(ids.idle!, 'sliceStart=0', { params: { 'fft-length': '64' }, store: true });
      expect(stored.status).toBe(200);
      expect(await config()).toBe('64');
      expect((await slice(ids.idle!, 'sliceStart=0')).body.features).toEqual(overridden.body.features);
    });

    it('refuses a bad slice or parameters with a 400 naming the problem, and an unknown sample or block with a 404, appending nothing', async () => {
      const head = async () => (await service.stores.events.readStream(impulsesStream(projectId))).length;
      const before = await head();
      const cases: [number, string, unknown, RegExp][] = [
        [ids.idle!, 'sliceStart=151', undefined, /"sliceStart": the window 151-201 runs past the end of the sample \(200 values; a window of this impulse \(500 ms at 100 Hz\) is 50 values\)/],
        [ids.idle!, 'sliceStart=200', undefined, /"sliceStart": 200 is beyond the sample's 200 values/],
        [ids.idle!, 'sliceStart=10&sliceEnd=70', undefined, /"sliceEnd": the slice 10-70 holds 60 values; a window of this impulse \(500 ms at 100 Hz\) is 50 values/],
        [ids.idle!, 'sliceStart=10&sliceEnd=5', undefined, /"sliceEnd" \(5\) must be after "sliceStart" \(10\)/],
        [ids.idle!, 'sliceStart=1.5', undefined, /sliceStart/],
        [ids.idle!, 'sliceStart=-1', undefined, /sliceStart/],
        [ids.idle!, 'sliceEnd=50', undefined, /sliceStart/],
        [ids['wave.50hz']!, 'sliceStart=0&sliceEnd=50', undefined, /a window of this impulse \(500 ms at 50 Hz\) is 25 values/],
        [ids.short!, 'sliceStart=0', undefined, /the sample is shorter than one window \(20 values; .*\) and zero padding is off/],
        [ids.idle!, 'sliceStart=0', { params: { 'fft-length': '100' }, store: true }, /"fft-length": must be a power of 2/],
        [ids.idle!, 'sliceStart=0', { params: { 'no-such': '1' }, store: false }, /"no-such": unknown parameter/],
        [ids.idle!, 'sliceStart=0', { params: [], store: false }, /params/],
        [ids.idle!, 'sliceStart=0', { params: {}, store: 'yes' }, /store/],
      ];
      for (const [sampleId, query, body, error] of cases) {
        const res = await slice(sampleId, query, body ?? { params: {}, store: false });
        expect(res.status, `${query} ${JSON.stringify(res.body)}`).toBe(400);
        expect(String(res.body.error)).toMatch(error);
      }
      expect((await slice(999_999, 'sliceStart=0')).status).toBe(404);
      expect((await post(`/dsp/77/raw-data/${ids.idle}/slice/run?sliceStart=0`, { params: {}, store: false })).status).toBe(404);
      // A sample of another project is not found through this one.
      const other = await call(service, 'POST', '/api/projects/create', { headers: ada, body: { projectName: 'Other' } });
      const otherId = Number(other.body.id);
      expect((await call(service, 'POST', `/api/${otherId}/impulse`, { headers: ada, body: impulse() })).status).toBe(200);
      const res = await call(service, 'POST', `/api/${otherId}/dsp/2/raw-data/${ids.idle}/slice/run?sliceStart=0`, { headers: ada, body: { params: {}, store: false } });
      expect(res.status).toBe(404);
      expect(String(res.body.error)).toMatch(/Sample \d+ not found/);
      expect(await head()).toBe(before);
    });

    it("gives a short sample's zero-padded window when the input block pads", async () => {
      expect((await post('/impulse', impulse(true))).status).toBe(200);
      const r = await slice(ids.short!, 'sliceStart=0');
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect((r.body as unknown as SliceResponse).sample.payload.values).toHaveLength(20);
      expect((await slice(ids.short!, 'sliceStart=0&sliceEnd=20')).status).toBe(200);
      expect(String((await slice(ids.short!, 'sliceStart=5')).body.error)).toMatch(/its one zero-padded window starts at 0/);
    });
  });
}

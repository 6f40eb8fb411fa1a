import { afterAll, beforeAll, expect, it } from 'vitest';
import { processingBlocks } from '../../domain/dsp/blocks';
import { dspFeaturesStream, type DspFeaturesGenerated } from '../../domain/dsp/dspFeaturesEvents';
import type { DspMetadata } from '../../domain/dsp/dspMetadata';
import { decodeNpy } from '../../domain/dsp/npy';
import { classifierBlock, motionInputBlock, motionRows, projectWithFeatures, spectralBlock, type ProjectWithFeatures } from '../support/projectWithFeatures';
import { describeOn, setups, blobBytes } from '../support/testService';

// 100 Hz samples (interval 10 ms), windows of 500 ms (50 rows) every 250 ms: a 200-row sample gives 7.
const impulse = (inputType: 'time-series' | 'image' = 'time-series') => ({
  name: 'Motion',
  inputBlocks: [inputType === 'image' ? { id: 1, type: 'image', name: 'Image', title: 'Image data', imageWidth: 32, imageHeight: 32 } : motionInputBlock],
  dspBlocks: [inputType === 'image' ? { id: 2, type: 'image', name: 'Image', title: 'Image', axes: ['image'], input: 1, implementationVersion: 1 } : spectralBlock],
  learnBlocks: [classifierBlock],
});
/** A two-axis signal: `idle` is a slow sine, `wave` a fast one, each with its own phase. */
const rows = motionRows;

for (const setup of setups) {
  describeOn(setup, 'generate-features over HTTP, run by the job worker', () => {
    let p: ProjectWithFeatures;
    const post = (path: string, body: unknown) => p.post(path, body);
    const get = (path: string) => p.get(path);
    const jobCount = () => p.jobCount();
    const ingest = async (category: 'training' | 'testing', label: string, values: number[][], name: string) => {
      await p.ingestRows(category, label, values, `${name}.json`);
    };
    const finished = (jobId: number) => p.finished(jobId, 60_000);
    const results = async () => (await p.service.stores.events.readStream(dspFeaturesStream(p.projectId, 2))).map((e) => e as unknown as DspFeaturesGenerated);
    const blob = (sha256: string) => blobBytes(p.service, sha256);

    beforeAll(async () => {
      p = await projectWithFeatures({ mongo: setup.mongo, name: 'Features', impulse: null });
    });
    afterAll(async () => {
      await p?.service.destroy();
    });

    it('refuses with a 400 naming the problem and requests no job: no impulse, unknown block, no training data, an input it cannot handle, bad parameters', async () => {
      const refused = async (body: unknown, error: RegExp) => {
        const res = await post('/jobs/generate-features', body);
        expect(res.status, JSON.stringify(res.body)).toBe(400);
        expect(String(res.body.error)).toMatch(error);
      };
      await refused({ dspId: 2 }, /no impulse/);
      const made = await post('/impulse', impulse('image'));
      expect(made.status).toBe(200);
      await refused({ dspId: 2 }, /no training data/);
      await ingest('training', 'idle', rows('idle', 0), 'idle.1');
      // A features input block (tabular data) is not something the job windows.
      const tabular = { ...impulse(), inputBlocks: [{ id: 1, type: 'features', name: 'Features', title: 'Features' }], dspBlocks: [{ id: 2, type: 'raw', name: 'Raw', title: 'Raw data', axes: ['accX'], input: 1, implementationVersion: 1 }] };
      expect((await post(`/impulse?impulseId=${made.body.id}`, tabular)).status).toBe(200);
      await refused({ dspId: 2 }, /input block 1 is of type "features": this service generates features for time-series and image impulses/);
      expect((await post(`/impulse?impulseId=${made.body.id}`, impulse())).status).toBe(200);
      await refused({ dspId: 9 }, /"dspId": no DSP block 9/);
      await refused({ dspId: 2, normalizeData: 'zscore' }, /normalizeData/);
      await refused({}, /dspId/);
      expect(await jobCount()).toBe(0);
    });

    it('generates X, y and metadata for training and testing, skipping an unusable sample with a log line, and the row of a window is the block run on it', async () => {
      await ingest('training', 'idle', rows('idle', 1), 'idle.2');
      await ingest('training', 'wave', rows('wave', 0), 'wave.1');
      await ingest('training', 'wave', rows('wave', 2, 20), 'wave.short');
      await ingest('testing', 'wave', rows('wave', 3), 'wave.test');
      const res = await post('/jobs/generate-features', { dspId: 2, skipFeatureExplorer: true });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const jobId = Number(res.body.id);
      const job = await finished(jobId);
      const stdout = await p.stdout(jobId);
      expect(job.finishedSuccessful, stdout).toBe(true);
      expect(stdout).toMatch(/Skipped sample \d+ \("wave\.short\.json"\) is shorter than one window \(20 rows at 100 Hz, a window is 50\)/);
      expect(stdout).toMatch(/Processed 28\/28 windows/);

      const [result] = await results();
      const d = result!.data;
      expect(d).toMatchObject({ projectId: p.projectId, dspId: 2, jobId, classes: ['idle', 'wave'], windowCount: 28, categories: { training: { windowCount: 21 }, testing: { windowCount: 7 } }, scaler: null });
      expect(d.skippedSampleIds).toHaveLength(1);
      const xTrain = decodeNpy(await blob(d.categories.training.x));
      const yTrain = decodeNpy(await blob(d.categories.training.y));
      const yTest = decodeNpy(await blob(d.categories.testing.y));
      expect(xTrain.shape).toEqual([21, d.featureCount]);
      expect(yTrain.shape).toEqual([21]);
      // Samples in id order: idle.1, idle.2, wave.1 (wave.short skipped); y is 1-based into classes.
      expect(Array.from(yTrain.data)).toEqual([...Array(14).fill(1), ...Array(7).fill(2)]);
      expect(Array.from(yTest.data)).toEqual(Array(7).fill(2));
      const metadata = JSON.parse((await blob(d.metadata)).toString('utf8')) as DspMetadata;
      expect(metadata).toMatchObject({ labels: ['idle', 'wave'], featureCount: d.featureCount, windowCount: 28, frequency: 100, windowSizeMs: 500 });
      expect(metadata.includedSamples.map((s) => s.windowCount)).toEqual([7, 7, 7, 7]);

      // Window 1 of idle.1 (rows 25..74) through the block directly, with the saved (default) config.
      const block = processingBlocks.get('spectral-analysis')!;
      const window = rows('idle', 0).slice(25, 75).flat();
      const direct = block.run({ values: window, axes: ['accX', 'accY'], frequency: 100 }, d.dspConfig, { implementationVersion: 4, drawGraphs: false });
      const row = Array.from(xTrain.data.subarray(d.featureCount, 2 * d.featureCount));
      // X is float32: the direct run's features rounded to float32, exactly.
      expect(row).toEqual(Array.from(Float32Array.from(direct.features)));
    });

    it('serves the features: DSPInfo, X and y as .npy, feature labels, metadata; none before generation or after a clear', async () => {
      const [first] = await results();
      const d = first!.data;
      const info = await get('/dsp/2');
      expect(info.body.dsp).toMatchObject({ classes: ['idle', 'wave'], expectedWindowCount: 28, normalizeData: 'none', features: { generated: true, count: d.featureCount, classes: ['idle', 'wave'] } });
      const labels = (await get('/dsp/2/features/labels')).body.labels as string[];
      expect(labels).toHaveLength(d.featureCount);
      expect(labels[0]).toMatch(/^accX /);
      expect((info.body.dsp as { features: { labels: string[] } }).features.labels).toEqual(labels);

      const x = await fetch(`${p.service.apiUrl}/v1/api/${p.projectId}/dsp-data/2/x/training`, { headers: p.ada });
      expect(x.status, x.status === 200 ? "" : await x.text()).toBe(200);
      expect(x.headers.get('content-type')).toBe('application/octet-stream');
      const bytes = Buffer.from(await x.arrayBuffer());
      expect(bytes.equals(await blob(d.categories.training.x))).toBe(true);
      expect(decodeNpy(bytes).shape).toEqual([21, d.featureCount]);
      const y = await fetch(`${p.service.apiUrl}/v1/api/${p.projectId}/dsp-data/2/y/testing`, { headers: p.ada });
      expect(Array.from(decodeNpy(Buffer.from(await y.arrayBuffer())).data)).toEqual(Array(7).fill(2));

      const meta = (await get('/dsp/2/metadata?category=testing')).body;
      expect(meta).toMatchObject({ generated: true, labels: ['idle', 'wave'], featureCount: d.featureCount, windowCount: 28, outputConfig: { type: 'flat' } });
      expect((meta.includedSamples as unknown[]).length).toBe(1);
      expect(((await get('/dsp/2/metadata?excludeIncludedSamples=true')).body.includedSamples as unknown[]).length).toBe(0);

      // That run skipped the explorer and did not ask for importance.
      expect((await get('/dsp/2/features/get-graph/training')).status).toBe(404);
      expect((await get('/dsp/2/features/importance')).body).toEqual({ success: true, hasFeatureImportance: false, labels: {} });
      expect((await get('/dsp-data/2/x/validation')).status).toBe(400);
      // raw=true: the windows as the block got them, accX and accY interleaved by row, float32.
      const raw = await fetch(`${p.service.apiUrl}/v1/api/${p.projectId}/dsp-data/2/x/training?raw=true`, { headers: p.ada });
      expect(raw.status).toBe(200);
      const rawBytes = Buffer.from(await raw.arrayBuffer());
      expect(rawBytes.equals(await blob(d.categories.training.raw!))).toBe(true);
      const windows = decodeNpy(rawBytes);
      expect(windows.shape).toEqual([21, 100]);
      // Window 1 of idle.1 is its rows 25..74; window 0 of wave.1 (after idle.1 and idle.2's 14) its rows 0..49.
      expect(Array.from(windows.data.subarray(100, 200))).toEqual(Array.from(Float32Array.from(rows('idle', 0).slice(25, 75).flat())));
      expect(Array.from(windows.data.subarray(1400, 1500))).toEqual(Array.from(Float32Array.from(rows('wave', 0).slice(0, 50).flat())));
      expect(decodeNpy(Buffer.from(await (await fetch(`${p.service.apiUrl}/v1/api/${p.projectId}/dsp-data/2/x/testing?raw=true`, { headers: p.ada })).arrayBuffer())).shape).toEqual([7, 100]);
      expect((await get('/dsp-data/2/x/training?raw=maybe')).status).toBe(400);
      expect((await get('/dsp-data/7/x/training')).status).toBe(404);
    });

    it('normalize-channel-standard-scaler: a later run supersedes, with the scaler recorded and training columns centred', async () => {
      const res = await post('/jobs/generate-features', { dspId: 2, skipFeatureExplorer: true, normalizeData: 'normalize-channel-standard-scaler' });
      expect(res.status).toBe(200);
      expect((await finished(Number(res.body.id))).finishedSuccessful).toBe(true);
      const all = await results();
      expect(all).toHaveLength(2);
      const d = all[1]!.data;
      expect(d.scaler?.mean).toHaveLength(d.featureCount);
      const x = decodeNpy(await blob(d.categories.training.x));
      for (let j = 0; j < d.featureCount; j++) {
        let sum = 0;
        for (let i = 0; i < 21; i++) sum += x.data[i * d.featureCount + j]!;
        expect(Math.abs(sum / 21)).toBeLessThan(1e-4);
      }
      expect((await get('/dsp/2')).body.dsp).toMatchObject({ normalizeData: 'normalize-channel-standard-scaler', features: { generated: true } });
      // Clearing the block drops its features from the read side.
      expect((await post('/dsp/2/clear', {})).status).toBe(200);
      expect((await get('/dsp/2')).body.dsp).toMatchObject({ features: { generated: false } });
      expect((await get('/dsp/2/features/labels')).status).toBe(404);
    });

    it('builds the feature explorer (seeded UMAP: a rerun draws the same picture) and the feature importance when asked', async () => {
      const graphs: unknown[] = [];
      for (let run = 0; run < 2; run++) {
        const res = await post('/jobs/generate-features', { dspId: 2, calculateFeatureImportance: true });
        expect(res.status).toBe(200);
        const job = await finished(Number(res.body.id));
        expect(job.finishedSuccessful).toBe(true);
        const graph = (await get('/dsp/2/features/get-graph/training?featureAx1=0&featureAx2=1&featureAx3=2')).body;
        expect(graph).toMatchObject({ success: true, totalSampleCount: 21, skipFirstFeatures: 2 });
        const data = graph.data as { X: Record<string, number>; y: number; yLabel: string; sample: { id: number; startMs: number; endMs: number } }[];
        expect(data).toHaveLength(21);
        expect(Object.keys(data[0]!.X).sort()).toEqual(['0', '1', '2', '3', '4']);
        expect(data[0]).toMatchObject({ y: 1, yLabel: 'idle', sample: { startMs: 0, endMs: 500 } });
        graphs.push(data.map((d) => [d.X['0'], d.X['1']]));
      }
      expect(graphs[1]).toEqual(graphs[0]);
      expect(((await get('/dsp/2/features/get-graph/testing')).body.data as unknown[]).length).toBe(7);

      const importance = (await get('/dsp/2/features/importance')).body as { hasFeatureImportance: boolean; labels: Record<string, { features: { axis: string; importance: number }[] }> };
      expect(importance.hasFeatureImportance).toBe(true);
      expect(Object.keys(importance.labels).sort()).toEqual(['idle', 'wave']);
      for (const { features } of Object.values(importance.labels)) {
        const total = features.reduce((sum, f) => sum + f.importance, 0);
        expect(total).toBeCloseTo(1, 6);
        expect(features[0]!.axis).toMatch(/^acc[XY] /);
      }
    }, 60_000);

    it('refuses a saved config the changed impulse makes invalid, naming the parameter, and requests no job', async () => {
      // A low-pass at 40 Hz is fine at 100 Hz; at 62.5 Hz it is above Nyquist.
      expect((await post('/dsp/2', { config: { 'filter-type': 'low', 'filter-cutoff': '40', 'filter-order': '2' } })).status).toBe(200);
      const slower = impulse();
      slower.inputBlocks[0] = { ...slower.inputBlocks[0]!, frequencyHz: 62.5 } as (typeof slower.inputBlocks)[number];
      expect((await post('/impulse', slower)).status).toBe(200);
      const before = await jobCount();
      const res = await post('/jobs/generate-features', { dspId: 2 });
      expect(res.status).toBe(400);
      expect(String(res.body.error)).toMatch(/"filter-cutoff": cut-off frequency is above Nyquist/);
      expect(await jobCount()).toBe(before);
    });
  });
}

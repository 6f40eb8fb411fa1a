import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { decodeNpy } from '../../domain/dsp/npy';
import { sdkProjectForSuite, sineRows } from '../support/projectWithFeatures';

// The official SDK, unmodified: build an impulse, ingest (the ingestion API, as a device does),
// generate features with JobsApi.generateFeaturesJob, follow the job with runJobUntilCompletion
// (websocket and status polling), read DSPInfo and the artifacts; run the block on one window, given
// and as a slice of a stored sample.
describe('feature generation through the official SDK', () => {
  const project = sdkProjectForSuite('Features through the SDK');
  const signal = (f: number, n: number) => sineRows(f, n);

  it('generates features, follows the job to its end and reads DSPInfo, X, y, labels and metadata', async () => {
    const { api, projectId, ingest } = project();
    await api.impulse.createImpulse(projectId, {
      name: 'Motion',
      inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY'], windowSizeMs: 1000, windowIncreaseMs: 500, frequencyHz: 100 }],
      dspBlocks: [{ id: 2, type: 'flatten', name: 'Flatten', title: 'Flatten', axes: ['accX', 'accY'], input: 1, implementationVersion: 1 }],
      learnBlocks: [{ id: 3, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [2] }],
    } as Parameters<typeof api.impulse.createImpulse>[1]);
    await ingest('training', 'idle', signal(1, 300));
    await ingest('training', 'wave', signal(7, 300));
    await ingest('testing', 'wave', signal(7, 200));

    const { id: jobId } = await api.jobs.generateFeaturesJob(projectId, { dspId: 2, skipFeatureExplorer: true });
    const output: string[] = [];
    await api.runJobUntilCompletion({ type: 'project', projectId, jobId }, (line) => output.push(line));
    expect(output.join('')).toMatch(/Processed 13\/13 windows/);

    // The result is recorded before the job ends; the read model may take a moment more.
    let info = await api.dsp.getDspConfig(projectId, 2);
    for (let i = 0; i < 50 && !info.dsp.features.generated; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      info = await api.dsp.getDspConfig(projectId, 2);
    }
    // 300 rows give 5 windows of 100 rows every 50, 200 rows give 3.
    expect(info.dsp).toMatchObject({ classes: ['idle', 'wave'], expectedWindowCount: 13, features: { generated: true, classes: ['idle', 'wave'] } });
    const featureCount = info.dsp.features.count!;
    expect(featureCount).toBeGreaterThan(0);

    const x = decodeNpy(await api.dsp.downloadDspData(projectId, 2, 'training'));
    expect(x.shape).toEqual([10, featureCount]);
    const y = decodeNpy(await api.dsp.downloadDspLabels(projectId, 2, 'training'));
    expect(Array.from(y.data)).toEqual([1, 1, 1, 1, 1, 2, 2, 2, 2, 2]);
    expect((await api.dsp.getDspFeatureLabels(projectId, 2)).labels).toHaveLength(featureCount);
    const metadata = await api.dsp.getDspMetadata(projectId, 2);
    expect(metadata).toMatchObject({ generated: true, windowCount: 13, featureCount, labels: ['idle', 'wave'] });
    expect(metadata.created).toBeInstanceOf(Date);

    // The first training window through runDspOnFeaturesArray gives X's first row (float32).
    const window = signal(1, 100).flat();
    const run = await api.dsp.runDspOnFeaturesArray(projectId, 2, { features: window, params: {}, drawGraphs: false, requestPerformance: false });
    expect(Array.from(Float32Array.from(run.features))).toEqual(Array.from(x.data.subarray(0, featureCount)));

    // The second window of the wave sample (training row 5 + 1), by its stored rows, through
    // runDspSampleSlice; sliceEnd left out gives one window.
    const { samples } = await api.rawData.listSamples(projectId, { category: 'training' });
    const wave = samples.find((s) => s.label === 'wave')!;
    const slice = await api.dsp.runDspSampleSlice(projectId, 2, wave.id, { params: {}, store: false }, { sliceStart: 50 });
    expect(Array.from(Float32Array.from(slice.features))).toEqual(Array.from(x.data.subarray(6 * featureCount, 7 * featureCount)));
    expect(slice.labelForWindow).toBe('wave');
    expect(slice.sample.sample.id).toBe(wave.id);
    expect(slice.sample.payload.values).toHaveLength(100);
    const readonly = await api.dsp.runDspSampleSliceReadOnly(projectId, 2, wave.id, { sliceStart: 50, sliceEnd: 150 });
    expect(readonly.features).toEqual(slice.features);
    await expect(api.dsp.runDspSampleSlice(projectId, 2, wave.id, { params: {}, store: false }, { sliceStart: 250 })).rejects.toThrow(/"sliceStart": the window 250-350 runs past the end of the sample/);
  }, 90_000);

  it("answers an MFE block's graphs through runDspOnFeaturesArray when asked: PNG images the size of its output", async () => {
    const { api } = project();
    const { id } = await api.projects.createProject({ projectName: 'Audio graphs through the SDK' });
    await api.impulse.createImpulse(id, {
      name: 'Keywords',
      inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['audio'], windowSizeMs: 1000, windowIncreaseMs: 500, frequencyHz: 16000 }],
      dspBlocks: [{ id: 2, type: 'mfe', name: 'MFE', title: 'Audio (MFE)', axes: ['audio'], input: 1, implementationVersion: 4 }],
      learnBlocks: [{ id: 3, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [2] }],
    } as Parameters<typeof api.impulse.createImpulse>[1]);
    const window = Array.from({ length: 16000 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 1000 * i) / 16000)));
    const run = await api.dsp.runDspOnFeaturesArray(id, 2, { features: window, params: {}, drawGraphs: true, requestPerformance: false });
    expect(run.features).toHaveLength(99 * 40);
    expect(run.graphs.map((g) => [g.name, g.type, g.imageMimeType])).toEqual([
      ['Mel Energies (DSP Output)', 'image', 'image/png'],
      ['FFT Bin Weighting', 'image', 'image/png'],
    ]);
    const sizes = run.graphs.map((g) => PNG.sync.read(Buffer.from(g.image!, 'base64'))).map((png) => [png.width, png.height]);
    expect(sizes).toEqual([
      [99, 40],
      [129, 40],
    ]);
    const plain = await api.dsp.runDspOnFeaturesArray(id, 2, { features: window, params: {}, drawGraphs: false, requestPerformance: false });
    expect(plain.graphs).toEqual([]);
  }, 30_000);
});

import { PNG } from 'pngjs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { mfeBlock } from '../../domain/dsp/mfe';
import { wav } from '../support/mediaFiles';
import { readModelsCaughtUp } from '../support/readModels';
import { adaWithProject, call, describeOn, setups, startTestService, type TestService } from '../support/testService';

// A keyword-spotting impulse: 1 s windows of 16 kHz audio every 500 ms into an MFE block (defaults:
// 99 frames of 40 filters over 129 FFT bins).
const impulse = {
  name: 'Keywords',
  inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['audio'], windowSizeMs: 1000, windowIncreaseMs: 500, frequencyHz: 16000 }],
  dspBlocks: [{ id: 2, type: 'mfe', name: 'MFE', title: 'Audio (MFE)', axes: ['audio'], input: 1, implementationVersion: 4 }],
  learnBlocks: [{ id: 3, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [2] }],
};
// Two tones, one rising: int16 values as a WAV holds them.
const audio = (length: number) =>
  Array.from({ length }, (_, i) => {
    const t = i / 16000;
    return Math.round(8000 * Math.sin(2 * Math.PI * 1000 * t) + 2000 * Math.sin(2 * Math.PI * 3000 * t * (1 + t)));
  });

interface Graph {
  name: string;
  type: string;
  image?: string;
  imageMimeType?: string;
}

const size = (g: Graph) => {
  const png = PNG.sync.read(Buffer.from(g.image!, 'base64'));
  return [png.width, png.height];
};

for (const setup of setups) {
  describeOn(setup, "an MFE block's graphs over HTTP (dsp/{dspId}/run and the slice run)", () => {
    let service: TestService;
    let ada: Record<string, string>;
    let projectId: number;
    let apiKey: string;
    const post = (path: string, body: unknown) => call(service, 'POST', `/api/${projectId}${path}`, { headers: ada, body });

    beforeAll(async () => {
      service = await startTestService({ mongo: setup.mongo });
      ({ ada, projectId, apiKey } = await adaWithProject(service, 'Audio graphs'));
      expect((await post('/impulse', impulse)).status).toBe(200);
    });
    afterAll(async () => {
      await service?.destroy();
    });

    it('answers the mel energies and the FFT bin weighting as PNG images when asked, and no graphs otherwise', async () => {
      const window = audio(16000);
      let res = await post('/dsp/2/run', { features: window, params: {}, drawGraphs: true });
      expect(res.status, JSON.stringify(res.body).slice(0, 200)).toBe(200);
      const graphs = res.body.graphs as Graph[];
      expect(graphs.map(({ name, type, imageMimeType }) => ({ name, type, imageMimeType }))).toEqual([
        { name: 'Mel Energies (DSP Output)', type: 'image', imageMimeType: 'image/png' },
        { name: 'FFT Bin Weighting', type: 'image', imageMimeType: 'image/png' },
      ]);
      expect(graphs.map(size)).toEqual([
        [99, 40],
        [129, 40],
      ]);
      // The pool thread draws what the block draws in this process.
      const direct = mfeBlock.run({ values: window, axes: ['audio'], frequency: 16000 }, {}, { implementationVersion: 4, drawGraphs: true });
      expect(graphs).toEqual(direct.graphs);

      res = await post('/dsp/2/run', { features: window, params: { num_filters: 32 }, drawGraphs: true });
      expect(res.status).toBe(200);
      expect((res.body.graphs as Graph[]).map(size)).toEqual([
        [99, 32],
        [129, 32],
      ]);

      res = await post('/dsp/2/run', { features: window, params: {}, drawGraphs: false });
      expect(res.status).toBe(200);
      expect(res.body.graphs).toEqual([]);
      expect(res.body.features).toHaveLength(99 * 40);
    });

    it('draws the same graphs for a slice of a stored WAV sample as for its window run directly', async () => {
      const values = audio(24000);
      const form = new FormData();
      form.append('data', new Blob([wav({ sampleRate: 16000, frames: values.map((v) => [v]) })], { type: 'audio/wav' }), 'yes.01.wav');
      const upload = await fetch(`${service.ingestionUrl}/api/training/files`, { method: 'POST', headers: { 'x-api-key': apiKey }, body: form });
      expect(upload.status, await upload.text()).toBe(200);
      await readModelsCaughtUp(service);
      const samples = (await call(service, 'GET', `/api/${projectId}/raw-data?category=training`, { headers: ada })).body.samples as { id: number }[];
      expect(samples).toHaveLength(1);

      const slice = await post(`/dsp/2/raw-data/${samples[0]!.id}/slice/run?sliceStart=8000`, { params: {}, store: false });
      expect(slice.status, JSON.stringify(slice.body).slice(0, 200)).toBe(200);
      const run = await post('/dsp/2/run', { features: values.slice(8000, 24000), params: {}, drawGraphs: true });
      expect((slice.body.graphs as Graph[]).map((g) => g.name)).toEqual(['Mel Energies (DSP Output)', 'FFT Bin Weighting']);
      expect(slice.body.graphs).toEqual(run.body.graphs);
    });
  });
}

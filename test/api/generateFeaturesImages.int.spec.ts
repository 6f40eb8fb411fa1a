import sharp from 'sharp';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readModelsCaughtUp } from '../support/readModels';
import { dspFeaturesStream, type DspFeaturesGenerated } from '../../domain/dsp/dspFeaturesEvents';
import type { DspMetadata } from '../../domain/dsp/dspMetadata';
import { decodeNpy } from '../../domain/dsp/npy';
import { projectWithFeatures, type ProjectWithFeatures } from '../support/projectWithFeatures';
import { describeOn, setups, blobBytes } from '../support/testService';

type Rgb = [number, number, number];

/** A PNG whose pixel (x, y) has the colour `colour(x, y)`. */
async function pngOf(width: number, height: number, colour: (x: number, y: number) => Rgb): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) raw.set(colour(x, y), 3 * (y * width + x));
  return sharp(raw, { raw: { width, height, channels: 3 } }).png().toBuffer();
}
/** Blocks of 2×2 pixels whose colour codes the block: red = 40 × bx + 10, green = 40 × by + 20, blue = 200. */
const blockColour = (x: number, y: number): Rgb => [40 * Math.floor(x / 2) + 10, 40 * Math.floor(y / 2) + 20, 200];

// The image block's features (dsp-reference 4): RGB is R/255, G/255, B/255 per pixel, row-major;
// Grayscale the unrounded ITU-R 601-2 luma.
const rgbFeatures = (pixels: Rgb[]) => pixels.flatMap(([r, g, b]) => [r / 255, g / 255, b / 255]);
const greyFeatures = (pixels: Rgb[]) => pixels.map(([r, g, b]) => (0.299 / 255) * r + (0.587 / 255) * g + (0.114 / 255) * b);
const f32 = (values: number[]) => Array.from(Float32Array.from(values));

const impulse = (input: Record<string, unknown>) => ({
  name: 'Vision',
  inputBlocks: [{ id: 1, type: 'image', name: 'Image', title: 'Image data', imageWidth: 4, imageHeight: 4, resizeMethod: 'nearest', ...input }],
  dspBlocks: [{ id: 2, type: 'image', name: 'Image', title: 'Image', axes: ['image'], input: 1, implementationVersion: 1 }],
  learnBlocks: [{ id: 3, type: 'keras-transfer-image', name: 'Transfer learning', title: 'Transfer Learning (Images)', dsp: [2] }],
});

for (const setup of setups) {
  describeOn(setup, 'generate-features for image impulses, run by the job worker', () => {
    let p: ProjectWithFeatures;
    const post = (path: string, body: unknown) => p.post(path, body);
    const get = (path: string) => p.get(path);
    const upload = async (category: 'training' | 'testing', label: string, name: string, bytes: Buffer, type = 'image/png') => {
      const form = new FormData();
      form.append('data', new Blob([new Uint8Array(bytes)], { type }), name);
      const res = await fetch(`${p.service.ingestionUrl}/api/${category}/files`, { method: 'POST', headers: { 'x-api-key': p.apiKey, 'x-label': label }, body: form });
      expect(res.status, await res.text()).toBe(200);
    };
    const generate = async () => {
      const jobId = await p.runJob('/jobs/generate-features', { dspId: 2, skipFeatureExplorer: true });
      const events = (await p.service.stores.events.readStream(dspFeaturesStream(p.projectId, 2))).map((e) => e as unknown as DspFeaturesGenerated);
      return { result: events[events.length - 1]!.data, stdout: await p.stdout(jobId) };
    };
    const blob = (sha256: string) => blobBytes(p.service, sha256);

    beforeAll(async () => {
      p = await projectWithFeatures({ mongo: setup.mongo, name: 'Vision', impulse: impulse({}) });
      // Training: an 8×8 of 2×2 blocks (squashed with nearest to 4×4, one pixel per block), a solid
      // 5×3 (any resize of one colour is that colour), and a time series the job skips. Testing: an 8×4.
      await upload('training', 'blocks', 'blocks.png', await pngOf(8, 8, blockColour));
      await upload('training', 'solid', 'solid.png', await pngOf(5, 3, () => [255, 128, 0]));
      await p.ingestRows('training', 'solid', [[1, 2], [3, 4]], 'series.json');
      await upload('testing', 'blocks', 'wide.png', await pngOf(8, 4, blockColour));
      // Ingestion answers once the samples are durable; the job reads them from the read models.
      await readModelsCaughtUp(p.service);
    });
    afterAll(async () => {
      await p?.service.destroy();
    });

    it('generates one RGB row per image from the window the input block sizes, skipping a time-series sample with a log line', async () => {
      expect((await get('/dsp/2')).body.dsp).toMatchObject({ expectedWindowCount: 3, features: { generated: false } });
      const { result, stdout } = await generate();
      expect(stdout).toMatch(/Skipped sample \d+ \("series\.json"\): a time-series sample in an image impulse/);
      expect(result).toMatchObject({ classes: ['blocks', 'solid'], featureCount: 48, windowCount: 3, categories: { training: { windowCount: 2 }, testing: { windowCount: 1 } } });
      expect(result.skippedSampleIds).toHaveLength(1);

      const x = decodeNpy(await blob(result.categories.training.x));
      expect(x.shape).toEqual([2, 48]);
      const blocks: Rgb[] = [];
      for (let by = 0; by < 4; by++) for (let bx = 0; bx < 4; bx++) blocks.push(blockColour(2 * bx, 2 * by));
      expect(Array.from(x.data.subarray(0, 48))).toEqual(f32(rgbFeatures(blocks)));
      expect(Array.from(x.data.subarray(48, 96))).toEqual(f32(rgbFeatures(Array(16).fill([255, 128, 0]))));
      expect(Array.from(decodeNpy(await blob(result.categories.training.y)).data)).toEqual([1, 2]);

      // The raw windows are the pixels as the block got them, 0xRRGGBB.
      const raw = decodeNpy(await blob(result.categories.training.raw!));
      expect(raw.shape).toEqual([2, 16]);
      expect(Array.from(raw.data.subarray(0, 16))).toEqual(blocks.map(([r, g, b]) => (r << 16) | (g << 8) | b));

      const metadata = JSON.parse((await blob(result.metadata)).toString('utf8')) as DspMetadata;
      expect(metadata).toMatchObject({ outputConfig: { type: 'image', shape: { width: 4, height: 4, channels: 3, frames: 1 } }, windowSizeMs: 0, frequency: 0, featureCount: 48 });
      expect((await get('/dsp/2')).body.dsp).toMatchObject({ features: { generated: true, count: 48 } });
    });

    it('follows the resize mode and the image block\'s Grayscale channel', async () => {
      // fit-long: the 8×4 testing image becomes 4×2 centred in 4×4, black rows above and below.
      expect((await post('/impulse', impulse({ resizeMode: 'fit-long' }))).status).toBe(200);
      expect((await post('/dsp/2', { config: { channels: 'Grayscale' } })).status).toBe(200);
      const { result } = await generate();
      expect(result.featureCount).toBe(16);
      const x = decodeNpy(await blob(result.categories.testing.x));
      expect(x.shape).toEqual([1, 16]);
      const black: Rgb = [0, 0, 0];
      const expected: Rgb[] = [...Array(4).fill(black), ...[0, 1].flatMap((by) => [0, 1, 2, 3].map((bx) => blockColour(2 * bx, 2 * by))), ...Array(4).fill(black)];
      expect(Array.from(x.data)).toEqual(f32(greyFeatures(expected)));
    });

    it('answers the slice run of an image sample with the window the job makes, and refuses a time-series sample', async () => {
      const { result } = await generate();
      const x = decodeNpy(await blob(result.categories.training.x));
      const listed = (await get('/raw-data?category=training')).body.samples as { id: number; filename: string }[];
      const id = (name: string) => listed.find((s) => s.filename === name)!.id;
      const res = await post(`/dsp/2/raw-data/${id('blocks.png')}/slice/run?sliceStart=0`, { params: {}, store: false });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(f32(res.body.features as number[])).toEqual(Array.from(x.data.subarray(0, 16)));
      const refused = await post(`/dsp/2/raw-data/${id('series.json')}/slice/run?sliceStart=0`, { params: {}, store: false });
      expect(refused.status).toBe(400);
      expect(String(refused.body.error)).toMatch(/is a time series; the impulse's input block reads images/);
      const offset = await post(`/dsp/2/raw-data/${id('blocks.png')}/slice/run?sliceStart=3`, { params: {}, store: false });
      expect(offset.status).toBe(400);
      expect(String(offset.body.error)).toMatch(/"sliceStart": an image sample is one window, the whole image; its slice starts at 0, not 3/);
    });
  });
}

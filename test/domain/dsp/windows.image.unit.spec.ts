import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { InputBlock } from '../../../domain/impulse/impulseEvents';
import { imageWindow, imageWindowing, WindowingError, type ImageWindowing } from '../../../domain/dsp/windows';

/** A PNG whose pixel (x, y) has the colour `colour(x, y)`. */
async function pngOf(width: number, height: number, colour: (x: number, y: number) => [number, number, number]): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) raw.set(colour(x, y), 3 * (y * width + x));
  return sharp(raw, { raw: { width, height, channels: 3 } }).png().toBuffer();
}

const pack = ([r, g, b]: [number, number, number]) => (r << 16) | (g << 8) | b;
const RED: [number, number, number] = [255, 0, 0];
const BLUE: [number, number, number] = [0, 0, 255];
const BLACK = 0;
/** Position-coded colour: red = x × 10, green = y × 10. */
const coded = (x: number, y: number): [number, number, number] => [x * 10, y * 10, 7];

const settings = (over: Partial<ImageWindowing>): ImageWindowing => ({ width: 2, height: 2, resizeMode: 'squash', resizeMethod: 'nearest', cropAnchor: 'middle-center', ...over });

describe('imageWindowing', () => {
  it('reads the image input block, squash, lanczos3 and middle-center unless set', () => {
    const block: InputBlock = { id: 2, type: 'image', name: 'Image data', title: 'Image data', imageWidth: 96, imageHeight: 64, createdAt: '2026-01-01T00:00:00Z' };
    expect(imageWindowing(block)).toEqual({ width: 96, height: 64, resizeMode: 'squash', resizeMethod: 'lanczos3', cropAnchor: 'middle-center' });
    expect(imageWindowing({ ...block, resizeMode: 'fit-long', resizeMethod: 'nearest', cropAnchor: 'top-left' })).toMatchObject({ resizeMode: 'fit-long', resizeMethod: 'nearest', cropAnchor: 'top-left' });
    expect(() => imageWindowing({ ...block, imageWidth: undefined })).toThrow(WindowingError);
    expect(() => imageWindowing({ ...block, type: 'time-series' })).toThrow(/not image/);
  });
});

describe('imageWindow', () => {
  it('packs each pixel as 0xRRGGBB, row-major', async () => {
    const window = await imageWindow(await pngOf(2, 1, (x) => (x === 0 ? [255, 128, 0] : [0, 0, 255])), settings({ width: 2, height: 1 }));
    expect(Array.from(window.pixels)).toEqual([0xff8000, 0x0000ff]);
  });

  it('squashes to the exact size without keeping the aspect ratio', async () => {
    // 4×2, columns 0-1 red, 2-3 blue, to 2×2: one red and one blue column.
    const window = await imageWindow(await pngOf(4, 2, (x) => (x < 2 ? RED : BLUE)), settings({}));
    expect(Array.from(window.pixels)).toEqual([pack(RED), pack(BLUE), pack(RED), pack(BLUE)]);
  });

  it('fits the short side and crops the long one at the anchor with fit-short', async () => {
    const image = await pngOf(4, 2, (x) => (x < 2 ? RED : BLUE));
    expect(Array.from((await imageWindow(image, settings({ resizeMode: 'fit-short', cropAnchor: 'middle-left' }))).pixels)).toEqual(new Array(4).fill(pack(RED)));
    expect(Array.from((await imageWindow(image, settings({ resizeMode: 'fit-short', cropAnchor: 'middle-right' }))).pixels)).toEqual(new Array(4).fill(pack(BLUE)));
  });

  it('fits the long side and pads with black, centred, with fit-long', async () => {
    const window = await imageWindow(await pngOf(4, 2, () => RED), settings({ width: 4, height: 4, resizeMode: 'fit-long' }));
    const rows = [0, 1, 2, 3].map((y) => Array.from(window.pixels.subarray(4 * y, 4 * y + 4)));
    expect(rows).toEqual([new Array(4).fill(BLACK), new Array(4).fill(pack(RED)), new Array(4).fill(pack(RED)), new Array(4).fill(BLACK)]);
  });

  it('cuts the target size at the anchor without scaling with crop', async () => {
    const image = await pngOf(6, 6, coded);
    expect(Array.from((await imageWindow(image, settings({ resizeMode: 'crop', cropAnchor: 'top-left' }))).pixels)).toEqual([coded(0, 0), coded(1, 0), coded(0, 1), coded(1, 1)].map(pack));
    expect(Array.from((await imageWindow(image, settings({ resizeMode: 'crop', cropAnchor: 'bottom-right' }))).pixels)).toEqual([coded(4, 4), coded(5, 4), coded(4, 5), coded(5, 5)].map(pack));
    expect(Array.from((await imageWindow(image, settings({ resizeMode: 'crop', cropAnchor: 'middle-center' }))).pixels)).toEqual([coded(2, 2), coded(3, 2), coded(2, 3), coded(3, 3)].map(pack));
  });

  it('scales an image smaller than the target up before cropping it', async () => {
    const window = await imageWindow(await pngOf(1, 1, () => BLUE), settings({ width: 3, height: 2, resizeMode: 'crop' }));
    expect(Array.from(window.pixels)).toEqual(new Array(6).fill(pack(BLUE)));
  });

  it('resizes with lanczos3 to the requested size too', async () => {
    const window = await imageWindow(await pngOf(40, 30, coded), settings({ width: 8, height: 5, resizeMethod: 'lanczos3' }));
    expect(window.pixels.length).toBe(40);
    // Smooth input stays ordered: red grows along x.
    expect((window.pixels[7]! >> 16) & 255).toBeGreaterThan((window.pixels[0]! >> 16) & 255);
  });

  it('refuses bytes that are not an image, saying so', async () => {
    await expect(imageWindow(Buffer.from('not an image'), settings({}))).rejects.toThrow(/the image cannot be read/);
  });
});

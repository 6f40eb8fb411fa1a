import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { imageBlock } from '../../../domain/dsp/image';
import { DspConfigurationError } from '../../../domain/dsp/processingBlock';
import { expectMatchesReference, expectRefusal, v } from './expectReference';
import { loadFixture } from './referenceFixtures';

const fixture = loadFixture('image');

describe('the image block', () => {
  it('declares the info flags of dsp-reference 0.2', () => {
    expect(imageBlock).toMatchObject({ type: 'image', implementationVersions: [1], dimensionalityReduction: true, hasFeatureImportance: false, canNormalizeData: true });
  });

  describe.each(fixture.cases.map((c) => [c.name, c] as const))('on the reference case "%s" (width and height first, as the reference takes them)', (_, c) => {
    it('gives exactly the reference features', () => {
      expectMatchesReference(imageBlock, c, { atol: 0, rtol: 0 });
    });
  });

  it('reproduces the golden values of dsp-reference 4 from pixels with the size given apart', () => {
    const input = { values: [0xff8000, 0x0000ff], axes: ['image'], frequency: 0, image: { width: 2, height: 1, channels: 3 } };
    const rgb = Array.from(imageBlock.run(input, { channels: 'RGB' }, v(1)).features);
    [1, 0.50196, 0, 0, 0, 1].forEach((g, i) => expect(rgb[i]).toBeCloseTo(g, 5));
    const grey = imageBlock.run(input, { channels: 'Grayscale' }, v(1));
    expect(Array.from(grey.features)).toEqual([expect.closeTo(0.593651, 6), expect.closeTo(0.114, 12)]);
    expect(grey.outputConfig).toEqual({ type: 'image', shape: { width: 2, height: 1, channels: 1, frames: 1 } });
  });

  it('does not round grayscale to whole levels (unlike PIL convert("L"))', () => {
    const [grey] = imageBlock.run({ values: [0x010203], axes: ['image'], frequency: 0, image: { width: 1, height: 1, channels: 3 } }, { channels: 'Grayscale' }, v(1)).features;
    expect(grey! * 255).toBeCloseTo(0.299 * 1 + 0.587 * 2 + 0.114 * 3, 10);
  });

  it('refuses an unknown colour depth', () => {
    expectRefusal(() => imageBlock.run({ values: [1, 1, 0], axes: ['image'], frequency: 0 }, { channels: 'CMYK' }, v(1)), 'channels');
  });

  it('refuses a width or height that is not a positive integer', () => {
    expectRefusal(() => imageBlock.run({ values: [1.5, 1, 0], axes: ['image'], frequency: 0 }, {}, v(1)), 'width');
    expectRefusal(() => imageBlock.run({ values: [1, 0], axes: ['image'], frequency: 0 }, {}, v(1)), 'height');
  });

  it('refuses pixels that are not a whole number of frames', () => {
    expectRefusal(() => imageBlock.run({ values: [2, 2, 1, 2, 3], axes: ['image'], frequency: 0 }, {}, v(1)), 'values');
  });

  it('refuses an implementation version it does not reproduce', () => {
    expectRefusal(() => imageBlock.run({ values: [1, 1, 0], axes: ['image'], frequency: 0 }, {}, v(2)), 'implementation_version');
  });

  it('gives width × height × channels × frames values in [0, 1] for any pixels', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 3 }),
        fc.constantFrom('RGB', 'Grayscale'),
        fc.array(fc.double({ min: -1e9, max: 1e9, noNaN: true }), { minLength: 108, maxLength: 108 }),
        (width, height, frames, channels, pool) => {
          const values = pool.slice(0, width * height * frames);
          try {
            const result = imageBlock.run({ values, axes: ['image'], frequency: 0, image: { width, height, channels: 3 } }, { channels }, v(1));
            const depth = channels === 'RGB' ? 3 : 1;
            expect(result.features).toHaveLength(width * height * depth * frames);
            expect(result.outputConfig).toEqual({ type: 'image', shape: { width, height, channels: depth, frames } });
            expect(Array.from(result.features).every((x) => x >= 0 && x <= 1)).toBe(true);
          } catch (error) {
            expect(error).toBeInstanceOf(DspConfigurationError);
          }
        },
      ),
    );
  });
});

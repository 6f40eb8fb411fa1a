// The fast-check property the three audio blocks share: any int16-range window at a few
// sampling rates, with parameters inside the catalog's bounds, gives exactly the declared number of
// finite features, or is refused with a DspConfigurationError (never another error).
import fc from 'fast-check';
import { expect } from 'vitest';
import { DspConfigurationError, type DspParams, type ProcessingBlock } from '../../../domain/dsp/processingBlock';
import { framing } from '../../../domain/dsp/speech/frames';
import { declaredCount } from './expectReference';

export function expectDeclaredCountForAnyWindow(block: ProcessingBlock, params: fc.Arbitrary<DspParams>, heightOf: (p: DspParams) => number, defaultStride: number): void {
  // A generated pattern repeated to a window of any length up to 1 s: silence, constants, periodic
  // and noisy signals, at lengths from shorter than a frame to over 500 frames.
  const window = fc.record({
    frequency: fc.constantFrom(1000, 4000, 8000, 16000),
    // Unbiased: fast-check favours tiny numbers, which would make nearly every window too short.
    permille: fc.noBias(fc.integer({ min: 1, max: 1000 })),
    pattern: fc.array(fc.integer({ min: -32768, max: 32767 }), { minLength: 1, maxLength: 256 }),
  }).map(({ frequency, permille, pattern }) => {
    const length = Math.max(1, Math.round((permille / 1000) * frequency));
    return { frequency, values: Array.from({ length }, (_, i) => pattern[i % pattern.length]!) };
  });
  let computed = 0;
  fc.assert(
    fc.property(window, params, fc.constantFrom(...block.implementationVersions), ({ frequency, values }, p, version) => {
      try {
        const result = block.run({ values, axes: ['audio'], frequency }, p, { implementationVersion: version, drawGraphs: false });
        const frames = framing(version, values.length, frequency, Number(p.frame_length ?? 0.02), Number(p.frame_stride ?? defaultStride)).count;
        expect(result.features).toHaveLength(declaredCount(result));
        expect(result.features).toHaveLength(frames * heightOf(p));
        expect(Array.from(result.features).every(Number.isFinite)).toBe(true);
        computed++;
      } catch (error) {
        if (!(error instanceof DspConfigurationError)) throw error;
      }
    }),
    { numRuns: 60 },
  );
  // Refusals are allowed, but a property where every window is refused would check nothing.
  expect(computed).toBeGreaterThan(15);
}

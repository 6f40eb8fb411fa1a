// Assertions shared by the block specs: one fixture case against the block, and refusals that name
// their parameter.
import { expect } from 'vitest';
import { DspConfigurationError, type DspParams, type DspResult, type ProcessingBlock } from '../../../domain/dsp/processingBlock';
import { difference, inputOf, type Difference, type ReferenceCase } from './referenceFixtures';

export interface Tolerance {
  atol: number;
  rtol: number;
  /** Values allowed outside atol/rtol (MFE: float32 rounding at a quantisation boundary), as a fraction. */
  outsideFraction?: number;
  /** How far those few may be off. */
  outsideAtol?: number;
}

export function runCase(block: ProcessingBlock, c: ReferenceCase): DspResult {
  return block.run({ values: inputOf(c), axes: c.axes, frequency: c.frequency }, c.params, { implementationVersion: c.implementationVersion, drawGraphs: false });
}

export function expectMatchesReference(block: ProcessingBlock, c: ReferenceCase, tolerance: Tolerance): Difference | undefined {
  if (c.error) {
    expect(() => runCase(block, c)).toThrow(DspConfigurationError);
    return undefined;
  }
  const result = runCase(block, c);
  expect(result.outputConfig).toEqual(c.outputConfig);
  expect(result.fftUsed).toEqual(c.fftUsed);
  if (c.labels) expect(result.labels).toEqual(c.labels);
  const d = difference(result.features, c.features!, tolerance.atol, tolerance.rtol);
  const allowed = Math.floor((tolerance.outsideFraction ?? 0) * c.features!.length);
  expect(d.outside, `${d.outside} of ${c.features!.length} values outside atol ${tolerance.atol}, rtol ${tolerance.rtol} (max abs ${d.maxAbs})`).toBeLessThanOrEqual(allowed);
  if (allowed > 0) expect(d.maxAbs).toBeLessThanOrEqual(tolerance.outsideAtol ?? tolerance.atol);
  return d;
}

/** The block refuses with a DspConfigurationError whose message names `param` (as "param"). */
export function expectRefusal(run: () => unknown, param: string): void {
  let thrown: unknown;
  try {
    run();
  } catch (error) {
    thrown = error;
  }
  expect(thrown, `expected a refusal naming "${param}"`).toBeInstanceOf(DspConfigurationError);
  expect((thrown as Error).message).toContain(`"${param}"`);
}

export const v = (implementationVersion: number) => ({ implementationVersion, drawGraphs: false });

export function runBlock(block: ProcessingBlock, values: ArrayLike<number>, frequency: number, params: DspParams, version: number, axes: readonly string[] = ['audio']): DspResult {
  return block.run({ values, axes, frequency }, params, v(version));
}

/** The feature count the output shape declares. */
export function declaredCount(result: DspResult): number {
  const config = result.outputConfig;
  switch (config.type) {
    case 'flat':
      return config.shape.width;
    case 'spectrogram':
      return config.shape.width * config.shape.height;
    case 'image':
      return config.shape.width * config.shape.height * config.shape.channels * config.shape.frames;
  }
}

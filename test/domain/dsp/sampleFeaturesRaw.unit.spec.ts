import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dspTaskBlock, sampleFeatures, type SampleFeaturesInput } from '../../../commands/dsp/dspPoolTasks';
import { resolveImpulseDsp } from '../../../domain/dsp/impulseDsp';
import { timeSeriesWindowing } from '../../../domain/dsp/windows';
import type { InputBlock } from '../../../domain/impulse/impulseEvents';
import { signedSample } from '../../support/signedSample';

// 100 Hz, windows of 100 ms (10 rows) every 100 ms, flatten on accX and accY.
const inputBlock: InputBlock = { id: 1, type: 'time-series', name: 'Time series', title: 'Time series', windowSizeMs: 100, windowIncreaseMs: 100, frequencyHz: 100, createdAt: '2026-01-01T00:00:00Z' };
const dsp = resolveImpulseDsp(
  { inputBlocks: [inputBlock], dspBlocks: [{ id: 2, type: 'flatten', name: 'Flatten', title: 'Flatten', axes: ['accX', 'accY'], input: 1, implementationVersion: 1, createdAt: '2026-01-01T00:00:00Z' }], dspConfigs: {} },
  2,
);
const input = (values: number[][], rawPath: string): SampleFeaturesInput => ({
  dsp: dspTaskBlock(dsp),
  windowing: { type: 'time-series', windowing: timeSeriesWindowing(inputBlock) },
  sample: { id: 5, name: 'five', label: 'idle', frequency: 100, sensors: ['accX', 'accY'], valuesCount: values.length, structuredLabels: [] },
  contentType: 'application/json',
  bytes: Buffer.from(signedSample('none', values, { alg: 'none' })),
  rawPath,
});
const rowsOf = (n: number) => Array.from({ length: n }, (_, i) => [i, i === 0 ? 0 : -i / 2]);

describe('the raw windows a generate-features pool task appends', () => {
  let dir: string;
  let raw: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'raw-windows-'));
    raw = path.join(dir, 'raw.f32');
    await writeFile(raw, Buffer.from([1, 2, 3, 4]));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('appends each window as the block got it, float32, after what the file held', async () => {
    const result = await sampleFeatures(input(rowsOf(30), raw));
    expect(result).toMatchObject({ skipped: false, rawColumns: 20, labels: ['idle', 'idle', 'idle'] });
    const bytes = await readFile(raw);
    expect(Array.from(bytes.subarray(0, 4))).toEqual([1, 2, 3, 4]);
    const floats = new Float32Array(bytes.buffer.slice(bytes.byteOffset + 4, bytes.byteOffset + bytes.length));
    expect(Array.from(floats)).toEqual(rowsOf(30).flat());
  });

  it('leaves nothing of a sample the block refuses halfway, so rows stay aligned with X', async () => {
    const values = rowsOf(30);
    // The third window's values overflow flatten's float32 features: the sample is skipped.
    values[25] = [1e308, 1e308];
    values[26] = [1e308, 1e308];
    const result = await sampleFeatures(input(values, raw));
    expect(result).toMatchObject({ skipped: true, reason: expect.stringMatching(/sample 5 \("five"\): "features": the flatten block gave a value outside the float32 range/) });
    expect(Array.from(await readFile(raw))).toEqual([1, 2, 3, 4]);
  });
});

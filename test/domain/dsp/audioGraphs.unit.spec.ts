import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { coolwarmBytes, COOLWARM_SIZE } from '../../../domain/dsp/graphs/coolwarm';
import { heatmapPng } from '../../../domain/dsp/graphs/heatmapPng';
import { mfccBlock } from '../../../domain/dsp/mfcc';
import { mfeBlock } from '../../../domain/dsp/mfe';
import type { DspGraph, DspParams, ProcessingBlock } from '../../../domain/dsp/processingBlock';
import { spectrogramBlock } from '../../../domain/dsp/spectrogram';
import { melFilterbank } from '../../../domain/dsp/speech/melFilterbank';
import { oracleSkipReason, runOracle } from './numpyOracle';
import { goldenAudio } from './referenceFixtures';

const FS = 16000;
const audio = goldenAudio();

function run(block: ProcessingBlock, values: ArrayLike<number>, params: DspParams, drawGraphs: boolean, version = 4) {
  return block.run({ values, axes: ['audio'], frequency: FS }, params, { implementationVersion: version, drawGraphs });
}

function decoded(graph: DspGraph): PNG {
  expect(graph).toMatchObject({ type: 'image', imageMimeType: 'image/png' });
  return PNG.sync.read(Buffer.from(graph.image!, 'base64'));
}

// The 256 colours are distinct, so each pixel names its table entry.
const entryOf = new Map(Array.from({ length: COOLWARM_SIZE }, (_, i) => [String(Array.from(coolwarmBytes.subarray(i * 3, i * 3 + 3))), i]));

/** The colour-map entry of the pixel at column x, row y counted from the bottom. */
function entryAt(png: PNG, x: number, y: number): number {
  const p = ((png.height - 1 - y) * png.width + x) * 4;
  expect(png.data[p + 3]).toBe(255);
  const entry = entryOf.get(String([png.data[p], png.data[p + 1], png.data[p + 2]]));
  expect(entry, `pixel ${x},${y} is not a coolwarm colour`).toBeDefined();
  return entry!;
}

/**
 * A frame-major matrix drawn with frames along x and rows up y: the smallest value in the lowest
 * colour, the largest in the highest, and colours in the order of the values.
 */
function expectColoursFollowValues(png: PNG, features: ArrayLike<number>, frames: number, rows: number): void {
  expect([png.width, png.height]).toEqual([frames, rows]);
  const cells = Array.from({ length: frames * rows }, (_, i) => ({ value: features[i]!, entry: entryAt(png, Math.floor(i / rows), i % rows) }));
  cells.sort((a, b) => a.value - b.value);
  expect(cells[0]!.entry).toBe(0);
  expect(cells.at(-1)!.entry).toBe(COOLWARM_SIZE - 1);
  for (let i = 1; i < cells.length; i++) {
    if (cells[i]!.entry < cells[i - 1]!.entry) expect.fail(`value ${cells[i]!.value} drawn colder (${cells[i]!.entry}) than ${cells[i - 1]!.value} (${cells[i - 1]!.entry})`);
  }
}

/** Rows (from the bottom) holding any pixel warmer than the lowest colour. */
function litRows(png: PNG): number[] {
  const rows: number[] = [];
  for (let y = 0; y < png.height; y++) if (Array.from({ length: png.width }, (_, x) => entryAt(png, x, y)).some((e) => e > 0)) rows.push(y);
  return rows;
}

/** A pure tone on FFT bin k of an fftLength-point frame: whole periods in every frame, so no leakage. */
const tone = (k: number, fftLength: number, amplitude: number, length = FS) => Array.from({ length }, (_, i) => amplitude * Math.sin((2 * Math.PI * k * i) / fftLength));

describe('the audio blocks draw their graphs only when asked', () => {
  it.each([
    ['mfe', mfeBlock],
    ['mfcc', mfccBlock],
    ['spectrogram', spectrogramBlock],
  ] as const)('%s answers no graphs without drawGraphs, and the same features either way', (_, block) => {
    const plain = run(block, audio, {}, false);
    const drawn = run(block, audio, {}, true);
    expect(plain.graphs).toEqual([]);
    expect(drawn.graphs.length).toBeGreaterThan(0);
    expect(Array.from(drawn.features)).toEqual(Array.from(plain.features));
  });
});

describe('the mfe graphs', () => {
  it('are the mel energies, frames wide and filters high, and the FFT bin weighting, bins wide and filters high', () => {
    const result = run(mfeBlock, audio, {}, true);
    expect(result.graphs.map((g) => g.name)).toEqual(['Mel Energies (DSP Output)', 'FFT Bin Weighting']);
    expectColoursFollowValues(decoded(result.graphs[0]!), result.features, 99, 40);
    const weighting = decoded(result.graphs[1]!);
    expect([weighting.width, weighting.height]).toEqual([129, 40]);
  });

  it.each([1, 2, 3, 4])('v%i draws its own output matrix', (version) => {
    // Versions 1-3 keep the old mel bins, which leave filters empty at the defaults (40 over 256 points).
    const result = run(mfeBlock, audio, { num_filters: 20, fft_length: 512 }, true, version);
    const { width, height } = result.outputConfig.shape as { width: number; height: number };
    expectColoursFollowValues(decoded(result.graphs[0]!), result.features, width, height);
  });

  it("lights only the row of the one filter a tone falls in, counted from the bottom", () => {
    // Defaults (v4): 40 filters over 129 bins. Pick a bin that only filter m weighs, at its peak.
    const bank = melFilterbank(40, 129, FS, 0, 0, false);
    const m = 20;
    const k = bank.weights[m]!.findIndex((w, bin) => w === 1 && bank.weights.every((row, i) => i === m || row[bin] === 0));
    expect(k).toBeGreaterThan(0);
    // 62 × 256 samples: whole periods, so the circular pre-emphasis adds no click at the start.
    const result = run(mfeBlock, tone(k, 256, 3000, 62 * 256), {}, true);
    const png = decoded(result.graphs[0]!);
    expect(litRows(png)).toEqual([m]);
    for (let x = 0; x < png.width; x++) expect(entryAt(png, x, m)).toBe(COOLWARM_SIZE - 1);
  });

  it('draws each filter weight in the colour of its place between 0 and 1', () => {
    const bank = melFilterbank(40, 129, FS, 0, 0, false);
    const png = decoded(run(mfeBlock, audio, {}, true).graphs[1]!);
    for (let m = 0; m < 40; m++) {
      for (let k = 0; k < 129; k++) expect(entryAt(png, k, m)).toBe(Math.min(COOLWARM_SIZE - 1, Math.floor(bank.weights[m]![k]! * COOLWARM_SIZE)));
    }
  });
});

describe('the mfcc graph', () => {
  it('is the cepstral coefficients, frames wide and coefficients high, colours in the order of the values', () => {
    const result = run(mfccBlock, audio, {}, true);
    expect(result.graphs.map((g) => g.name)).toEqual(['Cepstral Coefficients']);
    expectColoursFollowValues(decoded(result.graphs[0]!), result.features, 50, 13);
  });

  it('puts time left to right and c0 at the bottom: a window loud in its second half warms the bottom row there', () => {
    // Without normalisation c0 is the log frame energy, which the loud half raises far above the rest.
    const quietThenLoud = audio.map((v, i) => (i < FS / 2 ? v / 1000 : v));
    const result = run(mfccBlock, quietThenLoud, { win_size: 0, num_cepstral: 13 }, true);
    const png = decoded(result.graphs[0]!);
    expectColoursFollowValues(png, result.features, 50, 13);
    const bottom = Array.from({ length: 50 }, (_, x) => entryAt(png, x, 0));
    expect(Math.max(...bottom.slice(0, 24))).toBeLessThan(Math.min(...bottom.slice(26)));
    expect(Math.max(...bottom)).toBe(COOLWARM_SIZE - 1);
  });
});

describe('the spectrogram graph', () => {
  it('is the spectrogram, frames wide and fft/2 + 1 bins high, colours in the order of the values', () => {
    const result = run(spectrogramBlock, audio, {}, true);
    expect(result.graphs.map((g) => g.name)).toEqual(['Spectrogram']);
    expectColoursFollowValues(decoded(result.graphs[0]!), result.features, 99, 65);
  });

  it.each([1, 2, 3, 4])('v%i draws its own output matrix', (version) => {
    const result = run(spectrogramBlock, audio, { fft_length: 256 }, true, version);
    const { width, height } = result.outputConfig.shape as { width: number; height: number };
    expect(height).toBe(129);
    expectColoursFollowValues(decoded(result.graphs[0]!), result.features, width, height);
  });

  it("lights only a tone's FFT bin, counted from the bottom", () => {
    // Frames of exactly 128 samples (8 ms), so the tone on bin 21 has whole periods in each.
    const result = run(spectrogramBlock, tone(21, 128, 1000, 4096), { frame_length: 0.008, frame_stride: 0.008, fft_length: 128 }, true);
    const png = decoded(result.graphs[0]!);
    expect([png.width, png.height]).toEqual([32, 65]);
    expect(litRows(png)).toEqual([21]);
  });
});

describe('the heat map', () => {
  it('draws a constant matrix in the lowest colour, as matplotlib does when vmin equals vmax', () => {
    const png = PNG.sync.read(heatmapPng({ width: 3, height: 2, valueAt: () => 0.5 }));
    for (let x = 0; x < 3; x++) for (let y = 0; y < 2; y++) expect(entryAt(png, x, y)).toBe(0);
  });
});

const skipMatplotlib = oracleSkipReason('numpy, matplotlib');
describe.skipIf(skipMatplotlib !== undefined)(`the colours against matplotlib${skipMatplotlib ? ` (${skipMatplotlib})` : ''}`, () => {
  it('the table is cm.coolwarm sampled to bytes', () => {
    const theirs = runOracle<number[][]>(
      'import json, numpy as np, matplotlib\nfrom matplotlib import cm\nprint(json.dumps(cm.coolwarm(np.arange(256), bytes=True)[:, :3].tolist()))',
      null,
    );
    expect(theirs.flat()).toEqual(Array.from(coolwarmBytes));
  });

  it("a matrix's pixels are imshow's colours (default Normalize, origin lower)", () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 10 - 3;
    const rows = Array.from({ length: 17 }, () => Array.from({ length: 31 }, random));
    const png = PNG.sync.read(heatmapPng({ width: 31, height: 17, valueAt: (x, y) => rows[y]![x]! }));
    const theirs = runOracle<number[][][]>(
      'import json, sys, numpy as np, matplotlib\nfrom matplotlib import cm, colors\nm = np.array(json.load(sys.stdin))\n' +
        'print(json.dumps(cm.coolwarm(colors.Normalize()(m), bytes=True)[::-1, :, :3].tolist()))',
      rows,
    );
    const ours = Array.from({ length: 17 }, (_, y) => Array.from({ length: 31 }, (_, x) => Array.from(png.data.subarray((y * 31 + x) * 4, (y * 31 + x) * 4 + 3))));
    expect(ours).toEqual(theirs);
  });
});

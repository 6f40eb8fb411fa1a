import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { selectAxes, type RowRange } from '../../../domain/dsp/axesSelection';
import type { InputBlock } from '../../../domain/impulse/impulseEvents';
import {
  expectedImageWindowCount,
  expectedWindowCount,
  sampleWindows,
  sliceRange,
  sliceRowsToKeep,
  sliceWindow,
  timeSeriesWindowing,
  windowCount,
  windowPositions,
  windowRows,
  WindowingError,
  type TimeSeriesWindowing,
  type Window,
  type WindowSample,
} from '../../../domain/dsp/windows';

const block = (over: Partial<InputBlock> = {}): InputBlock => ({
  id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', windowSizeMs: 1000, windowIncreaseMs: 500, frequencyHz: 100, padZeros: false, createdAt: '2026-01-01T00:00:00Z', ...over,
});

const w = (over: Partial<TimeSeriesWindowing> = {}): TimeSeriesWindowing => ({ windowSizeMs: 1000, windowIncreaseMs: 500, frequencyHz: 100, padZeros: false, labelMethod: 'end-of-window', ...over });

const sample = (over: Partial<WindowSample> = {}): WindowSample => ({ id: 7, name: 'idle.01', label: 'idle', frequency: 100, sensors: ['accX', 'accY', 'accZ'], valuesCount: 0, structuredLabels: [], ...over });

/** Rows whose values say where they come from: row i, column c holds i × 10 + c. */
const rowsOf = (n: number, columns = 3): number[][] => Array.from({ length: n }, (_, i) => Array.from({ length: columns }, (_, c) => i * 10 + c));

/** The rows as a format reader hands them to the windows: the sample's record counts them. */
const selected = (s: WindowSample, rows: number[][], axes: string[], keep?: RowRange) => selectAxes({ ...s, valuesCount: rows.length }, rows, axes, keep);

function windowsOf(s: WindowSample, rows: number[][], axes: string[], windowing: TimeSeriesWindowing): Window[] {
  const result = sampleWindows(s, selected(s, rows, axes), axes, windowing);
  if (result.skipped) throw new Error(result.reason);
  // Views into one buffer: copy, as a caller that keeps them must.
  return [...result.windows()].map((x) => ({ ...x, values: x.values.slice() }));
}

describe('timeSeriesWindowing', () => {
  it('reads the input block, with end-of-window labelling and no padding unless set', () => {
    expect(timeSeriesWindowing(block({ padZeros: undefined }))).toEqual({ windowSizeMs: 1000, windowIncreaseMs: 500, frequencyHz: 100, padZeros: false, labelMethod: 'end-of-window' });
    expect(timeSeriesWindowing(block({ labelingMethodMultiLabel: { type: 'majority-in-window' } })).labelMethod).toBe('majority-in-window');
    expect(timeSeriesWindowing(block({ labelingMethodMultiLabel: { type: 'anywhere-in-window' } })).labelMethod).toBe('majority-in-window');
  });

  it('takes the given default frequency when the block has none, and refuses a block without one', () => {
    expect(timeSeriesWindowing(block({ frequencyHz: undefined }), 62.5).frequencyHz).toBe(62.5);
    expect(() => timeSeriesWindowing(block({ frequencyHz: undefined }))).toThrow(WindowingError);
    expect(() => timeSeriesWindowing(block({ type: 'image' }))).toThrow(/not time-series/);
  });
});

describe('window counts', () => {
  it('fits every whole window and leaves the tail out', () => {
    // 2.5 s at 100 Hz, windows of 1 s every 0.5 s: starts at 0, 0.5, 1, 1.5 s.
    expect(windowRows(w())).toBe(100);
    expect(windowCount(250, w())).toBe(4);
    expect(windowCount(250, w({ padZeros: true }))).toBe(4);
    expect(windowCount(100, w())).toBe(1);
    expect(windowCount(99, w())).toBe(0);
    expect(windowCount(0, w({ padZeros: true }))).toBe(0);
  });

  it('gives a sample shorter than one window one padded window with zero padding, none without', () => {
    expect(windowCount(40, w({ padZeros: true }))).toBe(1);
    expect(windowCount(40, w({ padZeros: false }))).toBe(0);
  });

  it('steps an increase that is not a whole number of rows in milliseconds, without drift', () => {
    // 62.5 Hz, 2 s windows (125 rows), 100 ms increase (6.25 rows): window k starts at floor(6.25 k),
    // so the fifth starts at row 25 where whole-row steps of 6 would have drifted to 24.
    const windowing = w({ frequencyHz: 62.5, windowSizeMs: 2000, windowIncreaseMs: 100 });
    const starts = [...windowPositions(150, windowing)].map((p) => p.firstRow);
    expect(starts).toEqual([0, 6, 12, 18, 25]);
    expect([...windowPositions(150, windowing)][3]).toEqual({ index: 3, firstRow: 18, startMs: 300, endMs: 2300 });
  });

  it('counts exactly the windows it enumerates, for any lengths and settings', () => {
    let checked = 0;
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 5000 }),
        fc.integer({ min: 1, max: 5000 }),
        fc.double({ min: 0.01, max: 1, noNaN: true }),
        fc.constantFrom(1, 16, 50, 62.5, 100, 1000 / 3, 16000),
        fc.boolean(),
        (rows, sizeMs, increaseFraction, hz, padZeros) => {
          const windowing = w({ windowSizeMs: sizeMs, windowIncreaseMs: Math.max(1, Math.round(sizeMs * increaseFraction)), frequencyHz: hz, padZeros });
          // Bounds the enumeration: a 1 Hz window stepped by a hundredth of a row would list 500,000.
          const stepRows = (windowing.windowIncreaseMs * hz) / 1000;
          if (windowRows(windowing) > 5000 || rows / stepRows > 20_000) return;
          expect(windowCount(rows, windowing)).toBe([...windowPositions(rows, windowing)].length);
          checked++;
        },
      ),
      { numRuns: 500 },
    );
    // Most settings must have been compared, not bounded away.
    expect(checked).toBeGreaterThan(250);
  });

  it('every enumerated window lies within the sample unless it is the one padded window of a short sample', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3000 }), fc.integer({ min: 10, max: 3000 }), fc.integer({ min: 1, max: 100 }), (rows, sizeMs, pct) => {
        const windowing = w({ windowSizeMs: sizeMs, windowIncreaseMs: Math.max(1, Math.floor((sizeMs * pct) / 100)), frequencyHz: 100, padZeros: true });
        const size = windowRows(windowing);
        for (const p of windowPositions(rows, windowing)) {
          if (rows >= size) expect(p.firstRow + size).toBeLessThanOrEqual(rows);
          else expect(p).toEqual({ index: 0, firstRow: 0, startMs: 0, endMs: sizeMs });
        }
      }),
    );
  });

  it('expects the windows of every sample at the impulse frequency, resampled lengths included', () => {
    const samples = [
      { valuesCount: 250, frequency: 100 }, // 4
      { valuesCount: 40, frequency: 100 }, // 0 without padding
      { valuesCount: 400, frequency: 200 }, // 200 rows at 100 Hz: 3
      { valuesCount: 125, frequency: 62.5 }, // 200 rows at 100 Hz: 3
    ];
    expect(expectedWindowCount(samples, w())).toBe(10);
    expect(expectedWindowCount(samples, w({ padZeros: true }))).toBe(11);
  });

  it('expects one window per image for image blocks', () => {
    expect(expectedImageWindowCount([{ kind: 'image' }, { kind: 'image' }, { kind: 'time-series' }])).toBe(2);
  });
});

describe('sampleWindows', () => {
  it('hands out the block axes of each window interleaved sample-major, with positions and the sample label', () => {
    const rows = rowsOf(250);
    const windows = windowsOf(sample({ valuesCount: 250 }), rows, ['accZ', 'accX'], w());
    expect(windows.map((x) => [x.index, x.startMs, x.endMs, x.label])).toEqual([
      [0, 0, 1000, 'idle'],
      [1, 500, 1500, 'idle'],
      [2, 1000, 2000, 'idle'],
      [3, 1500, 2500, 'idle'],
    ]);
    const second = windows[1]!.values;
    expect(second.length).toBe(200);
    // Row 50 is the first of window 1: accZ (column 2) then accX (column 0).
    expect([second[0], second[1], second[2], second[3]]).toEqual([502, 500, 512, 510]);
    expect(second[199]).toBe(1490);
  });

  it('pads a short sample with zeros after its rows when padZeros is on', () => {
    const windows = windowsOf(sample(), rowsOf(30), ['accX'], w({ padZeros: true }));
    expect(windows.length).toBe(1);
    const v = windows[0]!.values;
    expect(v.length).toBe(100);
    expect(v[29]).toBe(290);
    expect(Array.from(v.subarray(30)).every((x) => x === 0)).toBe(true);
  });

  it('skips, naming the sample and the reason, what it cannot window', () => {
    const short = sampleWindows(sample(), selected(sample(), rowsOf(30), ['accX']), ['accX'], w());
    expect(short).toEqual({ skipped: true, reason: expect.stringMatching(/sample 7 \("idle.01"\) is shorter than one window \(30 rows at 100 Hz, a window is 100\) and zero padding is off/) });
    expect(sampleWindows(sample(), selected(sample(), rowsOf(300), ['gyrX']), ['gyrX'], w())).toEqual({ skipped: true, reason: 'sample 7 ("idle.01") has no axis "gyrX" (it has "accX", "accY", "accZ")' });
    expect(sampleWindows(sample({ label: null }), selected(sample(), rowsOf(300), ['accX']), ['accX'], w())).toMatchObject({ skipped: true, reason: expect.stringMatching(/no label/) });
    expect(sampleWindows(sample(), selected(sample(), [[1, 2, 3], [1, 2]], ['accX']), ['accX'], w())).toMatchObject({ skipped: true, reason: expect.stringMatching(/row 1 has 2 values, expected 3/) });
    expect(sampleWindows(sample(), selected(sample(), [[1, NaN, 3]], ['accY']), ['accY'], w({ padZeros: true }))).toMatchObject({ skipped: true, reason: expect.stringMatching(/not a finite number/) });
  });

  it('resamples a sample at another rate to the impulse frequency before cutting it', () => {
    // 2 s at 200 Hz = 400 rows, 200 rows at 100 Hz: windows at 0, 0.5 and 1 s.
    const rows = Array.from({ length: 400 }, () => [1, 2, 3]);
    const windows = windowsOf(sample({ frequency: 200 }), rows, ['accY'], w());
    expect(windows.map((x) => x.startMs)).toEqual([0, 500, 1000]);
    expect(windows[1]!.values.length).toBe(100);
    // A constant stays (within the filter ripple) constant away from the edges.
    expect(windows[1]!.values[50]).toBeCloseTo(2, 2);
  });

  describe('with structured labels', () => {
    // 300 rows at 100 Hz: idle rows 0-119, wave 120-299.
    const labelled = sample({ label: null, structuredLabels: [{ label: 'wave', startIndex: 120, endIndex: 299 }, { label: 'idle', startIndex: 0, endIndex: 119 }] });

    it('labels each window by its last row at the end of the window', () => {
      const windows = windowsOf(labelled, rowsOf(300), ['accX'], w({ windowSizeMs: 1000, windowIncreaseMs: 100 }));
      // Window k covers rows 10k .. 10k + 99: its last row is idle while 10k + 99 ≤ 119.
      expect(windows.map((x) => x.label)).toEqual(['idle', 'idle', 'idle', 'wave', 'wave', 'wave', 'wave', 'wave', 'wave', 'wave', 'wave', 'wave', 'wave', 'wave', 'wave', 'wave', 'wave', 'wave', 'wave', 'wave', 'wave']);
    });

    it('labels each window by the label covering most of it with majority-in-window', () => {
      const windows = windowsOf(labelled, rowsOf(300), ['accX'], w({ windowSizeMs: 1000, windowIncreaseMs: 100, labelMethod: 'majority-in-window' }));
      // Window k holds 120 − 10k idle rows: idle while that is over 50 (k ≤ 6); k = 7 is 50/50 and
      // stays with idle, met first.
      expect(windows.slice(0, 10).map((x) => x.label)).toEqual(['idle', 'idle', 'idle', 'idle', 'idle', 'idle', 'idle', 'idle', 'wave', 'wave']);
    });

    it('maps labels through time when the sample was resampled', () => {
      // The same labels on a 200 Hz sample (rows doubled): idle until 1.2 s.
      const fast = sample({ label: null, frequency: 200, structuredLabels: [{ label: 'idle', startIndex: 0, endIndex: 239 }, { label: 'wave', startIndex: 240, endIndex: 599 }] });
      const windows = windowsOf(fast, rowsOf(600), ['accX'], w({ windowSizeMs: 1000, windowIncreaseMs: 100 }));
      expect(windows.slice(0, 5).map((x) => x.label)).toEqual(['idle', 'idle', 'idle', 'wave', 'wave']);
    });
  });
});

describe('slices of a stored sample', () => {
  it('a slice at the start of any window of the job gives that window, at the impulse rate or resampled to it', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 300 }), fc.constantFrom(50, 100, 200), fc.constantFrom(250, 500), (extra, rate, increase) => {
        // At least one window (1 s) long.
        const n = rate + extra;
        const windowing = w({ windowIncreaseMs: increase });
        const s = sample({ frequency: rate, valuesCount: n });
        const data = rowsOf(n);
        for (const window of windowsOf(s, data, ['accY', 'accX'], windowing)) {
          const start = (window.startMs * rate) / 1000;
          if (!Number.isInteger(start)) continue;
          const range = sliceRange(s, windowing, start);
          expect(range.end - range.start).toBe(rate);
          // Only the rows the slice needs are kept, as the slice endpoint decodes them.
          const keep = sliceRowsToKeep(s, windowing, range);
          expect(keep.to - keep.from).toBeLessThan(rate * 2);
          const slice = sliceWindow(s, selected(s, data, ['accY', 'accX'], keep), ['accY', 'accX'], windowing, range);
          if ('skipped' in slice) throw new Error(slice.reason);
          expect(Array.from(slice.values)).toEqual(Array.from(window.values));
          expect(slice.label).toBe(window.label);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('refuses, naming the query parameter, a slice that is not one window within the sample', () => {
    const s = { frequency: 100, valuesCount: 250 };
    expect(sliceRange(s, w(), 150)).toEqual({ start: 150, end: 250 });
    expect(() => sliceRange(s, w(), 151)).toThrow(/"sliceStart": the window 151-251 runs past the end of the sample/);
    expect(() => sliceRange(s, w(), 0, 99)).toThrow(/"sliceEnd": the slice 0-99 holds 99 values/);
    // 499 rows at 200 Hz resample to 250 at 100 Hz (rounded up, as the reference): the job's last window
    // starts at row 300 and ends a row past the stored ones; that slice is still accepted.
    expect(sliceRange({ frequency: 200, valuesCount: 499 }, w(), 300)).toEqual({ start: 300, end: 500 });
    expect(() => sliceRange({ frequency: 200, valuesCount: 499 }, w(), 302)).toThrow(/"sliceStart": the window 302-502 runs past the end/);
    expect(() => sliceRange(s, w(), 1.5)).toThrow(/"sliceStart" must be a whole number/);
    expect(() => sliceRange({ frequency: 100, valuesCount: 40 }, w(), 0)).toThrow(/shorter than one window .* zero padding is off/);
    expect(sliceRange({ frequency: 100, valuesCount: 40 }, w({ padZeros: true }), 0)).toEqual({ start: 0, end: 40 });
  });

  it('leaves an unlabelled sample without labels rather than refusing it', () => {
    const s = sample({ label: null, valuesCount: 100 });
    const slice = sliceWindow(s, selected(s, rowsOf(100), ['accX']), ['accX'], w(), { start: 0, end: 100 });
    expect(slice).toMatchObject({ label: null, labelAtEnd: null, startMs: 0, endMs: 1000 });
  });
});

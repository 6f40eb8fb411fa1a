import { describe, expect, it } from 'vitest';
import { AxesSelection, selectAxes } from '../../../domain/dsp/axesSelection';
import type { WindowSample } from '../../../domain/dsp/windows';
import { decodeValues, decodeValuesInto } from '../../../domain/sample/formats/decodeValues';

const sample = (over: Partial<WindowSample> = {}): WindowSample => ({ id: 3, name: 'walk.07', label: 'walk', frequency: 100, sensors: ['accX', 'accY', 'accZ'], valuesCount: 50, structuredLabels: [], ...over });
/** Row i, column c holds i × 10 + c. */
const rowsOf = (n: number, columns = 3): number[][] => Array.from({ length: n }, (_, i) => Array.from({ length: columns }, (_, c) => i * 10 + c));

describe('AxesSelection', () => {
  it('keeps the block’s axes in its order, interleaved, for every row by default', () => {
    const s = selectAxes(sample({ valuesCount: 4 }), rowsOf(4), ['accZ', 'accX']);
    expect(s.problem).toBeUndefined();
    expect(s.rows).toBe(4);
    expect(Array.from(s.values)).toEqual([2, 0, 12, 10, 22, 20, 32, 30]);
  });

  it('holds only the rows asked for, yet counts every row and checks them all', () => {
    const s = selectAxes(sample(), rowsOf(50), ['accY'], { from: 20, to: 23 });
    expect(s.rows).toBe(50);
    expect(Array.from(s.values)).toEqual([201, 211, 221]);
    expect(s.row(21)).toEqual([211]);
    // A bad row after the kept ones still makes the sample unusable, as it does for the job.
    const rows = rowsOf(50);
    rows[40] = [1, Number.NaN, 3];
    const bad = selectAxes(sample(), rows, ['accY'], { from: 20, to: 23 });
    expect(bad.problem).toBe('sample 3 ("walk.07"): row 40 holds a value that is not a finite number');
    const narrow = rowsOf(50);
    narrow[45] = [1, 2];
    expect(selectAxes(sample(), narrow, ['accX'], { from: 0, to: 2 }).problem).toBe('sample 3 ("walk.07"): row 45 has 2 values, expected 3');
  });

  it('reads no further than the rows the sample’s record counts', () => {
    const s = selectAxes(sample({ valuesCount: 10 }), rowsOf(50), ['accX']);
    expect(s.rows).toBe(10);
    expect(s.values.length).toBe(10);
  });

  it('names a missing axis or frequency before any row is read', () => {
    expect(new AxesSelection(sample(), ['gyrX']).problem).toBe('sample 3 ("walk.07") has no axis "gyrX" (it has "accX", "accY", "accZ")');
    expect(new AxesSelection(sample({ frequency: 0 }), ['accX']).problem).toBe('sample 3 ("walk.07") has no frequency');
  });

  it('is filled by the format readers as they decode, with the rows decodeValues gives', () => {
    const rows = rowsOf(30).map((r) => r.map((v) => v / 4));
    const file = Buffer.from(JSON.stringify({ protected: { ver: 'v1', alg: 'none' }, signature: '', payload: { interval_ms: 10, sensors: ['accX', 'accY', 'accZ'].map((name) => ({ name, units: 'g' })), values: rows } }));
    const csv = Buffer.from(['timestamp,accX,accY,accZ', ...rows.map((r, i) => [i * 10, ...r].join(','))].join('\n'));
    for (const [bytes, type] of [[file, 'application/json'], [csv, 'text/csv']] as const) {
      const s = new AxesSelection(sample({ valuesCount: 30 }), ['accY', 'accZ'], { from: 5, to: 9 });
      decodeValuesInto(bytes, type, s);
      expect(s.problem).toBeUndefined();
      expect(s.rows).toBe(30);
      const expected = decodeValues(bytes, type, 30).slice(5, 9).flatMap((r) => [r[1], r[2]]);
      expect(Array.from(s.values)).toEqual(expected);
    }
  });
});

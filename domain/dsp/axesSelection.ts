// What the windows of a time-series sample are cut from: the DSP block's axes of the sample's rows,
// in one Float64Array, filled row by row as a format reader decodes the file (a RowSink). Every row
// is counted and checked; only the rows in `keep` are held, so a slice of a 100 MB sample holds its
// window's rows rather than one array per row of the sample (12 times the file's size before).
import { EnoughRows, type RowSink } from '../sample/formats/rowSink';
import type { WindowSample } from './windows';

/** Rows [from, to) of the sample as stored. */
export interface RowRange {
  from: number;
  to: number;
}

export class AxesSelection implements RowSink {
  /** Rows read so far (all of the sample's once its reading ended without a problem). */
  rows = 0;
  /** Why the sample cannot be windowed (a missing axis, a bad row); reading stops at the first. */
  problem: string | undefined;
  /** The kept rows' selected values, interleaved sample-major, from row `keep.from`. */
  private held: Float64Array;
  private readonly columns: number[] = [];
  private readonly width: number;
  private readonly limit: number;
  /** How the problems name the sample. */
  private readonly name: string;

  /**
   * `keep`: the rows to hold (all by default). Reading stops at the sample's `valuesCount` rows, the
   * count its read model holds, which is all a window may use.
   */
  constructor(
    sample: WindowSample,
    axes: readonly string[],
    readonly keep: RowRange = { from: 0, to: sample.valuesCount },
  ) {
    this.width = sample.sensors.length;
    this.limit = sample.valuesCount;
    this.name = `sample ${sample.id} ("${sample.name}")`;
    for (const axis of axes) {
      const column = sample.sensors.indexOf(axis);
      if (column === -1) {
        this.problem = `${this.name} has no axis "${axis}" (it has ${sample.sensors.map((s) => `"${s}"`).join(', ') || 'none'})`;
        break;
      }
      this.columns.push(column);
    }
    if (this.problem === undefined && !(sample.frequency > 0)) this.problem = `${this.name} has no frequency`;
    const kept = Math.max(0, Math.min(keep.to, this.limit) - keep.from);
    this.held = new Float64Array(this.problem === undefined ? kept * axes.length : 0);
  }

  add(row: number[]): void {
    if (this.problem !== undefined || this.rows >= this.limit) throw new EnoughRows();
    const i = this.rows;
    if (row.length !== this.width) this.problem = `${this.name}: row ${i} has ${row.length} values, expected ${this.width}`;
    const axes = this.columns.length;
    const at = (i - this.keep.from) * axes;
    const kept = i >= this.keep.from && i < this.keep.to;
    for (let a = 0; a < axes && this.problem === undefined; a++) {
      const v = row[this.columns[a]!]!;
      if (!Number.isFinite(v)) this.problem = `${this.name}: row ${i} holds a value that is not a finite number`;
      else if (kept) this.held[at + a] = v;
    }
    if (this.problem !== undefined) throw new EnoughRows();
    this.rows++;
    if (this.rows >= this.limit) throw new EnoughRows();
  }

  /** The kept rows read, interleaved sample-major, from row `keep.from`. */
  get values(): Float64Array {
    const axes = this.columns.length;
    const read = Math.max(0, Math.min(this.rows, this.keep.to) - this.keep.from);
    return this.held.subarray(0, read * axes);
  }

  /** Stored row `i` (kept), the selected axes only. */
  row(i: number): number[] {
    const axes = this.columns.length;
    return Array.from(this.held.subarray((i - this.keep.from) * axes, (i - this.keep.from + 1) * axes));
  }
}

/** The selection of rows already decoded as arrays (tests, and callers that hold rows anyway). */
export function selectAxes(sample: WindowSample, rows: readonly (readonly number[])[], axes: readonly string[], keep?: RowRange): AxesSelection {
  const selection = new AxesSelection(sample, axes, keep);
  try {
    for (const row of rows) selection.add(row as number[]);
  } catch (error) {
    if (!(error instanceof EnoughRows)) throw error;
  }
  return selection;
}

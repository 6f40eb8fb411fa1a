// Cutting samples into the windows the generate-features job feeds to a processing block
// (dsp-reference 11). The Studio's code is not public; these are the rules this service applies, read
// from the input block's fields and Edge Impulse's docs, decided where they are silent:
//
// * Rate. A sample whose frequency differs from the impulse's is first resampled to it (resample.ts,
//   the reference's length rule and polyphase filter); the window is then cut from the resampled rows.
// * Size. A window holds W = floor(windowSizeMs × f / 1000) rows at the impulse frequency f (the same
//   count the DSP config checks use, domain/impulse/dspConfig.ts).
// * Positions. Window k starts at k × windowIncreaseMs, i.e. at row floor(k × windowIncreaseMs × f /
//   1000): positions are stepped in milliseconds and rounded down to a row each time, so an increase
//   that is not a whole number of rows does not drift. startMs/endMs are k × windowIncreaseMs and that
//   plus windowSizeMs.
// * Count. A sample of L ≥ W rows gives every window that fits whole: the k with firstRow(k) + W ≤ L
//   (about floor((L − W) / increaseRows) + 1). The tail that no whole window reaches is left out, with
//   or without zero padding: padding a long sample's tail would add windows that are mostly zeros yet
//   carry the sample's label.
// * Short samples. A sample shorter than one window (0 < L < W) gives one window, its missing rows
//   zeros, when padZeros is on; without it, no window (the job skips it and says why). An empty sample
//   gives none.
// * Labels. A window's label is the sample's label, unless the sample has structured labels: then the
//   input block's labelingMethodMultiLabel decides. 'end-of-window' (the default, as in the Studio)
//   takes the label of the last original row the window covers; 'majority-in-window' the label that
//   covers most of the window's time, ties going to the label met first. y holds one class per
//   window, so the multi-label methods 'anywhere-in-window' and its min-percentage variant, which can
//   give a window several labels, are decided by majority too. Zero padding belongs to no label.
// * Axes. The DSP block names the axes it reads; they are taken from the sample's sensors by name, in
//   the block's order. A sample missing one is skipped, naming the axis.
import type { InputBlock } from '../impulse/impulseEvents';
import type { StructuredLabel } from '../sample/sampleEvents';
import type { AxesSelection, RowRange } from './axesSelection';
import { resampleInputSpan, resampleInterleaved, resampleInterleavedRange, resampledLength } from './resample';

/** The time-series input block's settings, resolved. */
export interface TimeSeriesWindowing {
  windowSizeMs: number;
  windowIncreaseMs: number;
  /** The impulse frequency every sample is resampled to, in Hz. */
  frequencyHz: number;
  padZeros: boolean;
  labelMethod: WindowLabelMethod;
}

export type WindowLabelMethod = 'end-of-window' | 'majority-in-window';

/** Tolerance on rows computed from ms × Hz, so 62.5 Hz × 16 ms is one row and not 0.9999999. */
const ROW_EPSILON = 1e-9;

export class WindowingError extends Error {
  readonly code = 'WINDOWING';
  readonly status = 400;
  constructor(message: string) {
    super(message);
    this.name = 'WindowingError';
  }
}

/**
 * The windowing of a time-series input block. Its frequencyHz is used when set; otherwise
 * `defaultFrequencyHz` (the caller's choice, e.g. the most common frequency of the project's samples).
 */
export function timeSeriesWindowing(block: InputBlock, defaultFrequencyHz?: number): TimeSeriesWindowing {
  if (block.type !== 'time-series') throw new WindowingError(`input block ${block.id} is of type "${block.type}", not time-series`);
  const { windowSizeMs, windowIncreaseMs } = block;
  if (windowSizeMs === undefined || !(windowSizeMs > 0)) throw new WindowingError(`input block ${block.id} has no "windowSizeMs"`);
  if (windowIncreaseMs === undefined || !(windowIncreaseMs > 0)) throw new WindowingError(`input block ${block.id} has no "windowIncreaseMs"`);
  const frequencyHz = block.frequencyHz ?? defaultFrequencyHz;
  if (frequencyHz === undefined || !(frequencyHz > 0)) throw new WindowingError(`input block ${block.id} has no "frequencyHz" and the project has no sample to take it from`);
  const method = block.labelingMethodMultiLabel?.type ?? 'end-of-window';
  return { windowSizeMs, windowIncreaseMs, frequencyHz, padZeros: block.padZeros ?? false, labelMethod: method === 'end-of-window' ? 'end-of-window' : 'majority-in-window' };
}

/** Rows in one window at the impulse frequency (at least 1). */
export function windowRows(w: TimeSeriesWindowing): number {
  return Math.max(1, Math.floor((w.windowSizeMs * w.frequencyHz) / 1000 + ROW_EPSILON));
}

/** The first row of window k. */
function firstRowOf(k: number, w: TimeSeriesWindowing): number {
  return Math.floor((k * w.windowIncreaseMs * w.frequencyHz) / 1000 + ROW_EPSILON);
}

/** How many windows a sample of `rows` rows (at the impulse frequency) gives, without enumerating them. */
export function windowCount(rows: number, w: TimeSeriesWindowing): number {
  if (rows <= 0) return 0;
  const size = windowRows(w);
  if (rows < size) return w.padZeros ? 1 : 0;
  const stepRows = (w.windowIncreaseMs * w.frequencyHz) / 1000;
  // The estimate can be off by one either way from the rounding of each position; settle it on the
  // exact rule.
  let n = Math.max(1, Math.floor((rows - size) / stepRows) + 1);
  while (n > 1 && firstRowOf(n - 1, w) + size > rows) n--;
  while (firstRowOf(n, w) + size <= rows) n++;
  return n;
}

export interface WindowPosition {
  /** Index of the window within its sample. */
  index: number;
  /** First row, at the impulse frequency. */
  firstRow: number;
  startMs: number;
  endMs: number;
}

/** The windows of a sample of `rows` rows, one by one (the rule windowCount counts). */
export function* windowPositions(rows: number, w: TimeSeriesWindowing): Generator<WindowPosition> {
  if (rows <= 0) return;
  const size = windowRows(w);
  if (rows < size) {
    if (w.padZeros) yield { index: 0, firstRow: 0, startMs: 0, endMs: w.windowSizeMs };
    return;
  }
  for (let k = 0; ; k++) {
    const firstRow = firstRowOf(k, w);
    if (firstRow + size > rows) return;
    const startMs = k * w.windowIncreaseMs;
    yield { index: k, firstRow, startMs, endMs: startMs + w.windowSizeMs };
  }
}

/** What windowing needs to know about a stored sample (from its SampleIngested event). */
export interface WindowSample {
  id: number;
  name: string;
  label: string | null;
  /** The sample's own frequency, in Hz. */
  frequency: number;
  /** Sensor names in the order of the value columns. */
  sensors: readonly string[];
  /** Rows, as the sample read model counts them (for expectedWindowCount). */
  valuesCount: number;
  structuredLabels: readonly StructuredLabel[];
}

/** Number of windows the job will make from these samples (DSPInfo.expectedWindowCount). */
export function expectedWindowCount(samples: readonly Pick<WindowSample, 'valuesCount' | 'frequency'>[], w: TimeSeriesWindowing): number {
  let total = 0;
  for (const s of samples) {
    if (!(s.frequency > 0)) continue;
    total += windowCount(resampledLength(s.valuesCount, s.frequency, w.frequencyHz), w);
  }
  return total;
}

/** Image input blocks: one window per image (DSPInfo.expectedWindowCount for image impulses). */
export function expectedImageWindowCount(samples: readonly { kind: string }[]): number {
  return samples.filter((s) => s.kind === 'image').length;
}

export interface Window {
  sampleId: number;
  /** Index of the window within its sample. */
  index: number;
  startMs: number;
  endMs: number;
  label: string;
  /** windowRows × axes values, interleaved sample-major (DspInput.values). A view: copy it to keep it. */
  values: Float64Array;
}

export type SampleWindows =
  | { skipped: false; count: number; windows: () => Generator<Window> }
  /** The sample gives no window; `reason` names the sample and the problem, for the job's log. */
  | { skipped: true; reason: string };

/** A sample's selected axes at the impulse frequency: what its windows are cut from. */
interface PreparedSample {
  /** `length` rows × axes, interleaved sample-major. */
  selected: Float64Array;
  length: number;
  /** Rows of the sample as stored (before resampling). */
  originalRows: number;
}

/** The whole sample's selected axes (an AxesSelection keeping every row) resampled; or the reason it cannot be windowed. */
function prepareSample(sample: WindowSample, selection: AxesSelection, axes: readonly string[], w: TimeSeriesWindowing): PreparedSample | { skipped: true; reason: string } {
  if (selection.problem !== undefined) return { skipped: true, reason: selection.problem };
  if (selection.keep.from !== 0 || selection.keep.to < selection.rows) throw new RangeError(`the whole sample is needed; rows ${selection.keep.from}-${selection.keep.to} were kept`);
  const n = selection.rows;
  const selected = n > 0 ? resampleInterleaved(selection.values, axes.length, sample.frequency, w.frequencyHz) : selection.values;
  return { selected, length: selected.length / axes.length, originalRows: n };
}

/** The W rows from `firstRow` of a prepared sample, zeros after its end (the padded window of a short sample). */
function windowValues(p: PreparedSample, firstRow: number, size: number, axes: number): Float64Array {
  const from = firstRow * axes;
  if (firstRow + size <= p.length) return p.selected.subarray(from, from + size * axes);
  const values = new Float64Array(size * axes);
  values.set(p.selected.subarray(from));
  return values;
}

/**
 * The windows of one sample, given the DSP block's axes of all its rows (an AxesSelection a format
 * reader filled). Holds one copy of the selected axes at the impulse frequency and hands out views
 * into it, so a job streams windows through without keeping them.
 */
export function sampleWindows(sample: WindowSample, selection: AxesSelection, axes: readonly string[], w: TimeSeriesWindowing): SampleWindows {
  const name = `sample ${sample.id} ("${sample.name}")`;
  if (sample.label === null && sample.structuredLabels.length === 0) return { skipped: true, reason: `${name} has no label` };
  const prepared = prepareSample(sample, selection, axes, w);
  if ('skipped' in prepared) return prepared;
  const { length, originalRows: n } = prepared;
  const count = windowCount(length, w);
  if (count === 0) {
    const size = windowRows(w);
    return { skipped: true, reason: n === 0 ? `${name} has no values` : `${name} is shorter than one window (${length} rows at ${w.frequencyHz} Hz, a window is ${size}) and zero padding is off` };
  }
  const labelOf = windowLabeller(sample, n, w);
  const size = windowRows(w);
  return {
    skipped: false,
    count,
    windows: function* () {
      for (const p of windowPositions(length, w)) {
        const values = windowValues(prepared, p.firstRow, size, axes.length);
        yield { sampleId: sample.id, index: p.index, startMs: p.startMs, endMs: p.endMs, label: labelOf(p.startMs, p.endMs), values };
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------
// A slice of a stored sample (the DSP page's `raw-data/{sampleId}/slice/run`): sliceStart and sliceEnd
// index the sample's rows as stored (its payload values), end exclusive, so they are what the client
// shows. A slice must be exactly one window of the impulse at the sample's own rate, floor(windowSizeMs
// × f / 1000) rows, lying within the sample; the one exception is the zero-padded window of a sample
// shorter than a window, which is the slice [0, rows). The window's values are then cut the way the
// job cuts them: from the whole sample resampled to the impulse frequency, at the row where the slice
// starts in time. So a slice at a window's start gives that window's features in X.

/** A slice as requested, and the window it is: indexes into the stored rows. */
export interface SliceRange {
  start: number;
  end: number;
}

/** Rows one window spans at the sample's own rate. */
export function sampleWindowRows(sampleFrequencyHz: number, w: TimeSeriesWindowing): number {
  return Math.max(1, Math.floor((w.windowSizeMs * sampleFrequencyHz) / 1000 + ROW_EPSILON));
}

/** Checks a requested slice of a sample of `rows` rows; throws WindowingError naming sliceStart or sliceEnd. */
export function sliceRange(sample: { valuesCount: number; frequency: number }, w: TimeSeriesWindowing, sliceStart: number, sliceEnd?: number): SliceRange {
  const rows = sample.valuesCount;
  if (!(sample.frequency > 0)) throw new WindowingError('the sample has no frequency to slice it by');
  if (!Number.isSafeInteger(sliceStart) || sliceStart < 0) throw new WindowingError(`"sliceStart" must be a whole number from 0, got ${sliceStart}`);
  if (sliceEnd !== undefined && (!Number.isSafeInteger(sliceEnd) || sliceEnd < 0)) throw new WindowingError(`"sliceEnd" must be a whole number from 0, got ${sliceEnd}`);
  if (rows === 0) throw new WindowingError('the sample has no values to slice');
  const size = sampleWindowRows(sample.frequency, w);
  const describe = `a window of this impulse (${w.windowSizeMs} ms at ${sample.frequency} Hz) is ${size} values`;
  if (rows < size) {
    if (!w.padZeros) throw new WindowingError(`the sample is shorter than one window (${rows} values; ${describe}) and zero padding is off`);
    if (sliceStart !== 0) throw new WindowingError(`"sliceStart": the sample is shorter than one window (${rows} values); its one zero-padded window starts at 0, not ${sliceStart}`);
    if (sliceEnd !== undefined && sliceEnd !== rows) throw new WindowingError(`"sliceEnd": the sample's one zero-padded window is the slice 0-${rows}, not 0-${sliceEnd}`);
    return { start: 0, end: rows };
  }
  if (sliceStart >= rows) throw new WindowingError(`"sliceStart": ${sliceStart} is beyond the sample's ${rows} values`);
  const end = sliceEnd ?? sliceStart + size;
  if (sliceEnd !== undefined && sliceEnd <= sliceStart) throw new WindowingError(`"sliceEnd" (${sliceEnd}) must be after "sliceStart" (${sliceStart})`);
  if (end - sliceStart !== size) throw new WindowingError(`"sliceEnd": the slice ${sliceStart}-${end} holds ${end - sliceStart} values; ${describe}`);
  // The job resamples with the reference's rounding up, so its last window may end up to a row past the
  // stored rows; a slice there is still that window of the job.
  if (end > rows && !fitsResampled(sample, w, sliceStart)) throw new WindowingError(`"sliceStart": the window ${sliceStart}-${end} runs past the end of the sample (${rows} values; ${describe})`);
  return { start: sliceStart, end };
}

/** Whether the job's window starting where stored row `start` starts lies within the resampled sample. */
function fitsResampled(sample: { valuesCount: number; frequency: number }, w: TimeSeriesWindowing, start: number): boolean {
  const firstRow = Math.floor((start * w.frequencyHz) / sample.frequency + ROW_EPSILON);
  return firstRow + windowRows(w) <= resampledLength(sample.valuesCount, sample.frequency, w.frequencyHz);
}

/** The window a checked slice is, with its labels (when the sample has any). */
export interface SliceWindow {
  /** windowRows × axes values at the impulse frequency, interleaved sample-major. */
  values: Float64Array;
  startMs: number;
  endMs: number;
  /** By the input block's labelling method; null for an unlabelled sample. */
  label: string | null;
  /** The label of the window's last row (the SDK's deprecated labelAtEndOfWindow). */
  labelAtEnd: string | null;
}

/** The window a slice is: its first row at the impulse frequency in a sample of `length` resampled rows. */
function sliceFirstRow(sample: { frequency: number }, w: TimeSeriesWindowing, slice: SliceRange, length: number): number {
  const size = windowRows(w);
  const firstRow = Math.floor((slice.start * w.frequencyHz) / sample.frequency + ROW_EPSILON);
  // Resampled lengths round down: a slice ending at the sample's last row may start one row too late.
  return firstRow + size > length && length >= size ? length - size : firstRow;
}

/**
 * The stored rows a slice's window is made from (those its resampled rows are filtered from) and
 * those the answer shows: all the decoding of the sample has to keep (AxesSelection's `keep`).
 */
export function sliceRowsToKeep(sample: { valuesCount: number; frequency: number }, w: TimeSeriesWindowing, slice: SliceRange): RowRange {
  const n = sample.valuesCount;
  const length = n === 0 ? 0 : resampledLength(n, sample.frequency, w.frequencyHz);
  const firstRow = sliceFirstRow(sample, w, slice, length);
  const span = resampleInputSpan(n, sample.frequency, w.frequencyHz, firstRow, Math.min(firstRow + windowRows(w), length));
  if (span.to <= span.from) return { from: slice.start, to: slice.end };
  return { from: Math.min(span.from, slice.start), to: Math.max(span.to, slice.end) };
}

/**
 * The window of a checked slice, from an AxesSelection that read the whole sample and kept
 * sliceRowsToKeep: the same values as the job's window that starts there, without the whole sample
 * in memory.
 */
export function sliceWindow(sample: WindowSample, selection: AxesSelection, axes: readonly string[], w: TimeSeriesWindowing, slice: SliceRange): SliceWindow | { skipped: true; reason: string } {
  if (selection.problem !== undefined) return { skipped: true, reason: selection.problem };
  const n = selection.rows;
  // The rows kept were chosen by the count the sample's record holds; its file must agree.
  if (n !== sample.valuesCount) return { skipped: true, reason: `sample ${sample.id} ("${sample.name}"): its file holds ${n} rows, its record ${sample.valuesCount}` };
  const size = windowRows(w);
  const length = n === 0 ? 0 : resampledLength(n, sample.frequency, w.frequencyHz);
  const firstRow = sliceFirstRow(sample, w, slice, length);
  const values = new Float64Array(size * axes.length);
  const end = Math.min(firstRow + size, length);
  // Rows past the end of a short sample stay zeros (its padded window).
  if (end > firstRow) values.set(resampleInterleavedRange(selection.values, axes.length, n, selection.keep.from, sample.frequency, w.frequencyHz, firstRow, end));
  const startMs = (slice.start * 1000) / sample.frequency;
  const endMs = startMs + w.windowSizeMs;
  const labelled = sample.label !== null || sample.structuredLabels.length > 0;
  if (!labelled) return { values, startMs, endMs, label: null, labelAtEnd: null };
  const labelOf = windowLabeller(sample, n, w);
  const atEnd = w.labelMethod === 'end-of-window' ? labelOf : windowLabeller(sample, n, { ...w, labelMethod: 'end-of-window' });
  return { values, startMs, endMs, label: labelOf(startMs, endMs), labelAtEnd: atEnd(startMs, endMs) };
}

/**
 * The label of the window [startMs, endMs) of a sample of `originalRows` rows: structured labels index
 * the sample's own rows (both ends inclusive), so windows are mapped back to them through time.
 */
function windowLabeller(sample: WindowSample, originalRows: number, w: TimeSeriesWindowing): (startMs: number, endMs: number) => string {
  const fallback = sample.label;
  if (sample.structuredLabels.length === 0) return () => fallback!;
  const labels = [...sample.structuredLabels].sort((a, b) => a.startIndex - b.startIndex);
  const msPerRow = 1000 / sample.frequency;
  const sampleEndMs = originalRows * msPerRow;
  // The index of the last label starting at or before `row` (labels cover every row:
  // checkStructuredLabels), by binary search: a sample may carry 10,000 of them.
  const indexAt = (row: number): number => {
    let lo = 0;
    let hi = labels.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (labels[mid]!.startIndex <= row) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const at = (row: number): StructuredLabel => labels[indexAt(row)]!;
  return (startMs, endMs) => {
    const end = Math.min(endMs, sampleEndMs);
    if (w.labelMethod === 'end-of-window') {
      const lastRow = Math.max(0, Math.min(originalRows - 1, Math.ceil(end / msPerRow - ROW_EPSILON) - 1));
      const l = at(lastRow);
      return l.endIndex >= lastRow ? l.label : (fallback ?? l.label);
    }
    const time = new Map<string, number>();
    let best: string | undefined;
    let bestTime = -1;
    const firstRow = Math.max(0, Math.floor(startMs / msPerRow));
    let ix = indexAt(firstRow);
    for (; ix < labels.length && labels[ix]!.startIndex * msPerRow < end; ix++) {
      const l = labels[ix]!;
      const overlap = Math.min(end, (l.endIndex + 1) * msPerRow) - Math.max(startMs, l.startIndex * msPerRow);
      if (overlap <= 0) continue;
      const total = (time.get(l.label) ?? 0) + overlap;
      time.set(l.label, total);
      // Strictly more wins, so a tie stays with the label met first.
      if (total > bestTime + 1e-9) {
        best = l.label;
        bestTime = total;
      }
    }
    return best ?? fallback ?? at(firstRow).label;
  };
}

// ---------------------------------------------------------------------------------------------
// Image input blocks: one window per image, resized to the block's imageWidth × imageHeight. How
// the resize modes are read (the Studio's code is not public; the names and the docs' pictures):
// * squash: scaled to exactly width × height, the aspect ratio not kept (the Studio's default);
// * fit-short: scaled so the shorter side fits, the overflow of the longer side cropped at
//   cropAnchor (default middle-center);
// * fit-long: scaled so the longer side fits, the rest padded with black, the image centred;
// * crop: not scaled: a width × height cut at cropAnchor; a side shorter than the target is first
//   scaled up as fit-short would.
// resizeMethod lanczos3 (default) or nearest picks the kernel. EXIF orientation is applied first
// and transparency is flattened onto black. Decoding and resizing use sharp (libvips).

export type ImageResizeMode = 'squash' | 'fit-short' | 'fit-long' | 'crop';
export type CropAnchor = NonNullable<InputBlock['cropAnchor']>;

export interface ImageWindowing {
  width: number;
  height: number;
  resizeMode: ImageResizeMode;
  resizeMethod: 'lanczos3' | 'nearest';
  cropAnchor: CropAnchor;
}

export function imageWindowing(block: InputBlock): ImageWindowing {
  if (block.type !== 'image') throw new WindowingError(`input block ${block.id} is of type "${block.type}", not image`);
  const { imageWidth: width, imageHeight: height } = block;
  if (width === undefined || height === undefined) throw new WindowingError(`input block ${block.id} has no "imageWidth"/"imageHeight"`);
  return { width, height, resizeMode: block.resizeMode ?? 'squash', resizeMethod: block.resizeMethod ?? 'lanczos3', cropAnchor: block.cropAnchor ?? 'middle-center' };
}

/** An image window: pixels row-major, each 0xRRGGBB as the image block reads them (dsp-reference 4). */
export interface ImageWindow {
  width: number;
  height: number;
  pixels: Uint32Array;
}

/** sharp's gravity for an anchor. */
const GRAVITY: Record<CropAnchor, string> = {
  'top-left': 'northwest', 'top-center': 'north', 'top-right': 'northeast',
  'middle-left': 'west', 'middle-center': 'centre', 'middle-right': 'east',
  'bottom-left': 'southwest', 'bottom-center': 'south', 'bottom-right': 'southeast',
};

/** Where a `size` cut starts in a side of `length` for an anchor's position along that side (0 start, 1 middle, 2 end). */
function cutStart(length: number, size: number, position: 0 | 1 | 2): number {
  return position === 0 ? 0 : position === 2 ? length - size : Math.floor((length - size) / 2);
}

/** Decodes a PNG or JPEG sample and makes its window. Throws WindowingError when the bytes are not an image sharp can read. */
export async function imageWindow(bytes: Uint8Array, w: ImageWindowing): Promise<ImageWindow> {
  const { default: sharp } = await import('sharp');
  const kernel = w.resizeMethod === 'nearest' ? 'nearest' : 'lanczos3';
  try {
    let image = sharp(bytes).rotate().flatten({ background: '#000000' });
    if (w.resizeMode === 'crop') {
      const oriented = await image.toBuffer({ resolveWithObject: true });
      const { width: iw, height: ih } = oriented.info;
      image = sharp(oriented.data);
      let [cw, ch] = [iw, ih];
      if (iw < w.width || ih < w.height) {
        const scale = Math.max(w.width / iw, w.height / ih);
        [cw, ch] = [Math.max(w.width, Math.round(iw * scale)), Math.max(w.height, Math.round(ih * scale))];
        image = sharp(await image.resize(cw, ch, { fit: 'fill', kernel }).toBuffer());
      }
      const [vertical, horizontal] = w.cropAnchor.split('-') as [string, string];
      const left = cutStart(cw, w.width, horizontal === 'left' ? 0 : horizontal === 'right' ? 2 : 1);
      const top = cutStart(ch, w.height, vertical === 'top' ? 0 : vertical === 'bottom' ? 2 : 1);
      image = image.extract({ left, top, width: w.width, height: w.height });
    } else {
      const fit = w.resizeMode === 'squash' ? 'fill' : w.resizeMode === 'fit-short' ? 'cover' : 'contain';
      image = image.resize(w.width, w.height, { fit, kernel, position: w.resizeMode === 'fit-short' ? GRAVITY[w.cropAnchor] : 'centre', background: { r: 0, g: 0, b: 0 } });
    }
    const { data, info } = await image.removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
    if (info.width !== w.width || info.height !== w.height || info.channels !== 3) throw new WindowingError(`the image came out ${info.width}×${info.height}×${info.channels}, expected ${w.width}×${w.height}×3`);
    const pixels = new Uint32Array(w.width * w.height);
    for (let p = 0; p < pixels.length; p++) pixels[p] = (data[3 * p]! << 16) | (data[3 * p + 1]! << 8) | data[3 * p + 2]!;
    return { width: w.width, height: w.height, pixels };
  } catch (error) {
    if (error instanceof WindowingError) throw error;
    throw new WindowingError(`the image cannot be read: ${(error as Error).message}`);
  }
}

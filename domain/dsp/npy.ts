// NumPy .npy files (format version 1.0) for the generate-features job's X and y (dsp-reference 11),
// written a row at a time so a job over any number of windows holds one buffer, not the matrix.
//
// Byte-exact with numpy's own np.save: the header is the dict "{'descr': ..., 'fortran_order': False,
// 'shape': (...), }" followed by the spare spaces numpy adds so the first axis can grow to 21 digits
// in place (format.GROWTH_AXIS_MAX_DIGITS), padded with spaces and a newline so the data starts on a
// 64-byte boundary. Because of that spare room, the header written before the row count is known has
// the same length as the final one, and is patched in place when the writer closes.
//
// What the job stores (documented here because the Studio's files are not public):
// * X: float32 little-endian, shape (windows, features), rows in includedSamples order;
// * y: float32 little-endian, shape (windows,), the 1-based index of the window's class in the
//   DSP metadata's `labels` (as Edge Impulse's learning blocks read their Y files: `y - 1` is the
//   class index), float32 as the issue asks for both artifacts.

export type NpyDtype = '<f4' | '<i4' | '<f8';

const ITEM_SIZE: Record<NpyDtype, number> = { '<f4': 4, '<i4': 4, '<f8': 8 };
const MAGIC = Uint8Array.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
const ARRAY_ALIGN = 64;
const GROWTH_AXIS_MAX_DIGITS = 21;
/** Largest first-axis length the header has room for. */
const MAX_ROWS = Number.MAX_SAFE_INTEGER;

export class NpyFormatError extends Error {
  readonly code = 'NPY_FORMAT';
  constructor(message: string) {
    super(message);
    this.name = 'NpyFormatError';
  }
}

function shapeRepr(shape: readonly number[]): string {
  // Python's repr of a tuple: "(3,)" for one axis, "(3, 4)" for two.
  return shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
}

/** The header bytes np.save writes for an array of this dtype and C-order shape. */
export function npyHeader(dtype: NpyDtype, shape: readonly number[]): Uint8Array {
  if (shape.length === 0) throw new RangeError('0-d arrays are not written');
  for (const n of shape) if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`bad axis length ${n}`);
  let dict = `{'descr': '${dtype}', 'fortran_order': False, 'shape': ${shapeRepr(shape)}, }`;
  dict += ' '.repeat(GROWTH_AXIS_MAX_DIGITS - String(shape[0]).length);
  const hlen = dict.length + 1;
  const padlen = ARRAY_ALIGN - ((MAGIC.length + 2 + hlen) % ARRAY_ALIGN);
  const total = MAGIC.length + 2 + hlen + padlen;
  const out = new Uint8Array(total);
  out.set(MAGIC, 0);
  new DataView(out.buffer).setUint16(MAGIC.length, hlen + padlen, true);
  const text = dict + ' '.repeat(padlen) + '\n';
  for (let i = 0; i < text.length; i++) out[MAGIC.length + 2 + i] = text.charCodeAt(i);
  return out;
}

/** Where a writer puts its bytes: appended in order, plus one overwrite of the header at the end. */
export interface NpySink {
  write(chunk: Uint8Array): Promise<void>;
  writeAt(position: number, chunk: Uint8Array): Promise<void>;
}

const BUFFER_BYTES = 64 * 1024;

/**
 * Writes a 2-D (rows × columns) or, with columns null, a 1-D array row by row. Rows are buffered
 * into 64 KiB writes; close() writes what is left and patches the row count into the header.
 */
export class NpyWriter {
  private readonly itemSize: number;
  private buffer: Uint8Array;
  private view: DataView;
  private used = 0;
  private rowsWritten = 0;
  private closed = false;
  private readonly headerLength: number;
  private started = false;

  constructor(
    private readonly sink: NpySink,
    readonly dtype: NpyDtype,
    /** Values per row; null for a 1-D array (one value per row). */
    readonly columns: number | null,
  ) {
    if (columns !== null && (!Number.isSafeInteger(columns) || columns < 0)) throw new RangeError(`bad column count ${columns}`);
    this.itemSize = ITEM_SIZE[dtype];
    this.buffer = new Uint8Array(Math.max(BUFFER_BYTES, (columns ?? 1) * this.itemSize));
    this.view = new DataView(this.buffer.buffer);
    this.headerLength = npyHeader(dtype, this.shape(0)).length;
  }

  get rows(): number {
    return this.rowsWritten;
  }

  private shape(rows: number): number[] {
    return this.columns === null ? [rows] : [rows, this.columns];
  }

  /** Appends one row (`columns` values; for a 1-D array, one value). */
  async writeRow(row: ArrayLike<number> | number): Promise<void> {
    if (this.closed) throw new Error('the npy writer is closed');
    if (!this.started) {
      this.started = true;
      await this.sink.write(npyHeader(this.dtype, this.shape(0)));
    }
    const values: ArrayLike<number> = typeof row === 'number' ? [row] : row;
    const width = this.columns ?? 1;
    if (values.length !== width) throw new RangeError(`row ${this.rowsWritten} has ${values.length} values, expected ${width}`);
    if (this.rowsWritten >= MAX_ROWS) throw new RangeError('too many rows for one npy file');
    const bytes = width * this.itemSize;
    if (this.used + bytes > this.buffer.length) await this.flush();
    for (let i = 0; i < width; i++) {
      const at = this.used + i * this.itemSize;
      const v = values[i]!;
      if (this.dtype === '<f4') this.view.setFloat32(at, v, true);
      else if (this.dtype === '<f8') this.view.setFloat64(at, v, true);
      else this.view.setInt32(at, v, true);
    }
    this.used += bytes;
    this.rowsWritten++;
  }

  private async flush(): Promise<void> {
    if (this.used === 0) return;
    // The sink may keep the chunk: hand it a copy and reuse the buffer.
    await this.sink.write(this.buffer.slice(0, this.used));
    this.used = 0;
  }

  /** Writes the buffered rows and the final header. Returns the array's shape. */
  async close(): Promise<number[]> {
    if (this.closed) throw new Error('the npy writer is closed');
    if (!this.started) {
      this.started = true;
      await this.sink.write(npyHeader(this.dtype, this.shape(0)));
    }
    await this.flush();
    this.closed = true;
    const header = npyHeader(this.dtype, this.shape(this.rowsWritten));
    // Guaranteed by the 21 spare digits numpy reserves; checked so a change there cannot corrupt files.
    if (header.length !== this.headerLength) throw new Error('npy header length changed');
    await this.sink.writeAt(0, header);
    return this.shape(this.rowsWritten);
  }
}

/** A whole array in memory, as np.save writes it (for small arrays and tests). */
export function encodeNpy(dtype: NpyDtype, shape: readonly number[], data: ArrayLike<number>): Uint8Array {
  const count = shape.reduce((a, b) => a * b, 1);
  if (data.length !== count) throw new RangeError(`${data.length} values for shape ${shapeRepr(shape)}`);
  const header = npyHeader(dtype, shape);
  const size = ITEM_SIZE[dtype];
  const out = new Uint8Array(header.length + count * size);
  out.set(header, 0);
  const view = new DataView(out.buffer);
  for (let i = 0; i < count; i++) {
    const at = header.length + i * size;
    if (dtype === '<f4') view.setFloat32(at, data[i]!, true);
    else if (dtype === '<f8') view.setFloat64(at, data[i]!, true);
    else view.setInt32(at, data[i]!, true);
  }
  return out;
}

export interface NpyHeader {
  dtype: NpyDtype;
  shape: number[];
  /** Byte offset of the data. */
  dataOffset: number;
}

/** Reads the header of an .npy file (versions 1.0 to 3.0; the dtypes this service writes, C order). */
export function parseNpyHeader(bytes: Uint8Array): NpyHeader {
  for (let i = 0; i < 6; i++) if (bytes[i] !== MAGIC[i]) throw new NpyFormatError('not an npy file (bad magic string)');
  const major = bytes[6];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let headerLength: number;
  let start: number;
  if (major === 1) {
    if (bytes.length < 10) throw new NpyFormatError('npy header cut short');
    headerLength = view.getUint16(8, true);
    start = 10;
  } else if (major === 2 || major === 3) {
    if (bytes.length < 12) throw new NpyFormatError('npy header cut short');
    headerLength = view.getUint32(8, true);
    start = 12;
  } else throw new NpyFormatError(`unsupported npy version ${major}`);
  if (bytes.length < start + headerLength) throw new NpyFormatError('npy header cut short');
  const text = new TextDecoder().decode(bytes.subarray(start, start + headerLength));
  const descr = /'descr':\s*'([^']*)'/.exec(text)?.[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(text)?.[1];
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(text)?.[1];
  if (descr === undefined || fortran === undefined || shapeText === undefined) throw new NpyFormatError('npy header is not a numpy header dict');
  if (descr !== '<f4' && descr !== '<i4' && descr !== '<f8') throw new NpyFormatError(`unsupported npy dtype ${descr}`);
  if (fortran === 'True') throw new NpyFormatError('Fortran-order npy files are not supported');
  const shape = shapeText
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => {
      const n = Number(s.replace(/L$/, ''));
      if (!Number.isSafeInteger(n) || n < 0) throw new NpyFormatError(`bad npy shape (${shapeText})`);
      return n;
    });
  return { dtype: descr, shape, dataOffset: start + headerLength };
}

export interface NpyArray {
  dtype: NpyDtype;
  shape: number[];
  data: Float32Array | Int32Array | Float64Array;
}

/** A whole .npy file held in memory. */
export function decodeNpy(bytes: Uint8Array): NpyArray {
  const header = parseNpyHeader(bytes);
  const count = header.shape.reduce((a, b) => a * b, 1);
  const size = ITEM_SIZE[header.dtype];
  if (bytes.length < header.dataOffset + count * size) throw new NpyFormatError(`npy data cut short: ${count} values expected`);
  const view = new DataView(bytes.buffer, bytes.byteOffset + header.dataOffset, count * size);
  const data = header.dtype === '<f4' ? new Float32Array(count) : header.dtype === '<i4' ? new Int32Array(count) : new Float64Array(count);
  for (let i = 0; i < count; i++) {
    data[i] = header.dtype === '<f4' ? view.getFloat32(i * size, true) : header.dtype === '<i4' ? view.getInt32(i * size, true) : view.getFloat64(i * size, true);
  }
  return { dtype: header.dtype, shape: header.shape, data };
}

/**
 * The rows of an .npy file read from its chunks (a blob store stream), one row (the last axes) at a
 * time, so reading X back for the explorer or the importance holds one row and one chunk. Rows are
 * copies the caller may keep.
 */
export async function* npyRows(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<{ header: NpyHeader; row: Float32Array | Int32Array | Float64Array }> {
  let pending = new Uint8Array(0);
  let header: NpyHeader | undefined;
  let rowBytes = 0;
  let rowsLeft = 0;
  const append = (chunk: Uint8Array): void => {
    const next = new Uint8Array(pending.length + chunk.length);
    next.set(pending, 0);
    next.set(chunk, pending.length);
    pending = next;
  };
  for await (const chunk of chunks) {
    append(chunk);
    if (!header) {
      if (pending.length < 12) continue;
      const major = pending[6];
      const length = major === 1 ? 10 + (pending[8]! | (pending[9]! << 8)) : 12 + new DataView(pending.buffer).getUint32(8, true);
      if (pending.length < length) continue;
      header = parseNpyHeader(pending);
      rowsLeft = header.shape[0] ?? 0;
      rowBytes = header.shape.slice(1).reduce((a, b) => a * b, 1) * ITEM_SIZE[header.dtype];
      pending = pending.slice(header.dataOffset);
    }
    let offset = 0;
    while (rowsLeft > 0 && pending.length - offset >= rowBytes) {
      const raw = pending.slice(offset, offset + rowBytes);
      offset += rowBytes;
      rowsLeft--;
      yield { header, row: decodeRow(raw, header.dtype) };
    }
    pending = pending.slice(offset);
  }
  if (!header) throw new NpyFormatError('npy header cut short');
  if (rowsLeft > 0) throw new NpyFormatError(`npy data cut short: ${rowsLeft} rows missing`);
}

function decodeRow(raw: Uint8Array, dtype: NpyDtype): Float32Array | Int32Array | Float64Array {
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const size = ITEM_SIZE[dtype];
  const n = raw.length / size;
  const out = dtype === '<f4' ? new Float32Array(n) : dtype === '<i4' ? new Int32Array(n) : new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = dtype === '<f4' ? view.getFloat32(i * size, true) : dtype === '<i4' ? view.getInt32(i * size, true) : view.getFloat64(i * size, true);
  return out;
}

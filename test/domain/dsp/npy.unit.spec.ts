import fc from 'fast-check';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeNpy, encodeNpy, NpyFormatError, npyHeader, npyRows, NpyWriter, parseNpyHeader, type NpySink } from '../../../domain/dsp/npy';
import { oracleSkipReason, runOracle, runOracleText } from './numpyOracle';

/** A sink over an in-memory byte array, growing as rows come. */
function memorySink(): NpySink & { bytes(): Uint8Array; writes: number } {
  let data = new Uint8Array(0);
  const sink = {
    writes: 0,
    async write(chunk: Uint8Array) {
      sink.writes++;
      const next = new Uint8Array(data.length + chunk.length);
      next.set(data);
      next.set(chunk, data.length);
      data = next;
    },
    async writeAt(position: number, chunk: Uint8Array) {
      data.set(chunk, position);
    },
    bytes: () => data,
  };
  return sink;
}

async function* chunked(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

const dir = mkdtempSync(join(tmpdir(), 'npy-spec-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npyHeader', () => {
  it('is the numpy 1.0 header: magic, length, dict with room for the row count to grow, aligned to 64 bytes', () => {
    const h = npyHeader('<f4', [3, 2]);
    expect(h.length % 64).toBe(0);
    expect(Array.from(h.subarray(0, 8))).toEqual([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
    expect(h[8]! | (h[9]! << 8)).toBe(h.length - 10);
    const text = new TextDecoder().decode(h.subarray(10));
    expect(text.startsWith("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }")).toBe(true);
    expect(text.endsWith('\n')).toBe(true);
    expect(npyHeader('<f4', [3]).length).toBe(npyHeader('<f4', [123456789012345]).length);
    expect(new TextDecoder().decode(npyHeader('<f4', [7]))).toContain("'shape': (7,), }");
  });
});

describe('NpyWriter', () => {
  it('writes rows in 64 KiB chunks and patches the row count into the header at the end', async () => {
    const sink = memorySink();
    const writer = new NpyWriter(sink, '<f4', 3);
    for (let i = 0; i < 10_000; i++) await writer.writeRow([i, -i, i / 4]);
    expect(await writer.close()).toEqual([10_000, 3]);
    expect(sink.writes).toBeLessThan(10);
    const array = decodeNpy(sink.bytes());
    expect(array.shape).toEqual([10_000, 3]);
    expect(Array.from(array.data.subarray(3 * 9999))).toEqual([9999, -9999, 9999 / 4]);
    expect(sink.bytes()).toEqual(encodeNpy('<f4', [10_000, 3], Array.from({ length: 30_000 }, (_, k) => [Math.floor(k / 3), -Math.floor(k / 3), Math.floor(k / 3) / 4][k % 3]!)));
  });

  it('writes an empty array when no row came, and refuses rows of the wrong width or after close', async () => {
    const sink = memorySink();
    const writer = new NpyWriter(sink, '<f4', 4);
    await expect(writer.writeRow([1, 2])).rejects.toThrow(/2 values, expected 4/);
    expect(await writer.close()).toEqual([0, 4]);
    expect(decodeNpy(sink.bytes()).shape).toEqual([0, 4]);
    await expect(writer.writeRow([1, 2, 3, 4])).rejects.toThrow(/closed/);
  });

  it('reads back what it wrote, for any rows, in memory and chunk by chunk', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }).chain((cols) => fc.tuple(fc.constant(cols), fc.array(fc.array(fc.float({ noNaN: true }), { minLength: cols, maxLength: cols }), { maxLength: 40 }))),
        fc.integer({ min: 1, max: 300 }),
        async ([cols, rows], chunkSize) => {
          const sink = memorySink();
          const writer = new NpyWriter(sink, '<f4', cols);
          for (const r of rows) await writer.writeRow(r);
          await writer.close();
          const flat = rows.flat().map((v) => Math.fround(v));
          expect(Array.from(decodeNpy(sink.bytes()).data)).toEqual(flat);
          const back: number[] = [];
          for await (const { header, row } of npyRows(chunked(sink.bytes(), chunkSize))) {
            expect(header.shape).toEqual([rows.length, cols]);
            back.push(...row);
          }
          expect(back).toEqual(flat);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('writes 1-D arrays (y) one value per row', async () => {
    const sink = memorySink();
    const writer = new NpyWriter(sink, '<f4', null);
    for (const v of [1, 2, 2, 3]) await writer.writeRow(v);
    expect(await writer.close()).toEqual([4]);
    expect(decodeNpy(sink.bytes())).toEqual({ dtype: '<f4', shape: [4], data: Float32Array.from([1, 2, 2, 3]) });
  });
});

describe('reading', () => {
  it('refuses what is not an npy file it can read, saying why', async () => {
    expect(() => parseNpyHeader(Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]))).toThrow(NpyFormatError);
    const fortran = encodeNpy('<f4', [1, 1], [1]);
    const text = new TextDecoder().decode(fortran).replace("'fortran_order': False", "'fortran_order': True ");
    expect(() => parseNpyHeader(new TextEncoder().encode(text).subarray(0, 64))).toThrow();
    // One whole row of 8 bytes and half of the next after the header.
    const cut = encodeNpy('<f4', [4, 2], [1, 2, 3, 4, 5, 6, 7, 8]).subarray(0, npyHeader('<f4', [4, 2]).length + 12);
    expect(() => decodeNpy(cut)).toThrow(/cut short/);
    await expect(async () => {
      for await (const _ of npyRows(chunked(cut, 7))) void _;
    }).rejects.toThrow(/3 rows missing/);
  });
});

const skip = oracleSkipReason('numpy');
describe.skipIf(skip !== undefined)(`against numpy${skip ? ` (${skip})` : ''}`, () => {
  it('writes the very bytes np.save writes, for 2-D and 1-D float32 and int32 arrays', async () => {
    const cases = [
      { dtype: '<f4', shape: [5, 3], data: Array.from({ length: 15 }, (_, i) => i * 0.1 - 0.7) },
      { dtype: '<f4', shape: [0, 7], data: [] },
      { dtype: '<f4', shape: [6], data: [1, 2, 3, 1, 2, 3] },
      { dtype: '<i4', shape: [3, 2], data: [1, -2, 3, 2147483647, -2147483648, 0] },
      { dtype: '<f4', shape: [12345, 1], data: Array.from({ length: 12345 }, (_, i) => Math.sin(i)) },
    ] as const;
    const script = `
import json, sys, io, base64
import numpy as np
out = []
for c in json.load(sys.stdin):
    a = np.array(c['data'], dtype=np.dtype(c['dtype'])).reshape(c['shape'])
    b = io.BytesIO(); np.save(b, a); out.append(base64.b64encode(b.getvalue()).decode())
print(json.dumps(out))
`;
    const expected = runOracle<string[]>(script, cases);
    for (const [ix, c] of cases.entries()) {
      const sink = memorySink();
      const writer = new NpyWriter(sink, c.dtype, c.shape.length === 1 ? null : c.shape[1]!);
      const width = c.shape.length === 1 ? 1 : c.shape[1]!;
      for (let r = 0; r < c.shape[0]; r++) await writer.writeRow(c.shape.length === 1 ? c.data[r]! : c.data.slice(r * width, (r + 1) * width));
      await writer.close();
      expect(Buffer.from(sink.bytes()).toString('base64')).toBe(expected[ix]);
      expect(Buffer.from(encodeNpy(c.dtype, c.shape, c.data)).toString('base64')).toBe(expected[ix]);
    }
  });

  it('streams a file numpy.load reads, and reads files numpy wrote', async () => {
    const path = join(dir, 'x.npy');
    const handle = await open(path, 'w');
    const sink: NpySink = {
      write: async (chunk) => void (await handle.write(chunk)),
      writeAt: async (position, chunk) => void (await handle.write(chunk, 0, chunk.length, position)),
    };
    const writer = new NpyWriter(sink, '<f4', 4);
    for (let i = 0; i < 3000; i++) await writer.writeRow([i, i + 0.5, -i, 1e-3 * i]);
    await writer.close();
    await handle.close();
    const summary = JSON.parse(runOracleText('import sys, json, numpy as np; a = np.load(sys.argv[1]); print(json.dumps([a.dtype.str, list(a.shape), float(a[:, 0].sum()), float(a[2999, 1]), float(a[:, 3].max())]))', [path])) as [string, number[], number, number, number];
    expect(summary[0]).toBe('<f4');
    expect(summary[1]).toEqual([3000, 4]);
    expect(summary[2]).toBe((2999 * 3000) / 2);
    expect(summary[3]).toBe(2999.5);
    expect(summary[4]).toBeCloseTo(2.999, 5);

    const theirs = join(dir, 'y.npy');
    runOracleText('import sys, numpy as np; np.save(sys.argv[1], np.arange(10, dtype="<f4").reshape(5, 2) / 4)', [theirs]);
    const back = decodeNpy(readFileSync(theirs));
    expect(back.shape).toEqual([5, 2]);
    expect(Array.from(back.data)).toEqual([0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.25]);
  });
});

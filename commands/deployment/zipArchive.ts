// Zip archives for the deployment downloads, written with fflate (deflate level 9) in its worker
// threads: a 1 MB module takes about 100 ms to deflate, which the event loop serving HTTP must not
// spend. Entries get a fixed date, so the same entries give the same bytes, and Unix permissions
// (0644, or 0755 for an entry marked executable) that unzip restores.
import { strToU8, zip, type AsyncZippable } from 'fflate';

export interface ZipEntry {
  /** A relative path with forward slashes. */
  name: string;
  data: Uint8Array | string;
  executable?: boolean;
}

const FIXED_DATE = new Date('2000-01-01T00:00:00Z');
/** Made by: Unix, so the external attributes' high half is read as a file mode. */
const UNIX = 3;

export async function zipArchive(entries: readonly ZipEntry[]): Promise<Buffer> {
  const files: AsyncZippable = {};
  for (const entry of entries) {
    if (entry.name === '' || entry.name.startsWith('/') || entry.name.split('/').includes('..')) throw new Error(`Bad zip entry name: ${entry.name}`);
    const data = typeof entry.data === 'string' ? strToU8(entry.data) : entry.data;
    const mode = entry.executable ? 0o100755 : 0o100644;
    files[entry.name] = [data, { level: 9, mtime: FIXED_DATE, os: UNIX, attrs: (mode << 16) >>> 0 }];
  }
  return new Promise((resolve, reject) => {
    zip(files, (error, bytes) => (error ? reject(error) : resolve(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))));
  });
}

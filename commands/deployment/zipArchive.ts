// Zip archives for the deployment downloads, written with fflate (deflate level 9). Entries get a
// fixed date, so the same entries give the same bytes, and Unix permissions (0644, or 0755 for
// an entry marked executable) that unzip restores.
import { strToU8, zipSync, type Zippable } from 'fflate';

export interface ZipEntry {
  /** A relative path with forward slashes. */
  name: string;
  data: Uint8Array | string;
  executable?: boolean;
}

const FIXED_DATE = new Date('2000-01-01T00:00:00Z');
/** Made by: Unix, so the external attributes' high half is read as a file mode. */
const UNIX = 3;

export function zipArchive(entries: readonly ZipEntry[]): Buffer {
  const files: Zippable = {};
  for (const entry of entries) {
    if (entry.name === '' || entry.name.startsWith('/') || entry.name.split('/').includes('..')) throw new Error(`Bad zip entry name: ${entry.name}`);
    const data = typeof entry.data === 'string' ? strToU8(entry.data) : entry.data;
    const mode = entry.executable ? 0o100755 : 0o100644;
    files[entry.name] = [data, { level: 9, mtime: FIXED_DATE, os: UNIX, attrs: (mode << 16) >>> 0 }];
  }
  const zip = zipSync(files);
  return Buffer.from(zip.buffer, zip.byteOffset, zip.byteLength);
}

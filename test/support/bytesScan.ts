// Looking for values in files as bytes, as someone holding a copy of a data folder could: every
// file (SQLite files with their -wal and -shm, blob files), each value in UTF-8, lower case,
// UTF-16 LE and BE, and a binary value (a key) as bytes, hex and base64.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

export function byteForms(value: string | Buffer): Buffer[] {
  if (Buffer.isBuffer(value)) return [value, Buffer.from(value.toString('hex')), Buffer.from(value.toString('base64'))];
  const le = (s: string) => Buffer.from(s, 'utf16le');
  const be = (s: string) => Buffer.from(s, 'utf16le').swap16();
  return [...new Set([value, value.toLowerCase()])].flatMap((s) => [Buffer.from(s, 'utf8'), le(s), be(s)]);
}

/** Which of the named values the bytes hold. */
export function valuesIn(bytes: Buffer, values: Record<string, string | Buffer>): string[] {
  return Object.entries(values).flatMap(([what, value]) => (byteForms(value).some((needle) => bytes.includes(needle)) ? [what] : []));
}

/** `<value> in <file>` for every file under `dir` (relative names) holding one of the values. */
export async function findInFolder(dir: string, values: Record<string, string | Buffer>): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  const found: string[] = [];
  for (const entry of entries.filter((e) => e.isFile())) {
    const file = path.join(entry.parentPath, entry.name);
    for (const what of valuesIn(await readFile(file), values)) found.push(`${what} in ${path.relative(dir, file)}`);
  }
  return found;
}

import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { zipArchive } from '../../commands/deployment/zipArchive';

// The archive is read back by independent readers: Info-ZIP's unzip and Python's zipfile.
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'deployment-zip-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const binary = Uint8Array.from({ length: 5000 }, (_, i) => (i * 7919) % 251);
const entries = [
  { name: 'README.md', data: '# Hello\n'.repeat(100) },
  { name: 'lib/model.weights.bin', data: binary },
  { name: 'empty.txt', data: '' },
  { name: 'ünïcode-é.txt', data: 'ß' },
  { name: 'bin/run', data: '#!/bin/sh\necho hi\n', executable: true },
];

it('writes an archive that unzip tests and extracts byte for byte', async () => {
  const zip = path.join(dir, 'a.zip');
  await writeFile(zip, await zipArchive(entries));
  expect(execFileSync('unzip', ['-t', zip]).toString()).toMatch(/No errors detected/);
  execFileSync('unzip', ['-o', '-q', zip, '-d', path.join(dir, 'out')]);
  expect(await readFile(path.join(dir, 'out', 'README.md'), 'utf8')).toBe('# Hello\n'.repeat(100));
  expect(new Uint8Array(await readFile(path.join(dir, 'out', 'lib', 'model.weights.bin')))).toEqual(binary);
  expect(await readFile(path.join(dir, 'out', 'empty.txt'), 'utf8')).toBe('');
  expect((await stat(path.join(dir, 'out', 'bin', 'run'))).mode & 0o777).toBe(0o755);
  expect((await stat(path.join(dir, 'out', 'README.md'))).mode & 0o777).toBe(0o644);
});

it('is read by Python zipfile with the names in UTF-8 and the same bytes, and is the same for the same entries', async () => {
  const zip = path.join(dir, 'b.zip');
  const bytes = await zipArchive(entries);
  expect((await zipArchive(entries)).equals(bytes)).toBe(true);
  await writeFile(zip, bytes);
  const script = 'import zipfile,sys,json,hashlib;z=zipfile.ZipFile(sys.argv[1]);print(json.dumps({i.filename:[i.file_size,hashlib.sha256(z.read(i)).hexdigest()] for i in z.infolist()}))';
  const listed = JSON.parse(execFileSync('python3', ['-c', script, zip]).toString()) as Record<string, [number, string]>;
  expect(Object.keys(listed)).toEqual(entries.map((e) => e.name));
  expect(listed['lib/model.weights.bin']![0]).toBe(5000);
  expect(listed['ünïcode-é.txt']![0]).toBe(2);
});

it('refuses entry names that would leave the folder', async () => {
  await expect(zipArchive([{ name: '../x', data: '' }])).rejects.toThrow(/Bad zip entry name/);
  await expect(zipArchive([{ name: '/etc/x', data: '' }])).rejects.toThrow(/Bad zip entry name/);
});

// A real full disk for tests: a small tmpfs (mounting needs root; tests skip, saying why, without it),
// filled to its last block by a filler file.
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export async function smallDisk(size: string): Promise<{ dir: string } | { skip: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-small-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
    return { dir };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    return { skip: `mounting a tmpfs is not permitted here (${String((error as { stderr?: Buffer }).stderr ?? error).trim()})` };
  }
}

/** Writes zeros into `file` until the disk refuses more, the last partial blocks included. */
export function fill(file: string): void {
  const fd = openSync(file, 'w');
  try {
    for (const size of [64 * 1024, 512]) {
      try {
        for (;;) writeSync(fd, Buffer.alloc(size));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      }
    }
  } finally {
    closeSync(fd);
  }
}

/** Unmounts it (lazily when still busy) and removes its folder. */
export async function unmount(dir: string): Promise<void> {
  try {
    execFileSync('umount', [dir], { stdio: 'pipe' });
  } catch {
    execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
  }
  await rm(dir, { recursive: true, force: true });
}

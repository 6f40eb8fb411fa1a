// Feature generation folders left by a job process killed with -9 are removed at
// the next start of the jobs role; those of a worker still running on the host, other programs'
// folders and fresh folders of unknown owner stay.
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, utimes } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { featureScratchPrefix, removeStaleFeatureFolders } from '../../commands/dsp/featureScratchFolders';

describe('stale feature generation folders', () => {
  const folders: string[] = [];
  afterEach(async () => {
    for (const f of folders.splice(0)) await rm(f, { recursive: true, force: true });
  });

  it('are removed when their process is gone; a live worker\'s and others\' stay', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-scratch-'));
    folders.push(dir);
    // A process that has exited: its id is (for the moment of the test) nobody's.
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
    const make = async (name: string, ageDays = 0) => {
      await mkdir(path.join(dir, name, 'inner'), { recursive: true });
      if (ageDays > 0) {
        const then = new Date(Date.now() - ageDays * 24 * 3600 * 1000);
        await utimes(path.join(dir, name), then, then);
      }
    };
    await make(`edge-ml-features-${gone}-7-AbC123`);
    await make(`edge-ml-features-${process.ppid}-8-AbC123`);
    // This process's own: left by an earlier process that had the same id (it has started no job yet).
    await make(path.basename(featureScratchPrefix(9, dir)) + 'XyZ789');
    await make('features-10-QwE456', 2);
    await make('features-11-QwE456');
    await make('features-venv');
    const removed = await removeStaleFeatureFolders(pino({ level: 'silent' }), dir);
    expect(removed.sort()).toEqual([`edge-ml-features-${gone}-7-AbC123`, `edge-ml-features-${process.pid}-9-XyZ789`, 'features-10-QwE456'].sort());
    expect((await readdir(dir)).sort()).toEqual([`edge-ml-features-${process.ppid}-8-AbC123`, 'features-11-QwE456', 'features-venv'].sort());
  });
});

// Ingestion services sharing a data folder receive uploads into folders of their own; at start a
// service removes only what processes that are gone left behind.
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { incomingFolder } from '../../ingestion/incomingFolder';

describe('incomingFolder', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("keeps the uploads of running services and removes what dead processes and old layouts left", async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'incoming-'));
    const root = path.join(dir, 'incoming');
    // A pid above the kernel's maximum (4194304) belongs to no process.
    const dead = path.join(root, '99999999-0a0b');
    const running = path.join(root, `${process.pid}-beef`);
    await mkdir(dead, { recursive: true });
    await mkdir(running, { recursive: true });
    await writeFile(path.join(dead, 'x.part'), 'never acknowledged');
    await writeFile(path.join(running, 'y.part'), 'being received');
    await writeFile(path.join(root, 'old-layout.part'), 'from before per-service folders');
    const mine = await incomingFolder(dir);
    expect(path.dirname(mine)).toBe(root);
    expect(path.basename(mine)).toMatch(new RegExp(`^${process.pid}-[0-9a-f]{8}$`));
    expect((await readdir(root)).sort()).toEqual([path.basename(mine), path.basename(running)].sort());
    expect(await readdir(running)).toEqual(['y.part']);
    // A second service in this process gets a folder of its own and leaves the first one's alone.
    const second = await incomingFolder(dir);
    expect(second).not.toBe(mine);
    expect(await readdir(root)).toContain(path.basename(mine));
  });
});

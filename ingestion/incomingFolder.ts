import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';

/** Whether a process with this id runs on this machine (signal 0 tests without signalling). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The folder this service receives uploads into: `incoming/<pid>-<random>`, so that ingestion
 * services sharing a data folder (other processes, or others in this one) never remove each
 * other's uploads in progress. What processes that are gone left behind was never acknowledged,
 * and is removed.
 */
export async function incomingFolder(dataDir: string): Promise<string> {
  const root = path.join(dataDir, 'incoming');
  await mkdir(root, { recursive: true });
  for (const entry of await readdir(root, { withFileTypes: true })) {
    const pid = /^(\d+)-[0-9a-f]+$/.exec(entry.name)?.[1];
    if (entry.isDirectory() && pid !== undefined && isAlive(Number(pid))) continue;
    await rm(path.join(root, entry.name), { recursive: true, force: true });
  }
  const mine = path.join(root, `${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(mine, { recursive: true });
  return mine;
}

// The scratch folders of feature generation, in the system's temporary folder. A job process killed
// (kill -9, a power cut) never removes its own; the next start of the jobs role removes those of
// processes that are gone. Each folder's name carries its process's id, so a folder of a worker still
// running on the same host (any number may: ROLES=jobs) is left alone.
import { readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';

const PREFIX = 'edge-ml-features-';
/** `edge-ml-features-<pid>-<jobId>-` and mkdtemp's six characters. */
const OURS = /^edge-ml-features-(\d+)-\d+-[A-Za-z0-9]{6}$/;
/** Before process ids were in the names: `features-<jobId>-XXXXXX`, removed once a day old (whose they are cannot be told). */
const LEGACY = /^features-\d+-[A-Za-z0-9]{6}$/;
const LEGACY_AGE_MS = 24 * 3600 * 1000;

/** The mkdtemp prefix of a job's scratch folder, in `dir` (the system's temporary folder by default). */
export const featureScratchPrefix = (jobId: number, dir = tmpdir()): string => path.join(dir, `${PREFIX}${process.pid}-${jobId}-`);

const alive = (pid: number): boolean => {
  if (pid === process.pid) return false; // this process has started no job yet
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Removes the scratch folders of feature generation left by processes that are gone; answers the names removed. */
export async function removeStaleFeatureFolders(log: Logger, dir = tmpdir(), now = Date.now()): Promise<string[]> {
  const removed: string[] = [];
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return removed;
  }
  const uid = process.getuid?.();
  for (const name of names) {
    const ours = OURS.exec(name);
    if (!ours && !LEGACY.test(name)) continue;
    const folder = path.join(dir, name);
    try {
      const info = await stat(folder);
      // Only this user's: another user's folder of the same name is not ours to judge.
      if (!info.isDirectory() || (uid !== undefined && info.uid !== uid)) continue;
      if (ours ? alive(Number(ours[1])) : now - info.mtimeMs < LEGACY_AGE_MS) continue;
      await rm(folder, { recursive: true, force: true });
      removed.push(name);
    } catch (error) {
      log.warn({ err: error, folder }, 'could not remove a stale feature generation folder');
    }
  }
  if (removed.length > 0) log.info({ dir, folders: removed }, `removed ${removed.length} feature generation folder(s) left by job processes that stopped without cleaning up`);
  return removed;
}

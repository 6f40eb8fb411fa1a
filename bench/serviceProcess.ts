// The service as a process of its own (`node --import tsx main.ts`, no npm or shell wrapper), as it
// is deployed: for the restart figures, and for the ingestion role split off from the others.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { serviceEnv } from './fillLog';

/** A start over a million events applies the whole log first. */
const START_TIMEOUT_MS = 30 * 60_000;
const ROOT = resolve(import.meta.dirname, '..');
/** Node's flags for the service, as `npm start` and the image's command give them: a 64 MB young generation (docs/production.md). */
export const SERVICE_NODE_FLAGS = ['--max-semi-space-size=64'];

export interface Started {
  child: ChildProcess;
  /** The start line the service logged (or the rebuild's first line). */
  line: Record<string, unknown>;
  apiUrl: string;
  exited: Promise<number | null>;
}

/** Spawns the service on `dataDir` (`env` on top of the bench's settings); resolves on its start line. */
export function spawnService(dataDir: string, args: string[] = [], env: Record<string, string> = {}): Promise<Started> {
  return spawnFrom(ROOT, dataDir, args, env);
}

/** The service of another checkout (`root`: its folder), as `spawnService` starts this one's. */
export function spawnServiceIn(root: string, dataDir: string, env: Record<string, string> = {}): Promise<Started> {
  return spawnFrom(root, dataDir, [], env);
}

function spawnFrom(root: string, dataDir: string, args: string[], env: Record<string, string>): Promise<Started> {
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, '--import', 'tsx', 'main.ts', ...args], {
    cwd: root,
    env: { ...process.env, ...serviceEnv(dataDir), ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return new Promise((resolveStart, reject) => {
    const timer = setTimeout(() => reject(new Error(`the service did not start within ${START_TIMEOUT_MS / 60_000} min`)), START_TIMEOUT_MS);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the service exited with ${code} before it started: ${stderr}`));
    });
    createInterface({ input: child.stdout! }).on('line', (text) => {
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(text) as Record<string, unknown>;
      } catch {
        return;
      }
      if ((line.msg === 'service started' && line.thread === undefined) || (args[0] === 'rebuild' && typeof line.msg === 'string' && /rebuil/.test(line.msg))) {
        clearTimeout(timer);
        resolveStart({ child, line, apiUrl: String(line.apiUrl ?? ''), exited });
      }
    });
  });
}

export async function stopService(started: Started): Promise<void> {
  if (started.child.exitCode === null) started.child.kill('SIGTERM');
  await started.exited;
}

/** CPU seconds (user and system) a process of this host has used so far, from /proc/<pid>/stat. */
export function processCpuSeconds(pid: number): number {
  return cpuSecondsOf(`/proc/${pid}/stat`);
}

/** The CPU seconds of a process's main thread alone (its task of the same id): its workers' and libuv's threads left out. */
export function mainThreadCpuSeconds(pid: number): number {
  return cpuSecondsOf(`/proc/${pid}/task/${pid}/stat`);
}

function cpuSecondsOf(statFile: string): number {
  const stat = readFileSync(statFile, 'utf8');
  // Fields after the command name, which is in parentheses and may hold spaces: utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** USER_HZ, the unit of /proc's times: 100 on x86 and ARM Linux. */
const CLOCK_TICKS = 100;

// The service as a child process of its own (`main.ts` under tsx, or the test entry point
// test/support/testServiceMain.ts when the test runs test jobs), for the tests that kill it:
// embedded SQLite log in `dataDir`, ports chosen by the system, started once it logs
// "service started" (or once it listens, before its catch-up). Every child is pushed to `children`
// so the test's afterAll can kill what is left.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';

export interface ServiceProcess {
  child: ChildProcess;
  apiUrl: string;
  ingestionUrl: string;
}

/** Resolves once the process has exited (at once if it already has). */
export const exitOf = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });

export interface ServiceProcessOptions {
  /** Runs test/support/testServiceMain.ts, whose jobs role has the test job runners too. */
  testJobRunners?: boolean;
}

/** Starts `main.ts` with all roles on the embedded stores in `dataDir`, plus `env`. */
export async function startServiceProcess(dataDir: string, children: ChildProcess[], env: Record<string, string> = {}, options: ServiceProcessOptions = {}): Promise<ServiceProcess> {
  const listening = await startListeningServiceProcess(dataDir, children, env, options);
  await listening.started;
  return listening;
}

export interface ListeningServiceProcess extends ServiceProcess {
  ingestionTlsUrl: string;
  /** Resolves once the process logs "service started": its read models have caught up and its apps serve. */
  started: Promise<void>;
}

/** As startServiceProcess, but resolves as soon as the ports are open ("service listening"), before the catch-up. */
export function startListeningServiceProcess(dataDir: string, children: ChildProcess[], env: Record<string, string> = {}, options: ServiceProcessOptions = {}): Promise<ListeningServiceProcess> {
  const entry = options.testJobRunners ? 'test/support/testServiceMain.ts' : 'main.ts';
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: path.resolve(__dirname, '../..'),
    env: {
      ...process.env,
      API_PORT: '0', INGESTION_PORT: '0', INGESTION_TLS_PORT: '0', REMOTE_MGMT_PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', MONGO_URL: '', EVENTSTORE_URL: '', ROLES: '',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  let markStarted: () => void;
  const started = new Promise<void>((resolve, reject) => {
    markStarted = resolve;
    child.once('exit', (code, signal) => reject(new Error(`service exited with ${code ?? signal} before it started`)));
  });
  // Also rejected through `listening` when the process exits first; then nobody else may wait on it.
  started.catch(() => {});
  return new Promise((resolve, reject) => {
    // The log is read to its end: a full pipe would block the service.
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; apiUrl?: string; ingestionUrl?: string; ingestionTlsUrl?: string };
        if (entry.msg?.startsWith('service listening')) resolve({ child, apiUrl: entry.apiUrl!, ingestionUrl: entry.ingestionUrl!, ingestionTlsUrl: entry.ingestionTlsUrl!, started });
        if (entry.msg === 'service started') markStarted();
      } catch {
        // not a log line
      }
    });
    child.once('exit', (code, signal) => reject(new Error(`service exited with ${code ?? signal} before it listened`)));
  });
}

/** Kills every child still running (SIGKILL) and waits for them to exit. */
export async function killAll(children: readonly ChildProcess[]): Promise<void> {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await Promise.all(children.map(exitOf));
}

/**
 * A crash test's setting: one data folder, the service processes started on it (each a child to
 * kill), and the log read beside them through a connection of its own, so it can be read while the
 * service is down. `cleanup` (the test's afterAll) kills what is left and removes the folder.
 */
export class CrashHarness {
  readonly children: ChildProcess[] = [];
  private folder: string | undefined;
  private opened: SqliteEventStore | undefined;

  constructor(
    private readonly prefix: string,
    private readonly env: Record<string, string> = {},
    private readonly options: ServiceProcessOptions = {},
  ) {}

  /** Starts (or starts again) the service on the harness's folder. */
  async start(): Promise<ServiceProcess> {
    this.folder ??= await mkdtemp(path.join(os.tmpdir(), this.prefix));
    return startServiceProcess(this.folder, this.children, this.env, this.options);
  }

  /** The folder's event log; needs a start first. */
  log(): SqliteEventStore {
    if (!this.folder) throw new Error('start the service before reading its log');
    return (this.opened ??= SqliteEventStore.open(path.join(this.folder, 'events.sqlite')));
  }

  async cleanup(): Promise<void> {
    await killAll(this.children);
    await this.opened?.close();
    if (this.folder) await rm(this.folder, { recursive: true, force: true });
  }
}

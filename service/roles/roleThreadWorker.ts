// The roles of THREAD_ROLES on a worker thread of the service's process, started by
// service/roles/roleThread.ts: the service of those roles alone, on the same data folder, as a process
// of ROLES split would run them. The thread runs the service's own entry module (main.ts, or main.js
// compiled, where the thread pool finds its modules), which calls this when it finds itself in such a
// thread. It answers the thread that started it with a RoleThreadMessage.
import { parentPort, workerData } from 'node:worker_threads';
import pino from 'pino';
import type { CatchUpProgress } from '../catchUpProgress';
import type { Config } from '../configuration';
import { operatorMessage } from '../startFailure';
import type { RoleThreadMessage } from './roleThread';

interface Started {
  stop(): Promise<void>;
}

/** What the thread is given (workerData): the configuration of its roles. */
export interface RoleThreadData {
  roleThread: { config: Config };
}

/** How often the thread tells its projections' catch-up progress while they start. */
export const PROGRESS_EVERY_MS = 100;

/** Whether this thread is one of THREAD_ROLES (its workerData says so). */
export const inRoleThread = (data: unknown = workerData): data is RoleThreadData =>
  typeof data === 'object' && data !== null && typeof (data as Partial<RoleThreadData>).roleThread === 'object';

/** Starts the roles with `start` (main.ts's startService) and answers the main thread's stop. */
export async function runRoleThread(
  start: (
    config: Config,
    log: pino.Logger,
    options: { signal: AbortSignal; announceApplied: boolean; onCatchUp: (progress: () => CatchUpProgress | undefined) => void },
  ) => Promise<Started>,
  isStopped: (error: unknown) => boolean,
): Promise<void> {
  const { config } = (workerData as RoleThreadData).roleThread;
  const port = parentPort!;
  const log = pino({ level: config.logLevel }).child({ thread: [...config.roles].join(',') });
  const tell = (message: RoleThreadMessage) => port.postMessage(message);
  const text = (error: unknown) => (error instanceof Error ? error.message : String(error));
  let service: Started | undefined;
  // A stop asked for while the roles start (a catch-up) ends the start, in order.
  const starting = new AbortController();
  port.on('message', (message: unknown) => {
    if (message !== 'stop') return;
    if (!service) {
      starting.abort();
      return;
    }
    service.stop().then(
      () => (tell({ kind: 'stopped' }), port.close()),
      (error: unknown) => (tell({ kind: 'stop-failed', message: text(error) }), port.close()),
    );
  });
  // The main thread answers the starting requests (503 with the catch-up's progress): it is told it.
  let told: NodeJS.Timeout | undefined;
  const onCatchUp = (progress: () => CatchUpProgress | undefined) => {
    const tellProgress = () => {
      const now = progress();
      if (now) tell({ kind: 'progress', progress: now });
    };
    tellProgress();
    clearInterval(told);
    told = setInterval(tellProgress, PROGRESS_EVERY_MS);
  };
  try {
    service = await start(config, log, { signal: starting.signal, announceApplied: true, onCatchUp });
    clearInterval(told);
    tell({ kind: 'started' });
  } catch (error) {
    clearInterval(told);
    if (isStopped(error)) tell({ kind: 'stopped' });
    else {
      const forTheOperator = operatorMessage(error);
      // The operator's situation (the folder in use) is said once, by the serving thread, in one line.
      if (forTheOperator === undefined) log.error({ err: error }, 'the roles of this thread could not start');
      tell({ kind: 'failed', message: text(error), ...(forTheOperator === undefined ? {} : { operatorMessage: forTheOperator }) });
    }
    port.close();
  }
}

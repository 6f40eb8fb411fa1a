// THREAD_ROLES: the roles that serve no port (projections, sagas, jobs) on a worker thread of the
// service's process, so that the read models, the sagas and the jobs share no event loop with the
// requests. The thread runs the service's entry module, which runs them as a process of ROLES split
// would (service/roles/roleThreadWorker.ts),
// on the same data folder and stores; the main thread serves the read models that thread keeps, as a
// process without the projections role does (sharedReadModelsFollower, CheckpointPoller).
import type { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { startServiceThread } from '../../commands/jobs/threadPool';
import type { CatchUpProgress } from '../catchUpProgress';
import type { Config } from '../configuration';
import type { RoleThreadData } from './roleThreadWorker';

export type RoleThreadMessage =
  | { kind: 'started' }
  | { kind: 'failed'; message: string; operatorMessage?: string }
  | { kind: 'stopped' }
  | { kind: 'stop-failed'; message: string }
  | { kind: 'progress'; progress: CatchUpProgress };

export class RoleThreadError extends Error {
  constructor(
    message: string,
    /** Set when the thread failed for the operator's reason (service/startFailure.ts): the line to show. */
    readonly operatorMessage?: string,
  ) {
    super(message);
    this.name = 'RoleThreadError';
  }
}

export interface RoleThread {
  /** Resolves once the thread's roles have started (their catch-up done); rejects if they cannot. */
  readonly started: Promise<void>;
  /** While its projections catch up at start, the progress they last told (every PROGRESS_EVERY_MS). */
  progress(): CatchUpProgress | undefined;
  /** Stops the thread's roles in order and ends the thread. */
  stop(): Promise<void>;
}

/** How long a stopped thread may take to end after its roles have stopped. */
const END_WITHIN_MS = 5_000;

/**
 * Starts `config.threadRoles` on a thread (`threadModule`: the module it runs, by its path from the
 * service's root; another only in tests). `onEnded` is told if the thread ends, or fails, while it
 * should run (after it started, before a stop): the service is then missing roles and should stop.
 */
export function startRoleThread(config: Config, log: Logger, onEnded: (error: Error) => void, threadModule = 'main'): RoleThread {
  const roles = [...config.threadRoles];
  const threadConfig: Config = { ...config, roles: new Set(roles), threadRoles: new Set() };
  const worker: Worker = startServiceThread(threadModule, { roleThread: { config: threadConfig } } satisfies RoleThreadData);
  let phase: 'starting' | 'running' | 'stopping' | 'ended' = 'starting';
  let answerStop: ((message: RoleThreadMessage | undefined) => void) | undefined;
  let progress: CatchUpProgress | undefined;
  const ended = new Promise<void>((resolve) => worker.once('exit', () => resolve()));

  const started = new Promise<void>((resolve, reject) => {
    const fail = (error: Error) => {
      // Once started, a rejection changes nothing; before, it fails the start (a stop meanwhile too).
      reject(error);
      if (phase === 'running') onEnded(error);
      phase = 'ended';
      answerStop?.(undefined);
    };
    worker.on('message', (message: RoleThreadMessage) => {
      if (message.kind === 'progress') progress = message.progress;
      else if (message.kind === 'started') {
        if (phase === 'starting') phase = 'running';
        progress = undefined;
        resolve();
      } else if (message.kind === 'failed') fail(new RoleThreadError(`The roles ${roles.join(', ')} could not start on their thread: ${message.message}`, message.operatorMessage));
      else answerStop?.(message);
    });
    worker.on('error', (error) => fail(new RoleThreadError(`The thread of the roles ${roles.join(', ')} failed: ${error.message}`)));
    worker.on('exit', (code) => {
      if (phase !== 'ended') fail(new RoleThreadError(`The thread of the roles ${roles.join(', ')} ended (exit code ${code})`));
    });
  });
  // A start that fails is the caller's to report; a rejection nobody waits for is not a crash.
  started.catch(() => {});
  log.info({ roles }, 'starting roles on a thread of their own');

  return {
    started,
    progress: () => (phase === 'starting' ? progress : undefined),
    async stop() {
      if (phase !== 'ended') {
        phase = 'stopping';
        const answer = new Promise<RoleThreadMessage | undefined>((resolve) => (answerStop = resolve));
        worker.postMessage('stop');
        const message = await answer;
        if (message?.kind === 'stop-failed') log.error({ roles, reason: message.message }, 'the roles on their thread did not stop cleanly');
      }
      // A thread whose roles have stopped (or failed) ends by itself; one that does not is ended.
      const timer = setTimeout(() => void worker.terminate(), END_WITHIN_MS);
      await ended;
      clearTimeout(timer);
      phase = 'ended';
    },
  };
}

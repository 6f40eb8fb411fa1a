// Composition root: reads the configuration (service/configuration.ts), opens the adapters
// (service/composition.ts) and composes the roles (service/roles/), in order, and stops them in order.
// `tsx main.ts` runs the service; `tsx main.ts rebuild` rebuilds the read models from the log;
// `tsx main.ts audit` checks the log.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isMainThread } from 'node:worker_threads';
import pino, { type Logger } from 'pino';
import { runAudit } from './commands/audit/auditCli';
import { ApiKeyUsageRecorder } from './commands/projects/projectCommands';
import { SampleParser } from './ingestion/sampleParser';
import { allProjections } from './projections';
import { CheckpointPoller, type ProjectionRunner, type ReadModelSync } from './projections/projectionRunner';
import { StoredProjectionStatus, type ProjectionHealth } from './projections/projectionStatus';
import type { JobWorker } from './commands/jobs/jobWorker';
import { closeServers } from './service/closeServers';
import type { CatchUpProgress } from './service/catchUpProgress';
import { openStores, type Stores } from './service/composition';
import { loadConfig, type Config } from './service/configuration';
import { DataFolderLock } from './service/dataFolderLock';
import { checkReadModelsAtStart } from './service/readModelsAtStart';
import { rebuildReadModels, removeRebuildLeftovers, verifyReadModels } from './service/rebuild';
import type { WatchOptions } from './service/sharedReadModelsWatch';
import { operatorMessage } from './service/startFailure';
import type { StartingState } from './service/startingGate';
import { listenApi, type ApiRole } from './service/roles/apiRole';
import { listenIngestion, type IngestionRole } from './service/roles/ingestionRole';
import { listenRemote, type RemoteRole } from './service/roles/remoteRole';
import type { RemoteLimits } from './remote/remoteServer';
import { startJobsRole, type JobsRole } from './service/roles/jobsRole';
import { productionJobRunners, type JobRunnersFactory } from './service/roles/productionJobRunners';
import { projectionsRole, type ProjectionsRole } from './service/roles/projectionsRole';
import { startSagasRole, type SagasRole } from './service/roles/sagasRole';
import { startRoleThread, type RoleThread } from './service/roles/roleThread';
import { inRoleThread, runRoleThread } from './service/roles/roleThreadWorker';
import { AppliedElsewhere, announceApplied } from './service/roles/appliedAcrossThreads';
import { followSharedReadModels, type SharedReadModelsFollower } from './service/roles/sharedReadModelsFollower';
import { storageFullLine, watchStorageFolder } from './stores/storageFull';

// Kept importable from here for the tests and benchmarks that start the service.
export { ConfigError, loadConfig, READ_STORES, ROLES, type Config, type ReadStoreKind, type Role } from './service/configuration';
export { openStores, type Stores } from './service/composition';
export { rebuildReadModels } from './service/rebuild';

export interface RunningService {
  config: Config;
  stores: Stores;
  /** `http://127.0.0.1:<port>`, when the api role runs. */
  apiUrl: string | undefined;
  ingestionUrl: string | undefined;
  ingestionTlsUrl: string | undefined;
  /** `ws://127.0.0.1:<port>`, when the remote role runs: where devices connect. */
  remoteMgmtUrl: string | undefined;
  /** The remote role (its registry of held device sockets), when it runs. */
  remote: RemoteRole | undefined;
  /** The projections' runner, when they run on this thread (THREAD_ROLES leaves them to the role thread). */
  projections: ProjectionRunner | undefined;
  /** Waits for the read models this process serves from to apply a position, wherever their projections run. */
  readModels: ReadModelSync;
  /** The job worker, when the jobs role runs. */
  jobWorker: JobWorker | undefined;
  /** Ends due subscriptions now, rather than at the next interval (tests, operators). */
  endDueSubscriptions(now?: Date): Promise<void>;
  /** Runs the full deletion of deleted projects due by `now` (normally done every minute). */
  fullyDeleteDueProjects(now?: Date): Promise<void>;
  stop(): Promise<void>;
}

/** The start was asked to stop (StartOptions.signal) before the service was up; what it had started is stopped. */
export class ServiceStartStopped extends Error {
  constructor() {
    super('The service was stopped while it was starting');
  }
}

export interface StartOptions {
  /**
   * Aborting it stops the start: a catch-up in progress stops after the batch it is applying (its
   * checkpoint stored, so the next start goes on from there), the ports close, and the start
   * rejects with ServiceStartStopped. A process signalled while catching up thus stops at once, in order.
   */
  signal?: AbortSignal;
  /** How a process without the projections role watches the read models it shares (tests shorten it). */
  readModelsWatch?: WatchOptions;
  /** The jobs role's runners: production's unless given (a test entry point adds its own). */
  jobRunners?: JobRunnersFactory;
  /**
   * Told when the thread of THREAD_ROLES ends or fails while the service runs: the service is then
   * missing those roles (the command line stops it, exit code 1). Unset: it is logged.
   */
  onThreadEnded?: (error: Error) => void;
  /** Set by the thread of THREAD_ROLES: its projections tell the serving thread how far they have gone. */
  announceApplied?: boolean;
  /** Given the catch-up's progress as the start begins it (the thread of THREAD_ROLES tells the serving thread). */
  onCatchUp?: (progress: () => CatchUpProgress | undefined) => void;
  /** The remote role's timeouts and bounds (tests shorten them). */
  remoteLimits?: Partial<RemoteLimits>;
}

export async function startService(config: Config, log: Logger = pino({ level: config.logLevel }), options: StartOptions = {}): Promise<RunningService> {
  const { signal } = options;
  // Shared with the other service processes on this folder; `npm run rebuild` waits for none of them.
  await mkdir(config.dataDir, { recursive: true });
  // Its free space tells a full disk from a failing one, from the first file opened on.
  watchStorageFolder(path.resolve(config.dataDir));
  // Before the shared lock: a rebuild it may need takes the folder's exclusive one.
  await checkReadModelsAtStart(config, log);
  // After the check (a rebuild it may need takes the folder's exclusive lock), before this thread's shared lock.
  const thread: RoleThread | undefined =
    config.threadRoles.size > 0
      ? startRoleThread(config, log, options.onThreadEnded ?? ((error) => log.error({ err: error }, 'the thread of roles ended: the service runs without them')))
      : undefined;
  // The roles this thread runs.
  const roles = new Set([...config.roles].filter((role) => !config.threadRoles.has(role)));
  let locks: { release(): void };
  try {
    locks = DataFolderLock.forService(config.dataDir, roles.has('projections'));
  } catch (error) {
    await thread?.stop();
    throw error;
  }
  let stores: Stores;
  try {
    // A rebuild cut short left its files (up to the read models' size); no rebuild runs while this lock is held.
    await removeRebuildLeftovers(config.dataDir);
    stores = await openStores(config, log);
  } catch (error) {
    await thread?.stop();
    locks.release();
    throw error;
  }
  let projections: ProjectionsRole | undefined;
  let follower: SharedReadModelsFollower | undefined;
  let api: ApiRole | undefined;
  let ingestion: IngestionRole | undefined;
  let remote: RemoteRole | undefined;
  let sagas: SagasRole | undefined;
  let jobs: JobsRole | undefined;
  let parser: SampleParser | undefined;
  let stopAnnouncing: (() => void) | undefined;
  const appliedElsewhere = thread && config.threadRoles.has('projections') ? new AppliedElsewhere(config.dataDir) : undefined;
  // One sample parser for the roles that read sample files (ingestion, and the api's raw-data view).
  const sampleParser = (): SampleParser => (parser ??= new SampleParser());
  const stop = async () => {
    // Websockets first: an open one would keep its server from closing.
    // Devices are recorded disconnected while the stores are open.
    await Promise.all([api?.closeSockets(), remote?.closeSockets()]);
    await closeServers([...(api?.servers ?? []), ...(ingestion?.servers ?? []), ...(remote ? [remote.server] : [])], config.shutdownGraceMs, log);
    await parser?.close();
    await jobs?.stop();
    await api?.stop();
    await sagas?.stop();
    stopAnnouncing?.();
    await projections?.stop();
    await thread?.stop();
    appliedElsewhere?.close();
    await follower?.stop();
    await stores.close();
    locks.release();
  };
  const apiKeyUsage = new ApiKeyUsageRecorder(stores.events, (error) => log.warn({ err: error }, 'could not record an API key use'));
  try {
    const serves = roles.has('api') || roles.has('ingestion') || roles.has('remote');
    if (roles.has('projections')) projections = projectionsRole({ stores, log });
    // Without the projections, the read models are another process's: watched for standing still behind the log.
    else if (serves) follower = followSharedReadModels({ stores, log, watchOptions: options.readModelsWatch });
    const stored = new StoredProjectionStatus(stores.readStore);
    const health: ProjectionHealth = projections?.runner ?? { failures: () => stored.failures(), stall: () => follower?.stall() };

    // The ports open first, answering 503 "starting" (service/startingGate.ts) until the read models
    // have caught up below: a long catch-up must not look like a dead service.
    const projectionsHere = projections !== undefined || (thread !== undefined && config.threadRoles.has('projections'));
    const starting: StartingState = {
      doing: projectionsHere ? 'catching up the read models' : 'waiting for the projections process to bring the read models up to the log',
      progress: () => thread?.progress() ?? (projections ?? follower)?.progress(),
      health,
    };
    if (projections) options.onCatchUp?.(() => projections!.progress());
    if (roles.has('api')) api = await listenApi({ config, log, starting });
    if (roles.has('ingestion')) ingestion = await listenIngestion({ config, log, starting });
    if (roles.has('remote')) remote = await listenRemote({ config, log, starting });
    const apiUrl = api?.url;
    const ingestionUrl = ingestion?.url;
    const ingestionTlsUrl = ingestion?.tlsUrl;
    const remoteMgmtUrl = remote?.url;
    if (serves) log.info({ apiUrl, ingestionUrl, ingestionTlsUrl, remoteMgmtUrl }, 'service listening; it answers 503 until the read models have caught up with the log');

    // A stop asked for during the catch-up ends it; the wait for another process's read models
    // takes the signal itself, as a process with the projections waits for its own.
    if (signal?.aborted) throw new ServiceStartStopped();
    // The thread's projections bring the read models up to the log: its start is that catch-up.
    if (thread) await threadStarted(thread, follower, signal);
    await (projections ?? follower)?.catchUp(signal);
    if (signal?.aborted) throw new ServiceStartStopped();
    starting.doing = 'the read models have caught up; starting the roles';
    follower?.watch();
    if (roles.has('sagas')) sagas = await startSagasRole({ stores, config, log });
    if (roles.has('jobs')) jobs = await startJobsRole({ stores, config, log, runners: (options.jobRunners ?? productionJobRunners)(stores) });
    if (projections && options.announceApplied) stopAnnouncing = announceApplied(projections.runner, stores.readStore, config.dataDir);
    const sync: ReadModelSync = projections?.runner ?? new CheckpointPoller(stores.readStore, allProjections.map((p) => p.name), undefined, appliedElsewhere);
    const opened = { stores, sync, health, apiKeyUsage, sampleParser };
    await api?.open(opened);
    await ingestion?.open(opened);
    await remote?.open({ stores, health, ...(options.remoteLimits ? { limits: options.remoteLimits } : {}) });
    if (signal?.aborted) throw new ServiceStartStopped();
    log.info({ apiUrl, ingestionUrl, ingestionTlsUrl, remoteMgmtUrl, roles: [...roles], ...(thread ? { threadRoles: [...config.threadRoles] } : {}), eventStore: config.eventStoreUrl ? 'eventstoredb' : 'sqlite', readStore: config.readStore }, inRoleThread() ? 'the roles of the thread started' : 'service started');
    return {
      config,
      stores,
      apiUrl,
      ingestionUrl,
      ingestionTlsUrl,
      remoteMgmtUrl,
      remote,
      projections: projections?.runner,
      readModels: sync,
      jobWorker: jobs?.worker,
      stop,
      endDueSubscriptions: async (now) => sagas?.endDueSubscriptions(now),
      fullyDeleteDueProjects: async (now) => sagas?.fullyDeleteDueProjects(now),
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Waits for the thread's roles to start. Meanwhile the follower watches the read models they fill, so
 * that the starting answers have a progress from the first request on, before the thread tells its own.
 */
async function threadStarted(thread: RoleThread, follower: SharedReadModelsFollower | undefined, signal: AbortSignal | undefined): Promise<void> {
  const following = new AbortController();
  const onAbort = () => following.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  const followed = follower?.catchUp(following.signal, true).catch(() => {});
  try {
    await startedUnlessStopped(thread.started, signal);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    following.abort();
    await followed;
  }
}

/** Waits for the thread's roles to start; a stop asked for meanwhile ends the wait (and the start). */
async function startedUnlessStopped(started: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return started;
  if (signal.aborted) throw new ServiceStartStopped();
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => signal.addEventListener('abort', (onAbort = () => reject(new ServiceStartStopped())), { once: true }));
  try {
    await Promise.race([started, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort!);
  }
}

/** After the shutdown grace, how long the rest of a stop (projections, sagas, stores) may take. */
const STOP_MARGIN_MS = 10_000;

/** The command line: `audit`, `rebuild [--verify]`, else the service, stopped in order on SIGTERM or SIGINT. */
async function main(options: Pick<StartOptions, 'jobRunners'>): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(2);
  }
  const log = pino({ level: config.logLevel });
  if (process.argv[2] === 'audit') {
    const stores = await openStores(config);
    try {
      process.exitCode = await runAudit(process.argv.slice(3), stores.events);
    } finally {
      await stores.close();
    }
    return;
  }
  if (process.argv[2] === 'rebuild') {
    if (process.argv[3] === '--verify') process.exitCode = (await verifyReadModels(config, log)) === 0 ? 0 : 1;
    else await rebuildReadModels(config, log);
    return;
  }
  // Set before the start: a signal during a long catch-up stops it in order rather than kill it.
  const starting = new AbortController();
  let service: RunningService | undefined;
  let stopping = false;
  let threadEnded = false;
  const stopped = (error?: unknown) => {
    if (error !== undefined) log.error({ err: error }, 'stopping failed');
    process.exit(error === undefined && !threadEnded ? 0 : 1);
  };
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping');
    // Past the grace and a margin for the rest of the stop, nothing that still runs is worth the wait.
    setTimeout(() => stopped(new Error(`the stop did not end within ${config.shutdownGraceMs + STOP_MARGIN_MS} ms`)), config.shutdownGraceMs + STOP_MARGIN_MS).unref();
    if (service) service.stop().then(() => stopped(), stopped);
    else starting.abort();
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  const onThreadEnded = (error: Error) => {
    threadEnded = true;
    log.error({ err: error }, 'the thread of roles ended: the service stops (exit code 1) for its supervisor to start it again');
    shutdown('thread ended');
  };
  try {
    service = await startService(config, log, { ...options, signal: starting.signal, onThreadEnded });
  } catch (error) {
    if (!(error instanceof ServiceStartStopped)) throw error;
    log.info('stopped while starting; the next start goes on from where the read models are');
    stopped();
    return;
  }
}

/** Runs the command line; an entry point of its own (test/support/testServiceMain.ts) may add job runners. */
export function runCommandLine(options: Pick<StartOptions, 'jobRunners'> = {}): void {
  main(options).catch((error: unknown) => {
    // A folder in use, a port taken, a full disk: the operator's situation to resolve, not a fault; the message says it all.
    console.error(operatorMessage(error) ?? storageFullLine(error) ?? error);
    process.exit(1);
  });
}

// A thread of THREAD_ROLES runs this module too (compiled, main.js is where the thread pool finds its modules).
if (inRoleThread()) void runRoleThread(startService, (error) => error instanceof ServiceStartStopped);
// Not in a thread of the service's own: it has the same argv.
else if (isMainThread && process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) runCommandLine();

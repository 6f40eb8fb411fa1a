// Composition root: reads the configuration (service/configuration.ts), opens the adapters
// (service/composition.ts), makes secrets and certificates, and starts the roles.
// `tsx main.ts` runs the service; `tsx main.ts rebuild` rebuilds the read models from the log.
import { availableParallelism } from 'node:os';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type Koa from 'koa';
import pino, { type Logger } from 'pino';
import { generate as generateCertificate } from 'selfsigned';
import { createApiApp } from './api/apiApp';
import type { ApiDeps } from './api/apiDeps';
import { loadIdentityProviders } from './api/auth/identityProviders';
import { LoginThrottle } from './api/auth/loginThrottle';
import { ResetRequestThrottle } from './api/auth/resetRequestThrottle';
import { answerClientErrors } from './http/clientErrors';
import { TokenService } from './api/auth/tokens';
import { attachJobSocket, type JobSocketServer } from './api/socket/jobSocketServer';
import { queueEmail } from './commands/emails/queueEmail';
import { IdAllocator } from './commands/idAllocator';
import { startSagas, type RunningSagas } from './commands/sagas';
import { JobWorker } from './commands/jobs/jobWorker';
import { jobRunners } from './commands/jobs/jobRunners';
import { anomalyTrainingRunner, TRAIN_ANOMALY } from './commands/training/anomalyTraining';
import { AnomalyModelQueries } from './projections/anomalyModels/anomalyModelQueries';
import { ThreadPool } from './commands/jobs/threadPool';
import { generateFeaturesRunner } from './commands/dsp/generateFeatures';
import { kerasTrainingRunner } from './commands/training/kerasTraining';
import { removeStaleFeatureFolders } from './commands/dsp/featureScratchFolders';
import { SagaRunner } from './commands/sagas/sagaRunner';
import { runAudit } from './commands/audit/auditCli';
import { reportCatchUp, type CatchUp } from './service/catchUpProgress';
import { HistoryQueries } from './projections/history/historyQueries';
import { historyProjection } from './projections/history/historyProjection';
import { readModelsAsOf } from './projections/history/pointInTime';
import { startLogCheckpoints } from './commands/audit/logCheckpointer';
import type { Periodic } from './commands/sagas/periodic';
import { JobQueries } from './projections/jobs/jobQueries';
import { startSubscriptionEnd } from './commands/sagas/subscriptionEnd';
import { ProjectBlobs } from './commands/projects/projectBlobs';
import { startProjectDeletion } from './commands/sagas/projectDeletion';
import { UniquenessReservations } from './commands/uniqueness';
import { createIngestionApp } from './ingestion/ingestionApp';
import { SampleParser } from './ingestion/sampleParser';
import { incomingFolder } from './ingestion/incomingFolder';
import { ApiKeyUsageRecorder } from './commands/projects/projectCommands';
import { ApiKeyQueries } from './projections/apiKeys/apiKeyQueries';
import { DeviceQueries } from './projections/devices/deviceQueries';
import { ImpulseQueries } from './projections/impulses/impulseQueries';
import { DspFeaturesQueries } from './projections/dspFeatures/dspFeaturesQueries';
import { KerasModelQueries } from './projections/kerasModels/kerasModelQueries';
import { BUILD_ONDEVICE_MODEL } from './commands/deployment/buildDeployment';
import { deploymentBuildRunnerFor } from './commands/deployment/deploymentRunner';
import { DeploymentQueries } from './projections/deployments/deploymentQueries';
import { ModelTestingQueries } from './projections/modelTesting/modelTestingQueries';
import { MODEL_TESTING, modelTestingRunner } from './commands/classify/modelTesting';
import { EmailQueries } from './projections/emails/emailQueries';
import { SampleQueries } from './projections/samples/sampleQueries';
import { OrganizationQueries } from './projections/organizations/organizationQueries';
import { WhitelabelQueries } from './projections/whitelabels/whitelabelQueries';
import { allProjections } from './projections';
import { CheckpointPoller, ProjectionRunner, type ReadModelSync } from './projections/projectionRunner';
import { StoredProjectionStatus, type ProjectionHealth } from './projections/projectionStatus';
import { ProjectQueries } from './projections/projects/projectQueries';
import { UserQueries } from './projections/users/userQueries';

import { openStores, type Stores } from './service/composition';
import { loadConfig, type Config } from './service/configuration';
import { DataFolderLock } from './service/dataFolderLock';
import { operatorMessage } from './service/startFailure';
import { closeServers } from './service/closeServers';
import { storageFullLine, watchStorageFolder } from './stores/storageFull';
import { rebuildReadModels, removeRebuildLeftovers, verifyReadModels } from './service/rebuild';
import { checkReadModelsAtStart } from './service/readModelsAtStart';
import { SharedReadModelsCatchUp } from './service/sharedReadModelsCatchUp';
import { SharedReadModelsWatch, type WatchOptions } from './service/sharedReadModelsWatch';
import { StartingGate, startingApiApp, startingIngestionApp, type StartingState } from './service/startingGate';

// Kept importable from here for the tests and benchmarks that start the service.
export { ConfigError, loadConfig, READ_STORES, ROLES, type Config, type ReadStoreKind, type Role } from './service/configuration';
export { openStores, type Stores } from './service/composition';
export { rebuildReadModels } from './service/rebuild';

async function jwtSecret(config: Config): Promise<string> {
  if (config.jwtSecret) return config.jwtSecret;
  const file = path.join(config.dataDir, 'jwt-secret');
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const secret = randomBytes(48).toString('base64url');
  await writeFile(file, secret, { mode: 0o600, flag: 'wx' }).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  return (await readFile(file, 'utf8')).trim();
}

/** The configured certificate, else a self-signed one made once in the data folder. */
async function tlsCredentials(config: Config, log: Logger): Promise<{ cert: string; key: string }> {
  if (config.tlsCertFile && config.tlsKeyFile) {
    return { cert: await readFile(config.tlsCertFile, 'utf8'), key: await readFile(config.tlsKeyFile, 'utf8') };
  }
  const dir = path.join(config.dataDir, 'tls');
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  if (!existsSync(certFile) || !existsSync(keyFile)) {
    await mkdir(dir, { recursive: true });
    const notAfterDate = new Date(Date.now() + 825 * 24 * 3600 * 1000);
    const pems = await generateCertificate([{ name: 'commonName', value: 'localhost' }], {
      keyType: 'ec',
      notAfterDate,
      extensions: [
        { name: 'basicConstraints', cA: false },
        { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }, { type: 7, ip: '::1' }] },
      ],
    });
    await writeFile(keyFile, pems.private, { mode: 0o600 });
    await writeFile(certFile, pems.cert);
    await chmod(keyFile, 0o600);
    log.info({ certFile }, 'made a self-signed certificate for the ingestion API');
  }
  return { cert: await readFile(certFile, 'utf8'), key: await readFile(keyFile, 'utf8') };
}

function listen(server: http.Server | https.Server, port: number, host: string, log: Logger): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      // A listening server reports failed accepts (EMFILE: a client opening connections without end)
      // as 'error' events, which would stop the process if nothing listened. Node goes on accepting.
      server.on('error', (error) => log.error({ err: error, port }, 'the server could not accept a connection'));
      resolve((server.address() as AddressInfo).port);
    });
  });
}

export interface RunningService {
  config: Config;
  stores: Stores;
  /** `http://127.0.0.1:<port>`, when the api role runs. */
  apiUrl: string | undefined;
  ingestionUrl: string | undefined;
  ingestionTlsUrl: string | undefined;
  projections: ProjectionRunner | undefined;
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
}

export async function startService(config: Config, log: Logger = pino({ level: config.logLevel }), options: StartOptions = {}): Promise<RunningService> {
  const { signal } = options;
  // Shared with the other service processes on this folder; `npm run rebuild` waits for none of them.
  await mkdir(config.dataDir, { recursive: true });
  // Its free space tells a full disk from a failing one, from the first file opened on.
  watchStorageFolder(path.resolve(config.dataDir));
  // Before the shared lock: a rebuild it may need takes the folder's exclusive one.
  await checkReadModelsAtStart(config, log);
  const lock = DataFolderLock.shared(config.dataDir);
  let stores: Stores;
  try {
    // A rebuild cut short left its files (up to the read models' size); no rebuild runs while this lock is held.
    await removeRebuildLeftovers(config.dataDir);
    stores = await openStores(config, log);
  } catch (error) {
    lock.release();
    throw error;
  }
  const servers: (http.Server | https.Server)[] = [];
  let projections: ProjectionRunner | undefined;
  let sagas: RunningSagas | undefined;
  let subscriptionEnd: ReturnType<typeof startSubscriptionEnd> | undefined;
  let projectDeletion: ReturnType<typeof startProjectDeletion> | undefined;
  let logCheckpoints: Periodic | undefined;
  let parser: SampleParser | undefined;
  let jobSocket: JobSocketServer | undefined;
  let jobWorker: { worker: JobWorker; runner: SagaRunner; pool: ThreadPool } | undefined;
  let dspPool: ThreadPool | undefined;
  let watching: SharedReadModelsWatch | undefined;
  // One sample parser for the roles that read sample files (ingestion, and the api's raw-data view).
  const sampleParser = (): SampleParser => (parser ??= new SampleParser());
  const stop = async () => {
    // Websockets first: an open one would keep its server from closing.
    await jobSocket?.close();
    await closeServers(servers, config.shutdownGraceMs, log);
    await parser?.close();
    await jobWorker?.runner.stop();
    await jobWorker?.worker.stop();
    await jobWorker?.pool.close();
    await dspPool?.close();
    await subscriptionEnd?.stop();
    await projectDeletion?.stop();
    await logCheckpoints?.stop();
    await sagas?.stop();
    await projections?.stop();
    await watching?.stop();
    await stores.close();
    lock.release();
  };
  const apiKeyUsage = new ApiKeyUsageRecorder(stores.events, (error) => log.warn({ err: error }, 'could not record an API key use'));
  try {
    const serves = config.roles.has('api') || config.roles.has('ingestion');
    if (config.roles.has('projections')) {
      projections = new ProjectionRunner(stores.events, stores.readStore, allProjections, log.child({ role: 'projections' }));
    }
    // Without the projections, the read models are another process's: watched for standing still behind the log.
    const watch = projections || !serves ? undefined : new SharedReadModelsWatch(stores.events, stores.readStore, allProjections.map((p) => p.name), log, options.readModelsWatch);
    const stored = new StoredProjectionStatus(stores.readStore);
    const health: ProjectionHealth = projections ?? { failures: () => stored.failures(), stall: () => watch?.stall() };

    // The ports open first, answering 503 "starting" (service/startingGate.ts) until the read models
    // have caught up below: a long catch-up must not look like a dead service.
    let catchUp: CatchUp | undefined;
    const starting: StartingState = {
      doing: projections ? 'catching up the read models' : 'waiting for the projections process to bring the read models up to the log',
      progress: () => catchUp?.progress(),
      health,
    };
    let apiUrl: string | undefined;
    let ingestionUrl: string | undefined;
    let ingestionTlsUrl: string | undefined;
    const local = (scheme: string, port: number) => `${scheme}://127.0.0.1:${port}`;
    let api: { server: http.Server; port: number; gate: StartingGate } | undefined;
    let ingestionGate: StartingGate | undefined;
    if (config.roles.has('api')) {
      const gate = new StartingGate(startingApiApp(starting, log.child({ role: 'api' })).callback());
      const server = http.createServer(gate.listener);
      answerClientErrors(server, log, (_status, error) => ({ type: 'application/json; charset=utf-8', body: JSON.stringify({ success: false, error }) }));
      servers.push(server);
      const port = await listen(server, config.apiPort, config.host, log);
      apiUrl = local('http', port);
      api = { server, port, gate };
    }
    if (config.roles.has('ingestion')) {
      // One gate for both ports: they serve one app.
      const gate = new StartingGate(startingIngestionApp(starting, log.child({ role: 'ingestion' })).callback());
      const plain = http.createServer(gate.listener);
      const text = (_status: number, message: string) => ({ type: 'text/plain; charset=utf-8', body: message });
      answerClientErrors(plain, log, text);
      servers.push(plain);
      ingestionUrl = local('http', await listen(plain, config.ingestionPort, config.host, log));
      const secure = https.createServer(await tlsCredentials(config, log), gate.listener);
      answerClientErrors(secure, log, text);
      servers.push(secure);
      ingestionTlsUrl = local('https', await listen(secure, config.ingestionTlsPort, config.host, log));
      ingestionGate = gate;
    }
    if (serves) log.info({ apiUrl, ingestionUrl, ingestionTlsUrl }, 'service listening; it answers 503 until the read models have caught up with the log');

    // A stop asked for during the catch-up ends the catch-up (the runner's stop resolves its start;
    // the wait for another process's read models takes the signal itself).
    const onAbort = () => void projections?.stop();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      if (signal?.aborted) throw new ServiceStartStopped();
      if (projections) {
        catchUp = reportCatchUp(projections, await stores.events.headPosition(), log.child({ role: 'projections' }));
        try {
          await projections.start();
        } finally {
          catchUp.stop();
        }
      } else if (serves) {
        // The read models are another process's: wait for it, as a process with the projections waits for its own.
        const head = await stores.events.headPosition();
        if (head !== undefined) {
          const shared = new SharedReadModelsCatchUp(stores.readStore, allProjections.map((p) => p.name), log);
          catchUp = reportCatchUp(shared, head, log);
          try {
            await shared.reach(head, signal);
          } finally {
            catchUp.stop();
          }
        }
      }
      if (signal?.aborted) throw new ServiceStartStopped();
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
    starting.doing = 'the read models have caught up; starting the roles';
    watching = watch?.start();
    if (config.roles.has('sagas')) {
      const recipients = new UserQueries(stores.readStore);
      const recipientProjects = new ProjectQueries(stores.readStore);
      const recipientOrganizations = new OrganizationQueries(stores.readStore);
      sagas = await startSagas({
        events: stores.events,
        readStore: stores.readStore,
        log: log.child({ role: 'sagas' }),
        smtpUrl: config.smtpUrl,
        jobNotifications: {
          mailFrom: config.mailFrom,
          recipient: async (userId, job) => {
            const [u, project] = await Promise.all([recipients.byId(userId), job.projectId === null ? null : recipientProjects.byId(job.projectId)]);
            if (job.projectId !== null && !project?.collaboratorIds.includes(userId)) return null;
            if (job.projectId === null && job.organizationId !== null && !(await recipientOrganizations.byId(job.organizationId))?.memberIds.includes(userId)) return null;
            return u && typeof u.email === 'string' && u.email !== '' && !u.deletedDate ? { email: u.email, name: u.name ?? u.username } : null;
          },
        },
      });
      const users = new UserQueries(stores.readStore);
      subscriptionEnd = startSubscriptionEnd({
        events: stores.events,
        due: async (now) => (await users.endedSubscriptions(now)).map((u) => ({ userId: u.id, periodEnd: u.subscription.periodEnd ?? '' })),
        log: log.child({ role: 'sagas' }),
      });
      logCheckpoints = startLogCheckpoints(stores.events, log.child({ role: 'sagas' }), config.auditCheckpointMs);
      const projectQueries = new ProjectQueries(stores.readStore);
      const sampleQueries = new SampleQueries(stores.readStore);
      const projectBlobs = new ProjectBlobs({
        events: stores.events,
        samples: sampleQueries,
        liveProjectIds: () => projectQueries.notFullyDeletedIds(),
        isUserPhoto: async (sha256) => (await users.byPhoto(sha256)) !== null,
      });
      projectDeletion = startProjectDeletion({
        events: stores.events,
        due: (now) => projectQueries.dueForFullDeletion(now),
        duePurges: async (before) => (await projectQueries.dueForBlobPurge(before)).map((p) => ({ id: p.id, quarantinedBlobs: p.quarantinedBlobs ?? [] })),
        contentsOf: (projectId) => projectBlobs.contentsOf(projectId),
        usedElsewhere: (projectId, sha256s) => projectBlobs.usedElsewhere(projectId, sha256s),
        blobs: stores.blobs,
        destroyProjectKey: (projectId) => stores.events.destroySubject(`project-${projectId}`),
        log: log.child({ role: 'sagas' }),
      });
    }
    if (config.roles.has('jobs')) {
      // Test runners, only when a test asks for them: the production registry holds real runners only.
      if (process.env.NODE_ENV === 'test' && process.env.EDGE_ML_TEST_JOB_RUNNERS === '1') await import('./test/support/testJobRunners');
      // The production runners: feature generation (commands/dsp/generateFeatures.ts).
      jobRunners.set('generate-features', generateFeaturesRunner({ events: stores.events, blobs: stores.blobs, impulses: new ImpulseQueries(stores.readStore), samples: new SampleQueries(stores.readStore) }));
      jobRunners.set(TRAIN_ANOMALY, anomalyTrainingRunner({ events: stores.events, blobs: stores.blobs, impulses: new ImpulseQueries(stores.readStore), dspFeatures: new DspFeaturesQueries(stores.readStore) }));
      jobRunners.set('train-keras', kerasTrainingRunner({ events: stores.events, blobs: stores.blobs, impulses: new ImpulseQueries(stores.readStore), dspFeatures: new DspFeaturesQueries(stores.readStore) }));
      jobRunners.set(BUILD_ONDEVICE_MODEL, deploymentBuildRunnerFor(stores.events, stores.blobs, stores.readStore));
      jobRunners.set(MODEL_TESTING, modelTestingRunner({ events: stores.events, blobs: stores.blobs, projects: new ProjectQueries(stores.readStore), impulses: new ImpulseQueries(stores.readStore), samples: new SampleQueries(stores.readStore), dspFeatures: new DspFeaturesQueries(stores.readStore), kerasModels: new KerasModelQueries(stores.readStore), anomalyModels: new AnomalyModelQueries(stores.readStore) }));
      await removeStaleFeatureFolders(log.child({ role: 'jobs' }));
      const pool = new ThreadPool();
      const projectsOfJobs = new ProjectQueries(stores.readStore);
      const worker = new JobWorker({ events: stores.events, jobs: new JobQueries(stores.readStore), runners: jobRunners, pool, log: log.child({ role: 'jobs' }), heartbeatMs: config.jobHeartbeatMs, projectDeleted: (id) => projectsOfJobs.isDeleted(id) });
      const runner = new SagaRunner(stores.events, stores.readStore, worker.saga(), log.child({ role: 'jobs' }));
      runner.start();
      worker.start();
      jobWorker = { worker, runner, pool };
    }
    const sync: ReadModelSync =
      projections ?? new CheckpointPoller(stores.readStore, allProjections.map((p) => p.name));

    if (api) {
      const { server, port } = api;
      const ids = new IdAllocator(stores.events);
      const deps: ApiDeps = {
        events: stores.events,
        blobs: stores.blobs,
        ids,
        reservations: new UniquenessReservations(stores.events, stores.keys),
        users: new UserQueries(stores.readStore),
        projects: new ProjectQueries(stores.readStore),
        apiKeys: new ApiKeyQueries(stores.readStore),
        organizations: new OrganizationQueries(stores.readStore),
        whitelabels: new WhitelabelQueries(stores.readStore),
        emails: new EmailQueries(stores.readStore),
        devices: new DeviceQueries(stores.readStore),
        impulses: new ImpulseQueries(stores.readStore),
        samples: new SampleQueries(stores.readStore),
        jobs: new JobQueries(stores.readStore),
        dspFeatures: new DspFeaturesQueries(stores.readStore),
        anomalyModels: new AnomalyModelQueries(stores.readStore),
        kerasModels: new KerasModelQueries(stores.readStore),
        deployments: new DeploymentQueries(stores.readStore),
        modelTesting: new ModelTestingQueries(stores.readStore),
        history: new HistoryQueries(stores.readStore),
        changeMark: stores.readStore.changeMark?.bind(stores.readStore),
        pointInTime: (projectId, asOf) => readModelsAsOf(stores.events, stores.readStore, allProjections.filter((p) => p !== historyProjection), projectId, asOf),
        tokens: new TokenService(await jwtSecret(config), { socketTokenLifetimeSeconds: config.socketTokenTtlSeconds }),
        throttle: new LoginThrottle(),
        resetRequests: new ResetRequestThrottle(),
        apiKeyUsage,
        decodeValues: (bytes, contentType, max) => sampleParser().values(bytes, contentType, max),
        // Two threads: a DSP run is one window, so more would only take cores from the jobs.
        dspPool: (dspPool = new ThreadPool(Math.min(2, availableParallelism()))),
        sendEmail: (email, ctx) => queueEmail({ events: stores.events, ids }, { ...email, projectId: null, from: config.mailFrom }, ctx),
        settings: {
          signupEnabled: config.signupEnabled,
          publicUrl: config.publicUrl ?? `http://localhost:${port}`,
          staffUsernames: config.staffUsernames,
          paymentPortalUrl: config.paymentPortalUrl,
          paymentWebhookSecret: config.paymentWebhookSecret,
          internalApiSecret: config.internalApiSecret,
          identityProviders: await loadIdentityProviders(config.identityProviders),
          supportEmail: config.supportEmail,
          mailFrom: config.mailFrom,
          projectDeletionDelayMs: config.projectDeletionDelayMs,
          trustedProxyHops: config.trustedProxyHops,
        },
      };
      const app: Koa = createApiApp(deps, { log: log.child({ role: 'api' }), sync, health, settleTimeoutMs: config.settleTimeoutMs });
      // socket.io wraps the gate's listener, passing it every request outside /socket.io; opened
      // after, so that no job websocket is taken while starting (the upgrade got the starting 503).
      jobSocket = attachJobSocket(server, {
        events: stores.events,
        tokens: deps.tokens.socket,
        access: { users: deps.users, apiKeys: deps.apiKeys, projects: deps.projects, organizations: deps.organizations, settings: deps.settings, health },
        sync,
        settleTimeoutMs: config.settleTimeoutMs,
        log: log.child({ role: 'api', component: 'job-socket' }),
      });
      api.gate.open(app.callback());
    }
    if (ingestionGate) {
      // Uploads that were being received when the process stopped were never acknowledged.
      const incoming = await incomingFolder(config.dataDir);
      const app = createIngestionApp({
        parser: sampleParser(),
        apiKeyUsage,
        events: stores.events,
        keys: stores.keys,
        blobs: stores.blobs,
        ids: new IdAllocator(stores.events),
        apiKeys: new ApiKeyQueries(stores.readStore),
        projects: new ProjectQueries(stores.readStore),
        samples: new SampleQueries(stores.readStore),
        sync,
        health,
        settleTimeoutMs: config.settleTimeoutMs,
        uploadIdleTimeoutMs: config.uploadIdleTimeoutMs,
        tmpDir: incoming,
        log: log.child({ role: 'ingestion' }),
      });
      ingestionGate.open(app.callback());
    }
    if (signal?.aborted) throw new ServiceStartStopped();
    log.info({ apiUrl, ingestionUrl, ingestionTlsUrl, roles: [...config.roles], eventStore: config.eventStoreUrl ? 'eventstoredb' : 'sqlite', readStore: config.readStore }, 'service started');
    return { config, stores, apiUrl, ingestionUrl, ingestionTlsUrl, projections, jobWorker: jobWorker?.worker, stop, endDueSubscriptions: async (now) => subscriptionEnd?.runOnce(now), fullyDeleteDueProjects: async (now) => projectDeletion?.runOnce(now) };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** After the shutdown grace, how long the rest of a stop (projections, sagas, stores) may take. */
const STOP_MARGIN_MS = 10_000;

async function main(): Promise<void> {
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
  const stopped = (error?: unknown) => {
    if (error !== undefined) log.error({ err: error }, 'stopping failed');
    process.exit(error === undefined ? 0 : 1);
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
  try {
    service = await startService(config, log, { signal: starting.signal });
  } catch (error) {
    if (!(error instanceof ServiceStartStopped)) throw error;
    log.info('stopped while starting; the next start goes on from where the read models are');
    stopped();
    return;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().catch((error: unknown) => {
    // A folder in use, a port taken, a full disk: the operator's situation to resolve, not a fault; the message says it all.
    console.error(operatorMessage(error) ?? storageFullLine(error) ?? error);
    process.exit(1);
  });
}

// Composition root: reads the configuration, builds the adapters and starts the roles.
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
import { IdentityProviderConfig, loadIdentityProviders } from './api/auth/identityProviders';
import { LoginThrottle } from './api/auth/loginThrottle';
import { ResetRequestThrottle } from './api/auth/resetRequestThrottle';
import { describeIssues } from './api/http/operation';
import { answerClientErrors } from './api/http/clientErrors';
import { z } from 'zod';
import { TokenService } from './api/auth/tokens';
import { attachJobSocket, type JobSocketServer } from './api/socket/jobSocketServer';
import { queueEmail } from './commands/emails/queueEmail';
import { IdAllocator } from './commands/idAllocator';
import { startSagas, type RunningSagas } from './commands/sagas';
import { JobWorker } from './commands/jobs/jobWorker';
import { jobRunners } from './commands/jobs/jobRunners';
import { ThreadPool } from './commands/jobs/threadPool';
import { generateFeaturesRunner } from './commands/dsp/generateFeatures';
import { SagaRunner } from './commands/sagas/sagaRunner';
import { runAudit } from './commands/audit/auditCli';
import { HistoryQueries } from './projections/history/historyQueries';
import { historyProjection } from './projections/history/historyProjection';
import { readModelsAsOf } from './projections/history/pointInTime';
import { startLogCheckpoints } from './commands/audit/logCheckpointer';
import type { Periodic } from './commands/sagas/periodic';
import { JobQueries } from './projections/jobs/jobQueries';
import { startSubscriptionEnd } from './commands/sagas/subscriptionEnd';
import { startProjectDeletion } from './commands/sagas/projectDeletion';
import { UniquenessReservations } from './commands/uniqueness';
import { isEmailAddress } from './domain/email/emailDecider';
import { sealedFieldsByEventType } from './domain/personalData';
import { createIngestionApp } from './ingestion/ingestionApp';
import { SampleParser } from './ingestion/sampleParser';
import { incomingFolder } from './ingestion/incomingFolder';
import { ApiKeyUsageRecorder } from './commands/projects/projectCommands';
import { ApiKeyQueries } from './projections/apiKeys/apiKeyQueries';
import { DeviceQueries } from './projections/devices/deviceQueries';
import { ImpulseQueries } from './projections/impulses/impulseQueries';
import { DspFeaturesQueries } from './projections/dspFeatures/dspFeaturesQueries';
import { EmailQueries } from './projections/emails/emailQueries';
import { SampleQueries } from './projections/samples/sampleQueries';
import { OrganizationQueries } from './projections/organizations/organizationQueries';
import { WhitelabelQueries } from './projections/whitelabels/whitelabelQueries';
import { allProjections } from './projections';
import { CheckpointPoller, ProjectionRunner, type ReadModelSync } from './projections/projectionRunner';
import { StoredProjectionStatus, type ProjectionHealth } from './projections/projectionStatus';
import { ProjectQueries } from './projections/projects/projectQueries';
import { UserQueries } from './projections/users/userQueries';
import type { BlobStore } from './stores/blobstore/blobStore';
import { FileBlobStore } from './stores/blobstore/fileBlobStore';
import { SqliteBlobStore } from './stores/blobstore/sqliteBlobStore';
import { TieredBlobStore } from './stores/blobstore/tieredBlobStore';
import { GridFsBlobStore } from './stores/blobstore/gridFsBlobStore';
import { EsdbEventStore } from './stores/eventstore/esdbEventStore';
import type { EventStore } from './stores/eventstore/eventStore';
import { SqliteEventStore } from './stores/eventstore/sqliteEventStore';
import type { KeyStore } from './stores/keystore/keyStore';
import { MongoKeyStore } from './stores/keystore/mongoKeyStore';
import { SealingEventStore } from './stores/keystore/sealingEventStore';
import { SqliteKeyStore } from './stores/keystore/sqliteKeyStore';
import { MemoryReadStore } from './stores/readstore/memoryReadStore';
import { MongoReadStore } from './stores/readstore/mongoReadStore';
import type { ReadStore } from './stores/readstore/readStore';

export const ROLES = ['api', 'ingestion', 'projections', 'sagas', 'jobs'] as const;
export type Role = (typeof ROLES)[number];
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export interface Config {
  apiPort: number;
  ingestionPort: number;
  ingestionTlsPort: number;
  /** Address the listeners bind to. */
  host: string;
  dataDir: string;
  eventStoreUrl: string | undefined;
  mongoUrl: string | undefined;
  mongoDb: string;
  roles: ReadonlySet<Role>;
  /** Undefined: generated once and kept in the data folder. */
  jwtSecret: string | undefined;
  logLevel: (typeof LOG_LEVELS)[number];
  signupEnabled: boolean;
  publicUrl: string | undefined;
  tlsCertFile: string | undefined;
  tlsKeyFile: string | undefined;
  settleTimeoutMs: number;
  /** `smtp://` or `smtps://`; unset: e-mails are recorded as not sent. */
  smtpUrl: string | undefined;
  mailFrom: string;
  supportEmail: string;
  staffUsernames: ReadonlySet<string>;
  paymentPortalUrl: string;
  paymentWebhookSecret: string | undefined;
  /** Shared with internal callers: their requests carry an HMAC of the body made with it. */
  internalApiSecret: string | undefined;
  identityProviders: IdentityProviderConfig[];
  /** How long a deleted project's data is kept before its full deletion. */
  projectDeletionDelayMs: number;
  /** Reverse proxies in front of the management API whose `X-Forwarded-For` entries are believed (0: none). */
  trustedProxyHops: number;
  /** How often a job worker heartbeats a quiet job and looks for lost ones; a worker silent 3 times as long is taken for dead. */
  jobHeartbeatMs: number;
  /** How often the sagas role records the log's running hash (commands/audit/logCheckpointer.ts). */
  auditCheckpointMs: number;
}

export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`Configuration error: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

/** Reads the configuration from environment variables; a bad value names its variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const text = (name: string): string | undefined => {
    const v = env[name]?.trim();
    return v === '' ? undefined : v;
  };
  const port = (name: string, fallback: number): number => {
    const v = text(name);
    if (v === undefined) return fallback;
    if (!/^\d+$/.test(v) || Number(v) > 65535) throw new ConfigError(name, `must be a port number from 0 to 65535, got "${v}"`);
    return Number(v);
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const v = text(name)?.toLowerCase();
    if (v === undefined) return fallback;
    if (['true', '1', 'yes', 'on'].includes(v)) return true;
    if (['false', '0', 'no', 'off'].includes(v)) return false;
    throw new ConfigError(name, `must be true or false, got "${v}"`);
  };
  const url = (name: string, schemes: readonly string[]): string | undefined => {
    const v = text(name);
    if (v === undefined) return undefined;
    const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(v)?.[1]?.toLowerCase();
    if (!scheme || !schemes.includes(scheme)) throw new ConfigError(name, `must be a ${schemes.map((s) => `${s}://`).join(' or ')} URL`);
    return v;
  };

  const roleText = text('ROLES');
  const roles = new Set<Role>();
  for (const r of roleText === undefined ? ROLES : roleText.split(',').map((s) => s.trim()).filter(Boolean)) {
    if (!(ROLES as readonly string[]).includes(r)) throw new ConfigError('ROLES', `has an unknown role "${r}"; known roles: ${ROLES.join(', ')}`);
    roles.add(r as Role);
  }
  if (roles.size === 0) throw new ConfigError('ROLES', 'names no role');

  const mongoUrl = url('MONGO_URL', ['mongodb', 'mongodb+srv']);
  if (!mongoUrl && (roles.has('api') || roles.has('ingestion') || roles.has('sagas') || roles.has('jobs')) && !roles.has('projections')) {
    throw new ConfigError('ROLES', 'without "projections" needs MONGO_URL: the in-memory read store lives in one process');
  }

  const logLevel = text('LOG_LEVEL') ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);

  const jwtSecret = text('JWT_SECRET');
  if (jwtSecret !== undefined && jwtSecret.length < 32) throw new ConfigError('JWT_SECRET', 'must be at least 32 characters long');

  const tlsCertFile = text('TLS_CERT_FILE');
  const tlsKeyFile = text('TLS_KEY_FILE');
  if ((tlsCertFile === undefined) !== (tlsKeyFile === undefined)) {
    throw new ConfigError(tlsCertFile === undefined ? 'TLS_CERT_FILE' : 'TLS_KEY_FILE', 'must be set together with the other of TLS_CERT_FILE and TLS_KEY_FILE');
  }

  const settle = text('SETTLE_TIMEOUT_MS') ?? '5000';
  if (!/^\d+$/.test(settle)) throw new ConfigError('SETTLE_TIMEOUT_MS', `must be a number of milliseconds, got "${settle}"`);

  const deletionDelay = text('PROJECT_DELETION_DELAY_HOURS') ?? '168';
  if (!/^\d+(\.\d+)?$/.test(deletionDelay)) throw new ConfigError('PROJECT_DELETION_DELAY_HOURS', `must be a number of hours, got "${deletionDelay}"`);

  const hops = text('TRUSTED_PROXY_HOPS') ?? '0';
  if (!/^\d$/.test(hops)) throw new ConfigError('TRUSTED_PROXY_HOPS', `must be a number of proxies from 0 to 9, got "${hops}"`);

  const auditEvery = text('AUDIT_CHECKPOINT_MS') ?? '300000';
  if (!/^\d+$/.test(auditEvery) || Number(auditEvery) < 1000 || Number(auditEvery) > 86_400_000) throw new ConfigError('AUDIT_CHECKPOINT_MS', `must be a number of milliseconds from 1000 to 86400000, got "${auditEvery}"`);
  const heartbeat = text('JOB_HEARTBEAT_MS') ?? '10000';
  if (!/^\d+$/.test(heartbeat) || Number(heartbeat) < 100 || Number(heartbeat) > 3_600_000) throw new ConfigError('JOB_HEARTBEAT_MS', `must be a number of milliseconds from 100 to 3600000, got "${heartbeat}"`);

  const mongoDb = text('MONGO_DB') ?? 'edge_ml';
  if (!/^[A-Za-z0-9_-]{1,38}$/.test(mongoDb)) throw new ConfigError('MONGO_DB', 'must be a database name of letters, digits, "_" or "-"');

  const email = (name: string, fallback: string): string => {
    const v = text(name) ?? fallback;
    // The same rule the e-mail aggregate applies, so a configured address is never refused later.
    if (!isEmailAddress(v)) throw new ConfigError(name, `must be an e-mail address with a domain, got "${v}"`);
    return v;
  };
  const paymentWebhookSecret = text('PAYMENT_WEBHOOK_SECRET');
  if (paymentWebhookSecret !== undefined && paymentWebhookSecret.length < 16) throw new ConfigError('PAYMENT_WEBHOOK_SECRET', 'must be at least 16 characters long');
  const internalApiSecret = text('INTERNAL_API_SECRET');
  if (internalApiSecret !== undefined && internalApiSecret.length < 16) throw new ConfigError('INTERNAL_API_SECRET', 'must be at least 16 characters long');
  let identityProviders: IdentityProviderConfig[] = [];
  const idpText = text('SSO_IDENTITY_PROVIDERS');
  if (idpText !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(idpText);
    } catch {
      throw new ConfigError('SSO_IDENTITY_PROVIDERS', 'must be a JSON array of identity providers');
    }
    const result = z.array(IdentityProviderConfig).safeParse(parsed);
    if (!result.success) throw new ConfigError('SSO_IDENTITY_PROVIDERS', describeIssues('value', result.error));
    identityProviders = result.data;
  }
  const staffText = text('STAFF_USERNAMES');
  const staffUsernames = new Set((staffText ?? '').split(',').map((u) => u.trim().toLowerCase()).filter(Boolean));

  return {
    smtpUrl: url('SMTP_URL', ['smtp', 'smtps']),
    mailFrom: email('MAIL_FROM', 'no-reply@localhost.localdomain'),
    supportEmail: email('SUPPORT_EMAIL', 'support@localhost.localdomain'),
    staffUsernames,
    paymentPortalUrl: url('PAYMENT_PORTAL_URL', ['http', 'https']) ?? 'http://localhost:4800/payment-portal',
    paymentWebhookSecret,
    internalApiSecret,
    identityProviders,
    apiPort: port('API_PORT', 4800),
    ingestionPort: port('INGESTION_PORT', 4810),
    ingestionTlsPort: port('INGESTION_TLS_PORT', 4811),
    host: text('HOST') ?? '0.0.0.0',
    dataDir: path.resolve(text('DATA_DIR') ?? './data'),
    eventStoreUrl: url('EVENTSTORE_URL', ['esdb', 'esdb+discover']),
    mongoUrl,
    mongoDb,
    roles,
    jwtSecret,
    logLevel: logLevel as Config['logLevel'],
    signupEnabled: bool('SIGNUP_ENABLED', true),
    publicUrl: url('PUBLIC_URL', ['http', 'https']),
    tlsCertFile,
    tlsKeyFile,
    settleTimeoutMs: Number(settle),
    projectDeletionDelayMs: Math.round(Number(deletionDelay) * 3600_000),
    trustedProxyHops: Number(hops),
    jobHeartbeatMs: Number(heartbeat),
    auditCheckpointMs: Number(auditEvery),
  };
}

/** The storage adapters chosen by the configuration; nothing above the ports knows which. */
export interface Stores {
  events: SealingEventStore;
  readStore: ReadStore;
  blobs: BlobStore;
  keys: KeyStore;
  close(): Promise<void>;
}

export async function openStores(config: Config): Promise<Stores> {
  await mkdir(config.dataDir, { recursive: true });
  const rawEvents: EventStore = config.eventStoreUrl
    ? await EsdbEventStore.connect(config.eventStoreUrl)
    : SqliteEventStore.open(path.join(config.dataDir, 'events.sqlite'));
  const keys: KeyStore = config.mongoUrl
    ? await MongoKeyStore.connect(config.mongoUrl, `${config.mongoDb}_keys`)
    : SqliteKeyStore.open(path.join(config.dataDir, 'keys.sqlite'));
  const readStore: ReadStore = config.mongoUrl ? await MongoReadStore.connect(config.mongoUrl, config.mongoDb) : new MemoryReadStore();
  const blobs: BlobStore = config.mongoUrl
    ? await GridFsBlobStore.connect(config.mongoUrl, `${config.mongoDb}_blobs`)
    : new TieredBlobStore(SqliteBlobStore.open(path.join(config.dataDir, 'blobs.sqlite')), await FileBlobStore.open(path.join(config.dataDir, 'blobs')));
  const events = new SealingEventStore(rawEvents, keys, sealedFieldsByEventType);
  return {
    events,
    readStore,
    blobs,
    keys,
    async close() {
      await Promise.allSettled([events.close(), readStore.close(), blobs.close(), keys.close()]);
    },
  };
}

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

export async function startService(config: Config, log: Logger = pino({ level: config.logLevel })): Promise<RunningService> {
  const stores = await openStores(config);
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
  // One sample parser for the roles that read sample files (ingestion, and the api's raw-data view).
  const sampleParser = (): SampleParser => (parser ??= new SampleParser());
  const stop = async () => {
    // Websockets first: an open one would keep its server from closing.
    await jobSocket?.close();
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    for (const s of servers) s.closeAllConnections();
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
    await stores.close();
  };
  const apiKeyUsage = new ApiKeyUsageRecorder(stores.events, (error) => log.warn({ err: error }, 'could not record an API key use'));
  try {
    if (config.roles.has('projections')) {
      projections = new ProjectionRunner(stores.events, stores.readStore, allProjections, log.child({ role: 'projections' }));
      await projections.start();
    }
    if (config.roles.has('sagas')) {
      const recipients = new UserQueries(stores.readStore);
      sagas = await startSagas({
        events: stores.events,
        readStore: stores.readStore,
        log: log.child({ role: 'sagas' }),
        smtpUrl: config.smtpUrl,
        jobNotifications: {
          mailFrom: config.mailFrom,
          recipient: async (userId) => {
            const u = await recipients.byId(userId);
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
      projectDeletion = startProjectDeletion({
        events: stores.events,
        due: (now) => projectQueries.dueForFullDeletion(now),
        duePurges: async (before) => (await projectQueries.dueForBlobPurge(before)).map((p) => ({ id: p.id, quarantinedBlobs: p.quarantinedBlobs ?? [] })),
        contentsOf: (projectId) => sampleQueries.contentsOf(projectId),
        usedElsewhere: async (projectId, sha256) => (await sampleQueries.referencedOutside(projectId, sha256)) || (await users.byPhoto(sha256)) !== null,
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
      const pool = new ThreadPool();
      const worker = new JobWorker({ events: stores.events, jobs: new JobQueries(stores.readStore), runners: jobRunners, pool, log: log.child({ role: 'jobs' }), heartbeatMs: config.jobHeartbeatMs });
      const runner = new SagaRunner(stores.events, stores.readStore, worker.saga(), log.child({ role: 'jobs' }));
      runner.start();
      worker.start();
      jobWorker = { worker, runner, pool };
    }
    const sync: ReadModelSync =
      projections ?? new CheckpointPoller(stores.readStore, allProjections.map((p) => p.name));
    const health: ProjectionHealth = projections ?? new StoredProjectionStatus(stores.readStore);

    let apiUrl: string | undefined;
    let ingestionUrl: string | undefined;
    let ingestionTlsUrl: string | undefined;
    const local = (scheme: string, port: number) => `${scheme}://127.0.0.1:${port}`;

    if (config.roles.has('api')) {
      const server = http.createServer();
      answerClientErrors(server, log, (_status, error) => ({ type: 'application/json; charset=utf-8', body: JSON.stringify({ success: false, error }) }));
      servers.push(server);
      const port = await listen(server, config.apiPort, config.host, log);
      apiUrl = local('http', port);
      const ids = new IdAllocator(stores.events);
      const deps: ApiDeps = {
        events: stores.events,
        blobs: stores.blobs,
        ids,
        reservations: new UniquenessReservations(stores.events),
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
        history: new HistoryQueries(stores.readStore),
        pointInTime: (projectId, asOf) => readModelsAsOf(stores.events, stores.readStore, allProjections.filter((p) => p !== historyProjection), projectId, asOf),
        tokens: new TokenService(await jwtSecret(config)),
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
      server.on('request', app.callback());
      // After the app's listener: socket.io passes on every request outside /socket.io to it.
      jobSocket = attachJobSocket(server, { events: stores.events, tokens: deps.tokens.socket, projects: deps.projects, organizations: deps.organizations, log: log.child({ role: 'api', component: 'job-socket' }) });
    }
    if (config.roles.has('ingestion')) {
      // Uploads that were being received when the process stopped were never acknowledged.
      const incoming = await incomingFolder(config.dataDir);
      const app = createIngestionApp({
        parser: sampleParser(),
        apiKeyUsage,
        events: stores.events,
        blobs: stores.blobs,
        ids: new IdAllocator(stores.events),
        apiKeys: new ApiKeyQueries(stores.readStore),
        projects: new ProjectQueries(stores.readStore),
        samples: new SampleQueries(stores.readStore),
        sync,
        health,
        settleTimeoutMs: config.settleTimeoutMs,
        tmpDir: incoming,
        log: log.child({ role: 'ingestion' }),
      });
      const plain = http.createServer(app.callback());
      const text = (_status: number, message: string) => ({ type: 'text/plain; charset=utf-8', body: message });
      answerClientErrors(plain, log, text);
      servers.push(plain);
      ingestionUrl = local('http', await listen(plain, config.ingestionPort, config.host, log));
      const secure = https.createServer(await tlsCredentials(config, log), app.callback());
      answerClientErrors(secure, log, text);
      servers.push(secure);
      ingestionTlsUrl = local('https', await listen(secure, config.ingestionTlsPort, config.host, log));
    }
    log.info({ apiUrl, ingestionUrl, ingestionTlsUrl, roles: [...config.roles], eventStore: config.eventStoreUrl ? 'eventstoredb' : 'sqlite', readStore: config.mongoUrl ? 'mongodb' : 'memory' }, 'service started');
    return { config, stores, apiUrl, ingestionUrl, ingestionTlsUrl, projections, jobWorker: jobWorker?.worker, stop, endDueSubscriptions: async (now) => subscriptionEnd?.runOnce(now), fullyDeleteDueProjects: async (now) => projectDeletion?.runOnce(now) };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Drops the read models and replays the whole log into them. */
export async function rebuildReadModels(config: Config, log: Logger): Promise<void> {
  if (!config.mongoUrl) {
    log.info('MONGO_URL is not set: the in-memory read models are rebuilt from the log at every start; nothing to rebuild');
    return;
  }
  const stores = await openStores(config);
  try {
    await stores.readStore.dropAll();
    const runner = new ProjectionRunner(stores.events, stores.readStore, allProjections, log);
    const started = Date.now();
    await runner.start();
    await runner.stop();
    const failures = await runner.failures();
    // A rebuild that left a read model behind must not pass for a complete one.
    if (failures.length > 0) throw new Error(`Rebuild incomplete: ${failures.map((f) => `projection ${f.projection} failed on event ${f.position} (${f.eventType} in ${f.streamId}): ${f.error}`).join('; ')}`);
    log.info({ ms: Date.now() - started, position: runner.appliedPosition?.toString() }, 'read models rebuilt');
  } finally {
    await stores.close();
  }
}

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
    await rebuildReadModels(config, log);
    return;
  }
  const service = await startService(config, log);
  const shutdown = (signal: string) => {
    log.info({ signal }, 'stopping');
    service.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'stopping failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}

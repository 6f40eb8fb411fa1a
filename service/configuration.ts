// The service's configuration, read from environment variables: every value checked once, at
// start, and a bad one named with its variable (docs/configuration.md lists them all).
import path from 'node:path';
import { z } from 'zod';
import { IdentityProviderConfig } from '../api/auth/identityProviders';
import { describeIssues } from '../api/http/operation';
import { isEmailAddress } from '../domain/email/emailDecider';

export const ROLES = ['api', 'ingestion', 'projections', 'sagas', 'jobs', 'remote'] as const;
export type Role = (typeof ROLES)[number];
/** The roles that serve no port, and so can run on a thread of their own (THREAD_ROLES). */
export const THREAD_ROLES = ['projections', 'sagas', 'jobs'] as const satisfies readonly Role[];
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** Where the read models live: SQLite beside the log (embedded default), memory (rebuilt at every start), or MongoDB. */
export const READ_STORES = ['sqlite', 'memory', 'mongodb'] as const;
export type ReadStoreKind = (typeof READ_STORES)[number];

export interface Config {
  apiPort: number;
  ingestionPort: number;
  ingestionTlsPort: number;
  /** The remote-management websocket port devices connect to (docs/remote-management.md). */
  remoteMgmtPort: number;
  /**
   * Prefix of this process's device connection ids; stable for a deployment slot, so that a restart
   * finds the devices it left connected. Unset: `<hostname>-<REMOTE_MGMT_PORT>`.
   */
  remoteInstanceId: string | undefined;
  /** Address the listeners bind to. */
  host: string;
  dataDir: string;
  eventStoreUrl: string | undefined;
  mongoUrl: string | undefined;
  mongoDb: string;
  readStore: ReadStoreKind;
  roles: ReadonlySet<Role>;
  /**
   * Roles of `roles` run on a worker thread of this process rather than on its event loop (THREAD_ROLES,
   * any of projections, sagas, jobs): the read models, the sagas and the jobs then share no event loop
   * with the requests, as with ROLES split between processes, without a second process. Unset, a
   * process that serves a port on the embedded stores (SQLite log and read store) runs them there;
   * `none` keeps every role on the main thread.
   */
  threadRoles: ReadonlySet<Role>;
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
  /** How long a job websocket token lives; a socket opened with it is closed when it expires. */
  socketTokenTtlSeconds: number;
  /** On SIGTERM, how long requests in progress may finish before their connections are cut. */
  shutdownGraceMs: number;
  /** How long an upload's body may send nothing before it is answered 408 and its connection closed. */
  uploadIdleTimeoutMs: number;
}

/** An instance id is the start of a connection id (at most 128 characters with its random part). */
export const REMOTE_INSTANCE_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

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

  const names = (value: string) => value.split(',').map((s) => s.trim()).filter(Boolean);
  const roleText = text('ROLES');
  const roles = new Set<Role>();
  for (const r of roleText === undefined ? ROLES : names(roleText)) {
    if (!(ROLES as readonly string[]).includes(r)) throw new ConfigError('ROLES', `has an unknown role "${r}"; known roles: ${ROLES.join(', ')}`);
    roles.add(r as Role);
  }
  if (roles.size === 0) throw new ConfigError('ROLES', 'names no role');

  const mongoUrl = url('MONGO_URL', ['mongodb', 'mongodb+srv']);
  const readStoreText = text('READ_STORE')?.toLowerCase() ?? (mongoUrl ? 'mongodb' : 'sqlite');
  if (!(READ_STORES as readonly string[]).includes(readStoreText)) throw new ConfigError('READ_STORE', `must be one of ${READ_STORES.join(', ')}, got "${readStoreText}"`);
  const readStore = readStoreText as ReadStoreKind;
  if (readStore === 'mongodb' && !mongoUrl) throw new ConfigError('READ_STORE', 'mongodb needs MONGO_URL');
  const eventStoreUrl = url('EVENTSTORE_URL', ['esdb', 'esdb+discover']);

  const threadRolesText = text('THREAD_ROLES');
  const threadRoles = new Set<Role>();
  if (threadRolesText === undefined) {
    // The embedded default: a process that serves a port runs its other roles on a thread, so that
    // the read models, the sagas and the jobs take the second core rather than the requests' loop.
    const serves = roles.has('api') || roles.has('ingestion') || roles.has('remote');
    if (serves && readStore === 'sqlite' && eventStoreUrl === undefined) for (const r of THREAD_ROLES) if (roles.has(r)) threadRoles.add(r);
  } else if (threadRolesText.toLowerCase() !== 'none') {
    for (const r of names(threadRolesText)) {
      if (!(THREAD_ROLES as readonly string[]).includes(r)) throw new ConfigError('THREAD_ROLES', `has "${r}"; the roles that can run on a thread: ${THREAD_ROLES.join(', ')} (or none)`);
      if (!roles.has(r as Role)) throw new ConfigError('THREAD_ROLES', `has "${r}", which ROLES does not name`);
      threadRoles.add(r as Role);
    }
  }
  if (threadRoles.size > 0 && threadRoles.size === roles.size) throw new ConfigError('THREAD_ROLES', 'names every role of ROLES: leave some on the main thread, or set THREAD_ROLES=none');
  if (readStore === 'memory' && threadRoles.size > 0) throw new ConfigError('THREAD_ROLES', 'needs a read store the threads share (READ_STORE sqlite or mongodb): the in-memory one lives in one thread');
  if (readStore === 'memory' && (roles.has('api') || roles.has('ingestion') || roles.has('sagas') || roles.has('jobs') || roles.has('remote')) && !roles.has('projections')) {
    throw new ConfigError('ROLES', 'without "projections" needs a read store shared between processes (READ_STORE sqlite or mongodb): the in-memory one lives in one process');
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

  const socketTtl = text('SOCKET_TOKEN_TTL_SECONDS') ?? '600';
  if (!/^\d+$/.test(socketTtl) || Number(socketTtl) < 1 || Number(socketTtl) > 3600) throw new ConfigError('SOCKET_TOKEN_TTL_SECONDS', `must be a number of seconds from 1 to 3600, got "${socketTtl}"`);
  const grace = text('SHUTDOWN_GRACE_MS') ?? '10000';
  if (!/^\d+$/.test(grace) || Number(grace) > 600_000) throw new ConfigError('SHUTDOWN_GRACE_MS', `must be a number of milliseconds from 0 to 600000, got "${grace}"`);
  const uploadIdle = text('UPLOAD_IDLE_TIMEOUT_MS') ?? '30000';
  if (!/^\d+$/.test(uploadIdle) || Number(uploadIdle) < 100 || Number(uploadIdle) > 600_000) throw new ConfigError('UPLOAD_IDLE_TIMEOUT_MS', `must be a number of milliseconds from 100 to 600000, got "${uploadIdle}"`);

  const remoteInstanceId = text('REMOTE_INSTANCE_ID');
  if (remoteInstanceId !== undefined && !REMOTE_INSTANCE_ID_PATTERN.test(remoteInstanceId)) {
    throw new ConfigError('REMOTE_INSTANCE_ID', 'must be 1 to 64 letters, digits, ".", "_" or "-"');
  }

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
    remoteMgmtPort: port('REMOTE_MGMT_PORT', 4802),
    remoteInstanceId,
    host: text('HOST') ?? '0.0.0.0',
    dataDir: path.resolve(text('DATA_DIR') ?? './data'),
    eventStoreUrl,
    mongoUrl,
    mongoDb,
    readStore,
    roles,
    threadRoles,
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
    socketTokenTtlSeconds: Number(socketTtl),
    auditCheckpointMs: Number(auditEvery),
    shutdownGraceMs: Number(grace),
    uploadIdleTimeoutMs: Number(uploadIdle),
  };
}
